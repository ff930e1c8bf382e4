"""`mtptui record --out` run as a user runs it: an existing file is never overwritten or lost.

The process tier: these start child processes (tests/unit starts none)."""

from __future__ import annotations
import socket
import subprocess
import sys
import pytest
from test_record_out import PRECIOUS, precious, config  # noqa: F401 (fixtures and builders shared with the unit tier)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens on it once closed


def mtptui(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mtptui", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, start_new_session=True)


def one_line(r: subprocess.CompletedProcess, code: int) -> str:
    assert r.returncode == code, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    return r.stderr.strip()


def test_record_out_over_an_existing_file_is_one_line_and_exit_2(precious, config):
    r = mtptui("record", "--config", str(config), f"root@127.0.0.1:{closed_port()}", "--unit", "x.service",
               "--out", str(precious))
    assert one_line(r, 2) == f"mtptui record: {precious} exists: --append to resume it, --force to overwrite"
    assert precious.read_bytes() == PRECIOUS


@pytest.mark.parametrize("mode", ["--append", "--force", None])
def test_record_to_an_unreachable_host_keeps_the_old_file_byte_for_byte(precious, config, tmp_path, mode):
    out = precious if mode else tmp_path / "fresh.json"
    r = mtptui("record", "--config", str(config), f"root@127.0.0.1:{closed_port()}", "--unit", "x.service",
               "--out", str(out), "--give-up-after", "1", *([mode] if mode else []))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    if mode:
        assert precious.read_bytes() == PRECIOUS
        assert f"mtptui record: {precious}: no entry received, left as it was" in r.stderr.splitlines()
    else:
        assert not out.exists()
        assert f"mtptui record: {out}: no entry received, not written" in r.stderr.splitlines()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["config.toml", "precious.json"])


def test_record_append_and_force_exclude_each_other(precious, config):
    r = mtptui("record", "--config", str(config), "root@127.0.0.1", "--unit", "x.service", "--out", str(precious),
               "--append", "--force")
    assert r.returncode == 2 and "not allowed with argument" in r.stderr
