"""The `mtptui` command: a thin dispatcher. Each subcommand owns its arguments in its own module."""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import signal
import sys
from collections.abc import Iterator

# name -> (module, one-line help). Modules are imported only when used, so `summary` never pays
# for Textual or asyncssh.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("mtptui.commands.demo", "open the dashboard on the built-in SGLang simulator"),
    "replay": ("mtptui.commands.replay", "replay saved logs in the dashboard"),
    "open": ("mtptui.commands.open", "open saved logs in the dashboard at once, whole"),
    "live": ("mtptui.commands.live", "stream hosts over SSH into the dashboard (a unit, container or compose service)"),
    "local": ("mtptui.commands.local", "stream this machine's unit, container or compose service into the dashboard"),
    "record": ("mtptui.commands.record", "record hosts' logs (units, containers, compose services) to a file, headless"),
    "export": ("mtptui.commands.export", "serve hosts' speculation figures to Prometheus, headless"),
    "fleet": ("mtptui.commands.fleet", "every host Prometheus knows: speculation figures and outliers"),
    "summary": ("mtptui.commands.summary", "statistics of saved logs per host and rank (--json)"),
    "spec": ("mtptui.commands.spec", "show or change a unit's, container's or compose service's speculation settings"),
    "smoke": ("mtptui.commands.smoke", "ask each server a fixed question and check the answer"),
    "bench": ("mtptui.commands.bench", "A/B benchmark of speculation profiles; the host is restored after"),
    "tune": ("mtptui.commands.tune", "the best speculation settings by rounds of halving; the host restored after"),
    "audit": ("mtptui.commands.audit", "what mtptui did to hosts (the audit log)"),
    "sim": ("mtptui.sim.cli", "run the SGLang simulator (a stand-in server, not SGLang)"),
}

USAGE = "usage: mtptui COMMAND [ARGS...]\n\ncommands:\n" + "\n".join(
    f"  {name:<8} {help_}" for name, (_, help_) in COMMANDS.items()
) + "\n\n`mtptui COMMAND --help` tells more. Exit codes: 0 ok, 1 runtime or input error, 2 usage error."


@contextlib.contextmanager
def _lost_interrupts() -> Iterator[list[BaseException]]:
    """Notes a Ctrl-C that Python could not raise (it came inside a weakref callback or a
    __del__, where an exception is only printed as "Exception ignored in ..."): the command then
    ends with 130, as if it had been raised, and nothing is printed."""
    lost: list[BaseException] = []
    before = sys.unraisablehook

    def hook(u) -> None:
        if isinstance(u.exc_value, KeyboardInterrupt):
            lost.append(u.exc_value)
        else:
            before(u)

    sys.unraisablehook = hook
    try:
        yield lost
    finally:
        sys.unraisablehook = before


def _about(args: list[str]) -> int:
    """The usage (or the version), flushed here, where a write that fails is caught."""
    if args and args[0] == "--version":
        from mtptui import __version__

        print(f"mtptui {__version__}", flush=True)
        return 0
    print(USAGE, flush=True)
    return 0 if args else 2


def _interrupted() -> int:
    """Exit 130 after a Ctrl-C, and nothing else: no traceback, no death by signal.

    CPython flags a KeyboardInterrupt that left a string exec (our parser builds functions with
    exec) as unhandled even when it was caught; under `python -m` the interpreter then ends
    itself with SIGINT instead of exit 130. Each string exec clears the flag as it starts, and
    with SIGINT held from here on, neither that nor a second Ctrl-C during the shutdown can
    turn the exit status into a signal."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    exec("pass", {})  # noqa: S102 - a constant: see above
    return 130


def run() -> None:
    """The `mtptui` command: main(), its exit code once stdout is flushed (_flushed)."""
    code = main()
    raise SystemExit(_flushed(code, sys.argv[1] if len(sys.argv) > 1 else "--help"))


def _flushed(code: int, command: str) -> int:
    """The exit code once stdout is flushed, as main() says a failed write: a broken pipe 141, quietly,
    any other failed write one line and 1 (Python's own flush at exit would print a traceback-like
    warning and exit 120). What waits to be written then goes to /dev/null, so that flush finds
    nothing to fail on. Without a stdout at all (`>&-`: sys.stdout is None) there is nothing to flush."""
    if sys.stdout is None:
        return code
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as e:
        _write_failed(command, e)
        return code or 1
    return code


def _write_failed(command: str, e: OSError) -> None:
    """The one line of a write that failed (`mtptui summary ... > /full/disk`); what waits to be
    written is dropped."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    print(f"mtptui {command}: a write failed: {e.strerror or e}", file=sys.stderr)


def _lane_trouble() -> None:
    """One line where the compiled lane is built but off (stale, or it does not load): every line is
    then read in Python, 4-6x slower. Said only for commands that loaded it (core/compiled.py)."""
    compiled = sys.modules.get("mtptui.core.compiled")
    trouble = getattr(compiled, "TROUBLE", None)
    if trouble:
        print(f"mtptui: warning: the compiled lane {trouble}; lines are read in Python, slower", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help", "--version"):
        try:
            return _about(args)
        except BrokenPipeError:  # `mtptui --help | head -1`
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141
        except OSError as e:  # `mtptui --help > /dev/full`
            _write_failed(args[0] if args else "--help", e)
            return 1
    entry = COMMANDS.get(args[0])
    if entry is None:
        print(f"mtptui: unknown command {args[0]!r} (try mtptui --help)", file=sys.stderr)
        return 2
    from mtptui.errors import UserError
    from mtptui.printable import printable

    try:
        with _lost_interrupts() as lost:
            command = importlib.import_module(entry[0])
            _lane_trouble()
            code = int(command.main(args[1:]) or 0)
        return _interrupted() if lost else code
    except UserError as e:  # said once, here, for every command
        print(f"mtptui {args[0]}: {printable(str(e), newlines=True)}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        return _interrupted()
    except BrokenPipeError:
        # the reader went away (`mtptui summary ... | head`): stop quietly, as a pipe would
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as e:
        if e.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EIO):
            raise
        _write_failed(args[0], e)  # the output, or a file of its own, had no room
        return 1
