"""What mtptui measures of a real vLLM 0.32.0 (CPU build, ngram speculation, the engine tier's unit:
conftest.py, engine.py), and the simulator held beside it:

- `bench` and `tune` between off and ngram: real throughput, each request's acceptance as vLLM
  reports it (`--per-request-spec-decode-metrics summary`: the stream's last chunk carries
  `metrics.speculative_decoding`), the unit put back byte for byte;
- `export`: the server's own speculative counters (per draft position too) read from its /metrics
  and served under the host's name, and the per-position acceptance of its SpecDecoding lines;
- the dashboard's latency line, from the real histograms, read through its own poller;
- the simulator's vLLM 0.32.0 (mtptui/sim/vllm.py) against the real one: the same kinds of lines
  in the same order, the same settings and stats lines, the same /metrics families.

The tests share the module's unit and run in order; each says what it starts from. What the real
engine showed that the simulator had not is listed in docs/testing.md.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from engine import REPETITIVE, STATS_INTERVAL_S, UNIT, mtptui, ngram
from prometheus_client.parser import text_string_to_metric_families

from mtptui.core import latency
from mtptui.core.parse import LineParser

K = 3


def _families(text: str) -> dict[str, dict]:
    """name -> {"type", "labels" (the label names), "samples" [(name, labels, value)]}."""
    out = {}
    for f in text_string_to_metric_families(text):
        out[f.name] = {"type": f.type, "labels": sorted({k for s in f.samples for k in s.labels}),
                       "samples": [(s.name, dict(s.labels), s.value) for s in f.samples]}
    return out


def _counter(fams: dict, name: str, **labels) -> float | None:
    """The sum of a family's `_total` samples with these labels (every engine), or None."""
    f = fams.get(name)
    if f is None:
        return None
    got = [v for n, lab, v in f["samples"] if n.endswith("_total") and all(lab.get(k) == x for k, x in labels.items())]
    return sum(got) if got else None


def _messages(journal_json: str) -> list[str]:
    out = []
    for line in journal_json.splitlines():
        if line.startswith("{"):
            m = json.loads(line)["MESSAGE"]
            out.append(m if isinstance(m, str) else bytes(m).decode(errors="replace"))
    return out


def _unit_files(engine) -> str:
    """The unit's file and every drop-in, as systemd reads them (what bench and tune must leave
    as they found them)."""
    return engine.h.ssh(f"systemctl cat {UNIT}; find /etc/systemd/system/{UNIT}.service.d -type f "
                        "-exec sha256sum {} + 2>/dev/null; true").stdout


def _prompts(tmp_path: Path) -> str:
    """Repetitive prompts: ngram drafts from them (and from the dummy model's looping output)."""
    p = tmp_path / "prompts.jsonl"
    p.write_text("".join(json.dumps({"messages": [{"role": "user", "content": f"{REPETITIVE} {i}"}],
                                     "category": "repeat"}) + "\n" for i in range(4)))
    return str(p)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _until(what: str, cond, timeout: float = 90.0, every: float = 0.5):
    """cond()'s first truthy value; fails naming `what` when none comes (a wait, not a timing)."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        got = cond()
        if got:
            return got
        time.sleep(every)
    pytest.fail(f"{what}: never came in {timeout:.0f} s")


# --- the simulator beside the real engine -------------------------------------------------------

# Each line's shape: the process that wrote it, the source file and line vLLM names, and the words
# the message starts with (vLLM 0.32.0's own: api_utils.py, core.py, entry.py, loggers.py,
# spec_decode/metrics.py; uvicorn's have no prefix).
_PREFIX = re.compile(r"^\((?P<proc>[A-Za-z_]+\d*) pid=\d+\) (?P<level>[A-Z]+) \d\d-\d\d \d\d:\d\d:\d\d "
                     r"\[(?P<where>[^\]]+)\] (?P<msg>.*)$")


def _shape(message: str) -> tuple:
    m = _PREFIX.match(message)
    if m is None:
        return (None, None, " ".join(message.split()[:4]))
    return (m["proc"], m["where"], " ".join(m["msg"].split()[:3]))


def _parsed(messages: list[str]) -> list[tuple[str, str, dict, tuple]]:
    """(outcome, kind, data or fields, shape) of each event and batch line, in order."""
    parser = LineParser()
    out = []
    for msg in messages:
        r = parser.parse(msg)
        if r.outcome == "event":
            out.append(("event", r.record.kind, r.record.data or {}, _shape(msg)))
        elif r.outcome == "batch":
            out.append(("batch", r.record.kind, r.record.fields, _shape(msg)))
    return out


def test_the_simulator_speaks_as_the_real_engine_does(engine):
    """The same request pattern (two clients for four stats intervals, then none) to the real
    vLLM and to the simulator's 0.32.0: the same events in the same order, the same settings, the
    same stats lines (none for an interval without drafts, none for a second idle one), and
    /metrics families of the same names, types, labels and buckets."""
    from mtptui.sim import vllm

    since = time.time()
    engine.install(ngram(K))
    with engine.traffic(concurrency=2) as sent:
        time.sleep(4 * STATS_INTERVAL_S)
    assert sent["sent"] > 0
    # the interval after the last request, and an idle one after it (printed at debug: nothing)
    _until("the idle interval's stats line", lambda: re.search(
        r"Running: 0 reqs", "\n".join(_messages(engine.journal(since, output="json"))[-3:])), 30)
    time.sleep(2 * STATS_INTERVAL_S + 1)
    real_msgs = _messages(engine.journal(since, output="json"))
    start = max(i for i, m in enumerate(real_msgs) if m.startswith(f"Started {UNIT}"))
    real = _parsed(real_msgs[start:])
    description = real_msgs[start].split(" - ", 1)[1].rstrip(".")
    sim_msgs = [x.truth["message"] for x in vllm.render(
        envelope="json", host="h", unit=f"{UNIT}.service", unit_description=description, seed=0, t0=since, serve=0,
        version="0.32.0", pattern=[2] * 4 + [0, 0], interval=STATS_INTERVAL_S)]
    sim = _parsed(sim_msgs)

    # the events, in order, with the settings read from vLLM's `non-default args:`
    events = [(k, sorted(d)) for o, k, d, _ in real if o == "event"]
    assert events == [(k, sorted(d)) for o, k, d, _ in sim if o == "event"], (events, sim)
    assert [k for k, _ in events] == ["started", "spec_config", "starting", "ready"]
    real_cfg = next(d for o, k, d, _ in real if k == "spec_config")
    sim_cfg = next(d for o, k, d, _ in sim if k == "spec_config")
    assert (real_cfg["algorithm"], real_cfg["num_steps"]) == (sim_cfg["algorithm"], sim_cfg["num_steps"]) == ("ngram", K)
    # every line of each kind has the same shape: process, file:line, first words
    shapes = {(o, k): s for o, k, _, s in real}
    assert shapes == {(o, k): s for o, k, _, s in sim}
    # the stats lines: a throughput line each interval with traffic, a SpecDecoding line after it
    # where drafts were made (the real one's first interval may have had prefills alone), the
    # interval after the traffic without one, then nothing for the idle one after it
    def stats(rows):
        return "".join({"decode": "D", "spec": "S"}[k] for o, k, _, _ in rows if o == "batch")
    for seq in (stats(real), stats(sim)):
        assert re.fullmatch(r"(DS?)*DSD", seq) and seq.count("DS") >= 2, (stats(real), stats(sim))
    for kind in ("decode", "spec"):
        real_keys = {tuple(sorted(f)) for o, k, f, _ in real if o == "batch" and k == kind}
        assert real_keys == {tuple(sorted(f)) for o, k, f, _ in sim if o == "batch" and k == kind}, kind
    assert len(next(f for o, k, f, _ in real if k == "spec")["per_position_accept_rate"]) == K
    # EngineCore's settings line, in both
    engine_line = re.compile(r"Initializing a V1 LLM engine \(v0\.32\.0\) with config: .*speculative_config="
                             rf"SpeculativeConfig\(method='ngram', model=None, num_spec_tokens={K}\)")
    assert any(engine_line.search(m) for m in real_msgs[start:])
    assert any(engine_line.search(m) for m in sim_msgs)
    # uvicorn's lines without vLLM's process prefix, in both
    for msgs in (real_msgs[start:], sim_msgs):
        assert "INFO:     Application startup complete." in msgs
        assert "INFO:     Started server process [" in "\n".join(msgs)

    # /metrics: the simulator's families are the real one's, of the same type, labels and buckets
    status, text = engine.get("/metrics")
    assert status == 200
    real_fams = _families(text)
    model = vllm.VllmMetrics(t_created=1.0, version="0.32.0")
    model.interval(step_s=0.02, drafts=10, drafted=30, accepted_pos=[9, 8, 7], running=2, prefill_s=0.01, queue_s=0.0)
    sim_fams = _families(model.exposition())
    for name, f in sim_fams.items():
        assert name in real_fams, name
        assert (f["type"], f["labels"]) == (real_fams[name]["type"], real_fams[name]["labels"]), name
        if f["type"] == "histogram":
            def les(fam):
                return sorted({float(lab["le"]) for _, lab, _ in fam["samples"] if "le" in lab})
            assert les(f) == les(real_fams[name]), name
    for name in (latency.VLLM_DRAFTS, latency.VLLM_DRAFT_TOKENS, latency.VLLM_ACCEPTED, latency.VLLM_PER_POS,
                 "vllm:num_requests_running", "vllm:num_requests_waiting"):
        assert name in sim_fams and name in real_fams, name
    assert "vllm:time_per_output_token_seconds" not in real_fams  # gone by 0.32 (the sim's 0.10.2 serves it)


def _answers(server) -> dict:
    """What a server answers to the requests the product makes (engine.Engine or the simulator)."""
    def post(path: str, body: dict) -> tuple[int, str]:
        req = urllib.request.Request(server.url(path), json.dumps(body).encode(), {"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, r.read().decode()

    chat = {"model": server.model, "messages": [{"role": "user", "content": REPETITIVE}], "max_tokens": 16,
            "temperature": 0, "ignore_eos": True}
    stream = post("/v1/chat/completions", {**chat, "stream": True, "stream_options": {"include_usage": True}})[1]
    events = [json.loads(x[6:]) for x in stream.splitlines() if x.startswith("data: {")]
    return {"health": server.get("/health"), "version": server.get("/version"),
            "models": json.loads(server.get("/v1/models")[1]),
            "completion": json.loads(post("/v1/completions", {"model": server.model, "prompt": REPETITIVE,
                                                               "max_tokens": 24, "temperature": 0})[1]),
            "chat": json.loads(post("/v1/chat/completions", chat)[1]), "stream": events,
            "wrong_model": _status(server, {**chat, "model": "no-such-model"}),
            "metrics": _families(server.get("/metrics")[1])}


def _status(server, body: dict) -> tuple[int, list]:
    try:
        req = urllib.request.Request(server.url("/v1/chat/completions"), json.dumps(body).encode(),
                                     {"content-type": "application/json"})
        urllib.request.urlopen(req, timeout=60).read()
        return 200, []
    except urllib.error.HTTPError as e:
        return e.code, sorted(json.loads(e.read())["error"])


def _keys(obj) -> object:
    """A JSON answer's shape: its keys, nested, without the values."""
    if isinstance(obj, dict):
        return {k: _keys(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_keys(obj[0])] if obj and isinstance(obj[0], (dict, list)) else "list"
    return type(obj).__name__ if obj is not None else None


def test_the_simulators_live_vllm_answers_as_the_real_one(engine, tmp_path):
    """The simulator's live vLLM mode (python -m mtptui.sim.vllm_serve), started here with the
    unit's own flags and sent the same requests as the real one (the unit as the test before
    left it: ngram, K=3): the same lines in the same order, the same events and stats lines; the
    same answers to /health, /version, /v1/models, completions and chat, streamed or not (each
    with metrics.speculative_decoding), and to a model it does not serve; /metrics families of
    the same names, types, labels and buckets."""
    from engine import Engine

    class Sim(Engine):
        def __init__(self, root, port: int) -> None:
            super().__init__(None, root)
            self.port = port

        def url(self, path: str) -> str:
            return f"http://127.0.0.1:{self.port}{path}"

    port = _free_port()
    sim = Sim(engine.root, port)
    argv = engine.argv(ngram(K))
    argv = [sys.executable, "-m", "mtptui.sim.vllm_serve", *argv[3:], "--sim-startup-seconds", "1"]
    argv[argv.index("--port") + 1] = str(port)
    argv[argv.index("--host") + 1] = "127.0.0.1"
    out, err = tmp_path / "sim.out", tmp_path / "sim.err"
    env = {**os.environ, "VLLM_LOG_STATS_INTERVAL": str(STATS_INTERVAL_S)}
    with open(out, "w") as o, open(err, "w") as e:
        proc = subprocess.Popen(argv, stdout=o, stderr=e, env=env, stdin=subprocess.DEVNULL)
    try:
        _until("the simulator's /health", lambda: sim.get("/health")[0] == 200, 60, 0.1)
        for server in (engine, sim):  # the same pattern: two clients for four intervals, then none
            with server.traffic(concurrency=2) as sent:
                time.sleep(4 * STATS_INTERVAL_S)
            assert sent["sent"] > 0 and sent["failed"] == 0, sent
        time.sleep(2 * STATS_INTERVAL_S + 1)
        real_msgs = _messages(engine.journal(output="json"))
        sim_msgs = err.read_text().splitlines() + out.read_text().splitlines()
        real, simulated = _answers(engine), _answers(sim)
        assert sim.get("/nope") == (404, '{"detail":"Not Found"}') == engine.get("/nope")
        time.sleep(1)
        for msgs in (_messages(engine.journal(output="json"))[len(real_msgs):], err.read_text().splitlines()):
            assert any("Error with model error=ErrorInfo(message='The model `no-such-model` does not exist." in m
                       for m in msgs)  # the request for a model it does not serve, logged
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    assert proc.returncode == 0

    # the lines: the real unit's run (from its start) and the simulator's, parsed as mtptui parses them
    start = max(i for i, m in enumerate(real_msgs) if m.startswith(f"Started {UNIT}"))
    real_rows = _parsed(real_msgs[start + 1:])
    sim_rows = _parsed(sim_msgs)
    for rows in (real_rows, sim_rows):
        events = [k for o, k, _, _ in rows if o == "event"]
        assert events[:3] == ["spec_config", "starting", "ready"], events
    assert {(o, k): s for o, k, _, s in real_rows} == {(o, k): s for o, k, _, s in sim_rows}
    real_cfg = next(d for o, k, d, _ in real_rows if k == "spec_config")
    sim_cfg = next(d for o, k, d, _ in sim_rows if k == "spec_config")
    assert sorted(real_cfg) == sorted(sim_cfg) and (sim_cfg["algorithm"], sim_cfg["num_steps"]) == ("ngram", K)
    for kind in ("decode", "spec"):
        assert ({tuple(sorted(f)) for o, k, f, _ in real_rows if o == "batch" and k == kind}
                == {tuple(sorted(f)) for o, k, f, _ in sim_rows if o == "batch" and k == kind}), kind
    stats = "".join({"decode": "D", "spec": "S"}[k] for o, k, _, _ in sim_rows if o == "batch")
    assert re.fullmatch(r"(DS?)*DSD", stats) and stats.count("DS") >= 2, stats  # then an idle interval: nothing
    for msgs in (real_msgs[start:], sim_msgs):
        assert "INFO:     Application startup complete." in msgs
        assert any(m.startswith("INFO:     ") and '"POST /v1/completions HTTP/1.1" 200 OK' in m for m in msgs)
    stopped = err.read_text().splitlines()
    sim_stop = stopped[stopped.index("INFO:     Shutting down") - 12:]
    assert "[shutdown] API server: shutdown triggered" in sim_stop[0] and sim_stop[-1].endswith("shutdown complete.")

    # the answers: the same statuses and bodies where they are fixed, the same shapes elsewhere
    assert simulated["health"] == real["health"] == (200, "")
    assert simulated["version"] == real["version"] == (200, '{"version":"0.32.0"}')
    assert _keys(simulated["models"]) == _keys(real["models"])
    assert simulated["models"]["data"][0]["owned_by"] == "mtptui-sim"  # it says what it is
    for what in ("completion", "chat"):
        assert _keys(simulated[what]) == _keys(real[what]), what
        sd_real = real[what]["metrics"]["speculative_decoding"]
        sd_sim = simulated[what]["metrics"]["speculative_decoding"]
        assert sd_sim["num_spec_tokens"] == sd_real["num_spec_tokens"] == K
        for sd in (sd_real, sd_sim):
            assert sum(sd["acceptance_histogram"]) == sd["num_spec_steps"] > 0 and len(sd["acceptance_histogram"]) == K + 1
    assert [_keys(x) for x in simulated["stream"][:1] + simulated["stream"][-1:]] == \
        [_keys(x) for x in real["stream"][:1] + real["stream"][-1:]]  # the role's chunk; usage with metrics
    assert simulated["wrong_model"] == real["wrong_model"] == (404, ["code", "message", "param", "type"])
    for name, f in simulated["metrics"].items():
        assert name in real["metrics"], name
        assert (f["type"], f["labels"]) == (real["metrics"][name]["type"], real["metrics"][name]["labels"]), name
    for name in (latency.VLLM_DRAFTS, latency.VLLM_ACCEPTED, latency.VLLM_PER_POS, "vllm:num_requests_running",
                 "vllm:e2e_request_latency_seconds", "vllm:inter_token_latency_seconds", "vllm:kv_cache_usage_perc"):
        assert name in simulated["metrics"] and name in real["metrics"], name


# --- export ------------------------------------------------------------------------------------------

def test_export_serves_the_real_counters_and_per_position_acceptance(engine, tmp_path):
    """`mtptui export` of the unit (ngram, K=3, as the test before left it): the server's own
    speculative counters, per position too, equal to its /metrics once traffic has stopped; the
    per-position acceptance of its SpecDecoding lines while they come, gone after an interval
    without drafts."""
    cfg = engine.config(tmp_path)
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "mtptui", "export", "--config", cfg, "engine", "--listen",
                             f"127.0.0.1:{port}", "--stale-after", "600"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)

    def exported() -> dict:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
                return _families(r.read().decode())
        except OSError:
            return {}

    def per_pos(fams: dict) -> list[float] | None:
        f = fams.get("mtptui_spec_position_accept_ratio")
        got = {int(lab["position"]): v for _, lab, v in (f["samples"] if f else ()) if lab.get("host") == "engine"}
        return [got[i] for i in sorted(got)] if got else None

    try:
        _until("the exporter's stream", lambda: _counter(exported(), "mtptui_lines_read", host="engine") is not None)
        with engine.traffic(concurrency=2) as sent:
            seen = _until("a per-position acceptance served", lambda: per_pos(exported()), 60)
        assert sent["sent"] > 0
        # the values of one of the unit's SpecDecoding lines (printed with 3 decimals)
        # (the unit's run so far: the exporter may have served the last line before it started)
        lines = [m for m in _messages(engine.journal(output="json")) if "SpecDecoding metrics:" in m]
        printed = [[float(x) for x in re.search(r"Per-position acceptance rate: ([\d., ]+?), Avg", m)[1].split(", ")]
                   for m in lines]
        assert seen in printed, (seen, printed)
        assert len(seen) == K

        # the server's counters, once they stand still, served as they are
        def still() -> dict | None:
            a = _families(engine.get("/metrics")[1])
            time.sleep(STATS_INTERVAL_S)
            b = _families(engine.get("/metrics")[1])
            return b if _counter(a, latency.VLLM_DRAFTS) == _counter(b, latency.VLLM_DRAFTS) else None

        real = _until("the server's counters standing still", still, 60)
        pairs = [("mtptui_server_spec_drafts", latency.VLLM_DRAFTS),
                 ("mtptui_server_spec_draft_tokens", latency.VLLM_DRAFT_TOKENS),
                 ("mtptui_server_spec_accepted_tokens", latency.VLLM_ACCEPTED)]
        want = {ours: _counter(real, theirs) for ours, theirs in pairs}
        want_pos = [_counter(real, latency.VLLM_PER_POS, position=str(i)) for i in range(K)]
        assert want["mtptui_server_spec_drafts"] and all(x is not None for x in want_pos)

        def served() -> bool:
            fams = exported()
            return ({ours: _counter(fams, ours, host="engine") for ours in want} == want
                    and [_counter(fams, "mtptui_server_spec_accepted_tokens_per_position", host="engine",
                                  position=str(i)) for i in range(K)] == want_pos)

        _until(f"the exporter serving the server's counters {want} {want_pos}", served, 60)
        # the last stats interval had no drafts (no SpecDecoding line): no per-position figures
        _until("the per-position acceptance gone after an idle interval", lambda: per_pos(exported()) is None, 60)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err


# --- the dashboard's latency line ---------------------------------------------------------------------

def _le_bucket(fams: dict, name: str, q: float, old: dict) -> tuple[float, float]:
    """The bucket (lower, upper bound) where quantile q of a histogram's observations between two
    scrapes falls, read from the raw samples (not with core/latency)."""
    def cum(f):
        return {float(lab["le"]): v for n, lab, v in f["samples"] if n.endswith("_bucket")}
    new, before = cum(fams[name]), cum(old[name])
    bounds = sorted(new)
    counts = [new[b] - before.get(b, 0.0) for b in bounds]
    rank = q * counts[-1]
    lower = 0.0
    for b, c in zip(bounds, counts):
        if c >= rank:
            return lower, b
        lower = b
    return lower, math.inf


async def test_the_latency_line_shows_the_real_histograms(engine, tmp_path, monkeypatch):
    """The dashboard of `mtptui live engine`, headless: its latency line from the real /metrics read
    through its own poller. Between a scrape taken after its first and one after the traffic, its
    figures are the real histograms' (requests counted as the client counted them, each quantile in
    the bucket the raw counts put it in) and the per-position acceptance the real counters give."""
    import asyncio

    from mtptui.commands import live as live_cmd
    from mtptui.config import load_config
    from mtptui.control.session import host_controls
    from mtptui.core.latency import HostLatency, ms
    from mtptui.tui import metrics_poll
    from mtptui.tui.launch import build_app
    from mtptui.tui.widgets.latency_bar import LatencyBar

    monkeypatch.setattr(metrics_poll, "POLL_S", 0.5)
    cfg = engine.config(tmp_path)
    config = load_config(cfg)
    sources = live_cmd.build_sources(live_cmd.build_parser().parse_args(["--config", cfg, "engine"]), config)
    app = build_app(sources, config=config, title="live: engine", window="all",
                    controls=host_controls(sources, config))

    async def until(what, cond, tries=1200):
        for _ in range(tries):  # up to 2 minutes on a loaded machine
            await pilot.pause(0.1)
            got = cond()
            if got:
                return got
        pytest.fail(f"{what}: never came")

    async with app.run_test(size=(160, 40)) as pilot:
        dash = app.dash
        # the window the whole test spans (the line's own is a minute: a slow machine may take longer)
        dash.latency["engine"] = HostLatency(window_s=3600)
        await until("the first scrape", lambda: dash.latency["engine"].last)
        old = _families(await asyncio.to_thread(lambda: engine.get("/metrics")[1]))

        def drive() -> int:
            with engine.traffic(concurrency=2) as sent:
                time.sleep(3 * STATS_INTERVAL_S)
            return sent["sent"]

        n = await asyncio.to_thread(drive)
        new = _families(await asyncio.to_thread(lambda: engine.get("/metrics")[1]))
        name = "vllm:e2e_request_latency_seconds"
        done = sum(v for s, _, v in new[name]["samples"] if s.endswith("_count")) - \
            sum(v for s, _, v in old[name]["samples"] if s.endswith("_count"))
        assert done == n > 0  # every request the client saw end, and no other
        await until("a scrape after the traffic", lambda: (dash.latency_now("engine") or {}).get("e2e")
                    and dash.latency_now("engine")["e2e"]["n"] == n)
        now = dash.latency_now("engine")
        await pilot.pause(0.5)
        text = str(app.screen.query_one(LatencyBar).render())
    for fig, fam in (("ttft", "vllm:time_to_first_token_seconds"), ("itl", "vllm:inter_token_latency_seconds"),
                     ("e2e", "vllm:e2e_request_latency_seconds"), ("queue", "vllm:request_queue_time_seconds")):
        f = now[fig]
        assert f is not None and f["n"] > 0, fig
        for key, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
            lo, hi = _le_bucket(new, fam, q, old)
            assert lo <= f[key] <= hi, (fig, key, f[key], lo, hi)
    assert now["ttft"]["n"] == n
    drafts = _counter(new, latency.VLLM_DRAFTS) - _counter(old, latency.VLLM_DRAFTS)
    pos = [(_counter(new, latency.VLLM_PER_POS, position=str(i)) - _counter(old, latency.VLLM_PER_POS, position=str(i)))
           / drafts for i in range(K)]
    assert now["spec"]["per_pos"] == pytest.approx(pos)
    assert text.startswith("latency 1m  ITL p50 "), text
    assert f"ITL p50 {ms(now['itl']['p50'])}" in text and f"TTFT p50 {ms(now['ttft']['p50'])}" in text, text
    assert "per pos " + " ".join(f"{p:.2f}" for p in pos) in text, text


# --- bench and tune ---------------------------------------------------------------------------------

def _acceptance_checks(row: dict, requests: int) -> None:
    """A speculating row: every request's acceptance as vLLM reported it, in its bounds."""
    acc = row["acceptance"]
    assert acc["requests"] == requests, acc
    assert 1.0 < acc["p10"] <= acc["p50"] <= acc["p90"] <= K + 1, acc
    assert acc["by_category"]["repeat"]["requests"] == requests
    assert row["accept_len"] is not None and 1.0 < row["accept_len"] <= K + 1  # its SpecDecoding lines'


def _chat(engine, content: str, max_tokens: int, **extra) -> dict:
    """One chat request as bench sends it (temperature 0, ignore_eos), its whole answer."""
    return _post(engine, "/v1/chat/completions", {"model": engine.model, "messages": [{"role": "user", "content": content}],
                                                  "max_tokens": max_tokens, "temperature": 0, "ignore_eos": True, **extra})


def _post(engine, path: str, body: dict) -> dict:
    req = urllib.request.Request(engine.url(path), json.dumps(body).encode(), {"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        said = [x for x in engine.journal().splitlines() if " ERROR " in x or "Error" in x]
        pytest.fail(f"vLLM answered {e.code}: {e.read()[:800]!r}\n" + "\n".join(said[:60]))


def _never_accepted(engine) -> str:
    """A prompt whose ngram drafts the model always rejects. The dummy model answers every prompt at
    temperature 0 with a loop of two tokens A B (`dates` `:` here), which ngram's own drafts then
    predict (a repetition loop: near 1). vLLM 0.32's ngram proposer (v1/spec_decode/ngram_proposer.py,
    _find_longest_matched_ngram_and_propose_tokens) drafts what followed the EARLIEST occurrence of
    the longest suffix of 2-4 tokens: so the prompt holds each suffix the loop can end with (A B,
    B A, A B A, B A B, A B A B, B A B A) first followed by a word, and every draft is that word."""
    ids = _chat(engine, REPETITIVE, 4, return_token_ids=True)["choices"][0]["token_ids"]
    toks = [_post(engine, "/detokenize", {"model": engine.model, "tokens": [i]})["prompt"] for i in ids]
    if len(toks) != 4 or toks[:2] != toks[2:] or toks[0] == toks[1]:
        pytest.fail(f"the dummy model no longer loops on two tokens ({toks}): the near-0 prompt needs another shape")
    a, b = toks[:2]
    grams = (a + b, b + a, a + b + a, b + a + b, a + b + a + b, b + a + b + a)
    words = ("apple", "banana", "cherry", "grape", "lemon", "mango")
    return "\n".join(f"{g} {w}" for g, w in zip(grams, words))


def _flag_prompts(engine, tmp_path: Path) -> tuple[str, list[str]]:
    """Prompts whose requests accept nearly every draft (`repeat`) or nearly none (`cold`), each
    checked against the server first (vLLM's own draft_acceptance_rate) so that bench's flags are
    judged on what really happened; the file, and the categories bench will draw from it."""
    from mtptui.prove.load import NEAR_0, NEAR_1
    from mtptui.prove.prompts import draw, read_file

    cold = _never_accepted(engine)
    for content, ok in ((cold, lambda r: r <= NEAR_0), (REPETITIVE, lambda r: r >= NEAR_1)):
        sd = _chat(engine, content, 32)["metrics"]["speculative_decoding"]
        assert sd["num_spec_steps"] > 0 and ok(sd["draft_acceptance_rate"]), (content, sd)
    p = tmp_path / "flag-prompts.jsonl"
    p.write_text("".join(json.dumps({"messages": [{"role": "user", "content": c}], "category": cat}) + "\n"
                         for c, cat in ((cold, "cold"), (REPETITIVE, "repeat"))))
    drawn = [x.category or "-" for x in draw(4, 0, read_file(p))]  # bench's --seed 0
    assert set(drawn) == {"cold", "repeat"}, drawn
    return str(p), drawn


def test_bench_off_against_ngram_measures_real_acceptance_and_restores_the_unit(engine, tmp_path, audit):
    """Each request's acceptance as vLLM reports it, by category and by context, and the requests
    that accepted nearly no draft or nearly every one flagged (issue 46 item 4)."""
    engine.install(ngram(K))
    before, exec_before = _unit_files(engine), engine.exec_start()
    cfg = engine.config(tmp_path)
    out = tmp_path / "bench.json"
    prompts, drawn = _flag_prompts(engine, tmp_path)
    r = mtptui("bench", "--config", cfg, "engine", "--profiles", "off,ngram3", "--concurrency", "2", "--requests",
               "4", "--max-tokens", "32", "--prompts", prompts, "--yes", "--json", str(out), audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert _unit_files(engine) == before and engine.exec_start() == exec_before
    assert engine.state() == "active" and engine.healthy()
    doc = json.loads(out.read_text())
    assert doc["restored"] is True
    rows = {x["profile"]: x for x in doc["results"]}
    assert set(rows) == {"off", "ngram3"}
    for row in rows.values():
        assert row["requests"] == 4 and row["errors"] == 0 and row["output_tok_s"] > 0, row
        assert all(t == 32 for t in row["per_request"]["tokens"]), row["per_request"]
    # off: vLLM reports no acceptance (no speculative_decoding in its answers), none is made up
    assert rows["off"]["acceptance"]["requests"] == 0 and rows["off"]["acceptance"]["p50"] is None
    assert rows["off"]["accept_len"] is None
    acc = rows["ngram3"]["acceptance"]
    assert acc["requests"] == 4 and 1.0 <= acc["p10"] <= acc["p50"] <= acc["p90"] <= K + 1, acc
    assert {c: d["requests"] for c, d in acc["by_category"].items()} == \
        {c: drawn.count(c) for c in ("cold", "repeat")}, acc
    assert acc["by_category"]["cold"]["p50"] < 1.2 < 3.0 < acc["by_category"]["repeat"]["p50"], acc
    # the context each ended with: prompt and output tokens, all under 4k here
    assert list(acc["by_context"]) == ["<4k"] and acc["by_context"]["<4k"]["requests"] == 4, acc
    assert [x["category"] for x in acc["near_0"]] == ["cold"] * drawn.count("cold"), acc
    assert [x["category"] for x in acc["near_1"]] == ["repeat"] * drawn.count("repeat"), acc
    assert all(x["context"] > 32 for x in acc["near_0"] + acc["near_1"]), acc
    assert 1.0 < rows["ngram3"]["accept_len"] <= K + 1  # its SpecDecoding lines'
    assert "accept len per request" in r.stdout and re.search(r"ngram3\s+p10 [\d.]+\s+p50", r.stdout), r.stdout
    assert "context <4k" in r.stdout, r.stdout
    assert "with drafts nearly never accepted (garbled output?): cold" in r.stdout, r.stdout
    assert "with drafts nearly always accepted (a repetition loop?): repeat" in r.stdout, r.stdout
    entries = [json.loads(x) for x in audit.read_text().splitlines()]
    assert [e for e in entries if e["action"] == "bench"][-1]["result"] == "done"
    # ngram3 first, as it ran (no restart); off; then back to ngram3, verified by its SpecDecoding lines
    assert [e.get("profile") for e in entries if e["action"] == "apply" and e["result"] != "running"] == ["off"]
    assert "verified: accept len" in [e for e in entries if e["action"] == "restore"][-1]["message"]


def test_tune_between_off_and_ngram_restores_the_unit(engine, tmp_path, audit):
    """The bench left the unit as installed (ngram, K=3, prompt lookup 2-4)."""
    before, exec_before = _unit_files(engine), engine.exec_start()
    cfg = engine.config(tmp_path)
    out = tmp_path / "tune.json"
    r = mtptui("tune", "--config", cfg, "engine", "--profiles", "off,ngram3", "--concurrency", "2", "--requests", "4",
               "--max-tokens", "32", "--budget", "2m", "--prompts", _prompts(tmp_path), "--yes", "--json", str(out),
               audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert _unit_files(engine) == before and engine.exec_start() == exec_before
    assert engine.state() == "active" and engine.healthy()
    doc = json.loads(out.read_text())
    assert doc["restored"] is True and doc["kept"] is None  # no terminal to accept a winner on
    rows = doc["results"]
    assert {x["profile"] for x in rows} == {"off", "ngram3"}, rows
    for row in rows:
        assert row["errors"] == 0 and row["output_tok_s"] > 0, row
    for row in (x for x in rows if x["profile"] == "ngram3"):
        _acceptance_checks(row, row["requests"])
    for row in (x for x in rows if x["profile"] == "off"):
        assert row["acceptance"]["requests"] == 0
