"""`mtptui tune HOST --budget 20m`: the best speculation settings at the load the host serves
(its log's #running-req, its own requests one per DP group on top of it; or --concurrency), by
successive halving instead of a grid.

Candidates: the profiles (--profiles) and a neighbourhood of their chains that the server's
rules allow (one step more, trees of topk 2 and 4). Each round applies every candidate still in
through the benchmark's path (apply, verify, warm up, measure), drops the lower half where its
interval against the leader lies below 0, and measures the rest with twice the requests; it
stops when the leader is separated from the runner-up, one is left, or the budget is spent. The
preview is confirmed once (--yes); at the end the host is restored as `bench` restores it
(after ctrl-c too), unless the winner is accepted: asked on a terminal, or --apply (a separated
winner only). Results: each round's table, JSON and CSV (the data directory and --json/--csv).
With --schedule 1,8,64 every round measures at those concurrencies too, and the end proposes a
schedule by load (prove/schedule.py), which accepting applies instead of the winner.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys

from mtptui.commands.bench import Bar, _concurrencies, run_restoring
from mtptui.commands.live import add_host_args, quiet_asyncssh
from mtptui.config import ConfigError, load_config, ranges
from mtptui.errors import UsageError
from mtptui.files import NotReplaced, output_path

EPILOG = """\
exit codes: 0 done (the host restored, or the winner left applied as accepted); 3 a candidate
failed (rolled back); 4 the host could not be restored; 1 could not run; 2 bad arguments;
130 interrupted (ctrl-c), the host restored
"""


def _budget(text: str) -> float:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text)
    if not m or float(m.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a time such as 20m, 300s or 1h")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mtptui tune", description=__doc__, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_host_args(p)
    p.add_argument("--local", action="store_true", help="this machine's unit (no SSH); needs --unit")
    p.add_argument("--profiles", default="off,mtp1,mtp2,mtp3", metavar="A,B,...",
                   help="profiles among the candidates, with their neighbourhood (default off,mtp1,mtp2,mtp3)")
    p.add_argument("--concurrency", type=ranges.CONCURRENCY, metavar="N",
                   help="requests in flight (default: one per DP group, on top of the load the unit's log shows, "
                        "#running-req over 10 s)")
    p.add_argument("--schedule", type=_concurrencies, default=[], metavar="N,M,...",
                   help="also measure at these concurrencies and propose a schedule by load (vLLM's per batch "
                        "size, SGLang's adaptive tiers), applied where accepted instead of the winner")
    p.add_argument("--budget", type=_budget, default=1200.0, metavar="T",
                   help="time for the measuring, e.g. 5m (default 20m); a round that would not fit is not begun")
    p.add_argument("--requests", type=ranges.REQUESTS, default=8, metavar="N",
                   help="requests per candidate in the first round, doubled each round (default 8; at least the concurrency)")
    p.add_argument("--max-tokens", type=ranges.MAX_TOKENS, default=64, metavar="M", help="output tokens per request (default 64)")
    p.add_argument("--seed", type=int, default=0, help="which prompts, in which order (default 0)")
    p.add_argument("--prompts", metavar="FILE", help="the operator's prompts, as for `mtptui bench`")
    p.add_argument("--yes", "-y", action="store_true", help="measure without asking (the winner is still asked)")
    p.add_argument("--apply", action="store_true", help="leave a separated winner applied without asking")
    p.add_argument("--json", metavar="FILE", type=output_path, help="also write the results as JSON to FILE")
    p.add_argument("--csv", metavar="FILE", type=output_path, help="also write the results as CSV to FILE")
    p.add_argument("--timeout", type=ranges.WAIT_TIMEOUT, metavar="S", help="wait this long for ready (default: [control] wait_timeout)")
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_intermixed_args(argv)  # options may come between the positionals
    from mtptui.commands.spec import build_controls
    from mtptui.control.profiles import ProfileError, resolve

    pool = None
    if args.prompts:
        from mtptui.prove.prompts import read_file

        pool = read_file(args.prompts)
    config = load_config(args.config)
    if len(args.hosts) > 1:
        raise ConfigError("one HOST at a time (a tune restarts its server)")
    try:
        profiles = [resolve(n.strip(), config.profiles) for n in args.profiles.split(",") if n.strip()]
    except ProfileError as e:
        raise UsageError(str(e)) from None
    if not profiles:
        raise ConfigError("--profiles names none")
    controls = build_controls(args, list(args.hosts), config, args.timeout)
    if len(controls) != 1:
        raise ConfigError("name the HOST to tune (the config has several)")
    quiet_asyncssh()
    return asyncio.run(run(args, controls[0], profiles, pool))


async def _ask(question: str) -> bool:
    """A line from the terminal, read without blocking the loop (ctrl-c cancels it)."""
    loop = asyncio.get_running_loop()
    got: asyncio.Future[str] = loop.create_future()
    print(question, end="", file=sys.stderr, flush=True)
    fd = sys.stdin.fileno()

    def line() -> None:
        if not got.done():
            got.set_result(sys.stdin.readline())

    loop.add_reader(fd, line)
    try:
        return (await got).strip().lower() in ("y", "yes")
    finally:
        loop.remove_reader(fd)


async def run(args, hc, profiles, pool=None) -> int:
    from mtptui.control import launch
    from mtptui.control.errors import BadProfile, ControlError
    from mtptui.prove import tune
    from mtptui.prove.bench import COULD_NOT_RUN, NOT_RESTORED

    async def accept(t: tune.Tune) -> bool:
        r = t.tr
        proposed = t.proposal()
        if args.apply:
            return proposed is not None or r.separated  # a schedule's buckets are each separated or the static's
        if not sys.stdin.isatty():
            return False
        if proposed is not None:
            plan = await t.winner_plan()
            print("\n".join(["", *(plan.preview_lines() if plan else [])]), file=sys.stderr)
            return await _ask(f"leave the schedule {proposed.name} running on {hc.host}? [y/N] ")
        return await _ask(f"leave {r.winner} running on {hc.host} ({'separated' if r.separated else 'not separated'})?"
                          " [y/N] ")

    try:
        try:
            if args.concurrency:
                c, where = args.concurrency, "--concurrency"
            else:
                found = await tune.read_served(hc)
                if found is None:
                    print(f"mtptui tune: {hc.host}: no decode line with #running-req in {tune.LISTEN_S:g} s; "
                          "give --concurrency", file=sys.stderr)
                    return COULD_NOT_RUN
                c, where = found.own(), found.words(f"in {tune.LISTEN_S:g} s of its log")
            t = await tune.prepare(hc, profiles, c, where, args.requests, budget_s=args.budget, accept=accept,
                                   max_tokens=args.max_tokens, seed=args.seed, on_progress=Bar(sys.stderr).show,
                                   prompt_pool=pool, prompts_file=args.prompts, loads=args.schedule)
            await t.preview()
        except BadProfile:
            raise
        except (ControlError, launch.LaunchError) as e:
            print(f"mtptui tune: {e}", file=sys.stderr)
            return COULD_NOT_RUN
        print("\n".join(t.preview_lines()) + "\n", file=sys.stderr)
        if len(t.concurrencies) > 1:
            print(f"every round measures each candidate at concurrency {', '.join(map(str, t.concurrencies))}, "
                  "for a schedule by load: the round's requests at each, or as many as it has in flight where that "
                  "is more\n", file=sys.stderr)
        if not args.yes:
            if not sys.stdin.isatty():
                print("mtptui tune: stdin is not a terminal: add --yes to run without asking", file=sys.stderr)
                return 2
            if not await _ask(f"restart {hc.host} once per candidate a round, then back as it was? [y/N] "):
                print("mtptui tune: not run; nothing changed", file=sys.stderr)
                return COULD_NOT_RUN
        report = await run_restoring("tune", hc.host, t)
        if report is None:
            return NOT_RESTORED
    finally:
        await hc.close()
    print(file=sys.stderr)
    data = report.to_json()
    print(text(data))
    code = report.exit_code
    try:
        for path in tune.save(data, args.json, args.csv):
            print(f"saved {path}", file=sys.stderr)
    except (OSError, NotReplaced) as e:  # the path changed since it was checked, a full disk ...
        print(f"mtptui tune: cannot save the results: {getattr(e, 'strerror', None) or e}", file=sys.stderr)
        code = code or COULD_NOT_RUN
    print(f"mtptui tune: {t.summary()}", file=sys.stderr)
    return code


def text(data: dict) -> str:
    """Each round's table (prove.results'), what it dropped, then the winner and the counts."""
    from mtptui.prove import results, tune

    out = [f"{data['host']} · {data['unit']} · started {data['started']} · concurrency {data['concurrency']} "
           f"({data['concurrency_from']})"]
    for heading, sub, dropped in tune.by_round(data):
        body = results.table_text(sub).splitlines()[1:-2]  # its header line and restored line are ours
        several = len(results.concurrencies(sub)) > 1  # a tune for a schedule: each load's table named
        out += ["", heading, *(body[1:] if several else body[2:]), *dropped]
    out += ["", *tune.ending_lines(data)]
    return "\n".join(out)

