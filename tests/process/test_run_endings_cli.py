"""`mtptui summary` on the samples says how each run ended (the real command).

The process tier: these start child processes (tests/unit starts none)."""

import json
import subprocess
import sys
from pathlib import Path
import pytest
from mtptui.core.epochs import CRASHED, RUNNING, STOPPED


SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def summary_cli(*args) -> str:
    r = subprocess.run([sys.executable, "-m", "mtptui", "summary", *args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_the_oom_crashloop_sample():
    doc = json.loads(summary_cli("--json", str(SAMPLES / "incident-oom-crashloop.log")))
    ended = [e["ended"] for e in doc["epochs"]]
    assert [e["how"] for e in ended] == [CRASHED] * 5
    assert ended[0]["error"]["kind"] == "oom" and "CUDA out of memory" in ended[0]["error"]["text"]
    assert all(e.get("restarted_by") == "systemd" for e in ended[:4])
    assert all(e["error"]["text"].startswith("RuntimeError: Not enough memory") for e in ended[1:])
    (loop,) = doc["crash_loops"]
    assert (loop["count"], loop["first"], loop["last"]) == (4, 1, 4) and loop["error"]["kind"] == "oom"
    table = summary_cli(str(SAMPLES / "incident-oom-crashloop.log"))
    runs = table[table.index("runs (how each ended):"):].splitlines()
    assert "1 2026-03-09 16:00:00 crashed, restarted by systemd (Restart=): OOM: torch.OutOfMemoryError" in runs[1]
    assert "2-5" in runs[2] and "crash loop: 4 runs crashed with OOM: RuntimeError: Not enough memory" in runs[2]
    assert runs[3] == ""


@pytest.mark.parametrize("name,how,kind", [
    ("mtp-toggle-restarts", [STOPPED, STOPPED, RUNNING], None),
    ("incident-nccl-timeout", [CRASHED], "nccl"),
    ("incident-hang-watchdog", [CRASHED], "watchdog"),
    ("vllm-eagle", [RUNNING], None),
    ("mtp-on-tp4", [RUNNING], None),
])
def test_the_samples_say_how_each_run_ended(name, how, kind):
    doc = json.loads(summary_cli("--json", str(SAMPLES / f"{name}.log")))
    assert [e["ended"]["how"] for e in doc["epochs"]] == how
    if kind is not None:
        assert doc["epochs"][-1]["ended"]["error"]["kind"] == kind
    assert doc["crash_loops"] == []
