"""The live simulator as a process, the way the demo and the systemd hosts run it:
`python -m mtptui.sim ...` with only the standard library, HTTP on a free loopback port."""

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from mtptui.core.parse import LineParser
from mtptui.sim.truthcheck import mismatch
from simproc import ROOT
SPEC = ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4"]


def test_live_sim_health_chat_stream_info_and_sigterm(sim_factory):
    sim = sim_factory(["--model-path", "Qwen/Qwen3.5-122B-A10B", "--tp", "4", "--sim-load", "light",
                       "--sim-startup-seconds", "2"] + SPEC)
    # /health: refused or 503 while starting, 200 from the ready line on (that it turns exactly
    # there is the session's, checked on a fake clock in tests/unit/test_sim_session_clock.py).
    codes = []
    end = time.monotonic() + 20
    while time.monotonic() < end and 200 not in codes:
        try:
            codes.append(sim.get("/health", timeout=2)[0])
        except (urllib.error.URLError, ConnectionError):
            codes.append(None)
        time.sleep(0.02)
    assert codes[-1] == 200 and 503 in codes
    sim.wait_line("The server is fired up and ready to roll!", timeout=2)

    status, body = sim.post("/v1/chat/completions", {
        "model": "Qwen/Qwen3.5-122B-A10B", "messages": [{"role": "user", "content": "What is 15*23?"}]})
    reply = json.loads(body)
    assert status == 200 and "345" in reply["choices"][0]["message"]["content"]
    assert reply["usage"]["completion_tokens"] > 0

    # Streaming: several SSE chunks, then [DONE] (their pace: test_sim_session_clock.py).
    req = urllib.request.Request(sim.url("/v1/chat/completions"), data=json.dumps({
        "messages": [{"role": "user", "content": "Tell me something"}], "max_tokens": 60, "stream": True}).encode())
    chunks = []
    with urllib.request.urlopen(req, timeout=30) as r:
        for raw in r:
            line = raw.decode().strip()
            if line.startswith("data: "):
                chunks.append(line[6:])
    assert chunks[-1] == "[DONE]"
    text = "".join(json.loads(c)["choices"][0]["delta"].get("content") or "" for c in chunks[:-1])
    assert "mtptui SGLang simulator" in text and len(chunks) > 5

    status, body = sim.post("/generate", {"text": "2+2=", "sampling_params": {"max_new_tokens": 8}})
    gen = json.loads(body)
    assert "4" in gen["text"] and gen["meta_info"]["finish_reason"]["type"] == "stop"

    status, body = sim.post("/v1/completions", {"prompt": "What is 6*7?", "max_tokens": 16})
    assert "42" in json.loads(body)["choices"][0]["text"]

    sim.wait_line("Decode batch", timeout=10)
    for path in ("/server_info", "/get_server_info"):
        status, body = sim.get(path)
        info = json.loads(body)
        assert status == 200 and info["simulator"] is True
        assert (info["speculative_algorithm"], info["speculative_num_steps"], info["speculative_num_draft_tokens"]) \
            == ("EAGLE", 3, 4)
        assert 1.5 < info["internal_states"][0]["avg_spec_accept_length"] < 4.0
    models = json.loads(sim.get("/v1/models")[1])
    assert models["data"][0]["owned_by"] == "mtptui-sim" and models["data"][0]["id"] == "Qwen/Qwen3.5-122B-A10B"
    assert sim.get("/nope")[0] == 404
    assert any('"POST /v1/chat/completions HTTP/1.1" 200 OK' in line for line in sim.out)  # uvicorn-style

    assert sim.stop() == 0
    msgs = [line for _, line in sim.lines]
    assert any("SIGTERM received. signum=None frame=None. Draining requests and shutting down..." in m for m in msgs)
    assert "Gracefully exiting... Remaining number of requests" in msgs[-1]

    # Every stderr line, read by the core parser, says what the simulator meant (its truth file).
    truth = [json.loads(x) for x in sim.truth.read_text().splitlines()]
    truth_err = [t for t in truth if t["stream"] == "stderr"]
    assert [t["text"] for t in truth_err] == msgs
    parser = LineParser()
    bad = []
    for t in truth_err:
        why = mismatch(t, parser.parse(t["text"]))
        if why and not ("SIGTERM received" in t["text"] or "Gracefully exiting" in t["text"]):
            bad.append((why, t["text"]))
    assert not bad, bad[:3]
    assert sum(t.get("kind") == "decode" for t in truth_err) >= 1


def test_fault_crash_exits_1_and_fails_requests(sim_factory):
    sim = sim_factory(["--model-path", "Qwen/Qwen3-8B", "--sim-startup-seconds", "0.5", "--sim-load", "light",
                       "--sim-fault", "crash@1"])
    assert sim.exited(timeout=20) == 1
    text = "\n".join(x for _, x in sim.lines)
    assert "Scheduler hit an exception: Traceback (most recent call last):" in text
    assert "Received sigquit from a child process. It usually means the child failed." in text


@pytest.mark.parametrize("fault,extra,line", [
    ("oom", [], "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static."),
    ("hang@0.5", ["--watchdog-timeout", "1"], "Scheduler watchdog timeout (self.watchdog_timeout=1.0, self.soft=False)"),
])
def test_other_fatal_faults_exit_1(sim_factory, fault, extra, line):
    sim = sim_factory(["--model-path", "Qwen/Qwen3-8B", "--sim-startup-seconds", "0.5", "--sim-fault", fault] + extra)
    assert sim.exited(timeout=20) == 1
    assert any(line in x for _, x in sim.lines)


def test_invalid_flags_exit_2_with_sglangs_message(sim_factory):
    sim = sim_factory(["--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "NEXTN",
                       "--speculative-eagle-topk", "1"])
    assert sim.exited(timeout=20) == 2
    text = "\n".join(x for _, x in sim.lines)
    assert "assert self.speculative_eagle_topk is None and self.speculative_num_draft_tokens is None" in text
    assert "AssertionError" in text


def test_port_in_use_is_one_clear_line(sim_factory):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        sim = sim_factory(["--model-path", "Qwen/Qwen3-8B", "--port", str(port)])
        assert sim.exited(timeout=20) == 1
    assert any("address already in use" in x for _, x in sim.lines)


def test_the_simulator_needs_only_the_standard_library():
    """-I -S: no site-packages, no PYTHONPATH; the checkout alone on sys.path, as on the test hosts."""
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        "import mtptui.sim.cli, mtptui.sim.live, mtptui.sim.httpd, mtptui.sim.scenario, mtptui.sim.vllm\n"
        "bad = [m for m in sys.modules if m.startswith('mtptui') and m != 'mtptui' and not m.startswith('mtptui.sim')]\n"
        "assert not bad, bad\n"
        "assert 'textual' not in sys.modules\n"
        "lines = list(mtptui.sim.scenario.render('mtp-on-tp4', duration=60))\n"
        "print(len(lines))\n")
    r = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) > 50
    r = subprocess.run([sys.executable, "-I", "-S", "-c",
                        (f"import sys; sys.path.insert(0, {str(ROOT)!r}); sys.argv = ['x', '--help']; "
                        "import runpy; runpy.run_module('mtptui.sim', run_name='__main__')")],
                       capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0 and "launch_server.py" in r.stdout
