"""The simulator's vLLM mode as a process (`python -m mtptui.sim.vllm_serve`), on this machine: what
vLLM 0.32.0 refuses at start and how (exit code, its words), nothing listening while it loads, its
stats lines as the core parser reads them, and its stop, which waits for the connections still
open (as the real one's uvicorn does) and is quick when none is. The real engine beside it:
tests/engine/test_vllm_prove.py."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from mtptui.core import latency
from mtptui.core.parse import LineParser

SPEC = '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4,"prompt_lookup_min":2}'
BASE = [sys.executable, "-m", "mtptui.sim.vllm_serve", "--model", "/srv/models/tiny-llama", "--host", "127.0.0.1",
        "--max-model-len", "2048"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*BASE, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})})


@pytest.mark.parametrize("args, env, code, words", [
    (["--per-request-spec-decode-metrics", "summary"], {}, 1,
     "--per-request-spec-decode-metrics requires speculative decoding to be enabled (via --speculative-config)"),
    (["--speculative-config", '{"method":"mtp","num_speculative_tokens":1}'], {}, 1,
     "NotImplementedError: Unsupported speculative method: 'mtp'"),
    (["--max-model-len", "100000"], {}, 1, "User-specified max_model_len (100000) is greater than the derived"),
    (["--speculative-config", SPEC], {"VLLM_CPU_KVCACHE_SPACE": "100000"}, 1,
     "on kv cache allocation is less than requested memory for kv (100000.0 GiB)"),
    (["--no-such-flag"], {}, 2, "api_server.py: error: unrecognized arguments: --no-such-flag"),
    (["--speculative-config", "{nope"], {}, 2, "argument --speculative-config/-sc: Value {nope cannot be converted"),
])
def test_it_refuses_what_vllm_refuses(args, env, code, words):
    r = _run(*args, env=env)
    assert r.returncode == code, r.stderr
    assert words in r.stderr, r.stderr
    if code == 1:  # it said who it is and what it was given first, as vLLM does
        assert "non-default args: {" in r.stderr and r.stderr.rstrip().splitlines()[-1].startswith(
            ("pydantic", "  Value error", "NotImplementedError", "RuntimeError"))


def _get(port: int, path: str, timeout: float = 5) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_it_loads_serves_and_stops_as_vllm_does(tmp_path):
    port = _port()
    err = tmp_path / "err"
    with open(err, "w") as e:
        proc = subprocess.Popen([*BASE, "--port", str(port), "--per-request-spec-decode-metrics", "summary",
                                 "--speculative-config", SPEC, "--sim-startup-seconds", "2"],
                                stdout=subprocess.DEVNULL, stderr=e, env={**os.environ, "VLLM_LOG_STATS_INTERVAL": "1"})
    try:
        # loading: nothing listens (the real one binds its port with uvicorn, after the model)
        with pytest.raises(urllib.error.URLError):
            _get(port, "/health", 1)
        deadline = time.monotonic() + 30
        while True:
            try:
                assert _get(port, "/health") == (200, "")
                break
            except urllib.error.URLError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert "Starting vLLM server on http://127.0.0.1:" in err.read_text()
        before = latency.parse(_get(port, "/metrics")[1], time.time())
        body = json.dumps({"prompt": "write python code for json", "max_tokens": 32}).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", body,
                                     {"content-type": "application/json"})
        for _ in range(3):
            with urllib.request.urlopen(req, timeout=30) as r:
                sd = json.loads(r.read())["metrics"]["speculative_decoding"]
            assert sd["num_spec_tokens"] == 3 and sum(sd["acceptance_histogram"]) == sd["num_spec_steps"]
        # the latency view's and export's reading of its /metrics: the three requests, their
        # histograms, the speculative counters per position
        w = latency.window(before, latency.parse(_get(port, "/metrics")[1], time.time()))
        assert all(w[fig]["n"] >= 3 for fig in ("ttft", "e2e", "queue")) and w["itl"]["n"] > 0, w
        assert 1.0 <= w["spec"]["accept_len"] <= 4 and len(w["spec"]["per_pos"]) == 3, w
        time.sleep(2.5)  # the interval with the requests, then the one after it
        parser = LineParser()
        kinds = [r.record.kind for line in err.read_text().splitlines() if (r := parser.parse(line)).outcome == "batch"]
        assert "decode" in kinds and "spec" in kinds

        # a request in flight when SIGTERM comes: the engine stops at once (no more tokens), and
        # the server waits for its connection to close before it exits
        slow = socket.create_connection(("127.0.0.1", port))
        payload = json.dumps({"prompt": "hello", "max_tokens": 100000, "stream": True}).encode()
        slow.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
                     + f"content-length: {len(payload)}\r\n\r\n".encode() + payload)
        slow.recv(100)  # its answer has begun
        proc.send_signal(signal.SIGTERM)
        time.sleep(2)
        assert proc.poll() is None  # still waiting on the open connection
        text = err.read_text()
        assert "[shutdown] API server: shutdown triggered" in text
        assert "INFO:     Waiting for connections to close. (CTRL+C to force quit)" in text
        slow.close()  # the client gives up
        assert proc.wait(30) == 0
        assert err.read_text().rstrip().endswith("INFO:     Application shutdown complete.")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_idle_it_stops_at_once(tmp_path):
    port = _port()
    proc = subprocess.Popen([*BASE, "--port", str(port), "--sim-startup-seconds", "0.5"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while True:
        try:
            if _get(port, "/health")[0] == 200:
                break
        except urllib.error.URLError:
            pass
        assert time.monotonic() < deadline
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert "Waiting for connections to close" not in err and err.rstrip().endswith("Application shutdown complete.")
