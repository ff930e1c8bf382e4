"""`mtptui local [--unit U | --container NAME | --compose PATH --service NAME]`: this machine's
journald, or a container's (a compose service's replicas') logs, in the dashboard, no SSH
(incident triage)."""

from __future__ import annotations

import argparse
import asyncio
import socket

from dataclasses import replace

from mtptui.commands.live import add_record_args, add_stream_args, container_source, container_target, record_and_launch
from mtptui.config import ConfigError, HostConfig, load_config
from mtptui.errors import UserError
from mtptui.sources.base import Source
from mtptui.sources.journal import diagnose
from mtptui.sources.local import LocalJournalSource

EPILOG = """\
Reading a system unit's journal needs root or the systemd-journal (or adm) group; --sudo runs
`sudo -n journalctl`, which must not ask for a password.

exit codes: 0 ok, 1 runtime error (no journal rights, no journalctl), 2 bad arguments or config
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mtptui local", description=__doc__, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_stream_args(p)
    p.add_argument("--host", metavar="NAME", help="name to show for this machine (default: hostname)")
    add_record_args(p)
    p.add_argument("--read-only", action="store_true", help="no restart or rollback actions")
    return p


async def preflight(argv: list[str], who: str) -> str | None:
    """Runs journalctl once, without following, for a clear error before the screen opens."""
    from mtptui.transport import local
    from mtptui.transport.errors import TransportError

    try:
        proc = await local.start(argv)
    except TransportError as e:
        return e.message
    out = b""
    while data := await proc.read():
        out = (out + data)[-4096:]
    rc = await proc.wait()
    fatal = diagnose(proc.stderr_text, rc, who=who, where="this machine", sudo=False, local=True)
    if fatal:
        return fatal.message
    if "--disk-usage" not in argv:  # no entry of the unit may only mean a quiet unit: is there a journal?
        at = next(i for i, a in enumerate(argv) if a.endswith("journalctl"))
        return await preflight([*argv[:at + 1], "--disk-usage", "--no-pager"], who)
    said = (out.decode("utf-8", "replace") + proc.stderr_text).lower()
    if "no journal files were found" in said:
        # else the screen says LIVE over a stream that can never bring a line
        return ("this machine: no journal to read (journald keeps no files here: /var/log/journal, "
                "/run/log/journal; is systemd-journald running?)")
    return None


def build_source(args: argparse.Namespace, config) -> Source:
    """This machine's unit journal, or its container's (compose service's) logs."""
    h = local_container(args, config)
    if h is not None:
        from mtptui.transport.local import LocalRunner

        return container_source(h, LocalRunner(), since=args.since, lines=args.lines)
    unit = args.unit or config.defaults.get("unit")
    if not unit:
        raise ConfigError("which unit? give --unit (or unit = ... in [defaults])")
    sudo = bool(args.sudo if args.sudo is not None else config.defaults.get("sudo", False))
    lines = args.lines if args.lines is not None else config.defaults.get("lines", 200)
    return LocalJournalSource(unit, host=args.host or socket.gethostname(), sudo=sudo,
                              since=args.since, lines=lines,
                              extra=tuple(config.defaults.get("journalctl_args", ())))


def local_container(args: argparse.Namespace, config) -> HostConfig | None:
    """This machine's container or compose service named by --container or --compose/--service
    (a host of its own, named --host or after its target), None for a unit."""
    target = container_target(args)
    if not (target["container"] or target["service"]):
        return None
    name = getattr(args, "host", None) or target["container"] or target["service"]
    return replace(config.new_host(name), unit="", local=True, **{k: v for k, v in target.items() if v})


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    config = load_config(args.config)
    source = build_source(args, config)
    if not isinstance(source, LocalJournalSource):
        return record_and_launch("mtptui local", args, [source], config, f"local: {source.label}")
    check = source.argv()
    check = [a for a in check if a != "--follow" and not a.startswith("--lines")] + ["--lines=1"]
    problem = asyncio.run(preflight(check, source.who))
    if problem:
        raise UserError(problem)
    return record_and_launch("mtptui local", args, [source], config, f"local: {source.unit}")
