"""`mtptui live [HOST...]`: stream hosts' journald over SSH into the dashboard."""

from __future__ import annotations

import argparse
import sys

from mtptui.config import RUNTIMES, Config, HostConfig, container_arg, load_config, ranges, resolve_hosts, unit_arg
from mtptui.errors import UsageError, UserError
from mtptui.printable import printable
from mtptui.sources.base import Source

EPILOG = """\
HOST is a name from the config's [[hosts]], or ad hoc user@host[:port] (an ~/.ssh/config alias
works as host) with --unit, or --container NAME, or --compose PATH --service NAME. Without HOST:
every host in the config.

Deployment forms: a systemd unit (its journal, `journalctl -f`), a `docker run` container or a
compose service's replicas (`docker logs -f --timestamps`, resumed by time and text after a lost
link; a container's restart is a new run). Over SSH, or on this machine with `mtptui local`.

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
    add_container_args(p)


def add_container_args(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """A container host instead of a unit: shared by live, local, record and spec."""
    p.add_argument("--container", metavar="NAME", type=container_arg,
                   help="follow (and act on) a container started with `docker run` instead of a unit")
    p.add_argument("--compose", metavar="PATH",
                   help="a compose project (its directory or compose file) whose --service to follow, instead of a unit")
    p.add_argument("--service", metavar="NAME", type=container_arg,
                   help="the compose service; each replica is an engine of its own")
    p.add_argument("--runtime", choices=RUNTIMES, help="the container runtime (default: docker)")


def container_target(args: argparse.Namespace) -> dict[str, str | None]:
    """--container, --compose and --service, --runtime: the host's target in place of its unit."""
    compose, service = getattr(args, "compose", None), getattr(args, "service", None)
    if bool(compose) != bool(service):
        raise UsageError("--compose and --service go together (the project and its service)")
    if (compose or getattr(args, "container", None)) and getattr(args, "unit", None):
        raise UsageError("--unit, --container and --compose name the target: give one")
    if compose and getattr(args, "container", None):
        raise UsageError("--container and --compose name the target: give one")
    return {"container": getattr(args, "container", None), "compose": compose, "service": service,
            "runtime": getattr(args, "runtime", None)}


def docker_since(text: str | None) -> str | None:
    """`--since` as the runtime's logs take it: epoch seconds (the words are core/timespec.py's)."""
    if not text:
        return None
    import time

    from mtptui.core.timespec import when

    return f"{when(text, time.time()):.9f}"


def container_source(h: HostConfig, runner, *, since: str | None, lines: int | None) -> Source:
    """A container host's live source: its container's or its service's replicas' logs."""
    from mtptui.sources.backoff import Backoff
    from mtptui.sources.container import ContainerLogSource
    from mtptui.sources.runtime import selector_of

    return ContainerLogSource(runner, selector_of(h), host=h.name, lines=h.lines if lines is None else lines,
                              since=docker_since(since), backoff=Backoff(h.reconnect_initial, h.reconnect_max),
                              config=h)


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
                   help=f"{what}add to an existing record, each host resuming after its last entry there "
                        "(a unit by cursor, a container by stamp)")
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
    return f"{path} exists: --append to resume it, --force to overwrite"


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
    """One source per host of args.hosts (all config hosts when none): its unit's journal over
    SSH, or its container's (its compose service's) logs, over SSH or on this machine."""
    from mtptui.sources.ssh import SshJournalSource
    from mtptui.transport.local import LocalRunner
    from mtptui.transport.ssh import SshTransport

    hosts = resolve_hosts(list(getattr(args, "hosts", None) or []), config,
                          unit=getattr(args, "unit", None), sudo=getattr(args, "sudo", None),
                          identity=getattr(args, "identity", None), target=container_target(args))
    since, lines = getattr(args, "since", None), getattr(args, "lines", None)
    sources: list[Source] = [
        SshJournalSource(h, since=since, lines=lines) if h.kind == "systemd" else
        container_source(h, LocalRunner() if h.local else SshTransport(h), since=since, lines=lines)
        for h in hosts]
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
