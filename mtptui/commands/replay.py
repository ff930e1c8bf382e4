"""`mtptui replay PATH... [--speed X]`: saved logs in the dashboard, paced by their own timestamps.
At `--speed max` (and as `mtptui open PATH...`) the files are opened instead: read at once, at
summary's pace, and shown whole, the playhead at their end."""

from __future__ import annotations

import argparse
import os
import sys

from mtptui.config import Config, load_config
from mtptui.errors import UsageError, UserError
from mtptui.sources.base import Source
from mtptui.sources.replay import MAX_SPEED, ReplayClock, ReplaySource, parse_speed
from mtptui.config.windows import WINDOW_LABELS

EPILOG = """\
PATH is a saved log: a journalctl export in any short mode or json (-o json), a raw server log,
a .gz of either, or - for standard input. Several PATHs replay side by side on one clock (one
per host, say). Time comes from the logs: a 10-minute gap stays 10 minutes at 1x, 1 minute at
10x. --speed max opens the files instead (as `mtptui open`): read at once, in parallel parts, and
shown whole (window all), the playhead at their end; a progress bar while it reads; left seeks back.

keys: space pause · left/right seek · +/- speed · m metric · w window · ? all keys

exit codes: 0 quit, 1 an input cannot be read, 2 bad arguments or config
"""


def _speed(s: str) -> float:
    try:
        return parse_speed(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a speed: {s!r} (a positive number like 2 or 0.5, or max)") from None


def build_parser(prog: str = "mtptui replay") -> argparse.ArgumentParser:
    opening = prog.endswith("open")
    p = argparse.ArgumentParser(prog=prog, description=__doc__, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="PATH")
    if not opening:
        p.add_argument("--speed", type=_speed, default=1.0, metavar="X",
                       help="log seconds per second: 0.5, 1 (default), 10, 100 ... or max (opens the files)")
        p.add_argument("--paused", action="store_true", help="start paused (space plays)")
    p.add_argument("--window", choices=WINDOW_LABELS, default=None,
                   help="time window of the panels and the chart (w cycles it; default 5m, all when opening)")
    p.add_argument("--theme", metavar="NAME", help="colour theme (t cycles: mtptui-dark, -light, -high-contrast)")
    p.add_argument("--config", metavar="PATH",
                   help="config file: thresholds, keys, theme, hosts' accents (default: the user's config dir)")
    return p


def check_paths(paths: list[str], shown: list[str] | None = None) -> str | None:
    """A one-line problem with the inputs, found before the screen opens; else None.
    `shown`: the names for messages (`stdin` for a spooled standard input)."""
    from mtptui.sources.file import InputError, open_lines

    # The same reader as the replay, on the first bytes: missing files, binary journals and junk
    # are refused now, in the words the replay would use.
    for p, name in zip(paths, shown or paths):
        if p == "-":
            continue  # standard input is spooled to a file and checked as one (main refuses a terminal)
        try:
            lines = open_lines(p, name)
            next(lines, None)
            close = getattr(lines, "close", None)  # a generator: its file closed now, not at collection
            if close is not None:
                close()
        except InputError as e:
            return str(e)
    return None


def spool_stdin(paths: list[str]) -> tuple[list[str], str | None]:
    """`-` is read into a temporary file first (the dashboard reads its keys from standard input).
    Returns (paths, the temporary file to delete)."""
    if "-" not in paths or sys.stdin.isatty():
        return paths, None
    import shutil
    import tempfile

    tmp = tempfile.NamedTemporaryFile(prefix="mtptui-stdin-", suffix=".log", delete=False)
    with tmp:
        shutil.copyfileobj(sys.stdin.buffer, tmp)
    return [tmp.name if p == "-" else p for p in paths], tmp.name


def attach_terminal() -> str | None:
    """The terminal as standard input again, for the keys (Toolong #4: `tl <(journalctl)`)."""
    try:
        tty = os.open("/dev/tty", os.O_RDONLY)
    except OSError:
        return "no terminal to read keys from (stdin is the log); run it from a terminal"
    os.dup2(tty, 0)
    os.close(tty)
    return None


def main(argv: list[str], prog: str = "mtptui replay") -> int:
    args = build_parser(prog).parse_intermixed_args(argv)  # options may come between the positionals
    config = load_config(args.config)
    if args.paths.count("-") > 1:
        raise UserError("standard input (-) can be read only once")
    if "-" in args.paths and sys.stdin.isatty():  # the screen would wait for a log typed there, deaf to keys
        raise UsageError("- reads a log from standard input, which is this terminal: pipe one in "
                         f"(journalctl -o json | {prog} -)")
    paths, spooled = spool_stdin(args.paths)
    try:
        shown = ["stdin" if p == "-" else p for p in args.paths]
        problem = check_paths(paths, shown) or (attach_terminal() if spooled else None)
        if problem:
            raise UserError(problem)
        return _run(args, paths, config)
    finally:
        if spooled:
            os.unlink(spooled)


def opens(args: argparse.Namespace) -> bool:
    """`open`, or a replay at full speed from the start: the files are read at once."""
    return getattr(args, "speed", MAX_SPEED) == MAX_SPEED and not getattr(args, "paused", False)


def _run(args: argparse.Namespace, paths: list[str], config: Config) -> int:
    from mtptui.tui.launch import run_dashboard

    names = ", ".join(os.path.basename(p) if p != "-" else "stdin" for p in args.paths)
    if opens(args):
        from mtptui.tui.opening import Opening

        shown = ["stdin" if g == "-" else g for g in args.paths]
        return run_dashboard([], config=config, title=f"open: {names}", window=args.window or "all",
                             theme=args.theme, opening=Opening(paths, shown))
    clock = ReplayClock(args.speed, paused=args.paused)
    sources: list[Source] = [ReplaySource(p, clock) for p in paths]
    for src, given in zip(sources, args.paths):
        if given == "-":
            src.label = "replay stdin"
    return run_dashboard(sources, config=config, title=f"replay: {names}", window=args.window or "5m",
                         theme=args.theme)
