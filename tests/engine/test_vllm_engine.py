"""Every path of mtptui that touches a server, against a real vLLM 0.32.0 (CPU build) with ngram
speculative decoding, run as a systemd unit in a container host (conftest.py, engine.py).

The tests share the one unit and run in order, each from the settings it installs. What the real
engine showed that the simulator had not (and what became of it) is listed in docs/testing.md
("What the real engine showed").
"""

from __future__ import annotations

import json
import re
import time

import pytest
from engine import REPETITIVE, UNIT, mtptui, ngram

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


def test_smoke_checks_the_server_without_asking_the_model(engine, tmp_path):
    cfg = engine.config(tmp_path)
    r = mtptui("smoke", "--config", cfg, "engine")
    assert r.returncode == 3, r.stdout + r.stderr  # a dummy model cannot answer 15*23
    r = mtptui("smoke", "--config", cfg, "engine", "--any-answer", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads(r.stdout)["hosts"][0]
    assert got["result"] == "pass" and got["completion_tokens"] >= 1 and got["latency_s"] > 0
    r = mtptui("smoke", "--config", cfg, "engine", "--any-answer")
    assert re.search(r"engine: pass \(\d+ ms, \d+ tokens?\): answered, [\d.]+ tokens/s", r.stdout), r.stdout


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


def test_spec_off_on_an_idle_server_verifies_by_its_settings_and_says_so(engine, tmp_path, audit):
    cfg = engine.config(tmp_path)
    r = mtptui("spec", "--config", cfg, "engine", "off", "--yes", "--json", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads(r.stdout)["hosts"][0]
    assert got["result"] == "applied"
    # verified on the idle server's own word (no request running, per /metrics), not after the
    # minute that decode batches would be waited for
    assert "idle: no request running or waiting per /metrics" in got["message"], got["message"]
    assert "--speculative-config" not in engine.exec_start()
    assert engine.healthy()


def test_spec_between_ngram_settings_verified_by_the_real_spec_lines(engine, tmp_path, audit):
    cfg = engine.config(tmp_path)
    for profile, k in (("ngram1", 1), ("ngram3", 3)):
        since = time.time()
        with engine.traffic(concurrency=2) as sent:
            r = mtptui("spec", "--config", cfg, "engine", profile, "--yes", audit=audit)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "verified: accept len" in r.stdout, r.stdout + r.stderr
        assert f'"num_speculative_tokens":{k}' in engine.exec_start()
        args = [x for x in engine.journal(since).splitlines() if "non-default args: " in x]
        assert args and f"'num_speculative_tokens': {k}" in args[-1]
        assert sent["sent"] > 0


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


def test_engine_core_killed_is_an_event_and_the_runs_end(engine, tmp_path):
    engine.install(ngram(3))
    since = time.time()
    with engine.traffic(concurrency=1):
        time.sleep(3)
        core = engine.h.ssh("pgrep -f 'VLLM::EngineCore|EngineCore' | head -1", check=False).stdout.strip()
        assert core, engine.h.ssh("ps -eo pid,args", check=False).stdout
        engine.h.ssh(["kill", "-9", core])
        time.sleep(8)
    journal = engine.journal(since, output="json")
    path = tmp_path / "killed.json"
    path.write_text(journal)
    assert "died unexpectedly" in journal, journal[-3000:]
    r = mtptui("summary", "--json", str(path))
    doc = json.loads(r.stdout)
    kinds = [e["kind"] for e in doc["events"]]
    assert any(k in ("crash", "error") for k in kinds), kinds
    engine.install(ngram(3))  # as the next tests expect it
