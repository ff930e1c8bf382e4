"""The engine tier: a real vLLM (its CPU build, with speculative decoding) as a systemd unit in a
container host, for every path of mtptui that touches a server. Marker `engine` (`pytest -m engine`).

`engine` (session scope) builds the cached venv and model (vllm_env.py: about 2 minutes the first
time on a machine), boots one container host with them bind-mounted read-only, and gives an Engine
(engine.py). Its tests share that one unit, in order: each installs the settings it starts from.
Without root, nspawn or the torch wheel on disk the tier skips with the reason (CI=true: fails).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "integration"))
import vllm_env  # noqa: E402
from engine import Engine  # noqa: E402
from hosts import nspawn, rootfs  # noqa: E402



@pytest.fixture(scope="session")
def engine_root(need) -> Path:
    need(os.geteuid() == 0, "needs root (systemd-nspawn, network namespaces)")
    for tool in ("systemd-nspawn", "debootstrap", "ip", "ssh"):
        need(shutil.which(tool) is not None, f"{tool} is missing (run .ci/system-deps as root)")
    try:
        return vllm_env.build()
    except vllm_env.Unavailable as e:
        need(False, f"no real vLLM on this machine: {e}")
        raise


@pytest.fixture(scope="session")
def engine(engine_root):
    c = nspawn.Cluster(rootfs.build(), binds=(engine_root,))
    try:
        h = c.start(1)[0]
        # the hosts' rootfs starts the simulator's unit: not beside a real engine on 2 cores
        h.ssh("systemctl disable --now mtptui-sim; rm -f /usr/local/bin/nvidia-smi")  # and its GPU stand-in
        yield Engine(h, engine_root)
    finally:
        c.stop()


@pytest.fixture
def audit(tmp_path) -> Path:
    return tmp_path / "audit.jsonl"
