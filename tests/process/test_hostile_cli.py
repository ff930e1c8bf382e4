"""Issue 42 as a user meets it, command by command: hostile text, files, values and flags each get
one clear line and a non-zero exit, or are counted and shown; never a traceback, never raw escape
sequences on the terminal. The process tier: each runs `python -m mtptui` as a child."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

BATCH = ("Mar 09 16:03:25 gpu-a python3[1]: [2026-03-09 16:03:25 TP0] Decode batch, #running-req: 3, "
         "#token: 100, token usage: 0.01, accept len: 2.50, accept rate: 0.50, cuda graph: True, "
         "gen throughput (token/s): 100.00, #queue-req: 0\n")
RAW = ("\x1b", "\x07", "\x9b")


def run(*args: str, stdin: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mtptui", *args], input=stdin, capture_output=True, timeout=120,
                          env=env, stdin=None if stdin is not None else subprocess.DEVNULL)


def one_line_error(r: subprocess.CompletedProcess, code: int, *words: str) -> str:
    err = r.stderr.decode(errors="replace")
    assert r.returncode == code and err.count("\n") == 1 and "Traceback" not in err, (r.returncode, err)
    for w in words:
        assert w in err, err
    return err


def test_summary_shows_an_event_text_escaped(tmp_path):
    log = tmp_path / "ev.log"
    log.write_text(BATCH + "Mar 09 16:03:26 gpu-a python3[1]: [2026-03-09 16:03:26 TP0] Scheduler hit an "
                   "exception: \x1b]0;owned\x07 boom\n")
    r = run("summary", str(log))
    out = r.stdout.decode()
    assert r.returncode == 0 and "owned" in out and not any(c in out for c in RAW), out


FIRST_WRITE_FAILS = """
import asyncio, resource, signal, sys
from mtptui.commands.live import record_left
from mtptui.commands.record import StatusPrinter, record
from mtptui.sources.follow import FollowFileSource
from mtptui.sources.record import {mode}, RecordWriter

log, out = sys.argv[1:3]
writer = RecordWriter(out, {mode})
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
asyncio.run(record([FollowFileSource(log, host="gpu1")], writer, StatusPrinter(), 30))
writer.close()
print(record_left(writer), writer.entries, writer.lost)
"""


@pytest.mark.parametrize("mode", ["NEW", "FORCE"])
def test_a_record_whose_first_write_fails_says_so_and_stops(tmp_path, mode):
    """Issue 42: a record whose first write failed said "no entry received" and exited 0 after
    164 entries had arrived (a full disk); now the record stops at once and says what failed."""
    log, out = tmp_path / "in.log", tmp_path / "out.json"
    log.write_text(BATCH * 164)
    if mode == "FORCE":
        out.write_text("old record\n")
    r = subprocess.run([sys.executable, "-c", FIRST_WRITE_FAILS.format(mode=mode), str(log), str(out)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    said, entries, lost = r.stdout.rsplit(" ", 2)
    assert said.startswith(f"{out}: a write failed after 0 entries: File too large"), r.stdout
    assert entries == "0" and int(lost) >= 1
    assert not out.exists() if mode == "NEW" else out.read_text() == "old record\n"


def test_an_identity_file_that_is_no_key_is_refused_before_it_is_read():
    """asyncssh reads a key file whole: `--identity /dev/zero` would never end."""
    r = run("spec", "--identity", "/dev/zero", "root@127.0.0.1:1", "--unit", "x")
    one_line_error(r, 1, "identity file /dev/zero: not a key (a regular file of at most 1 MiB)")


def test_config_dev_zero_costs_its_limit_not_the_machine():
    """Issue 42: `--config /dev/zero` took all 24 GB of the machine in 15 s. Under a 2 GB address
    space the old read fails with MemoryError (a traceback); now it is one line."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    r = subprocess.run([sys.executable, "-m", "mtptui", "spec", "--config", "/dev/zero", "gpu1"], capture_output=True,
                       timeout=120, stdin=subprocess.DEVNULL, preexec_fn=limit)
    one_line_error(r, 2, "/dev/zero: a config larger than 1 MiB: refused")


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_a_long_line_costs_bounded_memory(tmp_path, how):
    """Issue 42: a 500 MB line cost 1 GB before it was dropped. A 200 MB line here: dropped and
    counted, the process never holding it (its peak stays under half the line)."""
    log = tmp_path / "long.log"
    with open(log, "wb") as f:
        f.write(BATCH.encode())
        for _ in range(200):  # a MiB at a time: the child forked from here starts small (its peak counts ours)
            f.write(b"x" * (1 << 20))
        f.write(b"\n")
        f.write(BATCH.encode())
    with open(log, "rb") as stdin:
        r = subprocess.run([sys.executable, "-c", PEAK, "summary", "--json", str(log) if how == "file" else "-"],
                           stdin=stdin, capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out, peak_kib = r.stdout.rsplit(b"\n", 1)
    lines = json.loads(out)["lines"]
    assert (lines["read"], lines["batch"], lines["dropped"]) == (3, 2, 1)
    assert int(peak_kib) < 100 << 10, peak_kib


# the command, then the peak memory of it and of the workers it forked (KiB), on a line of its own.
# The peak is reset first (clear_refs 5): a child forked from a big test process starts at its size.
PEAK = """
import resource, sys
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
from mtptui.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
hwm = next(int(x.split()[1]) for x in open("/proc/self/status") if x.startswith("VmHWM:"))
print(max(hwm, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss), end="")
sys.exit(code)
"""


# Values no server prints (issue 42): each makes its field unreadable (the line counted malformed), on
# the compiled lane and on the Python path alike; never averaged. SGLang 0.5.11,
# srt/observability/scheduler_metrics_mixin.py (log_decode_stats): accept len is accepted tokens over
# forward passes (each pass accepts at least one: >= 1), accept rate accepted drafts over drafted (0-1).
IMPOSSIBLE = [("accept len: 2.50", "accept len: -3.00", "accept_len"), ("accept len: 2.50", "accept len: 0.50", "accept_len"),
              ("accept rate: 0.50", "accept rate: -0.50", "accept_rate"), ("accept rate: 0.50", "accept rate: 1.50", "accept_rate"),
              ("gen throughput (token/s): 100.00", "gen throughput (token/s): -5.00", "gen_throughput"),
              ("#running-req: 3", "#running-req: " + "1" + "0" * 29, "running_req"),
              ("#running-req: 3", "#running-req: -1", "running_req"), ("accept len: 2.50", "accept len: nan", "accept_len")]


@pytest.mark.parametrize("pure", ["", "1"])
@pytest.mark.parametrize("good, bad, field", IMPOSSIBLE)
def test_a_value_no_server_prints_is_malformed_never_averaged(tmp_path, good, bad, field, pure):
    import os

    log = tmp_path / "bad.log"
    log.write_text(BATCH * 3 + BATCH.replace(good, bad) * 2)
    r = run("summary", "--json", str(log), env={**os.environ, "MTPTUI_PURE": pure})
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["lines"]["batch"], doc["lines"]["malformed"]) == (5, 2), doc["lines"]
    stats = doc["series"][0]["decode"][field]
    assert stats["n"] == 3 and stats["min"] == stats["max"], stats


def test_a_time_outside_1970_9999_is_dropped_per_line(tmp_path):
    """Issue 42: one entry dated year 10000 crashed summary's table (and the dashboard)."""
    msg = BATCH.split(": ", 1)[1].strip()  # the server's message without its syslog envelope
    entries = [{"__REALTIME_TIMESTAMP": us, "_HOSTNAME": "gpu-a", "MESSAGE": msg}
               for us in ("1773072205000000", "253402300800000000", "1773072206000000")]
    log = tmp_path / "y10000.json"
    log.write_text("".join(json.dumps(e) + "\n" for e in entries))
    for args in ([], ["--json"]):
        r = run("summary", *args, str(log))
        assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr
    doc = json.loads(r.stdout)
    assert doc["lines"]["dropped"] == 1 and doc["lines"]["drop_reasons"] == {"time outside 1970-9999": 1}
    assert doc["lines"]["batch"] == 2


def test_a_log_whose_times_run_backwards_is_refused_in_one_line(tmp_path):
    """Issue 42: `journalctl -r` output gave 7 epochs instead of 3 and false percentage changes."""
    from pathlib import Path

    sample = Path(__file__).resolve().parents[2] / "sample_logs" / "mtp-off-baseline.log"
    rev = tmp_path / "reversed.log"
    rev.write_text("".join(reversed(sample.read_text().splitlines(keepends=True))))
    one_line_error(run("summary", str(rev)), 1, "its times run backwards", "journalctl -r")
    # a year-less log over new year's eve runs forwards, though its last stamps read earlier
    body = BATCH.split(": ", 1)[1]
    ny = tmp_path / "newyear.log"
    ny.write_text(f"Dec 31 23:59:00 gpu python3[1]: {body}" + "".join(
        f"Jan 01 00:{i % 60:02d}:00 gpu python3[1]: {body}" for i in range(300)))
    assert run("summary", str(ny)).returncode == 0


# --- the old list (issue 42, item 6): each one line and a non-zero exit, or read as it should be ------

def test_nul_bytes_before_line_1_are_read_past(tmp_path):
    """What copytruncate leaves: 64 NULs before line 1 rejected the whole log as binary."""
    plain = tmp_path / "plain.log"
    plain.write_text(BATCH * 20)
    nul = tmp_path / "nul.log"
    nul.write_bytes(b"\0" * 64 + plain.read_bytes())
    for args in ([str(nul)], ["--jobs", "1", str(nul)], ["-"]):
        r = run("summary", "--json", *args, stdin=nul.read_bytes() if args == ["-"] else None)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["lines"]["batch"] == 20


def test_options_may_come_between_the_positionals(tmp_path):
    """`spec HOST --unit x PROFILE` was refused (`unrecognized arguments`); `summary A --json B` too."""
    log = tmp_path / "a.log"
    log.write_text(BATCH * 2)
    r = run("summary", str(log), "--json", str(log))
    assert r.returncode == 0 and json.loads(r.stdout)["lines"]["batch"] == 4, r.stderr
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    r = run("spec", "--config", str(empty), "root@127.0.0.1:1", "--unit", "x", "mtp2", "--dry-run")
    err = one_line_error(r, 1, "127.0.0.1")  # it got as far as the host (nothing listens on port 1)
    assert "unrecognized" not in err


def test_bad_since_fault_and_order_are_refused_as_parsed(tmp_path):
    for args, said in ((["record", "gpu1", "--out", str(tmp_path / "r"), "--since", "bogus"], "not a time: 'bogus'"),
                       (["live", "gpu1", "--since", "yesterdayish"], "not a time"),
                       (["demo", "--fault", "nonsense"], "unknown fault 'nonsense'"),
                       (["demo", "--fault", "crash@nan"], "fault time must be seconds")):
        r = run(*args)
        err = r.stderr.decode()
        assert r.returncode == 2 and said in err and "Traceback" not in err, (args, err)
    log = tmp_path / "a.log"
    log.write_text(BATCH)
    one_line_error(run("summary", "--since", "1h", "--until", "2h", str(log)), 2, "--since is after --until")


def test_a_truncated_gzip_is_read_as_far_as_it_goes_in_open(tmp_path):
    """`open` of a truncated .gz dropped its readable part, and `open good.log trunc.gz` showed
    neither: the store now holds both, the missing end counted."""
    import gzip

    good = tmp_path / "good.log"
    good.write_text(BATCH * 10)
    cut = tmp_path / "cut.gz"
    cut.write_bytes(gzip.compress((BATCH * 1000).encode())[:-20])
    code = ("import sys; from mtptui.sources.opener import open_store; o = open_store(sys.argv[1:]); "
            "print(o.counts.batch, dict(o.counts.drop_reasons))")
    r = subprocess.run([sys.executable, "-c", code, str(good), str(cut)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    batches, reasons = r.stdout.split(" ", 1)
    assert 900 < int(batches) < 1010 and "truncated gzip: its end is missing" in reasons, r.stdout


def test_export_file_refuses_binary_and_a_fifo_at_once(tmp_path):
    """`export --file BINARY` was silent; `export --file FIFO` blocked in open(), deaf to SIGTERM."""
    import os

    binary = tmp_path / "bin.dat"
    binary.write_bytes(bytes(range(256)) * 20)
    one_line_error(run("export", "--file", str(binary), "--listen", "127.0.0.1:0"), 1, "binary data, not a text log")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    one_line_error(run("export", "--file", str(fifo), "--listen", "127.0.0.1:0"), 1, "not a regular file")


def test_local_without_a_journal_says_so_instead_of_live():
    probe = subprocess.run(["journalctl", "--disk-usage"], capture_output=True, text=True)
    if "No journal files were found" not in probe.stdout + probe.stderr:
        pytest.skip("this machine keeps a journal")
    one_line_error(run("local", "--unit", "sglang"), 1, "no journal to read")


def test_fleet_exit_codes_are_its_helps():
    r = run("fleet", "--prometheus", "http://127.0.0.1:1")
    one_line_error(r, 2, "the view needs a terminal (use --once or --json)")
    one_line_error(run("fleet", "--once", "--prometheus", "http://127.0.0.1:1"), 1, "cannot reach Prometheus")
    assert "2 bad arguments, config or --match (or\nno terminal" in run("fleet", "--help").stdout.decode()


@pytest.mark.parametrize("command", ["replay", "open"])
def test_stdin_on_a_terminal_is_refused_not_a_deaf_screen(command):
    import os
    import pty

    leader, follower = pty.openpty()
    try:
        r = subprocess.run([sys.executable, "-m", "mtptui", command, "-"], stdin=follower, capture_output=True,
                           timeout=60)
    finally:
        os.close(leader)
        os.close(follower)
    one_line_error(r, 2, "standard input, which is this terminal: pipe one in")


def test_help_into_a_closed_pipe_or_a_full_disk_is_no_traceback():
    p = subprocess.Popen([sys.executable, "-m", "mtptui", "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # `| head -0`: the reader went away before a byte
    assert p.wait(timeout=60) in (0, 141) and b"Traceback" not in p.stderr.read()
    p.stderr.close()
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "mtptui", "--help"], stdout=full, stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 1 and r.stderr == b"mtptui --help: a write failed: No space left on device\n", r.stderr


def test_an_unreadable_file_as_another_user_is_one_line(tmp_path):
    import os

    if os.geteuid() != 0:
        pytest.skip("runs the command as nobody: needs root to switch")
    log = tmp_path / "secret.log"
    log.write_text(BATCH)
    log.chmod(0o600)
    tmp_path.chmod(0o755)

    def nobody() -> None:
        os.setgid(65534)
        os.setuid(65534)

    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    r = subprocess.run([sys.executable, "-m", "mtptui", "summary", str(log)], capture_output=True, timeout=60,
                       preexec_fn=nobody, env=env, cwd="/")
    one_line_error(r, 1, "permission denied")


@pytest.mark.parametrize("args, said", [
    (["fleet", "--once", "--prometheus", "http://[::1"], "not a Prometheus URL"),
    (["sim", "--model-path", "m", "--port", "99999"], "--port 99999: give an integer from 0 to 65535"),
    (["sim", "--model-path", "m", "--page-size", "0"], "--page-size 0: give an integer from 1"),
])
def test_the_named_tracebacks_are_one_line(args, said):
    r = run(*args)
    err = r.stderr.decode()
    assert r.returncode == 2 or r.returncode == 1, err
    assert said in err and "Traceback" not in err and err.count("\n") == 1, err


# --- found by the hostile tier (tests/hostile), not named by issue 42 -------------------------------------

def test_a_unit_name_with_a_control_character_is_refused_where_it_is_read(tmp_path):
    """`local --unit $'\\0'` (reachable from a config's "\\u0000") ended in subprocess's ValueError."""
    cfg = tmp_path / "c.toml"
    cfg.write_text('[defaults]\nunit = "a\\u0000b"\n')
    one_line_error(run("local", "--config", str(cfg)), 2, "c.toml:2: defaults.unit: must be a unit name")
    r = run("local", "--unit", "a\nb")
    assert r.returncode == 2 and b"must be a unit name" in r.stderr and b"Traceback" not in r.stderr


def test_export_whose_every_host_is_given_up_on_ends(tmp_path):
    """`export HOST --give-up-after 1` gave the host up and went on serving nothing, for ever."""
    r = run("export", "root@127.0.0.1:1", "--unit", "u", "--listen", "127.0.0.1:0", "--give-up-after", "1")
    err = r.stderr.decode()
    assert r.returncode == 1 and "Traceback" not in err, err
    assert err.splitlines()[-1].startswith("mtptui export: root@127.0.0.1:1: ") and "gave up after 1s" in err
