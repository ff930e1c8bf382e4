"""A bench started together with its server: the first profile is what the server runs (no
restart), so nothing waited for it to load; the bench must wait for ready the way a restart does
(/health 200: control.probe), or refuse in one line when it does not come within wait_timeout."""

from __future__ import annotations

import asyncio
import os
import sys

from test_control_child import Lines, free_port

from mtptui.control.child import ChildTarget
from mtptui.control.profiles import BUILTINS
from mtptui.control.restart import Settings
from mtptui.control.session import HostControl
from mtptui.prove.bench import COULD_NOT_RUN, DONE, Bench
from mtptui.sources.process import ProcessSource


def child(startup_s: float) -> ProcessSource:
    return ProcessSource([sys.executable, "-m", "mtptui.sim", "--model-path", "Qwen/Qwen3-8B", "--tp", "1",
                          "--sim-startup-seconds", str(startup_s), "--decode-log-interval", "5",
                          "--port", str(free_port())], host="simulator", env=dict(os.environ, PYTHONUNBUFFERED="1"))


async def bench_at_once(src: ProcessSource, wait_timeout: float):
    """Starts the child and the bench together (as `mtptui bench` right after `systemctl start`)."""
    hc = HostControl(ChildTarget(src), host="simulator", settings=Settings(wait_timeout=wait_timeout,
                                                                          idle_after_ready=30))
    task = asyncio.ensure_future(src.run(Lines()))
    try:
        for _ in range(100):  # the process is up (the port bound, /health 503), not yet ready
            if (await hc.state()).active == "active":
                break
            await asyncio.sleep(0.02)
        bench = Bench(hc, [BUILTINS["off"]], [1], 3, max_tokens=16)
        return bench, await bench.run()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_a_bench_started_with_the_server_waits_for_ready(tmp_path, monkeypatch):
    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    bench, report = await bench_at_once(child(3.0), wait_timeout=60)
    assert report.exit_code == DONE, bench.summary()
    [row] = report.results
    assert (row["profile"], row["requests"], row["errors"]) == ("off", 3, 0)
    assert row["output_tok_s"] > 0


async def test_a_server_not_ready_in_time_is_refused_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    bench, report = await bench_at_once(child(20.0), wait_timeout=2)
    assert report.exit_code == COULD_NOT_RUN and report.restored and report.results == []
    assert report.error == "simulator: the server is not ready after 2 s (/health does not answer 200); not measured"
