"""`mtptui replay` refuses what it cannot replay before the screen opens, from a file or a pipe
alike: one line on stderr and exit 1."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

SMALL_LOG = Path(__file__).resolve().parents[1] / "tui" / "data" / "small.log"
BLOB = bytes(range(256)) * 64
JOURNAL = b"LPKSHHRH" + b"\x00" * 4000


def run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    # A session of its own: no controlling terminal, as in a script or a cron job.
    return subprocess.run([sys.executable, "-m", "mtptui", "replay", *args], input=stdin,
                          capture_output=True, start_new_session=True, timeout=60)


def one_line(r: subprocess.CompletedProcess) -> str:
    err = r.stderr.decode()
    assert r.returncode == 1 and r.stdout == b"", err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize("data, words", [(BLOB, "binary data, not a text log"),
                                         (gzip.compress(BLOB), "binary data, not a text log"),
                                         (JOURNAL, "a binary journal file; export it first")],
                         ids=["binary", "gzip-binary", "journal"])
def test_stdin_is_refused_as_the_same_data_in_a_file_is(tmp_path, data, words):
    f = tmp_path / "blob.bin"
    f.write_bytes(data)
    from_file, from_pipe = one_line(run(str(f))), one_line(run("-", stdin=data))
    assert from_file.startswith(f"mtptui replay: {f}: {words}")
    assert from_pipe.startswith(f"mtptui replay: stdin: {words}")
    assert from_pipe.replace("stdin", "X").replace("FILE", "X") == from_file.replace(str(f), "X")


def test_a_good_log_on_stdin_without_a_terminal_says_what_is_missing():
    err = one_line(run("-", stdin=SMALL_LOG.read_bytes()))
    assert "no terminal to read keys from" in err


def test_missing_and_directory(tmp_path):
    assert one_line(run(str(tmp_path / "nope.log"))).endswith("nope.log: no such file")
    assert one_line(run(str(tmp_path))).endswith(": is a directory")
    assert "only once" in one_line(run("-", "-", stdin=b"x\n"))


def test_summary_reads_stdin_with_the_same_checks():
    r = subprocess.run([sys.executable, "-m", "mtptui", "summary", "-"], input=gzip.compress(BLOB),
                       capture_output=True, timeout=60)
    assert r.returncode == 1 and r.stderr.decode().strip() == "mtptui summary: stdin: binary data, not a text log"
    r = subprocess.run([sys.executable, "-m", "mtptui", "summary", "--json", "-"],
                       input=gzip.compress(SMALL_LOG.read_bytes()), capture_output=True, timeout=60)
    assert r.returncode == 0 and json.loads(r.stdout)["lines"]["read"] == 377, r.stderr
