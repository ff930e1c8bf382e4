"""The control path on the demo's target: the real simulator as a child process, restarted with
new flags, verified from its own log lines, rolled back when the new flags make it fail."""

from __future__ import annotations

import asyncio
import socket
import sys

from mtptui.control.child import ChildTarget
from mtptui.control.profiles import BUILTINS, Profile
from mtptui.control.restart import Settings
from mtptui.control.session import HostControl
from mtptui.sources.process import ProcessSource


class Lines:
    def __init__(self) -> None:
        self.got: list[str] = []

    def lines(self, raw, host):
        self.got.extend(raw)

    def status(self, st):
        pass

    def dropped(self, n, reason, host):
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sim_argv(*spec: str) -> list[str]:
    return [sys.executable, "-m", "mtptui.sim", "--model-path", "Qwen/Qwen3-8B", "--tp", "1",
            "--sim-load", "steady", "--sim-startup-seconds", "0.3", "--decode-log-interval", "10",
            "--port", str(free_port()), *spec]


async def test_toggle_retune_and_roll_back(tmp_path, monkeypatch):
    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    src = ProcessSource(sim_argv(), host="simulator", label="simulator")
    feed = Lines()
    task = asyncio.ensure_future(src.run(feed))
    hc = HostControl(ChildTarget(src), host="simulator", settings=Settings(wait_timeout=60, idle_after_ready=20))
    phases = []
    try:
        for _ in range(400):  # the first run up, as an operator would see it before pressing s
            if any("fired up" in x for x in feed.got):
                break
            await asyncio.sleep(0.05)
        plan = await hc.toggle_plan()
        assert plan.profile.name == "mtp3" and plan.current.get("algorithm") is None
        out = await hc.execute(plan, phases.append)
        assert out.exit_code == 0, out.message
        assert out.message.startswith("verified: accept len")
        assert "--speculative-num-steps" in src.argv and src.argv[src.argv.index("--speculative-num-steps") + 1] == "3"
        assert any(x.startswith("Stopping ") for x in feed.got) and any(x.startswith("Started ") for x in feed.got)
        assert [p.phase for p in phases if p.state == "ok"][:3] == ["lock", "write", "reload"]

        plan = await hc.toggle_plan()  # on -> off
        assert plan.profile.name == "off"
        out = await hc.execute(plan)
        assert out.exit_code == 0, out.message
        assert "speculation off" in out.message and not any(a.startswith("--speculative") for a in src.argv)

        broken = Profile("broken", algorithm="NEXTN", num_steps=1, topk=1, num_draft_tokens=2,
                         extra_args=("--no-such-flag",))
        out = await hc.execute(await hc.plan("apply", broken))
        assert out.exit_code == 3, out.message
        assert "unrecognized arguments" in out.message and "rolled back" in out.message
        assert not any(a.startswith("--speculative") or a == "--no-such-flag" for a in src.argv)
        assert src.running
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    from mtptui.control.audit import read_audit

    results = [(e["profile"], e["result"]) for e in read_audit(tmp_path / "audit.jsonl")]
    assert results == [("mtp3", "applied"), ("off", "applied"), ("broken", "rolled_back")]


async def test_a_restart_before_the_first_start_starts_the_new_argv(tmp_path, monkeypatch):
    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    src = ProcessSource(sim_argv(), host="simulator", label="simulator")
    hc = HostControl(ChildTarget(src), host="simulator", settings=Settings(wait_timeout=60, idle_after_ready=20))
    plan = await hc.plan("apply", BUILTINS["mtp1"])  # the key pressed before the child is up
    feed = Lines()
    task = asyncio.ensure_future(src.run(feed))
    try:
        out = await hc.execute(plan)
        assert out.exit_code == 0, out.message
        assert "accept len" in out.message and src.starts == 2
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
