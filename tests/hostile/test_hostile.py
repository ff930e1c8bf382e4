"""Every subcommand against generated hostile inputs (see conftest.py for what fails an input)."""

from __future__ import annotations

import http.server
import json
import os
import stat
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import PROFILE

# --- pieces of hostile input -----------------------------------------------------------------------

ESCAPES = ["\x1b]0;owned\x07", "\x1b[2J", "\x9b31m", "\r", "\u202e", "\x00", "\ud800", "\udcff", "\x7f", "\t", "\n"]
NUMBERS = ["nan", "-nan", "inf", "-inf", "1e999", "-1", "-0", "0", "1e29", "9" * 400, "1_000", "0x10", "+5", "",
           " ", "1.5", "3.00", "2.50", "0.50", "-3.00", "100000000000000000000000000000", "1e-400", "٣"]
TEXT = st.one_of(st.text(max_size=40), st.sampled_from(ESCAPES + NUMBERS))

BATCH = ("[2026-03-09 16:03:{s:02d} TP0] Decode batch, #running-req: {a}, #token: {b}, token usage: {c}, "
         "accept len: {d}, accept rate: {e}, cuda graph: True, gen throughput (token/s): {f}, #queue-req: {g}")
STAMPS = ["Mar 09 16:03:25 gpu-a python3[1]: ", "2026-03-09T16:03:25+00:00 gpu python3[1]: ",
          "10000-01-01T00:00:00+00:00 gpu python3[1]: ", "Feb 30 25:61:61 gpu x[1]: ", "", "\x00" * 64,
          "2026-03-09T16:03:25.123456789Z stdout F "]
EVENTS = ["Scheduler hit an exception: ", "Traceback (most recent call last):", "server_args=ServerArgs(",
          "The server is fired up and ready to roll!", "CUDA out of memory", "Started sglang.service",
          "Main process exited, code=exited, status=1/FAILURE", "MTPTUI_GAP ", "Decode batch", "Prefill batch"]


@st.composite
def batch_line(draw) -> str:
    vals = {k: draw(st.sampled_from(NUMBERS) | st.integers(-10**6, 10**20).map(str)) for k in "abcdefg"}
    return draw(st.sampled_from(STAMPS)) + BATCH.format(s=draw(st.integers(0, 59)), **vals)


LINE = st.one_of(batch_line(), st.builds(lambda s, e, t: s + e + t, st.sampled_from(STAMPS), st.sampled_from(EVENTS), TEXT),
                 TEXT, st.text(max_size=200), st.just("x" * 70_000))


@st.composite
def log_text(draw) -> bytes:
    lines = draw(st.lists(LINE, max_size=30))
    if draw(st.booleans()):
        lines = lines[::-1]  # a log whose times run backwards
    return "\n".join(lines).encode("utf-8", "surrogatepass") + draw(st.sampled_from([b"", b"\n", b"\r\n"]))


JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(allow_nan=False),
                        TEXT, st.sampled_from(["253402300800000000", "-1", "1773072205000000", "9" * 400]))
JSON_VALUE = st.recursive(JSON_SCALAR, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                          max_leaves=8)
JOURNAL_KEYS = ["MESSAGE", "__REALTIME_TIMESTAMP", "_HOSTNAME", "__CURSOR", "_SYSTEMD_UNIT", "_PID",
                "_SYSTEMD_INVOCATION_ID", "SYSLOG_IDENTIFIER", "MTPTUI_GAP", "MTPTUI_METRICS", "MTPTUI_GPUS", "log", "time"]


def _dumps(v) -> str:
    return json.dumps(v, ensure_ascii=False, allow_nan=True)


@st.composite
def journal_json(draw) -> bytes:
    entries = []
    for _ in range(draw(st.integers(0, 12))):
        e = {k: draw(JSON_VALUE) for k in draw(st.lists(st.sampled_from(JOURNAL_KEYS), max_size=8, unique=True))}
        if draw(st.booleans()):
            e["MESSAGE"] = draw(batch_line() | st.sampled_from(EVENTS) | st.lists(st.integers(0, 255), max_size=40))
        entries.append(_dumps(e))
    return "\n".join(entries).encode("utf-8", "surrogatepass") + b"\n"


def run(zygote, work, argv, stdin=b"", env=None, name=""):
    got = zygote.run(argv, cwd=str(work), stdin=stdin, counted=name or argv[0],
                     env={"XDG_CONFIG_HOME": str(work), "HOME": str(work), **(env or {})})
    got.check()
    return got


# --- saved logs ----------------------------------------------------------------------------------------

@PROFILE
@given(data=st.one_of(log_text(), journal_json(), st.binary(max_size=3000)),
       args=st.sampled_from([[], ["--json"], ["--jobs", "2"], ["--since", "2026-03-09 16:03:30"]]),
       gz=st.booleans())
def test_summary_of_hostile_logs(zygote, work, data, args, gz):
    import gzip

    path = work / ("in.log.gz" if gz else "in.log")
    path.write_bytes(gzip.compress(data)[:None if len(data) % 3 else -7] if gz else data)  # some cut short
    run(zygote, work, ["summary", *args, str(path)], name="summary (logs, journald JSON, bytes)")
    run(zygote, work, ["summary", "--json", "-"], stdin=data, name="summary (logs, journald JSON, bytes)")


# --- the audit log ---------------------------------------------------------------------------------------

AUDIT_KEYS = ["id", "time", "user", "host", "unit", "action", "profile", "result", "message", "phases",
              "exit_code", "exec_start_before", "exec_start_after", "dropin_before", "verified", "closed_at"]


@st.composite
def audit_log(draw) -> bytes:
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        e = {k: draw(JSON_VALUE) for k in draw(st.lists(st.sampled_from(AUDIT_KEYS), max_size=10, unique=True))}
        if draw(st.booleans()):
            e["phases"] = [{"phase": draw(TEXT), "state": draw(st.sampled_from(["start", "ok", "fail"]) | TEXT),
                            "elapsed_s": draw(JSON_SCALAR), "detail": draw(TEXT)} for _ in range(draw(st.integers(0, 3)))]
        lines.append(_dumps(e) if draw(st.integers(0, 5)) else draw(TEXT))
    return "\n".join(lines).encode("utf-8", "surrogatepass")


@PROFILE
@given(log=audit_log(), args=st.sampled_from([[], ["--phases"], ["--json"], ["-n", "1"], ["--host", "gpu1"]]))
def test_audit_of_hostile_lines(zygote, work, log, args):
    path = work / "audit.jsonl"
    path.write_bytes(log)
    run(zygote, work, ["audit", *args], env={"MTPTUI_AUDIT_LOG": str(path)}, name="audit (lines)")


# --- configs ---------------------------------------------------------------------------------------------

TOML_KEYS = {"defaults": ["port", "user", "unit", "lines", "connect_timeout", "keepalive_interval", "reconnect_max",
                          "sudo", "journalctl_args", "host_key_policy", "identity", "tags", "accent", "http_port"],
             "control": ["wait_timeout", "verify_batches", "lock_stale_after", "prod_tags", "smoke_prompt"],
             "thresholds": ["stale_s", "coverage", "accept_len_one_max", "baseline_min_s"],
             "profiles.p": ["algorithm", "num_steps", "topk", "num_draft_tokens", "draft_model_path", "env", "extra_args"],
             "keys": ["quit", "pause", "help", "nosuch"], "hosts": ["name", "address", "port", "unit", "tags"]}
TOML_VALUES = ["nan", "inf", "-inf", "-1", "0", "1e400", "9" * 30, "true", '"x"', '""', "[]", '["a", 1]', "{}",
               '"\\u001b[2J"', '"\\ud800"', '"\\x00"', "1979-05-27T07:32:00Z", "0x10", "1_000_000_000", '"a\\nb"',
               "'''\nmulti\n'''", "{ a = 1 }", "[[1, 2], [3]]", "+1.5", "30", '"EAGLE"', '"NEXTN"', '"sglang"']


@st.composite
def toml_text(draw) -> bytes:
    out = []
    if draw(st.booleans()):
        out.append(f"theme = {draw(st.sampled_from(TOML_VALUES))}")
    for table in draw(st.lists(st.sampled_from(sorted(TOML_KEYS) + ["nosuch", "hosts"]), max_size=5)):
        out.append(f"[[{table}]]" if table == "hosts" else f"[{table}]")
        for key in draw(st.lists(st.sampled_from(TOML_KEYS.get(table, ["x"])), max_size=6)):
            out.append(f"{key} = {draw(st.sampled_from(TOML_VALUES))}")
    if draw(st.integers(0, 8)) == 0:
        out.append(draw(TEXT))  # not TOML at all
    return "\n".join(out).encode("utf-8", "surrogatepass")


@PROFILE
@given(config=toml_text(), command=st.sampled_from([
    ["fleet", "--once", "--prometheus", "http://127.0.0.1:1"], ["spec", "root@127.0.0.1:1", "--unit", "x"],
    ["smoke", "root@127.0.0.1:1", "--unit", "x"], ["summary", "/dev/null"]]))
def test_hostile_configs(zygote, work, config, command):
    path = work / "config.toml"
    path.write_bytes(config)
    run(zygote, work, [command[0], "--config", str(path), *command[1:]], name="configs (TOML)")


# --- flags -------------------------------------------------------------------------------------------------

UNREACHABLE = "root@127.0.0.1:1"  # refused at once: no traffic leaves this machine
OUTPUT_FLAGS = {"--out", "--record", "--json", "--csv", "--write-log", "--sim-write-log", "--sim-truth"}
NEVER = {"--local", "--sudo", "--break-lock", "-h", "--help", "--version"}  # never act on this machine
PATHS_IN = ["cfg.toml", "log.txt", "missing", "dir", "fifo", "link", "/dev/zero", "/dev/null", "", "-"]
PATHS_OUT = ["out.json", "dir", "fifo", "link", "null-device", "sub/missing/out", "", "-"]
FLAG_VALUES = NUMBERS + ["10min", "2h", "yesterday", "@1e20", "9999-12-31 23:59", "10000-01-01", "bogus", "a,b",
                         "1,2,1000000000", ",", "mtp2", "off", "EAGLE", "0.0.0.0:99999", "[::1", "http://[::1",
                         "{bad", '{job="x"}', "crash@nan", "nonsense", "x" * 5000] + ESCAPES

COMMANDS = {  # the positionals each gets, and what it is given after the generated flags
    "summary": (["log.txt"], []), "audit": ([], []), "fleet": ([], ["--prometheus", "http://127.0.0.1:1", "--once"]),
    "spec": ([UNREACHABLE], ["--unit", "x"]), "bench": ([UNREACHABLE], ["--unit", "x"]),
    "tune": ([UNREACHABLE], ["--unit", "x"]), "smoke": ([UNREACHABLE], ["--unit", "x"]),
    "record": ([UNREACHABLE], ["--unit", "x", "--out", "rec.json", "--duration", "2"]),
    "replay": (["log.txt"], []), "open": (["log.txt"], []), "live": ([UNREACHABLE], []), "local": ([], []),
    "demo": ([], []), "export": ([UNREACHABLE], ["--listen", "127.0.0.1:0", "--give-up-after", "1"]),
}


def _options(command: str) -> list[tuple[str, bool]]:
    """(option string, takes a value) of the command's parser."""
    import importlib

    if command == "audit":  # its parser is made in main()
        return [("--json", False), ("--host", True), ("-n", True), ("--last", True), ("--phases", False)]
    module = "replay" if command == "open" else command
    parser = importlib.import_module(f"mtptui.commands.{module}").build_parser(
        *(["mtptui " + command] if command in ("replay", "open") else []))
    out = []
    for a in parser._actions:
        for s in a.option_strings:
            if s not in NEVER:
                out.append((s, a.nargs != 0))
    return out


def _setup_paths(work) -> None:
    (work / "log.txt").write_text(BATCH.format(s=1, a=3, b=100, c=0.01, d=2.5, e=0.5, f=100.0, g=0) + "\n")
    (work / "cfg.toml").write_text("[control]\nwait_timeout = 60\n")
    (work / "dir").mkdir(exist_ok=True)
    (work / "target.json").write_text("kept\n")
    for name, make in (("fifo", lambda p: os.mkfifo(p)), ("link", lambda p: os.symlink(work / "target.json", p)),
                       ("null-device", lambda p: os.mknod(p, stat.S_IFCHR | 0o666, os.makedev(1, 3)))):
        if not os.path.lexists(work / name) and (name != "null-device" or os.geteuid() == 0):
            make(work / name)


@st.composite
def flags(draw, command: str) -> list[str]:
    opts = _options(command)
    argv: list[str] = []
    for opt, takes in draw(st.lists(st.sampled_from(opts), max_size=4)):
        argv.append(opt)
        if takes:
            pool = PATHS_OUT if opt in OUTPUT_FLAGS else PATHS_IN if opt in ("--config", "--prompts", "--identity",
                                                                             "--file") else FLAG_VALUES
            argv.append(draw(st.sampled_from(pool)))
    return argv


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_hostile_flags(zygote, work, command):
    _setup_paths(work)
    before, after = COMMANDS[command]

    @PROFILE
    @given(argv=flags(command), order=st.booleans())
    def each(argv, order):
        full = [*before, *argv, *after] if order else [*argv, *before, *after]
        run(zygote, work, [command, *full], name="flags")
        for name in ("null-device", "fifo", "link"):  # a special file is never replaced
            p = work / name
            assert not os.path.lexists(p) or not stat.S_ISREG(os.lstat(p).st_mode), f"{command} {full}: {name} replaced"

    each()


# --- Prometheus answers -----------------------------------------------------------------------------------

@st.composite
def prom_answer(draw) -> tuple[int, bytes]:
    status = draw(st.sampled_from([200, 200, 200, 400, 500, 204]))
    sample = st.fixed_dictionaries({"metric": st.dictionaries(st.sampled_from(
        ["instance", "job", "host", "rank", "tp_rank", "dp_rank", "pp_rank", "model_name", "engine", "__name__"]),
        TEXT | JSON_SCALAR, max_size=5) | JSON_VALUE,
        "value": st.tuples(JSON_SCALAR, st.sampled_from(NUMBERS) | JSON_SCALAR) | JSON_VALUE})
    doc = draw(st.one_of(
        st.fixed_dictionaries({"status": st.just("success"), "data": st.fixed_dictionaries(
            {"resultType": st.sampled_from(["vector", "matrix", "scalar"]) | TEXT,
             "result": st.lists(sample, max_size=6) | JSON_VALUE})}),
        st.fixed_dictionaries({"status": st.just("error"), "error": TEXT}), JSON_VALUE))
    body = _dumps(doc).encode("utf-8", "surrogatepass") if draw(st.integers(0, 6)) else draw(st.binary(max_size=200))
    return status, body


class _Prom(http.server.BaseHTTPRequestHandler):
    answer: tuple[int, bytes] = (200, b"{}")

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        status, body = _Prom.answer
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def prometheus():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Prom)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_hostile_prometheus_answers(zygote, work, prometheus):
    @PROFILE
    @given(answer=prom_answer(), json_out=st.booleans())
    def each(answer, json_out):
        _Prom.answer = answer
        run(zygote, work, ["fleet", "--once", "--prometheus", prometheus, "--timeout", "10",
                           *(["--json"] if json_out else [])], name="Prometheus answers")

    each()
