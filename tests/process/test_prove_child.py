"""The smoke test and the benchmark on the demo's path: the real simulator as a child process,
reached on its own port, its profiles applied through the real control path (ChildTarget). No
background load: the benchmark's own warm-up requests give each restart its verification."""

from __future__ import annotations

import asyncio
import json
import os
import sys

from test_control_child import Lines, free_port

from mtptui.control.audit import read_audit
from mtptui.control.child import ChildTarget
from mtptui.control.profiles import BUILTINS
from mtptui.control.restart import Settings
from mtptui.control.session import HostControl
from mtptui.prove.bench import DONE, INTERRUPTED, Bench
from mtptui.prove.results import ACCEPTANCE, COLUMNS, MEASURED
from mtptui.prove.smoke import smoke
from mtptui.sources.process import ProcessSource

PROMPT, EXPECT = "What is 15*23? Answer with the number only.", "345"


def child(*spec: str) -> ProcessSource:
    return ProcessSource([sys.executable, "-m", "mtptui.sim", "--model-path", "Qwen/Qwen3-8B", "--tp", "1",
                          "--sim-startup-seconds", "0.3", "--decode-log-interval", "5", "--port", str(free_port()),
                          *spec], host="simulator", env=dict(os.environ, PYTHONUNBUFFERED="1"))


async def started(src: ProcessSource):
    feed = Lines()
    task = asyncio.ensure_future(src.run(feed))
    for _ in range(400):
        if any("fired up" in x for x in feed.got):
            break
        await asyncio.sleep(0.05)
    return task


async def stopped(task) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def control(src: ProcessSource) -> HostControl:
    return HostControl(ChildTarget(src), host="simulator", settings=Settings(wait_timeout=60, idle_after_ready=30))


async def test_smoke_passes_fails_on_a_wrong_expectation_and_says_down():
    src = child()
    hc = control(src)
    down = await smoke("simulator", await hc.endpoint(), PROMPT, EXPECT, 5.0)  # not started yet
    assert down.exit_code == 1 and down.kind == "down" and "the server is down" in down.message
    task = await started(src)
    try:
        ok = await smoke("simulator", await hc.endpoint(), PROMPT, EXPECT, 30.0)
        assert (ok.result, ok.answer, ok.completion_tokens, ok.exit_code) == ("pass", "345", 1, 0)
        wrong = await smoke("simulator", await hc.endpoint(), PROMPT, "346", 30.0)
        assert wrong.exit_code == 3 and "'345'" in wrong.message
    finally:
        await stopped(task)


async def test_bench_measures_each_profile_and_leaves_the_child_as_found(tmp_path, monkeypatch):
    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    src = child()
    hc = control(src)
    before = list(src.argv)
    task = await started(src)
    progress = []
    try:
        bench = Bench(hc, [BUILTINS["off"], BUILTINS["mtp2"]], [1, 2], 3, max_tokens=24,
                      on_progress=lambda p: progress.append((p.profile, p.step, p.concurrency, p.done)))
        report = await bench.run()
    finally:
        await stopped(task)
    assert report.exit_code == DONE and report.restored, bench.summary()
    data = report.to_json()
    assert json.loads(json.dumps(data)) == data
    assert data["prompts"]["file"] is None and len(data["prompts"]["categories"]) == 5
    rows = data["results"]
    assert [(r["profile"], r["concurrency"]) for r in rows] == [("off", 1), ("off", 2), ("mtp2", 1), ("mtp2", 2)]
    assert all(set(r) == {*COLUMNS, MEASURED, ACCEPTANCE} and r["requests"] == 3 and r["errors"] == 0 for r in rows)
    assert all(len(r[MEASURED]["tokens"]) == 3 and min(r[MEASURED]["seconds"]) > 0 for r in rows)
    # 3 requests a profile: a change, but too few for an interval, and no winner starred
    assert [r["change_pct"] is None for r in rows] == [True, True, False, False] and rows[2]["change_lo_pct"] is None
    assert [v["separated"] for v in data["verdicts"]] == [False, False]
    assert [r["accept_len"] is None for r in rows] == [True, True, False, False]
    assert all(1 < r["accept_len"] <= 3 for r in rows[2:])
    # the unit as found: no drop-in, the argv it started with, running
    assert hc.target.dropin is None and src.argv == before
    assert ("mtp2", "measure", 2, 3) in progress and progress[-1][1].startswith("restore")
    entries = read_audit(tmp_path / "audit.jsonl")
    # off was already running (no restart); mtp2 applied; the unit restored
    assert [(e["action"], e.get("profile"), e["result"]) for e in entries] == [
        ("bench", None, "done"), ("apply", "mtp2", "applied"), ("restore", None, "applied")]
    assert [p["phase"] for p in entries[0]["phases"]] == [
        "apply off", "measure off c=1", "measure off c=2", "apply mtp2", "measure mtp2 c=1", "measure mtp2 c=2",
        "restore"]


async def test_a_cancelled_bench_still_restores(tmp_path, monkeypatch):
    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    src = child()
    hc = control(src)
    before = list(src.argv)
    task = await started(src)
    bench = None

    def on_progress(p) -> None:
        if p.profile == "mtp1" and p.step == "measure" and p.done == 1:
            bench.cancel()  # as ctrl-c does, mid-measure after mtp1 was applied

    try:
        bench = Bench(hc, [BUILTINS["mtp1"], BUILTINS["off"]], [1], 20, max_tokens=24, on_progress=on_progress)
        report = await bench.run()
    finally:
        await stopped(task)
    assert report.interrupted and report.restored and report.exit_code == INTERRUPTED
    # off, which the unit ran, was measured first (no restart); mtp1 was cut short: no row
    assert [r["profile"] for r in report.results] == ["off"]
    assert hc.target.dropin is None and src.argv == before
    entries = read_audit(tmp_path / "audit.jsonl")
    assert [(e["action"], e["result"]) for e in entries] == [("bench", "interrupted"), ("apply", "applied"),
                                                             ("restore", "applied")]


async def test_a_profile_that_fails_is_rolled_back_and_the_others_still_measured(tmp_path, monkeypatch):
    from mtptui.control.profiles import Profile
    from mtptui.prove.bench import PROFILE_FAILED

    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    src = child()
    hc = control(src)
    before = list(src.argv)
    task = await started(src)
    broken = Profile("broken", algorithm="NEXTN", num_steps=1, topk=1, num_draft_tokens=2,
                     extra_args=("--no-such-flag",))
    try:
        bench = Bench(hc, [broken, BUILTINS["off"]], [1], 2, max_tokens=16)
        report = await bench.run()
    finally:
        await stopped(task)
    assert report.exit_code == PROFILE_FAILED and report.restored
    assert "unrecognized arguments" in report.failed["broken"] and "broken failed" in bench.summary()
    rows = report.to_json()["results"]
    assert [(r["profile"], r["requests"], r["output_tok_s"] is None) for r in rows] == [("broken", 0, True),
                                                                                        ("off", 2, False)]
    assert hc.target.dropin is None and src.argv == before
    assert [(e["action"], e["result"]) for e in read_audit(tmp_path / "audit.jsonl")] == [
        ("bench", "failed"), ("apply", "rolled_back")]


async def test_bench_sends_the_operators_prompts_with_their_own_max_tokens(tmp_path, monkeypatch):
    from mtptui.prove.prompts import read_file

    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    f = tmp_path / "mine.jsonl"
    f.write_text(json.dumps({"messages": [{"role": "user", "content": "Write a sonnet."}], "max_tokens": 7,
                             "category": "chat"}) + "\n")
    src = child()
    hc = control(src)
    task = await started(src)
    try:
        bench = Bench(hc, [BUILTINS["off"]], [1], 3, max_tokens=24, prompt_pool=read_file(f), prompts_file=str(f))
        report = await bench.run()
    finally:
        await stopped(task)
    assert report.exit_code == DONE and "drawn from 1 prompts of" in bench.preview_lines()[0]
    data = report.to_json()
    assert data["prompts"] == {"file": str(f), "count": 1, "categories": {"chat": 1}}
    (row,) = data["results"]
    assert row["requests"] == 3 and row["errors"] == 0
    assert row["per_request"]["tokens"] == [7, 7, 7]  # the prompt's own max_tokens, not --max-tokens


async def test_the_preview_shows_each_profiles_change_in_the_order_they_run():
    from mtptui.control.profiles import Profile

    # the host runs mtp1: it is measured first, without a restart; off and then again each restart
    src = child("--speculative-algorithm", "NEXTN", "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
                "--speculative-num-draft-tokens", "2")
    hc = control(src)
    task = await started(src)
    try:
        bench = Bench(hc, [BUILTINS["off"], BUILTINS["mtp1"], Profile("again", algorithm="NEXTN",
                      num_steps=1, topk=1, num_draft_tokens=2)], [1], 2)
        await bench.preview()
        lines = bench.preview_lines()
    finally:
        await stopped(task)
    assert [name for name, _ in bench.changes()] == ["mtp1", "off", "again"]
    mtp1, off, again = (c for _, c in bench.changes())
    assert mtp1 == [] and "- --speculative-algorithm NEXTN" in off and "+ --speculative-algorithm NEXTN" in again
    assert lines[1].startswith("restarts: up to 3:")
    assert any(x.startswith("  mtp1") and x.endswith("no change: no restart") for x in lines)
    again_section = lines[lines.index("── again ──"):]
    assert "  (no change)" not in again_section and "  + --speculative-algorithm NEXTN" in again_section
