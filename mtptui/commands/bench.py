"""`mtptui bench HOST --profiles off,mtp1,mtp3 --concurrency 1,8,32 --requests N`: an A/B
benchmark of speculation profiles on one host, through the SSH connection.

For each profile: apply it through the control path (the preview of every profile is shown
first and confirmed once, unless --yes), wait for ready and verify, warm up; then for each
concurrency send N streaming chat requests (a prompt set shipped with mtptui, or --prompts FILE,
drawn by --seed)
and measure output tokens/s, requests/s, TTFT and inter-token latency p50/p99 and errors, and
the accept len and accept rate the unit's log shows meanwhile. At the end, after ctrl-c or a
failure too, the host is restored exactly as it was found (a unit's drop-in or a compose
service's override byte for byte; a container recreated with its command, options and labels),
restarted and verified. Results: a table per concurrency with deltas against `off`, bars, and JSON and
CSV in the user's data directory (and --json/--csv FILE). With --from-tune FILE (a `tune
--schedule`'s JSON) it measures the schedule the tune proposed against the best static setting, at
the tune's concurrencies unless --concurrency says others, and says per concurrency which is ahead.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from mtptui.commands.live import add_host_args, quiet_asyncssh
from mtptui.config import ConfigError, load_config, ranges
from mtptui.errors import UsageError
from mtptui.files import NotReplaced, output_path
from mtptui.printable import printable

EPILOG = """\
exit codes: 0 done and the host restored; 3 a profile failed (rolled back; the others were
measured); 4 the host could not be restored (it needs a person); 1 could not run (nothing measured
or stopped early, the host restored); 2 bad arguments; 130 interrupted (ctrl-c, SIGTERM, SIGHUP), the host restored
"""


def _concurrencies(text: str) -> list[int]:
    values = [ranges.CONCURRENCY.parse(x.strip()) for x in text.split(",") if x.strip()]
    if not values:
        raise argparse.ArgumentTypeError(f"{text!r}: give {ranges.CONCURRENCY.text()}, or several: 1,8,32")
    return values


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mtptui bench", description=__doc__, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_host_args(p)
    p.add_argument("--local", action="store_true", help="this machine's unit (no SSH); needs --unit")
    p.add_argument("--profiles", metavar="A,B,...",
                   help="profiles to compare, in order (default off,mtp1,mtp3)")
    p.add_argument("--concurrency", type=_concurrencies, metavar="N,M,...",
                   help="requests in flight (default 1,8,32; with --from-tune the tune's)")
    p.add_argument("--from-tune", metavar="FILE",
                   help="a `tune --schedule` JSON: measure its proposed schedule against its static winner "
                        "(instead of --profiles)")
    p.add_argument("--requests", type=ranges.REQUESTS, default=32, metavar="N", help="requests per concurrency (default 32; at least the highest concurrency)")
    p.add_argument("--max-tokens", type=ranges.MAX_TOKENS, default=128, metavar="M", help="output tokens per request (default 128)")
    p.add_argument("--seed", type=int, default=0, help="which prompts, in which order (default 0)")
    p.add_argument("--prompts", metavar="FILE",
                   help="the operator's prompts, read here and sent through the tunnel: JSONL of OpenAI chat "
                        "requests (messages, optional max_tokens and category), ShareGPT JSON, or plain text a "
                        "prompt a line (default: the set shipped with mtptui)")
    p.add_argument("--yes", "-y", action="store_true", help="run without asking")
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

        pool = read_file(args.prompts)  # a bad file: UsageError, before anything connects
    config = load_config(args.config)
    if len(args.hosts) > 1:
        raise ConfigError("one HOST at a time (a benchmark restarts its server)")
    if args.from_tune:
        if args.profiles:
            raise UsageError("--from-tune measures the tune's schedule against its static winner: drop --profiles")
        profiles, loads = from_tune(args.from_tune)
        args.concurrency = args.concurrency or loads
    else:
        try:
            profiles = [resolve(name.strip(), config.profiles)
                        for name in (args.profiles or "off,mtp1,mtp3").split(",") if name.strip()]
        except ProfileError as e:
            raise UsageError(str(e)) from None
    args.concurrency = args.concurrency or [1, 8, 32]
    if not profiles:
        raise ConfigError("--profiles names none")
    if len({p.name for p in profiles}) != len(profiles):
        raise ConfigError("--profiles names one twice")
    controls = build_controls(args, list(args.hosts), config, args.timeout)
    if len(controls) != 1:
        raise ConfigError("name the HOST to benchmark (the config has several)")
    quiet_asyncssh()
    return asyncio.run(run(args, controls[0], profiles, pool))


def from_tune(path: str) -> tuple[list, list[int]]:
    """([the static winner, the proposed schedule], the tune's concurrencies) from a `tune
    --schedule` JSON. Raises UsageError for a file that has none."""
    import json

    from mtptui.control.profiles import ProfileError
    from mtptui.prove import schedule

    try:
        with open(path, encoding="utf-8") as f:
            s = json.load(f).get("schedule")
        if not isinstance(s, dict):
            raise UsageError(f"--from-tune {path}: no schedule in it (a `tune --schedule` JSON has one)")
        if not s.get("profile"):
            raise UsageError(f"--from-tune {path}: the tune proposed no schedule: {s.get('why') or '-'}")
        return ([schedule.profile_of(s["static_profile"]), schedule.profile_of(s["profile"])],
                sorted(b["concurrency"] for b in s["buckets"]))
    except OSError as e:
        raise UsageError(f"--from-tune {path}: {e.strerror}") from None
    except (ValueError, KeyError, TypeError, AttributeError, ProfileError) as e:
        raise UsageError(f"--from-tune {path}: not a tune's JSON ({e})") from None


async def run(args, hc, profiles, pool=None) -> int:
    from mtptui.control.errors import BadProfile, ControlError
    from mtptui.prove import results
    from mtptui.prove.bench import COULD_NOT_RUN, NOT_RESTORED, Bench

    bench = Bench(hc, profiles, args.concurrency, args.requests, max_tokens=args.max_tokens, seed=args.seed,
                  on_progress=Bar(sys.stderr).show, prompt_pool=pool, prompts_file=args.prompts)
    try:
        try:
            plans = await bench.preview()
        except BadProfile:
            raise  # a usage error, said by cli
        except ControlError as e:
            print(f"mtptui bench: {e}", file=sys.stderr)
            return COULD_NOT_RUN
        print("\n".join(bench.preview_lines()) + "\n", file=sys.stderr)
        if not args.yes and not confirm(hc.host, len(plans), hc.prod):
            print("mtptui bench: not run; nothing changed", file=sys.stderr)
            return COULD_NOT_RUN if sys.stdin.isatty() else 2
        report = await run_restoring("bench", hc.host, bench)
        if report is None:
            return NOT_RESTORED
    finally:
        await hc.close()
    print(file=sys.stderr)
    data = report.to_json()
    if data["results"]:
        print(results.table_text(data))
        if args.from_tune and len(profiles) == 2:
            from mtptui.prove import schedule

            print("\n".join(["", *schedule.against_static(data, profiles[1].name, profiles[0].name)]))
        print()
        print(results.bars(data, color=sys.stdout.isatty()))
    code = report.exit_code
    try:
        for path in results.save(data, args.json, args.csv):
            print(f"saved {path}", file=sys.stderr)
    except (OSError, NotReplaced) as e:  # the path changed since it was checked, a full disk ...
        print(f"mtptui bench: cannot save the results: {getattr(e, 'strerror', None) or e}", file=sys.stderr)
        code = code or COULD_NOT_RUN
    print(f"mtptui bench: {bench.summary()}", file=sys.stderr)
    return code


def confirm(host: str, n: int, prod: bool) -> bool:
    if not sys.stdin.isatty():
        print("mtptui bench: stdin is not a terminal: add --yes to run without asking", file=sys.stderr)
        return False
    try:
        if prod:
            return input(f"{host} is tagged prod: type its name to restart it {n + 1} times: ").strip() == host
        return input(f"restart {host} up to {n + 1} times (each profile, then back as it was)? [y/N] "
                     ).strip().lower() in ("y", "yes")
    except EOFError:
        return False


class Bar:
    """One progress line on stderr (Progress.text()); on a terminal redrawn in place, elsewhere a
    line when the step changes and when a concurrency level is done."""

    def __init__(self, out) -> None:
        self.out = out
        self.tty = out.isatty()
        self.last: tuple = ()

    def show(self, p) -> None:
        if self.tty:
            self.out.write("\r\x1b[2K" + printable(p.text()[:200]))
            self.out.flush()
            return
        key = (p.profile, p.step, p.concurrency, p.detail, p.total and p.done == p.total)
        if key != self.last:
            print(printable(p.text()), file=self.out, flush=True)
        self.last = key


async def run_restoring(command: str, host: str, runner):
    """`runner.run()` (a Bench, or a Tune) with ctrl-c, SIGTERM and SIGHUP meaning "stop and
    restore the host": the first asks the runner to stop and put the host back, the second says
    what it leaves and asks, or leaves it (commands/interrupts.py). The report, or None when the
    restore itself was given up (said here)."""
    from mtptui.commands.interrupts import Interrupts, say

    main_task = asyncio.current_task()
    assert main_task is not None  # run() is a task of asyncio.run

    def stop(why: str) -> None:
        say(f"\nmtptui {command}: {why}: stopping; restoring {host} as it was found "
            "(ctrl-c again asks to leave it as it is)")
        runner.cancel()

    def leave() -> None:
        main_task.cancel()

    try:
        with Interrupts(command, stop=stop, leaving=runner.leaving, leave=leave):
            return await runner.run()
    except asyncio.CancelledError:
        say(f"mtptui {command}: interrupted during the restore: {host} is NOT as it was found "
            f"(`mtptui audit --phases` has every step; `mtptui spec {host} --recover` puts back the last verified settings)")
        return None
