"""Every path of mtptui that touches a server, against a real vLLM 0.32.0 (CPU build) with ngram
speculative decoding, run as a systemd unit in a container host (conftest.py, engine.py).

The tests share the one unit and run in order, each from the state the one before left (a restart
of vLLM costs 25-60 s here, so none is made that a test does not need). What the real
engine showed that the simulator had not (and what became of it) is listed in docs/testing.md
("What the real engine showed").
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest
from engine import Pane, mtptui, ngram

# vLLM 0.32.0, vllm/v1/metrics/loggers.py (LoggingStatLogger.log) and vllm/v1/spec_decode/metrics.py
# (SpecDecodingLogging.log): the two lines every interval with traffic prints
_ENGINE = re.compile(r"Engine (\d+): Avg prompt throughput: ([\d.]+) tokens/s, Avg generation throughput: "
                     r"([\d.]+) tokens/s, Running: (\d+) reqs, Waiting: (\d+) reqs")
_SPEC = re.compile(r"SpecDecoding metrics: Mean acceptance length: ([\d.]+), .*Avg Draft acceptance rate: "
                   r"([\d.]+)%")


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def test_spec_shows_the_settings_in_vllms_words(engine, tmp_path, audit):
    engine.install(ngram(3))
    cfg = engine.config(tmp_path)
    r = mtptui("spec", "--config", cfg, "engine", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "version:     0.32.0 (from the unit's interpreter)" in r.stdout, r.stdout
    assert "ExecStart:   ngram num_speculative_tokens=3" in r.stdout, r.stdout
    # vLLM's own settings line, `non-default args: {..., 'speculative_config': {...}}`, read back
    assert "non-default args: ngram num_speculative_tokens=3" in r.stdout, r.stdout
    r = mtptui("spec", "--config", cfg, "engine", "--json", audit=audit)
    info = json.loads(r.stdout)["hosts"][0]
    assert info["engine"] == "vllm" and info["active"] == "active"
    assert info["server_args"]["algorithm"] == "ngram" and info["server_args"]["num_steps"] == 3


def test_live_shows_the_real_stream_on_the_first_screen(engine, tmp_path, need):
    need(shutil.which("tmux"), "tmux is not installed")
    cfg = engine.config(tmp_path)
    with engine.traffic(concurrency=2):
        pane = Pane([sys.executable, "-m", "mtptui", "live", "--config", cfg, "engine", "--since", "5min"])
        try:
            # accept len of the real SpecDecoding lines in the rank's panel beside its badge, the
            # settings and the version (asked of the unit's interpreter) in the status bar
            # "GPU panel off": the host has no GPU tool, said rather than drawn; the probe runs over its
            # own channel and may answer after the stream's first lines, so it is waited for too
            needed = ("host engine", "SPEC ON", "Engine 000", "ngram steps=3", "vLLM 0.32.0", "LIVE",
                      "non-default args: speculation ngram",  # the events pane, in vLLM's name
                      "GPU panel off")
            screen = pane.wait_for(lambda s: all(x in s for x in needed) and re.search(r"accept len +[1-4]\.\d\d", s),
                                   180)
        finally:
            pane.close()
    assert "KV use -" not in screen, screen  # the CPU build's KV cache is its KV cache


def test_record_then_summary_gives_the_lines_values(engine, tmp_path):
    cfg = engine.config(tmp_path)
    out = tmp_path / "rec.json"
    with engine.traffic(concurrency=2):
        r = mtptui("record", "--config", cfg, "engine", "--out", str(out), "--duration", "10")
    assert r.returncode == 0, r.stderr
    entries = [json.loads(x) for x in out.read_text().splitlines() if x.startswith("{")]
    texts = [e["MESSAGE"] for e in entries if isinstance(e.get("MESSAGE"), str)]
    spec = [float(m.group(1)) for t in texts if (m := _SPEC.search(t))]
    eng = [float(m.group(3)) for t in texts if (m := _ENGINE.search(t))]
    assert spec and eng
    # nothing lost between mtptui's record and the journal: every entry of the span, once
    cursors = [e["__CURSOR"] for e in entries if "__CURSOR" in e]
    assert len(cursors) == len(set(cursors))
    # a SpecDecoding line names no engine: it is the Engine line's before it, and a record that
    # begins between the two holds it under no engine (rank ""), so the figures are the host's
    series = [s["decode"] for s in json.loads(mtptui("summary", "--json", str(out)).stdout)["series"]]
    acc = [d["accept_len"] for d in series if d["accept_len"]["n"]]
    gen = [d["gen_throughput"] for d in series if d["gen_throughput"]["n"]]
    assert sum(a["n"] for a in acc) == len(spec) and sum(g["n"] for g in gen) == len(eng)
    assert sum(a["mean"] * a["n"] for a in acc) / len(spec) == pytest.approx(_mean(spec), abs=1e-9)
    assert max(g["max"] for g in gen) == max(eng)


def test_smoke_checks_the_server_without_asking_the_model(engine, tmp_path):
    cfg = engine.config(tmp_path)
    r = mtptui("smoke", "--config", cfg, "engine")
    assert r.returncode == 3, r.stdout + r.stderr  # a dummy model cannot answer 15*23
    r = mtptui("smoke", "--config", cfg, "engine", "--any-answer", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads(r.stdout)["hosts"][0]
    assert got["result"] == "pass" and got["completion_tokens"] >= 1 and got["latency_s"] > 0
    r = mtptui("smoke", "--config", cfg, "engine", "--any-answer")
    assert re.search(r"engine: pass \(\d+ ms, \d+ tokens?(, accept len [\d.]+)?\): answered, [\d.]+ tokens/s", r.stdout), r.stdout


def test_summary_gives_every_stats_line_as_the_engine_printed_it(engine, tmp_path):
    since = time.time()
    with engine.traffic(concurrency=2) as sent:
        time.sleep(4 * 2 + 1)  # four stats intervals
    assert sent["sent"] > 0
    time.sleep(3)  # the interval after the last request
    journal = engine.journal(since, output="json")
    texts = [json.loads(x)["MESSAGE"] for x in journal.splitlines() if x.startswith("{")]
    texts = [t if isinstance(t, str) else bytes(t).decode() for t in texts]
    eng = [m for t in texts if (m := _ENGINE.search(t))]
    spec = [m for t in texts if (m := _SPEC.search(t))]
    assert eng and spec
    path = tmp_path / "real.json"
    path.write_text(journal)
    r = mtptui("summary", "--json", str(path))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    series = [s for s in doc["series"] if s["engine"] == "vllm"]
    assert len(series) == 1, doc["series"]
    s = series[0]
    d = s["decode"]
    assert s["rank"] == "Engine 000"
    assert d["batches"] == len(eng)
    assert d["accept_len"]["n"] == len(spec)
    assert d["accept_len"]["mean"] == pytest.approx(_mean([float(m.group(1)) for m in spec]), abs=1e-9)
    assert d["accept_len"]["min"] == min(float(m.group(1)) for m in spec)
    assert d["accept_rate"]["mean"] == pytest.approx(_mean([float(m.group(2)) / 100 for m in spec]), abs=1e-9)
    assert d["gen_throughput"]["n"] == len(eng)
    assert d["gen_throughput"]["mean"] == pytest.approx(_mean([float(m.group(3)) for m in eng]), abs=1e-9)
    assert d["running_req"]["max"] == max(int(m.group(4)) for m in eng)
    # nothing in vLLM's lines says whether graphs ran (this build runs eager): absent stays absent
    assert d["graph_on"] == 0 and d["graph_off"] == 0
    table = mtptui("summary", str(path)).stdout
    row = next(x for x in table.splitlines() if "Engine 000" in x)
    assert row.split()[5] == "-", row  # host, rank (two words), engine, decode, graph


def test_the_dashboards_s_turns_speculation_off_on_an_idle_server(engine, tmp_path, audit, need):
    """`s` in the live dashboard: the preview with the argument diff (the flag that needs
    speculation goes too), y, the restart verified at once on the idle server by the settings it
    reported, saying so (not after a minute of waiting for decode batches that cannot come)."""
    need(shutil.which("tmux"), "tmux is not installed")
    cfg = engine.config(tmp_path)
    pane = Pane([sys.executable, "-m", "mtptui", "live", "--config", cfg, "engine"],
                env={"MTPTUI_AUDIT_LOG": str(audit)})
    try:
        pane.wait_for(lambda s: "LIVE" in s and "ngram" in s, 120)
        pane.keys("s")
        screen = pane.wait_for("server arguments", 60)
        assert "--speculative-config" in screen and "--per-request-spec-decode-metrics" in screen, screen
        pane.keys("y")
        pane.wait_for(lambda s: "verified" in s and len(_ends(audit)) == 1, 600)
    finally:
        pane.close()
    end = _ends(audit)[0]
    assert end["result"] == "applied", end
    assert "idle: no request running or waiting per /metrics" in json.dumps(end), end
    assert "--speculative-config" not in engine.exec_start() and engine.healthy()


def _ends(audit) -> list[dict]:
    """The audit log's lines that end an action."""
    if not audit.exists():
        return []
    return [e for x in audit.read_text().splitlines() if (e := json.loads(x)).get("result") not in (None, "running")]


def test_spec_between_ngram_settings_verified_by_the_real_spec_lines(engine, tmp_path, audit):
    """off (as the test before left it) to ngram1, then to ngram3, under traffic: ngram1 verified by
    the new run's SpecDecoding lines. On the way to ngram3 the operator's link to the host goes
    down while vLLM restarts: mtptui reconnects and verifies the new run, resumed from the
    journal's cursor (nothing judged twice or missed); the traffic went with the link, so its
    witness may be the server's idleness (ngram3's SpecDecoding lines verify the bench's restore,
    test_vllm_prove.py). One start serves both checks."""
    cfg = engine.config(tmp_path)
    for profile, k, cut in (("ngram1", 1, False), ("ngram3", 3, True)):
        since = time.time()
        with engine.traffic(concurrency=2) as sent:
            p = subprocess.Popen([sys.executable, "-m", "mtptui", "spec", "--config", cfg, "engine", profile, "--yes"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 stdin=subprocess.DEVNULL, env={**os.environ, "MTPTUI_AUDIT_LOG": str(audit)})
            err = ""
            if cut:
                for line in p.stderr:  # the progress, a line a phase
                    err += line
                    if "wait start" in line:
                        break
                engine.h.link(False)
                time.sleep(15)
                engine.h.link(True)
            out, rest = p.communicate(timeout=600)
        err += rest
        assert p.returncode == 0, out + err
        assert ("link lost" in err and "verified" in out) if cut else "verified: accept len" in out, out + err
        assert f'"num_speculative_tokens":{k}' in engine.exec_start()
        assert '"prompt_lookup_max":4,"prompt_lookup_min":2' in engine.exec_start()  # the operator's, kept
        args = [x for x in engine.journal(since).splitlines() if "non-default args: " in x]
        assert args and f"'num_speculative_tokens': {k}" in args[-1]
        assert sent["sent"] > 0


SCHEDULE = '[profiles.ngram3-sched]\nalgorithm = "NGRAM"\nnum_steps = 3\nschedule = [[1, 2, 3], [3, 1024, 1]]\n\n'


def test_a_schedule_profile_applies_and_verifies_on_the_real_engine(engine, tmp_path, audit):
    """vLLM's Dynamic SD schedule (issue 46: `num_speculative_tokens_per_batch_size` in
    --speculative-config, vLLM 0.24.0+) as a profile, from ngram3 as the test before left it:
    applied through the preview and confirm path, its start verified, the run's own args line
    carrying the schedule (one restart; the next test starts from it)."""
    cfg = engine.config(tmp_path)
    text = open(cfg).read().replace("[control]", SCHEDULE + "[control]")
    open(cfg, "w").write(text)
    since = time.time()
    r = mtptui("spec", "--config", cfg, "engine", "ngram3-sched", "--yes", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verified" in r.stdout
    line = [x for x in engine.journal(since).splitlines() if "non-default args:" in x][-1]
    assert "'num_speculative_tokens_per_batch_size': [[1, 2, 3], [3, 1024, 1]]" in line, line
    shown = mtptui("spec", "--config", cfg, "engine", "--json", audit=audit)
    ex = json.loads(shown.stdout)["hosts"][0]["exec_start"]
    assert ex["schedule"] == [[1, 2, 3], [3, 1024, 1]], ex
    _k_in_use_from_lines_and_metrics(engine)


def _k_in_use_from_lines_and_metrics(engine) -> None:
    """The K the dashboard shows under the schedule (issue 46 item 2, core/adaptive.py): from the
    run's SpecDecoding lines (drafted tokens over the drafts the per-position rates give) and from
    /metrics (draft tokens over drafts), over the same traffic: the lines' drafted tokens are the
    counters' to the token, their drafts within the rates' rounding, and K at most the schedule's 3
    for 2 running requests (ngram drafts fewer where the match leaves fewer tokens)."""
    from mtptui.core import latency
    from mtptui.core.adaptive import drafts_per_step, steps_between
    from mtptui.core.parse.vllm import parse_stats

    def scrape(t: float) -> latency.Scrape:
        return latency.parse(engine.get("/metrics")[1], t)

    old, since = scrape(0), time.time()
    with engine.traffic(concurrency=2) as sent:
        time.sleep(3 * 2)  # three stats intervals
    assert sent["sent"] > 0
    new = scrape(1)
    drafted = new.counters[latency.VLLM_DRAFT_TOKENS] - old.counters[latency.VLLM_DRAFT_TOKENS]
    drafts = new.counters[latency.VLLM_DRAFTS] - old.counters[latency.VLLM_DRAFTS]
    assert drafts > 0

    def spec_lines() -> list[dict]:
        recs = [parse_stats(x, "engine", 2026)[0] for x in engine.journal(since).splitlines() if "SpecDecoding" in x]
        return [r.fields for r in recs if r is not None]

    deadline = time.monotonic() + 60  # the interval the traffic ended in is logged within one more
    while sum(f["drafted_tokens"] for f in spec_lines()) < drafted and time.monotonic() < deadline:
        time.sleep(1)
    lines = spec_lines()
    assert sum(f["drafted_tokens"] for f in lines) == drafted, (lines, drafted)
    ks = [drafts_per_step(f) for f in lines]  # each interval accepted some drafts: each says its K
    assert all(k is not None and 1.0 <= k <= 3.0 + 1e-9 for k in ks), (ks, lines)
    derived = sum(f["drafted_tokens"] / k for f, k in zip(lines, ks) if k)
    assert abs(derived - drafts) <= 0.01 * drafts, (derived, drafts, lines)
    assert steps_between(old, new) == pytest.approx(drafted / drafts)


def test_a_method_the_engine_refuses_is_rolled_back_with_its_own_words(engine, tmp_path, audit):
    cfg = engine.config(tmp_path)
    before = engine.exec_start()
    r = mtptui("spec", "--config", cfg, "engine", "mtp1", "--yes", audit=audit)
    assert r.returncode == 3, r.stdout + r.stderr  # rolled back
    assert "Unsupported speculative method" in r.stdout + r.stderr
    assert engine.exec_start() == before
    assert engine.state() == "active" and engine.healthy()


def test_a_start_refused_for_memory_is_rolled_back_with_the_real_error(engine, tmp_path, audit):
    cfg = engine.config(tmp_path)
    with open(cfg, "a") as f:  # a KV cache larger than the host has
        f.write('\n[profiles.hugekv]\nalgorithm = "NGRAM"\nnum_steps = 3\n'
                'env = { VLLM_CPU_KVCACHE_SPACE = "4096" }\n')
    before = engine.exec_start()
    r = mtptui("spec", "--config", cfg, "engine", "hugekv", "--yes", audit=audit)
    assert r.returncode == 3, r.stdout + r.stderr
    out = r.stdout + r.stderr
    assert "rolled back" in out
    assert re.search(r"memory|KV cache", out, re.I), out
    assert engine.exec_start() == before and engine.healthy()


def test_engine_core_killed_is_a_crash_and_ends_the_run(engine, tmp_path):
    """kill -9 of vLLM 0.32's engine core: the API server logs `[shutdown] MPClient: engine core
    exited unexpectedly` (vllm/v1/engine/core_client.py), `AsyncLLM output_handler failed` and
    EngineDeadError (vllm/v1/engine/async_llm.py), answers 500, then exits 0: systemd says
    `Deactivated successfully`, so only the log tells that the server died."""
    since = time.time()
    with engine.traffic(concurrency=2) as sent:
        deadline = time.monotonic() + 90  # decoding, as its stats line says (a loaded machine is slow to begin)
        while "Avg generation throughput" not in engine.journal(since) and time.monotonic() < deadline:
            time.sleep(1)
        engine.h.ssh("kill -9 $(pgrep -x -f VLLM::EngineCore)")
        time.sleep(8)
    assert sent["failed"] > 0
    journal = engine.journal(since, output="json")
    assert "engine core exited unexpectedly" in journal
    deadline = time.monotonic() + 120
    while engine.state() in ("active", "deactivating") and time.monotonic() < deadline:
        time.sleep(1)  # its shutdown, then systemd's word on it
    assert engine.state() == "inactive"  # not failed: the server exited 0
    path = tmp_path / "killed.json"
    path.write_text(journal)
    doc = json.loads(mtptui("summary", "--json", str(path)).stdout)
    crashes = [e for e in doc["events"] if e["kind"] == "crash"]
    assert crashes and "EngineDeadError" in crashes[0]["text"]
    assert doc["epochs"][-1]["ended"]["how"] == "crashed"
    table = mtptui("summary", str(path)).stdout
    assert "crashed: process died" in table


def test_journald_dropping_the_engines_lines_is_no_rollback(engine, tmp_path, audit):
    """journald's rate limit on the unit (10 lines a second): vLLM's start prints about 150 lines,
    so its settings and ready lines are lost; the start is still verified by the other witnesses
    (systemd's state, /health), saying which stood in, and not rolled back. The unit is as the
    test before left it (stopped); its file gets the limit and mtptui's apply starts it."""
    engine.install(ngram(3), service="LogRateLimitIntervalSec=1s\nLogRateLimitBurst=10\n", start=False)
    cfg = engine.config(tmp_path)
    since = time.time()
    r = mtptui("spec", "--config", cfg, "engine", "ngram1", "--yes", "--json", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads(r.stdout)["hosts"][0]
    assert got["result"] == "applied", got
    journal = engine.journal(since)
    assert "Suppressed" in journal or "suppressed" in journal, journal[-2000:]
    assert '"num_speculative_tokens":1' in engine.exec_start() and engine.healthy()
