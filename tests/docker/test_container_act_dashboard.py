"""The dashboard acting on a container host (as tests/integration/test_control_dashboard.py does on
a systemd unit): the container's log followed, `s` turns speculation off through the preview, the
container is recreated with the new command and verified, the old one removed only then, and the
new run streams in as a new epoch."""

from __future__ import annotations

import pytest
from containers import audit_entries, free_port, inspect, run_sim
from test_container_spec import names


async def test_s_on_a_container_host_applies_and_verifies(dockerd, tmp_path, audit, monkeypatch):
    from mtptui.commands.live import container_source
    from mtptui.config import Config, HostConfig
    from mtptui.control.session import host_controls
    from mtptui.transport.local import LocalRunner
    from mtptui.tui.launch import build_app
    from mtptui.tui.screens.confirm import ConfirmScreen

    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(audit))
    monkeypatch.setenv("DOCKER_HOST", dockerd.host)
    name = "act-dash"
    run_sim(dockerd, name, free_port())
    before = inspect(dockerd, name)["Id"]
    source = container_source(HostConfig(name="box", container=name, local=True), LocalRunner(), since=None,
                              lines=1000)
    controls = host_controls([source], Config())
    assert list(controls) == ["box"]
    app = build_app([source], window="all", controls=controls)
    async with app.run_test(size=(160, 48)) as pilot:
        dash = app.dash

        async def until(cond, what: str, limit: int = 1200):
            for _ in range(limit):
                if cond():
                    return
                await pilot.pause(0.1)
            under_way = [(r.phase, r.detail) for r in dash.running.values()]
            pytest.fail(f"never: {what}; under way {under_way}; told {getattr(app, 'told', [])[-6:]}")

        def told() -> list[str]:
            return [m for m, _ in getattr(app, "told", [])]

        await until(lambda: any(s.spec_seen for s in dash.store.ranks("box")), "accept len from the container's log")
        await pilot.press("s")
        await until(lambda: isinstance(app.screen, ConfirmScreen), "the preview")
        plan = app.screen.plan
        assert plan.title() == f"box · {name}: → off"
        assert f"docker rename {name} {name}-mtptui-old" in "\n".join(plan.preview_lines())  # the old one kept
        await pilot.press("y")
        await until(lambda: not dash.running, "the action's end")
        assert any(m.startswith("box: off verified") for m in told()), told()
        await until(lambda: len(dash.store.epochs.get("box", [])) >= 2, "the new run as a new epoch")
    now = inspect(dockerd, name)
    assert now["Id"] != before and now["State"]["Running"]
    assert not any(a.startswith("--speculative") for a in now["Config"]["Cmd"]), now["Config"]["Cmd"]
    assert names(dockerd, name) == {name}  # the old one removed once the new one was verified
    assert [(e["action"], e["profile"], e["result"]) for e in audit_entries(audit)] == [("apply", "off", "applied")]
    dockerd.docker("rm", "--force", name)  # a simulator left running takes the other tests' CPU
