"""The hostile tier's runner: one clean interpreter that has imported mtptui's commands once, then
forks a child per input (milliseconds, not an interpreter's start). A request is one JSON line on
stdin; the answer one JSON line on stdout.

Each child runs `mtptui.cli.main(argv)` as the `mtptui` command would, in its own process group,
in `cwd`, with its stdin, stdout and stderr on the files named, under an address-space limit
(`mem`), and is killed with its group after `timeout` seconds. The answer says how it ended:
`exit` (with rc), `hang` (killed at the time limit), `signal` (with its number), `crash` (an
exception left main: its traceback is in the stderr file) and the peak memory in KiB.

Run as `python tests/hostile/zygote.py`; tests/hostile/conftest.py starts it once a session.
"""

from __future__ import annotations

import ctypes
import importlib
import io
import json
import os
import resource
import signal
import sys
import time
import traceback

# imported here, once, before any fork: a child then starts at once
WARM = ["mtptui.cli", "mtptui.commands.summary", "mtptui.commands.audit", "mtptui.commands.fleet",
        "mtptui.commands.spec", "mtptui.commands.replay", "mtptui.commands.record", "mtptui.commands.export",
        "mtptui.commands.bench", "mtptui.commands.tune", "mtptui.commands.smoke", "mtptui.commands.live",
        "mtptui.commands.local", "mtptui.commands.demo", "mtptui.sim.cli", "mtptui.sources.parallel",
        "mtptui.fleet.prom", "mtptui.control.audit"]
CRASHED = 99  # what a child exits with when an exception left main()
PR_SET_PDEATHSIG = 1


def child(req: dict) -> None:
    """In the forked child: never returns."""
    code = CRASHED
    try:
        os.setpgid(0, 0)
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # never outlives the zygote
        if os.getppid() != req["zygote"]:  # it died before the line above
            os._exit(CRASHED)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as Python sets it
        resource.setrlimit(resource.RLIMIT_AS, (req["mem"], req["mem"]))
        for fd, path, flags in ((0, req["stdin"], os.O_RDONLY), (1, req["stdout"], os.O_WRONLY),
                                (2, req["stderr"], os.O_WRONLY)):
            f = os.open(path, flags)
            os.dup2(f, fd)
            os.close(f)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace",
                                      line_buffering=True)
        os.chdir(req["cwd"])
        os.environ.update(req.get("env") or {})
        sys.argv = ["mtptui", *req["argv"]]
        from mtptui.cli import main

        code = main(req["argv"])
        sys.stdout.flush()
        sys.stderr.flush()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001 - the code is what counts
            pass
    except BaseException:  # noqa: BLE001 - the finding: kept in stderr
        try:
            traceback.print_exc()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001
            pass
        code = CRASHED
    os._exit(code)


def serve() -> None:
    for name in WARM:
        importlib.import_module(name)
    out = sys.stdout
    print(json.dumps({"ready": True}), file=out, flush=True)
    for line in sys.stdin:
        req = {**json.loads(line), "zygote": os.getpid()}
        pid = os.fork()
        if pid == 0:
            child(req)
        deadline = time.monotonic() + req["timeout"]
        how, rc, peak = "exit", None, 0
        while True:
            got, status, usage = os.wait4(pid, os.WNOHANG)
            if got:
                peak = usage.ru_maxrss
                break
            if time.monotonic() > deadline:
                how = "hang"
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                _, status, usage = os.wait4(pid, 0)
                peak = usage.ru_maxrss
                break
            time.sleep(0.005)
        if how != "hang":
            if os.WIFSIGNALED(status):
                how, rc = "signal", os.WTERMSIG(status)
            else:
                rc = os.WEXITSTATUS(status)
                how = "crash" if rc == CRASHED else "exit"
        try:  # what the child left running in its group (a forked reader, a simulator) goes too
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        print(json.dumps({"how": how, "rc": rc, "peak_kib": peak}), file=out, flush=True)


if __name__ == "__main__":
    serve()
