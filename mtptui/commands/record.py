"""`mtptui record HOST... --out FILE`: headless; every journald entry received goes to FILE."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time

from mtptui.commands.live import (add_host_args, add_record_mode_args, build_sources, quiet_asyncssh,
                                  record_exists, record_left, record_mode)
from mtptui.config import ConfigError, load_config, ranges
from mtptui.errors import UsageError, UserError
from mtptui.printable import printable
from mtptui.sources.base import FAILED, Source, SourceStatus
from mtptui.sources.record import RecordExists, RecordingFeed, RecordWriter

EPILOG = """\
HOST as for `mtptui live`: a systemd unit's journal, a `docker run` container's logs or a compose
service's (each replica a host, HOST-N). The record is JSON lines, one journald entry each (a
container's line as its MESSAGE, the runtime's stamp as its time), with _HOSTNAME set to the host's
name; `mtptui summary FILE` and `mtptui replay FILE` read it. Host state changes are printed on
stderr, one line each. Ends after --duration, or on Ctrl-C / SIGTERM.

An existing FILE is never overwritten unless --force, and then only once the first entry has
come; --append adds to it, each host resuming after its last entry there (a unit by its journal
cursor, a container by the runtime's stamps and the lines' text), so nothing comes twice and
nothing between is lost. A session that received no entry leaves no file, or the old one as it was.

exit codes: 0 ok, 1 a host failed (bad key, auth, no rights; with --give-up-after S, no stream for
S seconds) or FILE cannot be written (a write that fails says how many entries were lost), 2 bad
arguments or config, or FILE exists (without --append or --force) or is not a regular file (a
device, a FIFO, a symbolic link: never replaced). Limits: docs/limits.md
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mtptui record", description=__doc__, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_host_args(p)
    p.add_argument("--local", action="store_true",
                   help="this machine's journal (no SSH), as `mtptui local` would show it")
    p.add_argument("--host", metavar="NAME", help="with --local: the name to record (default: hostname)")
    p.add_argument("--out", required=True, metavar="FILE", help="the record to write")
    add_record_mode_args(p)
    p.add_argument("--duration", type=ranges.DURATION, metavar="S", help="stop after S seconds")
    return p


class StatusPrinter:
    """The headless feed: counts entries per host, prints each state change as one line."""

    def __init__(self, out=None) -> None:
        self.out = out or sys.stderr
        self.entries: dict[str | None, int] = {}
        self.state: dict[str | None, SourceStatus] = {}
        self.drops: dict[str | None, int] = {}

    def lines(self, raw: list[str], host: str | None) -> None:
        self.entries[host] = self.entries.get(host, 0) + len(raw)

    def status(self, st: SourceStatus) -> None:
        self.state[st.host] = st
        stamp = time.strftime("%H:%M:%S", time.localtime(st.ts))
        print(f"{stamp} {printable(st.describe(st.ts, f'{st.host}: {st.state}'))}", file=self.out, flush=True)

    def dropped(self, n: int, reason: str, host: str | None) -> None:
        self.drops[host] = self.drops.get(host, 0) + n
        print(printable(f"{host}: dropped {n}: {reason}"), file=self.out, flush=True)

    def failed(self) -> list[str | None]:
        return [h for h, st in self.state.items() if st.state == FAILED]


async def record(sources, writer: RecordWriter, printer: StatusPrinter,
                 duration: float | None) -> None:
    feed = RecordingFeed(printer, writer)
    stop = asyncio.Event()
    writer.on_fail = stop.set  # a record that cannot be written is over (exit 1, said)
    tasks = [asyncio.ensure_future(s.run(feed)) for s in sources]
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    everything = asyncio.gather(*tasks, return_exceptions=True)
    waits: list[asyncio.Future] = [asyncio.ensure_future(stop.wait()), everything]
    try:
        await asyncio.wait(waits, timeout=duration, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        waits[0].cancel()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def main(argv: list[str]) -> int:
    args = build_parser().parse_intermixed_args(argv)  # options may come between the positionals
    config = load_config(args.config)
    if args.local:
        if args.hosts:
            raise ConfigError("--local records this machine: give no HOST")
        from mtptui.commands.local import build_source

        sources: list[Source] = [build_source(args, config)]
    else:
        sources = build_sources(args, config)
    quiet_asyncssh()
    try:
        writer = RecordWriter(args.out, record_mode(args))
        said = writer.resume(sources)
    except RecordExists:
        raise UsageError(record_exists(args.out)) from None
    except OSError as e:
        raise UserError(f"{args.out}: {e.strerror or e}") from None
    for line in said:
        print(printable(line), file=sys.stderr)
    printer = StatusPrinter()
    try:
        asyncio.run(record(sources, writer, printer, args.duration))
    finally:
        writer.close()
    left = record_left(writer)
    if left:
        print(f"mtptui record: {left}", file=sys.stderr)
    for s in sources:
        print(printable(f"{s.host}: {printer.entries.get(s.host, 0)} entries"), file=sys.stderr)
    failed = printer.failed()
    return 1 if failed or writer.failed is not None else 0
