"""`mtptui live [HOST...]`: stream hosts' journald over SSH into the dashboard."""

from __future__ import annotations

import argparse
import sys

from mtptui.config import Config, load_config, ranges, resolve_hosts, unit_arg
from mtptui.errors import UsageError, UserError
from mtptui.printable import printable
from mtptui.sources.base import Source

EPILOG = """\
HOST is a name from the config's [[hosts]], or ad hoc user@host[:port] (an ~/.ssh/config alias
works as host) with --unit. Without HOST: every host in the config.

The config is ~/.config/mtptui/config.toml unless --config; its fields are in the README.
Host keys are checked against known_hosts: an unknown or changed key is refused.

With --give-up-after S, a host without a stream for S seconds is given up on; once every host
is, the dashboard closes. Either way the exit code is 1, with one line per host on stderr.

exit codes: 0 ok, 1 runtime error or a host given up on, 2 bad arguments or config
"""


def _since(text: str) -> str:
    """A `--since` journalctl will take (core/timespec.py reads the same words), checked here and not
    by journalctl on the host once the stream starts; passed on as written."""
    import time

    from mtptui.core.timespec import when

    try:
        when(text, time.time())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a time: {text!r} (10min, 2h, today, 2026-03-09 16:00 ...)") from None
    return text


def add_stream_args(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Arguments shared by live, local and record."""
    p.add_argument("--config", metavar="PATH", help="config file (default: the user's config dir)")
    p.add_argument("--unit", metavar="UNIT", type=unit_arg, help="systemd unit to follow (overrides the config)")
    p.add_argument("--since", metavar="WHEN", type=_since,
                   help="start with history: a span back from now (10min, 2h) or a journalctl time")
    p.add_argument("--lines", type=ranges.LINES, metavar="N",
                   help="history entries to start with when no --since (default: 200, or the config's lines)")
    p.add_argument("--sudo", action="store_true", default=None,
                   help="run journalctl as `sudo -n journalctl` (never asks for a password)")


def add_host_args(p: argparse.ArgumentParser) -> None:
    """The hosts to stream from, and how: shared by live and record."""
    p.add_argument("hosts", nargs="*", metavar="HOST")
    add_stream_args(p)
    p.add_argument("--identity", metavar="KEY", help="private key for ad hoc hosts")
    p.add_argument("--give-up-after", type=ranges.GIVE_UP_AFTER, metavar="S",
                   help="stop trying a host that has had no stream for S seconds (cannot be resolved, "
                        "refuses, lost) and exit 1 (default: retry for ever)")


def add_record_mode_args(p: argparse.ArgumentParser, what: str = "") -> None:
    """--append and --force: what to do with a record file that exists (else it is refused)."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--append", action="store_true",
                   help=f"{what}add to an existing record, each host resuming after its last entry there (by cursor)")
    g.add_argument("--force", action="store_true",
                   help=f"{what}overwrite an existing record (once the first entry has come)")


def add_record_args(p: argparse.ArgumentParser) -> None:
    """--record FILE with its --append / --force: shared by live and local."""
    p.add_argument("--record", metavar="FILE", help="also write every entry received to FILE (never over an "
                                                    "existing one without --append or --force)")
    add_record_mode_args(p, "with --record: ")


def record_mode(args: argparse.Namespace) -> str:
    from mtptui.sources.record import APPEND, FORCE, NEW

    return APPEND if getattr(args, "append", False) else FORCE if getattr(args, "force", False) else NEW


def record_exists(path: str) -> str:
    return f"{path} exists: --append to resume it by cursor, --force to overwrite"


def record_left(writer) -> str | None:
    """The line for a record that failed (a full disk: exit 1), or for a session that received
    nothing: what became of the file."""
    if writer.failed is not None:
        lost = f"; {writer.lost} later entries not recorded" if writer.lost else ""
        return (f"{writer.path}: a write failed after {writer.entries} entries: "
                f"{writer.failed.strerror or writer.failed}{lost}")
    if not writer.nothing_written:
        return None
    how = "left as it was" if writer.existed else "not written"
    return f"{writer.path}: no entry received, {how}"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mtptui live", description=__doc__, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_host_args(p)
    add_record_args(p)
    p.add_argument("--read-only", action="store_true", help="no restart or rollback actions")
    return p


def build_sources(args: argparse.Namespace, config: Config) -> list[Source]:
    """One SSH journal source per host of args.hosts (all config hosts when none)."""
    from mtptui.sources.ssh import SshJournalSource

    hosts = resolve_hosts(list(getattr(args, "hosts", None) or []), config,
                          unit=getattr(args, "unit", None), sudo=getattr(args, "sudo", None),
                          identity=getattr(args, "identity", None))
    sources: list[Source] = [SshJournalSource(h, since=getattr(args, "since", None),
                                              lines=getattr(args, "lines", None)) for h in hosts]
    after = getattr(args, "give_up_after", None)
    if after:
        from mtptui.sources.giveup import GiveUpSource

        sources = [GiveUpSource(s, after) for s in sources]
    return sources


def report_given_up(prog: str, sources: list[Source]) -> bool:
    """One line per host given up on (--give-up-after); True if there was one."""
    gave_up = [s for s in sources if getattr(s, "gave_up", None)]
    for s in gave_up:
        print(printable(f"{prog}: {s.host}: {getattr(s, 'gave_up')}"), file=sys.stderr)
    return bool(gave_up)


def quiet_asyncssh() -> None:
    # asyncssh logs every connect and channel at INFO; the dashboard and `record` say what matters.
    import logging

    logging.getLogger("asyncssh").setLevel(logging.CRITICAL)


def open_record(path: str | None, sources: list[Source], mode: str = "new"):
    """Wraps the sources for --record (resumed by cursor with --append). Returns (sources,
    writer or None), or raises OSError (RecordExists for a file that exists in mode new)."""
    if not path:
        return sources, None
    from mtptui.sources.record import RecordingSource, RecordWriter

    writer = RecordWriter(path, mode)
    writer.resume(sources)
    return [RecordingSource(s, writer) for s in sources], writer


def launch(sources: list[Source], config: Config, *, read_only: bool, title: str) -> int:
    from mtptui.tui.launch import run_dashboard  # Textual loads only when a screen is wanted

    return int(run_dashboard(sources, config=config, read_only=read_only, title=title) or 0)


def record_and_launch(prog: str, args, sources: list[Source], config: Config, title: str) -> int:
    """The dashboard on these sources, with `--record FILE` when asked: live's and local's end."""
    from mtptui.sources.record import RecordExists

    if not args.record and record_mode(args) != "new":
        raise UsageError("--append and --force go with --record FILE")
    try:
        sources, writer = open_record(args.record, sources, record_mode(args))
    except RecordExists:
        raise UsageError(record_exists(args.record)) from None
    except OSError as e:
        raise UserError(f"{args.record}: {e.strerror or e}") from None
    try:
        code = launch(sources, config, read_only=args.read_only, title=title)
    finally:
        if writer is not None:
            writer.close()
            left = record_left(writer)
            if left:
                print(f"{prog}: {left}", file=sys.stderr)
    return 1 if writer is not None and writer.failed is not None and not code else code


def main(argv: list[str]) -> int:
    args = build_parser().parse_intermixed_args(argv)  # options may come between the positionals
    config = load_config(args.config)
    sources = build_sources(args, config)
    quiet_asyncssh()
    names = ", ".join(str(s.host) for s in sources)
    code = record_and_launch("mtptui live", args, sources, config, f"live: {names}")
    return 1 if report_given_up("mtptui live", sources) else code
