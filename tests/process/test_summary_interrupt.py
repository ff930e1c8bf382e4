"""Ctrl-C during `mtptui summary` of a big file: exit 130, no traceback from the worker processes,
and no worker left behind, whenever it comes.

A terminal's Ctrl-C is SIGINT to the whole foreground process group, so the command runs in a
process group of its own and the test signals that group, as the terminal would.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from logsynth import SGLangServer, utc

from mtptui.sources.parallel import PARALLEL_MIN_BYTES


@pytest.fixture(scope="module")
def big_log(tmp_path_factory) -> Path:
    """Six times the size from which summary splits a file across worker processes: with the
    compiled lane a smaller file is read before the latest interrupt comes."""
    server = SGLangServer(None, "raw", ["TP0", "TP1"], [("0.5.4", 3000)])
    block = "".join(ln.text + "\n" for _, group in server.lines(random.Random(1), utc(2026, 3, 9, 12))
                    for ln in group).encode()
    path = tmp_path_factory.mktemp("big") / "big.log"
    with open(path, "wb") as f:
        for _ in range(6 * PARALLEL_MIN_BYTES // len(block) + 1):
            f.write(block)
    return path


def group_members(pgid: int) -> list[int]:
    """Processes of the process group (the command and its workers)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(d))
    return out


def wait_for(what, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < deadline, "the moment to interrupt never came"
        time.sleep(0.005)


# When the Ctrl-C comes: as soon as the file is open (reading its head, planning the parts, starting
# the pool), as soon as the workers exist, and at a few moments while they parse: those on the
# Python path (MTPTUI_PURE=1), as the compiled one (core/compiled.py) may have read the file by then.
MOMENTS = [("file open", None, ""), ("workers started", 0.0, ""), ("workers parsing", 0.1, "1"),
           ("workers parsing", 0.3, "1"), ("workers parsing", 0.6, "1")]


@pytest.mark.parametrize("moment, after, pure", MOMENTS, ids=[f"{m} +{a}s" if a else m for m, a, _ in MOMENTS])
def test_ctrl_c_exits_130_quietly(big_log, moment, after, pure):
    # SIGINT as a terminal's foreground job has it: a suite started in the background of a
    # non-interactive shell inherits it ignored, and so would the command
    p = subprocess.Popen([sys.executable, "-m", "mtptui", "summary", "--jobs", "3", str(big_log)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                         env={**os.environ, "MTPTUI_PURE": pure},
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        if moment == "file open":
            fd_dir = Path(f"/proc/{p.pid}/fd")

            def is_open():
                try:
                    return any(os.readlink(fd_dir / fd) == str(big_log) for fd in os.listdir(fd_dir))
                except OSError:  # an fd closed while we looked
                    return False

            wait_for(is_open)
        else:
            wait_for(lambda: len(group_members(p.pid)) > 1)
            time.sleep(after)
        assert p.poll() is None, "the summary ended before the interrupt: make the file bigger"
        os.killpg(p.pid, signal.SIGINT)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    text = err.decode()
    assert p.returncode == 130, text
    assert "Traceback" not in text and len(text.splitlines()) <= 1, text
    assert group_members(p.pid) == [], "a worker outlived the interrupt"


COMMAND = '''
import sys
from mtptui import cli

class Finalised:
    def __del__(self):
        raise KeyboardInterrupt  # Python can only print this one ("Exception ignored in ...")

def main(argv):
    if argv == ["in-exec"]:
        exec("raise KeyboardInterrupt", {})  # as when it comes while the parser builds a reader
    Finalised()
    return 0

if __name__ == "__main__":
    cli.COMMANDS["boom"] = ("boom", "")
    sys.exit(cli.main(["boom", *sys.argv[1:]]))
'''


@pytest.mark.parametrize("where", ["in-exec", "in-del"])
def test_an_interrupt_python_would_misreport_still_exits_130(tmp_path, where):
    """The two ways CPython loses a Ctrl-C's exit status: a KeyboardInterrupt that left a string
    exec ends a `python -m` process by SIGINT although it was caught; one raised in a __del__ is
    printed and dropped, and the command would end with 0."""
    (tmp_path / "boom.py").write_text(COMMAND)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    r = subprocess.run([sys.executable, "-m", "boom", where], capture_output=True, env=env, timeout=60)
    assert r.returncode == 130 and r.stderr == b"", r.stderr.decode()
