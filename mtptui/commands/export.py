"""`mtptui export [HOST...] [--local | --file PATH]`: headless; follows the hosts' logs as `live`
does and serves their speculation figures to Prometheus (http://ADDR:PORT/metrics)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import socket
import sys

from mtptui.commands.live import add_host_args, build_sources, quiet_asyncssh, report_given_up
from mtptui.commands.record import StatusPrinter
from mtptui.config import Config, ConfigError, load_config, ranges
from mtptui.errors import UsageError, UserError
from mtptui.sources.base import Source

DEFAULT_LISTEN = "127.0.0.1:9464"

EPILOG = """\
HOST as for `mtptui live`: a systemd unit, a `docker run` container or a compose service (each
replica a host, HOST-N), over SSH or on this machine (without HOST, --local or --file: every host
of the config); a container's figures come from its `docker logs`. --local
follows this machine's journal for --unit; --file follows a log file as it grows (like tail -F,
from its first line, across rotation). --since and --lines set the journal history read first: give
the span back to the server's start to have its speculation settings (mtptui_spec_info) at once.

The metrics are described in the README (section Prometheus). A rank's gauges are served while its
batch lines keep coming: one silent for --stale-after seconds (default: [thresholds] stale_s of the
config, 30) is left out. Host state changes are printed on stderr, one line each. Runs until
SIGTERM or Ctrl-C.

exit codes: 0 stopped by a signal, 1 cannot listen (address in use), --file not a text log, or every
host given up on (--give-up-after), 2 bad arguments or config
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mtptui export", description=__doc__, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_host_args(p)
    where = p.add_mutually_exclusive_group()
    where.add_argument("--local", action="store_true", help="this machine's journal for --unit (no SSH)")
    where.add_argument("--file", metavar="PATH", help="a server log file, followed as it grows")
    p.add_argument("--host", metavar="NAME",
                   help="with --local or --file: the host label (default: this machine's hostname)")
    p.add_argument("--listen", default=DEFAULT_LISTEN, metavar="ADDR:PORT",
                   help=f"where to serve /metrics (default {DEFAULT_LISTEN}; [::1]:PORT for IPv6)")
    p.add_argument("--stale-after", type=ranges.STALE_AFTER, metavar="S",
                   help="seconds without a batch line after which a rank's gauges are left out")
    return p


def parse_listen(text: str) -> tuple[str, int]:
    """`ADDR:PORT` or `[IPV6]:PORT` -> (addr, port). Raises UsageError."""
    addr, sep, port = text.rpartition(":")
    if addr.startswith("[") and addr.endswith("]"):
        addr = addr[1:-1]
    elif ":" in addr:
        sep = ""  # a bare IPv6 address: its port is not to be told from its last group
    if not sep or not addr or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(f"--listen {text!r}: give ADDR:PORT, e.g. {DEFAULT_LISTEN} or [::1]:9464")
    return addr, int(port)


def build_all_sources(args: argparse.Namespace, config: Config) -> list[Source]:
    """The journal or file of --local/--file, and the SSH hosts named (all the config's when none
    and neither of those). Raises ConfigError."""
    sources: list[Source] = []
    if args.host and not (args.local or args.file):
        raise ConfigError("--host names the machine of --local or --file: give one of them")
    if args.local:
        from mtptui.commands.local import build_source

        sources.append(build_source(args, config))
    elif args.file:
        from mtptui.sources.follow import FollowFileSource, check_followable

        check_followable(args.file)  # a binary file, a FIFO: one line now, not silence
        sources.append(FollowFileSource(args.file, host=args.host or socket.gethostname()))
    if args.hosts or not sources:
        sources += build_sources(args, config)
    names = [s.host for s in sources]
    for name in names:
        if names.count(name) > 1:
            raise ConfigError(f"{name}: named twice (give --host another name)")
    return sources


async def follow(sources: list[Source], state, controls: dict | None = None) -> None:
    """Runs the sources, and reads each host's /metrics through its control's endpoint
    (export/scrape.py), until SIGTERM or SIGINT."""
    from mtptui.export import scrape

    tasks = [asyncio.ensure_future(s.run(state)) for s in sources]
    tasks += [asyncio.ensure_future(scrape.poll(state, host, ctl.endpoint)) for host, ctl in (controls or {}).items()]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)

    async def all_given_up() -> None:
        """--give-up-after: once every host is given up on, nothing is left to serve (exit 1)."""
        await asyncio.gather(*tasks[:len(sources)], return_exceptions=True)
        if all(getattr(s, "gave_up", None) for s in sources):
            stop.set()

    tasks.append(asyncio.ensure_future(all_given_up()))
    try:
        await stop.wait()  # a source that ends or fails leaves the others (and /metrics) serving
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        for ctl in (controls or {}).values():
            with contextlib.suppress(Exception):  # a link already lost: nothing to close
                await ctl.close()


def main(argv: list[str]) -> int:
    args = build_parser().parse_intermixed_args(argv)  # options may come between the positionals
    addr, port = parse_listen(args.listen)
    config = load_config(args.config)
    sources = build_all_sources(args, config)
    from prometheus_client import CollectorRegistry, ProcessCollector, start_http_server

    from mtptui.export.collector import ExportCollector
    from mtptui.export.state import ExportState

    stale_after = args.stale_after if args.stale_after is not None else config.thresholds.stale_s
    state = ExportState([str(s.host) for s in sources], inner=StatusPrinter())
    registry = CollectorRegistry()
    registry.register(ExportCollector(state, stale_after))
    ProcessCollector(registry=registry)  # the exporter's own CPU and memory
    try:
        httpd, _ = start_http_server(port, addr=addr, registry=registry)
    except OSError as e:
        raise UserError(f"cannot listen on {args.listen}: {e.strerror or e}") from None
    host, bound = str(httpd.server_address[0]), httpd.server_address[1]
    where = f"[{host}]" if ":" in host else host
    print(f"mtptui export: serving http://{where}:{bound}/metrics for {', '.join(str(s.host) for s in sources)}",
          file=sys.stderr, flush=True)
    quiet_asyncssh()
    from mtptui.control.session import host_controls

    try:
        asyncio.run(follow(sources, state, host_controls(sources, config)))
    finally:
        httpd.shutdown()
        httpd.server_close()
    return 1 if report_given_up("mtptui export", sources) else 0
