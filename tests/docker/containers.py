"""What the container tier's tests start in the tests' own dockerd: the project's SGLang simulator
in a container (`docker run`) and as a compose service, and `mtptui` run against them."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

from dockerd import IMAGE, PROJECT, Dockerd

from mtptui.sources.runtime import NUMBER_LABEL, SERVICE_LABEL, WORKDIR_LABEL

SIM = ["python3", "-m", "mtptui.sim", "--model-path", "Qwen/Qwen3-8B", "--tp", "1", "--sim-load", "steady",
       "--sim-startup-seconds", "1", "--decode-log-interval", "10", "--speculative-algorithm", "NEXTN",
       "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]
ENV = {"PYTHONPATH": "/opt/mtptui", "PYTHONUNBUFFERED": "1"}
BROKEN = ('[profiles.broken]\nalgorithm = "NEXTN"\nnum_steps = 2\ntopk = 1\nnum_draft_tokens = 3\n'
          'extra_args = ["--no-such-flag"]\n')


def free_port() -> int:
    return 31000 + uuid.uuid4().int % 20000


def run_sim(d: Dockerd, name: str, port: int) -> str:
    """`docker run -d` of the simulator on the host's network; its id."""
    env = [x for k, v in ENV.items() for x in ("--env", f"{k}={v}")]
    return d.docker("run", "--detach", "--name", name, "--network", "host", *env,
                    "--volume", f"{PROJECT}:/opt/mtptui:ro", IMAGE, *SIM, "--port", str(port)).stdout.strip()


def compose_project(d: Dockerd, root: Path, replicas: int = 2) -> Path:
    """A compose project of the simulator as a service `sim` of `replicas`, up; its directory. No
    network (each replica its own loopback): the logs are the witness, and a port no one serves."""
    root.mkdir(parents=True)
    doc = {"version": "2.4", "services": {"sim": {
        "image": IMAGE, "network_mode": "none", "scale": replicas, "environment": ENV,
        "volumes": [f"{PROJECT}:/opt/mtptui:ro"], "command": [*SIM, "--port", str(free_port())]}}}
    # written as a person would, with comments and their own layout: kept byte for byte
    (root / "docker-compose.yml").write_text("# the team's simulator\n" + json.dumps(doc, indent=4) + "\n\n")
    compose(d, root, "up", "--detach")
    return root


def compose(d: Dockerd, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(["docker-compose", *args], cwd=root, env=d.env, capture_output=True, text=True,
                       timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"docker-compose {' '.join(args)}: {r.stderr.strip()}")
    return r


def replicas(d: Dockerd, root: Path, service: str = "sim") -> list[dict]:
    """The service's containers as `inspect` tells them, by replica number: found by the labels
    compose puts on each (its project's directory, the service), as mtptui finds them, with the
    daemon's own client (no `docker-compose ps`, a Python start of a second or more each)."""
    ids = d.docker("ps", "--all", "--quiet", "--no-trunc", "--filter", f"label={WORKDIR_LABEL}={root}",
                   "--filter", f"label={SERVICE_LABEL}={service}").stdout.split()
    found = json.loads(d.docker("inspect", "--type", "container", *ids).stdout) if ids else []
    return sorted(found, key=lambda c: int(c["Config"]["Labels"][NUMBER_LABEL]))


def digest(root: Path, but: str = "compose.mtptui.yml") -> dict[str, str]:
    """Every file of the project (but mtptui's override) by its sha256: the user's files."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.iterdir())
            if p.is_file() and p.name != but}


def inspect(d: Dockerd, ref: str) -> dict:
    return json.loads(d.docker("inspect", "--type", "container", ref).stdout)[0]


def mtptui(d: Dockerd, *args: str, audit: Path, config: Path | None = None, timeout: float = 400,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(d.env, MTPTUI_AUDIT_LOG=str(audit), **(env or {}))
    cfg = ["--config", str(config)] if config is not None else ["--config", os.devnull]
    return subprocess.run([sys.executable, "-m", "mtptui", *args[:1], *cfg, *args[1:]], capture_output=True,
                          text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL, cwd=PROJECT)


def held_at(d: Dockerd, *args: str, audit: Path, phase: str, config: Path | None = None
            ) -> tuple[subprocess.Popen[str], list[str]]:
    """`mtptui spec ARGS --yes` started and held at `phase` (MTPTUI_TEST_HOLD): the process and
    what it said on stderr so far."""
    env = dict(d.env, MTPTUI_AUDIT_LOG=str(audit), MTPTUI_TEST_HOLD=phase)
    cfg = ["--config", str(config) if config is not None else os.devnull]
    spec = subprocess.Popen([sys.executable, "-m", "mtptui", "spec", *cfg, *args, "--yes"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, stdin=subprocess.DEVNULL)
    assert spec.stderr is not None
    said = []
    for line in spec.stderr:
        said.append(line)
        if "held here" in line:
            return spec, said
    spec.kill()
    raise AssertionError(f"never held at {phase}: " + "".join(said) + (spec.stdout.read() if spec.stdout else ""))


def killed_at(d: Dockerd, *args: str, audit: Path, phase: str = "wait", config: Path | None = None) -> None:
    """`mtptui spec ARGS --yes` held at `phase`, then SIGKILLed: no rollback, no unlock, no audit
    end, as a console lost to the OOM killer leaves a host."""
    import time

    first, _ = held_at(d, *args, audit=audit, phase=phase, config=config)
    try:
        time.sleep(1.0)  # its heartbeat writes the phase into the lock's owner file
        first.kill()
        first.wait(timeout=10)
    finally:
        if first.poll() is None:
            first.kill()


def audit_entries(path: Path) -> list[dict]:
    from mtptui.control.audit import read_audit

    return read_audit(path)


async def until(pilot, cond, what: str, limit: int = 1200, said=lambda: "") -> None:
    """Waits in tenths of a second (Textual's pilot pausing) until cond(); fails saying what was
    awaited and said() (what the screen was doing) otherwise."""
    import pytest

    for _ in range(limit):
        if cond():
            return
        await pilot.pause(0.1)
    pytest.fail(f"never: {what}; {said()}")
