"""sample_logs/ is committed, and `make samples` (sample_logs/regenerate.py) makes the same bytes."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_logs"
REQUIRED = ["mtp-on-tp4", "mtp-off-baseline", "mtp-toggle-restarts", "dp-attention-8", "incident-oom-crashloop",
            "incident-acceptance-collapse", "old-format-0.4.9", "vllm-eagle"]


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    out = tmp_path_factory.mktemp("samples")
    subprocess.run([sys.executable, str(SAMPLES / "regenerate.py"), "--out", str(out)], check=True,
                   capture_output=True, timeout=120)
    return out


def test_regenerating_gives_identical_files(regenerated):
    made = sorted(p.name for p in regenerated.iterdir())
    committed = sorted(p.name for p in SAMPLES.iterdir() if p.name != "regenerate.py" and p.is_file())
    assert made == committed
    for name in made:
        assert (regenerated / name).read_bytes() == (SAMPLES / name).read_bytes(), name


def test_required_samples_exist_and_are_small():
    for name in REQUIRED:
        path = SAMPLES / f"{name}.log"
        assert path.is_file(), name
        assert path.stat().st_size < 2_000_000
        assert "mtptui" in path.read_text().splitlines()[1] or name == "vllm-eagle"
    for path in SAMPLES.glob("*.json"):
        assert path.stat().st_size < 2_000_000


def test_toggle_restarts_has_systemd_lines_and_a_new_server_args_each_time():
    text = (SAMPLES / "mtp-toggle-restarts.log").read_text()
    args = re.findall(r"server_args=ServerArgs\(.*?speculative_algorithm=(\S+), .*?speculative_num_steps=(\S+),", text)
    assert args == [("None", "None"), ("'EAGLE'", "3"), ("'EAGLE'", "1")]
    for line in ("systemd[1]: Stopping sglang-qwen.service - ", "systemd[1]: sglang-qwen.service: Deactivated successfully.",
                 "systemd[1]: Stopped sglang-qwen.service - ", "systemd[1]: Started sglang-qwen.service - "):
        assert text.count(line) >= 2, line
    # Each stop: Stopping, the server's SIGTERM lines, Deactivated, Stopped, then the next Started.
    stop = text.index("Stopping sglang-qwen.service")
    assert stop < text.index("SIGTERM received", stop) < text.index("Deactivated successfully", stop) \
        < text.index("Stopped sglang-qwen", stop) < text.index("Started sglang-qwen", stop)


def test_crashloop_has_systemds_failure_lines():
    text = (SAMPLES / "incident-oom-crashloop.log").read_text()
    assert text.count("sglang-qwen.service: Main process exited, code=exited, status=1/FAILURE") == 5
    assert text.count("sglang-qwen.service: Failed with result 'exit-code'.") == 5
    for n in range(1, 5):
        assert f"sglang-qwen.service: Scheduled restart job, restart counter is at {n}." in text
    assert text.count("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.") == 16
    assert "torch.OutOfMemoryError: CUDA out of memory." in text


def test_formats_of_the_samples():
    assert "Decode batch. #running-req" in (SAMPLES / "old-format-0.4.9.log").read_text()
    assert "mamba num: " in (SAMPLES / "mtp-on-tp4.log").read_text()
    assert re.search(r"\[2026-03-09 16:0\d:\d\d DP3 TP3 EP3\] Decode batch, ", (SAMPLES / "dp-attention-8.log").read_text())
    vllm = (SAMPLES / "vllm-eagle.log").read_text()
    assert "Engine 000: Avg prompt throughput:" in vllm and "SpecDecoding metrics: Mean acceptance length:" in vllm
    assert "accept len" not in (SAMPLES / "mtp-off-baseline.log").read_text()
