"""The hostile tier (issue 42, item 7): every subcommand against generated hostile inputs (bytes,
lines, journald JSON fields, TOML configs, flags, audit lines, Prometheus answers). An input fails
its test when the command
- ends with a traceback (an exception left main, or one was printed),
- hangs (killed at TIME_LIMIT seconds),
- takes more than MEM_FAIL of memory (it runs under an address-space limit, MEM_LIMIT),
- dies by a signal, or
- exits 0 having said nothing on either stream.

Each input runs in a child forked from one warm interpreter (zygote.py): hundreds of inputs a minute.

Seeds are kept: by default the inputs are derandomized (the same ones every run, so a failure found
in `make test` is found again), MTPTUI_HOSTILE_EXAMPLES inputs per test (30). The longer run
(`python bench/hostile_fuzz.py`, or MTPTUI_HOSTILE=long) draws new ones from a seed it prints
(`--hypothesis-seed N` replays it) and prints each failure's reproduce blob. The session's last
lines say how many inputs were tried.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
TIME_LIMIT = 20.0  # seconds an input may take (a command here has nothing slow to wait for)
MEM_LIMIT = 3 << 30  # the child's address space
MEM_FAIL = 1 << 20  # KiB of peak memory past which an input fails (1 GiB)

LONG = os.environ.get("MTPTUI_HOSTILE") == "long"
_common = dict(deadline=None, suppress_health_check=list(HealthCheck), print_blob=True)
# in `make test`: no shrinking (a hang costs TIME_LIMIT a try); the failing input is printed as found
settings.register_profile("hostile", max_examples=int(os.environ.get("MTPTUI_HOSTILE_EXAMPLES", "30")),
                          derandomize=True, database=None, phases=[Phase.explicit, Phase.generate], **_common)
settings.register_profile("hostile-long", max_examples=int(os.environ.get("MTPTUI_HOSTILE_EXAMPLES", "400")),
                          derandomize=False, **_common)
PROFILE = settings.get_profile("hostile-long" if LONG else "hostile")

TRIED: dict[str, int] = {}  # test -> inputs run


@dataclass
class Ran:
    argv: list[str]
    how: str  # exit, hang, signal, crash
    rc: int | None
    out: str
    err: str
    peak_kib: int

    def trouble(self) -> str | None:
        """What breaks the house rule, in a line; None when the command behaved."""
        if self.how == "hang":
            return f"hang: still running after {TIME_LIMIT:g} s"
        if self.how == "crash" or ("Traceback (most recent call last)" in self.err
                                   and "(simulated by mtptui)" not in self.err):
            return "traceback"
        if self.how == "signal":
            return f"killed by signal {self.rc}"
        if self.peak_kib > MEM_FAIL:
            return f"memory: peak {self.peak_kib >> 10} MiB"
        if self.rc == 0 and not self.out.strip() and not self.err.strip():
            return "exit 0 with nothing said"
        return None

    def check(self) -> None:
        why = self.trouble()
        if why:
            tail = "\n".join(self.err.strip().splitlines()[-12:])
            raise AssertionError(f"mtptui {' '.join(self.argv)!r}: {why} (rc {self.rc})\n{tail}")


class Zygote:
    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "MTPTUI_AUDIT_LOG": os.devnull}
        self.proc = subprocess.Popen([sys.executable, str(HERE / "zygote.py")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        assert self.proc.stdout is not None and json.loads(self.proc.stdout.readline()) == {"ready": True}

    def run(self, argv: list[str], *, cwd: str, stdin: bytes = b"", env: dict | None = None,
            timeout: float = TIME_LIMIT, counted: str = "") -> Ran:
        TRIED[counted] = TRIED.get(counted, 0) + 1
        with tempfile.TemporaryDirectory(prefix="io-", dir=cwd) as io_dir:
            paths = {k: os.path.join(io_dir, k) for k in ("stdin", "stdout", "stderr")}
            Path(paths["stdin"]).write_bytes(stdin)
            Path(paths["stdout"]).touch()
            Path(paths["stderr"]).touch()
            req = {"argv": argv, "cwd": cwd, **paths, "env": env or {}, "mem": MEM_LIMIT, "timeout": timeout}
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
            got = json.loads(self.proc.stdout.readline())
            out = Path(paths["stdout"]).read_bytes()[:1 << 20].decode("utf-8", "replace")
            err = Path(paths["stderr"]).read_bytes()[:1 << 20].decode("utf-8", "replace")
        return Ran(argv, got["how"], got["rc"], out, err, got["peak_kib"])

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="session")
def zygote():
    z = Zygote()
    yield z
    z.close()


@pytest.fixture
def work(tmp_path_factory):
    """A fresh directory per test for the inputs' files (reused across a test's examples)."""
    return tmp_path_factory.mktemp("hostile")


def pytest_sessionfinish(session):
    """An xdist worker hands its count to the controller (tests/conftest.py sums and says them)."""
    out = getattr(session.config, "workeroutput", None)
    if out is not None and TRIED:
        out["hostile_tried"] = json.dumps(TRIED)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if TRIED:
        total = sum(TRIED.values())
        terminalreporter.write_line(f"hostile tier: {total} inputs tried ({'random, seeded' if LONG else 'derandomized'}): "
                                    + ", ".join(f"{k} {v}" for k, v in sorted(TRIED.items())))
