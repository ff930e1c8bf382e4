"""`mtptui summary` on bad and hostile input: one line on stderr and a non-zero exit, or counted."""

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINE = ("Mar 09 16:03:25 gpu-a python3[1]: [2026-03-09 16:03:25 TP0] Decode batch, #running-req: 3, "
        "#token: 100, token usage: 0.01, accept len: 2.50, accept rate: 0.50, cuda graph: True, "
        "gen throughput (token/s): 100.00, #queue-req: 0\n")


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "mtptui", *args], input=stdin, capture_output=True)


def summary_json(*args, stdin=None):
    r = run("summary", "--json", *args, stdin=stdin)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def assert_one_line_error(r, code, *words):
    assert r.returncode == code
    err = r.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, err
    assert r.stdout == b""


def test_missing_file(tmp_path):
    assert_one_line_error(run("summary", str(tmp_path / "nope.log")), 1, "no such file")


def test_directory(tmp_path):
    assert_one_line_error(run("summary", str(tmp_path)), 1, "is a directory")


def test_binary_file(tmp_path):
    f = tmp_path / "blob.bin"
    f.write_bytes(bytes(range(256)) * 64)
    assert_one_line_error(run("summary", str(f)), 1, "binary")


def test_journal_file_is_explained(tmp_path):
    f = tmp_path / "system.journal"
    f.write_bytes(b"LPKSHHRH" + b"\x00" * 4000)
    assert_one_line_error(run("summary", str(f)), 1, "journalctl --file")


def test_unreadable_file(tmp_path):
    f = tmp_path / "secret.log"
    f.write_text(LINE)
    f.chmod(0)
    argv = [sys.executable, "-m", "mtptui", "summary", str(f)]
    if os.geteuid() == 0:
        # root reads files whatever their mode: ask as nobody (the project stays readable)
        tmp_path.chmod(0o755)
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    r = subprocess.run(argv, capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert_one_line_error(r, 1, "permission denied")


def test_empty_file(tmp_path):
    f = tmp_path / "empty.log"
    f.write_text("")
    doc = summary_json(str(f))
    assert doc["series"] == [] and doc["events"] == []
    assert doc["lines"]["read"] == 0


def test_ten_megabyte_line_is_counted_as_dropped(tmp_path):
    f = tmp_path / "huge.log"
    f.write_text(LINE + "x" * (10 << 20) + "\n" + LINE)
    doc = summary_json(str(f))
    assert doc["lines"]["read"] == 3 and doc["lines"]["dropped"] == 1 and doc["lines"]["batch"] == 2
    assert doc["series"][0]["decode"]["batches"] == 2


@pytest.mark.parametrize("bad,malformed", [("inf", 3), ("-Infinity", 3), ("1e999", 3), ("9" * 400, 3),
                                           ("8.988465674311579e+307", 3), ("-1e290", 3), ("nan", 2)])
def test_values_no_server_logs_are_refused(tmp_path, bad, malformed):
    """Infinities and numbers too large for a double, or for a sum of two, make a field unreadable
    (the line counts as malformed). NaN in a throughput is "no value" (SGLang prints `nan%`): left out of the
    statistics; the accept len (SGLang cannot print NaN there, issue 42) and the integer field are malformed. The
    output stays strict JSON."""
    f = tmp_path / "bad.log"
    lines = [LINE.replace("accept len: 2.50", f"accept len: {bad}"),
             LINE.replace("#running-req: 3", f"#running-req: {bad}"),
             LINE.replace("gen throughput (token/s): 100.00", f"gen throughput (token/s): {bad}"),
             '{"MESSAGE":"x","__REALTIME_TIMESTAMP":"' + "9" * 400 + '"}\n', LINE]
    f.write_text("".join(lines))
    r = run("summary", "--json", str(f))
    assert r.returncode == 0, r.stderr

    def no_constants(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    doc = json.loads(r.stdout, parse_constant=no_constants)
    assert doc["lines"]["batch"] == 4 and doc["lines"]["malformed"] == malformed
    dec = doc["series"][0]["decode"]
    assert dec["batches"] == 4
    assert dec["accept_len"]["n"] == 3 and dec["accept_len"]["max"] == 2.5
    assert dec["running_req"]["n"] == 3 and dec["running_req"]["max"] == 3
    assert dec["gen_throughput"]["n"] == 3 and dec["gen_throughput"]["max"] == 100.0


def test_binary_bytes_inside_a_text_log(tmp_path):
    f = tmp_path / "mixed.log"
    f.write_bytes(LINE.encode() + b"\xff\xfe garbage \x80\n" + b"nul \x00 byte\n" + LINE.encode())
    doc = summary_json(str(f))
    assert doc["lines"] == {**doc["lines"], "read": 4, "batch": 2, "unparsed": 1, "dropped": 1}


def test_gzip_and_truncated_gzip(tmp_path):
    good = tmp_path / "log.gz"
    good.write_bytes(gzip.compress((LINE * 1000).encode()))
    assert summary_json(str(good))["series"][0]["decode"]["batches"] == 1000
    cut = tmp_path / "cut.gz"
    cut.write_bytes(good.read_bytes()[:-20])
    # its readable part read, its missing end counted (issue 42: `open` showed nothing of it)
    lines = summary_json(str(cut))["lines"]
    assert 900 < lines["batch"] < 1000 and lines["drop_reasons"] == {"truncated gzip: its end is missing": 1}
    garbage = tmp_path / "bad.gz"
    garbage.write_bytes(b"\x1f\x8b" + b"not really gzip" * 10)
    r = run("summary", str(garbage))
    assert r.returncode == 1 and r.stderr.decode().count("\n") == 1 and b"Traceback" not in r.stderr


def test_stdin():
    doc = summary_json("-", stdin=(LINE * 5).encode())
    assert doc["series"][0]["decode"]["accept_len"]["n"] == 5
    assert doc["series"][0]["host"] == "gpu-a"


def test_several_paths_add_up(tmp_path):
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_text(LINE * 2)
    b.write_text(LINE * 3)
    assert summary_json(str(a), str(b))["series"][0]["decode"]["batches"] == 5


def test_since_until(tmp_path):
    f = tmp_path / "t.log"
    f.write_text(LINE + LINE.replace("16:03:25", "16:05:00"))
    doc = summary_json("--since", "2026-03-09T16:04:00Z", str(f))
    assert doc["series"][0]["decode"]["batches"] == 1
    doc = summary_json("--until", "2026-03-09 16:04:00", str(f))
    assert doc["series"][0]["decode"]["batches"] == 1
    r = run("summary", "--since", "yesterday-ish", str(f))
    assert r.returncode == 2 and b"not a time" in r.stderr


def test_since_and_until_take_the_spans_live_takes(tmp_path):
    """`--since 10min` counts back from now, as `live --since 10min` does (journalctl's words)."""
    import time

    def at(minutes_ago: float) -> str:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time.time() - minutes_ago * 60))
        return LINE.replace("2026-03-09 16:03:25", stamp)

    f = tmp_path / "recent.log"
    f.write_text(at(90) + at(20) + at(20) + at(5))
    batches = {}
    for args in (("--since", "10min"), ("--since", "1h 30min"), ("--since=-30min",),
                 ("--until", "10min"), ("--since", "30 min", "--until", "10 min")):
        doc = summary_json(*args, str(f))
        batches[args] = doc["series"][0]["decode"]["batches"] if doc["series"] else 0
    assert batches[("--since", "10min")] == 1
    assert batches[("--since", "1h 30min")] >= 3  # the first line may fall a moment before
    assert batches[("--since=-30min",)] == 3
    assert batches[("--until", "10min")] == 3
    assert batches[("--since", "30 min", "--until", "10 min")] == 2


def test_table_output_names_what_it_shows(tmp_path):
    f = tmp_path / "t.log"
    f.write_text(LINE.replace(", accept len: 2.50, accept rate: 0.50", "") + LINE)
    r = run("summary", str(f))
    assert r.returncode == 0
    out = r.stdout.decode()
    assert "gpu-a" in out and "TP0" in out and "lines: 2 read" in out


def test_help_lists_exit_codes():
    r = run("summary", "--help")
    assert r.returncode == 0 and b"exit codes" in r.stdout
    top = run("--help")
    assert top.returncode == 0 and b"summary" in top.stdout


def test_unknown_command_and_no_command():
    r = run("frobnicate")
    assert r.returncode == 2 and r.stderr.count(b"\n") == 1
    assert run().returncode == 2


@pytest.mark.parametrize("name", ["a;rm -rf x", "$(touch pwned)", "`id`", "x y", "-dash"])
def test_shell_metacharacters_in_paths_are_just_names(tmp_path, name):
    f = tmp_path / name
    f.write_text(LINE)
    doc = summary_json("--", str(f)) if name.startswith("-") else summary_json(str(f))
    assert doc["lines"]["batch"] == 1
    assert not (tmp_path / "pwned").exists()


def test_a_reader_that_goes_away_gets_no_traceback(tmp_path):
    f = tmp_path / "big.log"
    f.write_text(LINE * 20000)
    p = subprocess.Popen([sys.executable, "-m", "mtptui", "summary", str(f)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.read(10)
    p.stdout.close()  # like `| head -c 10`
    err = p.stderr.read()
    assert p.wait() in (0, 141) and b"Traceback" not in err, err


@pytest.mark.parametrize("as_json", [True, False])
def test_the_process_ends_once_all_it_wrote_is_out(tmp_path, capsys, as_json):
    """The command line's process (cli.run) ends with all of its output written, flushed from its buffer,
    byte for byte what main() writes, to a pipe and to a file, and with its exit code."""
    from mtptui.cli import main

    start = ("Mar 09 16:03:25 gpu-a python3[1]: [2026-03-09 16:03:25 TP0] server_args=ServerArgs("
             "model_path='m', speculative_algorithm='EAGLE', speculative_num_steps={})\n")
    f = tmp_path / "runs.log"
    f.write_text("".join(start.format(r % 4) + LINE * 12 for r in range(1500)))
    args = ["summary", *(["--json"] if as_json else []), str(f)]
    assert main(args) == 0
    want = capsys.readouterr().out.encode()
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # its output waits in a buffer
    cmd = [sys.executable, "-m", "mtptui", *args]
    piped = subprocess.run(cmd, capture_output=True, env=buffered)
    assert (piped.returncode, piped.stderr) == (0, b"") and piped.stdout == want
    out = tmp_path / "out.txt"
    with out.open("wb") as o:
        assert subprocess.run(cmd, stdout=o, env=buffered).returncode == 0
    assert out.read_bytes() == want
    if as_json:
        assert len(json.loads(want)["epochs"]) == 1500


@pytest.mark.parametrize("as_json", [True, False])
def test_a_reader_gone_before_the_last_flush_is_141_without_a_word(tmp_path, as_json):
    """`summary small.log | true`: the output waits in its buffer until the process ends, and the flush
    there (cli.run) meets a pipe whose reader is gone: exit 141 and nothing on stderr, not Python's own
    "Exception ignored ... BrokenPipeError" and exit 120."""
    f = tmp_path / "small.log"
    f.write_text(LINE * 10)
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    read, write = os.pipe()
    os.close(read)
    try:
        r = subprocess.run([sys.executable, "-m", "mtptui", "summary", *(["--json"] if as_json else []), str(f)],
                           stdout=write, stderr=subprocess.PIPE, env=buffered)
    finally:
        os.close(write)
    assert (r.returncode, r.stderr) == (141, b"")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
@pytest.mark.parametrize("as_json", [True, False])
def test_an_output_without_room_is_one_line_and_exit_1(tmp_path, as_json):
    """`summary ... > /full/disk`: a one-line error, not a traceback, buffered or not."""
    f = tmp_path / "big.log"
    f.write_text(LINE * 20000)
    for env in (os.environ, {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}):
        with open("/dev/full", "wb") as full:
            r = subprocess.run([sys.executable, "-m", "mtptui", "summary", *(["--json"] if as_json else []), str(f)],
                               stdout=full, stderr=subprocess.PIPE, env=env)
        assert r.returncode == 1
        assert r.stderr.decode() == "mtptui summary: a write failed: No space left on device\n"
