"""The dashboard on the simulator run as a real child process, acted on through the real control
path (control.session.HostControl over control.child.ChildTarget): a restart stops the child and
starts it with the new argv, and is verified from the child's own lines. A small model on one
rank, ready in well under a second, so an action through the keys takes a few seconds."""

from __future__ import annotations

import os
import sys
from contextlib import asynccontextmanager

from tui_helpers import FROZEN_WALL, until

from mtptui.commands.demo import free_port
from mtptui.config import Config
from mtptui.control.child import ChildTarget
from mtptui.control.plan import APPLY, Plan
from mtptui.control.profiles import BUILTINS
from mtptui.control.session import HostControl, host_controls
from mtptui.sources.process import ProcessSource
from mtptui.tui.launch import build_app

SIZE = (160, 48)
HOST = "gpu1"
OFF: list[str] = []
MTP = {n: ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", str(n), "--speculative-eagle-topk", "1",
           "--speculative-num-draft-tokens", str(n + 1)] for n in (1, 2, 3)}
QUICK = ["--sim-startup-seconds", "0.3", "--decode-log-interval", "10"]


def sim_argv(spec: list[str], python: str = sys.executable, port: int | None = None) -> list[str]:
    return [python, "-m", "mtptui.sim", "--model-path", "Qwen/Qwen3-8B", "--tp", "1", "--host", "127.0.0.1",
            "--port", str(port or free_port()), "--sim-load", "steady", *QUICK, *spec]


def child(spec: list[str], host: str = HOST) -> ProcessSource:
    return ProcessSource(sim_argv(spec), host=host, label="simulator", env=dict(os.environ, PYTHONUNBUFFERED="1"))


def unstarted_control(host: str = HOST) -> HostControl:
    """A real control whose child is never started: for a dashboard on a replay that must show
    the acting keys (or refuse them) without anything to restart."""
    return HostControl(ChildTarget(child(MTP[3], host)), host=host)


async def planned(profile: str = "mtp3", *, host: str = HOST, prod: bool = False) -> Plan:
    """What the real planner makes of `profile` for a child without speculation that is never
    started; its argv is fixed (no local path, no random port) so the preview reads the same on
    every machine."""
    source = ProcessSource(sim_argv(OFF, python="/usr/bin/python3", port=30000), host=host)
    return await HostControl(ChildTarget(source), host=host, prod=prod).plan(APPLY, BUILTINS[profile])


@asynccontextmanager
async def acting(spec: list[str], *, config: Config | None = None, prod: bool = False):
    """(pilot, app, source): the dashboard on a child started with `spec`, once its first batches
    are on the dashboard. `prod`: the host is tagged prod (its name must be typed)."""
    config = config or Config()
    source = child(spec)
    if prod:
        controls = {HOST: HostControl(ChildTarget(source), host=HOST, prod=True)}
    else:
        controls = host_controls([source], config)
    app = build_app([source], config=config, title="simulator child", window="all", wall=lambda: FROZEN_WALL,
                    controls=controls)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.dash.store.ranks(HOST), "the child's first batches")
            yield pilot, app, source
    finally:
        source.kill_now()
