"""`mtptui fleet --prometheus URL`: every host that Prometheus knows, from SGLang's own metrics or
`mtptui export`'s, with its speculation figures per rank and its outliers flagged."""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial

from mtptui.commands.live import add_stream_args
from mtptui.config import Config, load_config, ranges
from mtptui.errors import UserError
from mtptui.fleet.outliers import Limits
from mtptui.fleet.prom import Prometheus, PromError
from mtptui.fleet.query import Host, selector_matchers
from mtptui.fleet.reader import ReaderProcess, load
from mtptui.fleet.table import ViewState, rows, text_table

EPILOG = """\
Hosts: each target with SGLang's metrics (sglang:*, from --enable-metrics; the host is its instance
label) and each host of mtptui export (mtptui_*; its host label). --match narrows every query with
label matchers, e.g. '{job="sglang"}' or '{instance=~"gpu1.*"}' (so it also narrows the
peers that outliers are judged among).

Flags: down, disconnected, spec_off (decodes without speculation while most peers speculate, or
while its server_args ask for it), accept_collapsed (accept len at or below [thresholds]
accept_len_one_max), accept_outlier (accept len more than --outlier-pct from the median of the
hosts with the same settings; for SGLang's metrics, the same model), rank_outlier (a rank that far
from its host's median), graph_off (decode without CUDA graphs in the last 2 minutes).

Keys: Enter (or a click on the row under the cursor) opens the host's live dashboard over SSH (the
config host whose name or address is the host, else the address with the config's [defaults]); quit
it to come back. space: its ranks, e: every host's ranks, s / S: sort by the next column / reverse
(or click a header), /: filter, f: find, n: next match, !: flagged only, r: refresh now, q: quit.

--once prints the table and exits; --json prints {"hosts": [{"host", "source", "spec", "ranks":
[{"rank", "accept_len", "accept_rate", "gen_throughput", "running", "queue", "graph"}], "flags":
[{"kind", "text", ...}]}]} (implies --once). A figure a host does not report is null.

exit codes: 0 ok, 1 Prometheus cannot be reached or read, 2 bad arguments, config or --match (or
no terminal for the view: use --once or --json), 130 interrupted (ctrl-c)
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mtptui fleet", description=__doc__, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--prometheus", required=True, metavar="URL", help="Prometheus, e.g. http://prom:9090")
    p.add_argument("--match", metavar="SELECTOR", help="label matchers every query is narrowed with")
    p.add_argument("--once", action="store_true", help="print the table and exit")
    p.add_argument("--json", action="store_true", help="print the fleet as JSON and exit")
    p.add_argument("--interval", type=ranges.REFRESH, default=5.0, metavar="S", help="refresh every S seconds (default 5)")
    p.add_argument("--outlier-pct", type=ranges.OUTLIER_PCT, metavar="P",
                   help="how far from a median is an outlier (default: [thresholds] rank_diverge_pct, 25)")
    p.add_argument("--timeout", type=ranges.QUERY_TIMEOUT, default=10.0, metavar="S", help="a query's time limit (default 10)")
    live = p.add_argument_group("the live dashboard that Enter opens", "as for `mtptui live`")
    add_stream_args(live)
    live.add_argument("--identity", metavar="KEY", help="private key for hosts not in the config")
    live.add_argument("--read-only", action="store_true", help="no restart or rollback actions")
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    selector_matchers(args.match)
    if not (args.json or args.once) and not sys.stdout.isatty():  # said before Prometheus is asked
        raise UserError("the view needs a terminal (use --once or --json)", exit_code=2)
    config = load_config(args.config)
    try:
        prom = Prometheus(args.prometheus, timeout=args.timeout)
        fetch = partial(load, prom, args.match, Limits.from_thresholds(config.thresholds, args.outlier_pct))
        hosts = fetch()
    except PromError as e:
        # Prometheus refusing the query is the --match's fault: a usage error
        raise UserError(str(e), exit_code=2 if e.bad_query and args.match else 1) from None
    if args.json:
        print(json.dumps({"hosts": [h.to_json() for h in hosts]}, indent=2))
        return 0
    if args.once:
        print(text_table(rows(hosts, ViewState())))
        return 0
    return interactive(fetch, hosts, args, config)


def interactive(fetch, hosts: list[Host] | None, args, config: Config) -> int:
    """The fleet view until q; Enter leaves it for the host's live dashboard, and its q comes back."""
    from mtptui.commands.live import build_sources, quiet_asyncssh
    from mtptui.tui.fleet_app import FleetApp
    from mtptui.tui.launch import run_dashboard

    quiet_asyncssh()
    state = ViewState()
    overrides = {"unit": args.unit, "sudo": args.sudo, "identity": args.identity}
    reader = ReaderProcess(fetch)  # refreshes off the view's interpreter (see fleet/reader.py)
    reader.start()  # before the view takes the terminal
    try:
        while True:
            app = FleetApp(reader, config=config, state=state, interval=args.interval, title=args.prometheus,
                           hosts=hosts, overrides=overrides)
            spec = app.run()
            if spec is None:
                return app.return_code or 0
            sources = build_sources(argparse.Namespace(**vars(args), hosts=[spec]), config)
            run_dashboard(sources, config=config, read_only=args.read_only, title=f"live: {sources[0].host}")
            hosts = None  # fresh figures on the way back
    finally:
        reader.close()

