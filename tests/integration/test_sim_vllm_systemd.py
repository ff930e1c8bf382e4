"""The simulator's vLLM mode (`python -m mtptui.sim.vllm_serve`, vLLM 0.32.0's CPU build as the
engine tier saw it) as a systemd unit on a container host, driven by mtptui's command line as a
user runs it: `spec` show, apply and verify (by its SpecDecoding lines under traffic, and on an
idle server by /metrics), `off` (the flag that needs speculation dropped, which the simulator, as
vLLM, refuses alone), `smoke`, and `bench` between off and ngram with each request's acceptance
from its answers; the unit put back as found. Runs without the engine tier's vLLM venv."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager

import pytest
from hosts.helpers import unique_unit
from test_spec_systemd import audit_entries, exec_start, install_unit, spec, write_config

pytestmark = pytest.mark.systemd

MODEL = "/srv/models/tiny-llama"
NGRAM3 = '\'{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4,"prompt_lookup_min":2}\''
SIM = ["/usr/bin/python3", "-m", "mtptui.sim.vllm_serve", "--model", MODEL, "--load-format", "dummy",
       "--enforce-eager", "--host", "0.0.0.0", "--max-model-len", "2048", "--per-request-spec-decode-metrics",
       "summary", "--sim-startup-seconds", "1", "--speculative-config", NGRAM3]
ENV = "Environment=VLLM_LOG_STATS_INTERVAL=2\n"
PROFILES = ('[profiles.ngram1]\nalgorithm = "NGRAM"\nnum_steps = 1\n\n'
            '[profiles.ngram3]\nalgorithm = "NGRAM"\nnum_steps = 3\n\n')


def mtptui(*args: str, audit, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mtptui", *args], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, MTPTUI_AUDIT_LOG=str(audit)), stdin=subprocess.DEVNULL)


def journal(h, unit: str, since: float | None = None) -> str:
    argv = ["journalctl", f"--unit={unit}", "--output=cat", "--no-pager"]
    if since is not None:
        argv.append(f"--since=@{int(since) - 1}")
    return h.ssh(argv).stdout


def healthy(h, port: int) -> bool:
    r = h.ssh(["python3", "-c", "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=3)",
               f"http://127.0.0.1:{port}/health"], check=False)
    return r.returncode == 0


def wait_ready(h, unit: str, port: int) -> None:
    deadline = time.monotonic() + 60
    while not healthy(h, port):
        assert time.monotonic() < deadline, f"{unit} never answered /health:\n{journal(h, unit)[-3000:]}"
        time.sleep(0.3)


@contextmanager
def traffic(h, port: int):
    """Two clients on the host sending completions while the block runs (through SSH: the
    containers open no port to this machine)."""
    code = ("import json,sys,urllib.request\n"
            "b=json.dumps({'prompt':'write python code for json','max_tokens':32}).encode()\n"
            "while True:\n"
            "  try: urllib.request.urlopen(urllib.request.Request(sys.argv[1],b,{'content-type':'application/json'}),"
            "timeout=30).read()\n"
            "  except Exception: pass\n")
    procs = [subprocess.Popen(h.ssh_argv(f"exec python3 -c \"{code}\" http://127.0.0.1:{port}/v1/completions"),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(2)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait(10)
        h.ssh(["pkill", "-f", "write python code for json"], check=False)


def test_spec_and_bench_against_the_simulators_vllm(cluster, tmp_path, audit):
    h = cluster.hosts[1]
    unit = unique_unit("vsim")
    port = install_unit(h, unit, ENV, SIM)
    wait_ready(h, unit, port)
    cfg = write_config(tmp_path, h, unit, profiles=PROFILES, control="[control]\nwait_timeout = 120\n")
    name = f"gpu{h.index}"

    # spec show: vLLM's words, from its own settings line; the version from its /version
    r = spec(cfg, name, audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "version:     0.32.0 (from the server's /version)" in r.stdout, r.stdout
    assert "ExecStart:   ngram num_speculative_tokens=3" in r.stdout, r.stdout
    assert "non-default args: ngram num_speculative_tokens=3" in r.stdout, r.stdout

    # ngram1 under traffic: verified by the SpecDecoding lines of the new run
    since = time.time()
    with traffic(h, port):
        r = spec(cfg, name, "ngram1", "--yes", audit=audit, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr + journal(h, unit)[-3000:]
    assert "verified: accept len" in r.stdout, r.stdout + r.stderr
    assert '"num_speculative_tokens":1' in exec_start(h, unit)
    assert '"prompt_lookup_max":4,"prompt_lookup_min":2' in exec_start(h, unit)  # the operator's keys kept
    args = [x for x in journal(h, unit, since).splitlines() if "non-default args: " in x]
    assert args and "'num_speculative_tokens': 1" in args[-1]

    # off on an idle server: verified by /metrics at once, the flag that needs speculation dropped
    t0 = time.monotonic()
    r = spec(cfg, name, "off", "--yes", "--json", audit=audit, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr + journal(h, unit)[-3000:]
    assert time.monotonic() - t0 < 60  # not a minute of waiting for batches that cannot come
    assert "idle: no request running or waiting per /metrics" in json.dumps(audit_entries(audit)[-1])
    assert "--speculative-config" not in exec_start(h, unit)
    assert "--per-request-spec-decode-metrics" not in exec_start(h, unit)

    # smoke: the simulator's model answers as a dummy one does (any answer passes --any-answer)
    r = mtptui("smoke", "--config", cfg, name, "--any-answer", "--json", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["hosts"][0]["completion_tokens"] >= 1

    # back to the operator's unit (ngram3, per-request metrics): the drop-in removed
    h.ssh(f"rm -rf /etc/systemd/system/{unit}.service.d; systemctl daemon-reload; systemctl restart {unit}")
    wait_ready(h, unit, port)
    loaded = exec_start(h, unit)
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text("".join(json.dumps({"messages": [{"role": "user", "content": text}], "category": "code"})
                               + "\n" for text in ("Write a Python function that parses json.",
                                                   "Write a bash script that prints the date.")))
    out = tmp_path / "bench.json"
    r = mtptui("bench", "--config", cfg, name, "--profiles", "off,ngram3", "--concurrency", "2", "--requests", "4",
               "--max-tokens", "32", "--prompts", str(prompts), "--yes", "--json", str(out), audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert doc["restored"] is True and exec_start(h, unit) == loaded and healthy(h, port)
    rows = {x["profile"]: x for x in doc["results"]}
    assert [x["profile"] for x in doc["results"]] == ["off", "ngram3"]  # the order given
    for row in rows.values():
        assert row["requests"] == 4 and row["errors"] == 0 and row["output_tok_s"] > 0, row
        assert all(t == 32 for t in row["per_request"]["tokens"]), row["per_request"]
    assert rows["off"]["acceptance"]["requests"] == 0 and rows["off"]["accept_len"] is None
    acc = rows["ngram3"]["acceptance"]
    assert acc["requests"] == 4 and 1.0 <= acc["p10"] <= acc["p50"] <= acc["p90"] <= 4, acc
    assert rows["ngram3"]["accept_len"] is not None and 1.0 <= rows["ngram3"]["accept_len"] <= 4
    bench = [e for e in audit_entries(audit) if e["action"] in ("bench", "apply", "restore")][-3:]
    # ngram3, which the unit ran, first and without a restart; off applied; then put back
    assert [(e["action"], e.get("profile")) for e in bench] == [("bench", None), ("apply", "off"), ("restore", None)]


def test_the_simulators_vllm_refuses_what_vllm_refuses(cluster, tmp_path):
    """Per-request metrics without a speculative config, and a method the CPU build lacks: the
    unit fails at start with vLLM's own words (the product's rollbacks quote them)."""
    h = cluster.hosts[1]
    for extra, words in ((["--speculative-config", "'{\"method\":\"mtp\",\"num_speculative_tokens\":1}'"],
                          "Unsupported speculative method: 'mtp'"),
                         ([], "--per-request-spec-decode-metrics requires speculative decoding to be enabled")):
        unit = unique_unit("vsim")
        sim = SIM[:SIM.index("--speculative-config")] + extra
        install_unit(h, unit, ENV, sim)
        deadline = time.monotonic() + 30
        while h.ssh(["systemctl", "is-active", unit], check=False).stdout.strip() not in ("failed", "inactive"):
            assert time.monotonic() < deadline
            time.sleep(0.3)
        assert words in journal(h, unit)
        assert h.ssh(["systemctl", "is-failed", unit], check=False).stdout.strip() == "failed"


def test_the_simulators_vllm_http_answers_as_vllm_does(cluster):
    """/health, /version, /v1/models and a completion's per-request acceptance, read on the host."""
    h = cluster.hosts[1]
    unit = unique_unit("vsim")
    port = install_unit(h, unit, ENV, SIM)
    wait_ready(h, unit, port)
    code = ("import json,sys,urllib.request as u\n"
            "b=sys.argv[1]\n"
            "def get(p, body=None):\n"
            "  r=u.urlopen(u.Request(b+p, json.dumps(body).encode() if body else None,"
            "{'content-type':'application/json'}), timeout=30)\n"
            "  return r.status, r.read().decode()\n"
            "out={p: get(p) for p in ('/health','/version','/v1/models')}\n"
            f"out['c']=get('/v1/completions', {{'model': '{MODEL}', 'prompt': 'the program the program', "
            "'max_tokens': 24})\n"
            "print(json.dumps(out))\n")
    got = json.loads(h.ssh(["python3", "-c", code, f"http://127.0.0.1:{port}"]).stdout)
    assert got["/health"] == [200, ""]
    assert got["/version"] == [200, '{"version":"0.32.0"}']
    models = json.loads(got["/v1/models"][1])["data"][0]
    assert models["id"] == MODEL and models["owned_by"] == "mtptui-sim" and models["max_model_len"] == 2048
    c = json.loads(got["c"][1])
    sd = c["metrics"]["speculative_decoding"]
    assert c["usage"]["completion_tokens"] == 24 and sd["num_spec_tokens"] == 3
    assert sum(sd["acceptance_histogram"]) == sd["num_spec_steps"] > 0
    assert sd["mean_acceptance_length"] == pytest.approx(1 + sd["num_accepted_draft_tokens"] / sd["num_spec_steps"])
