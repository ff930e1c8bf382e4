"""The demo's pipeline for real: the simulator as a child process, its lines on screen, and the
numbers on screen equal to `mtptui summary --json` of what it printed (recorded with --record)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import pytest
from tui_helpers import notes, until

from mtptui.commands import demo, summary as summary_cmd
from mtptui.tui.launch import build_app
from mtptui.tui.viewmodel import panel_view, spec_for
from mtptui.tui.widgets.status_bar import StatusBar

FAST = ["--sim-startup-seconds", "1", "--decode-log-interval", "8"]


async def test_demo_shows_the_simulator_and_agrees_with_summary(tmp_path):
    record = tmp_path / "demo.jsonl"
    args = demo.build_parser().parse_args(["--record", str(record)])
    source, writer = demo.demo_source(args, FAST)
    app = build_app([source], title="demo", window="all", wall=lambda: 1_800_000_000.0)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            dash = app.dash
            for _ in range(300):  # up to 30 s on a loaded machine; usually 3-4 s
                await pilot.pause(0.1)
                ranks = dash.store.ranks("simulator")
                if len(ranks) == 8 and all(s.decode_batches >= 3 for s in ranks):
                    break
            else:
                pytest.fail("the simulator's decode lines did not arrive")
            status = str(app.screen.query_one(StatusBar).render())
            assert "simulator (mtptui sim, not a real SGLang)" in status
            # Stop the child, let every line it printed reach the store, then compare.
            app.workers.cancel_group(app, "sources")
            await pilot.pause(0.5)
            dash.feed.drain()
            t0, t1 = None, dash.store.last_ts
            views = {s.rank: panel_view(s, t0, t1, spec=spec_for(dash.store, "simulator", t1), th=dash.th)
                     for s in dash.store.ranks("simulator")}
            assert all(v.spec == "on" for v in views.values())
    finally:
        source.kill_now()
        writer.close()
    out = io.StringIO()
    with redirect_stdout(out):
        assert summary_cmd.main(["--json", str(record)]) == 0
    doc = json.loads(out.getvalue())
    want = {s["rank"]: s["decode"] for s in doc["series"] if s["host"] == "simulator"}
    assert set(want) == set(views)
    for rank, v in views.items():
        for m in ("accept_len", "accept_rate", "gen_throughput"):
            got, exp = v.metrics[m].stats, want[rank][m]
            assert got["n"] == exp["n"], (rank, m)
            for k in ("mean", "min", "max"):
                assert got[k] == pytest.approx(exp[k], abs=1e-9), (rank, m, k)


async def test_s_in_the_demo_restarts_the_simulator_without_speculation(audit):
    """The whole path through the keys: s, the preview, y, the child restarted with the new argv
    and verified from its own lines, the new epoch on the compare screen, the audit log."""
    from textual.widgets import DataTable

    from mtptui.config import Config
    from mtptui.control.audit import read_audit
    from mtptui.control.session import host_controls
    from mtptui.tui.screens.audit import AuditScreen
    from mtptui.tui.screens.compare import CompareScreen
    from mtptui.tui.screens.confirm import ConfirmScreen

    args = demo.build_parser().parse_args([])
    source, _ = demo.demo_source(args, FAST)
    controls = host_controls([source], Config())
    assert list(controls) == ["simulator"]
    app = build_app([source], title="demo", window="all", wall=lambda: 1_800_000_000.0, controls=controls)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            dash = app.dash

            await until(pilot, lambda: any(s.spec_seen for s in dash.store.ranks("simulator")), "accept len from the demo")
            await pilot.press("s")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the preview")
            plan = app.screen.plan
            assert plan.title() == "simulator · simulator: → off"
            assert any(tag == "-" and "--speculative-algorithm" in text for tag, text in plan.diff_lines())
            await pilot.press("y")
            await until(pilot, lambda: not dash.running, "the action's end", seconds=120)
            told = notes(app)
            assert any(m.startswith("simulator: off verified") and sev == "information" for m, sev in told), told
            assert not any(a.startswith("--speculative") for a in source.argv)
            await until(pilot, lambda: len(dash.store.epochs.get("simulator", [])) >= 2, "the new epoch")
            await pilot.press("c")
            compare = app.screen
            assert isinstance(compare, CompareScreen)
            labels = [r.label for r in compare.rows]
            assert labels[0].startswith("EAGLE (MTP) steps=3") and labels[-1] == "spec off"
            # the run before ended by mtptui's hand, as the compare screen and the events pane say
            assert compare.rows[0].ended["text"] == "restarted by mtptui (profile off)", compare.rows[0].ended
            await pilot.press("escape", "a")
            await until(pilot, lambda: isinstance(app.screen, AuditScreen) and app.screen.query(DataTable), "the audit table")
            table = app.screen.query_one(DataTable)
            assert str(table.get_row_at(0)[3]) == "apply off" and str(table.get_row_at(0)[4]) == "applied"
    finally:
        source.kill_now()
    assert [(e["profile"], e["result"]) for e in read_audit(audit)] == [("off", "applied")]


async def test_a_profile_that_fails_at_start_is_rolled_back_and_told_as_a_warning():
    """p, a config profile whose flag the server refuses, y: the child fails, the old argv comes
    back, and the notification is a warning with the reason."""
    from mtptui.config import Config
    from mtptui.control.profiles import Profile
    from mtptui.control.session import host_controls
    from mtptui.tui.screens.confirm import ConfirmScreen
    from mtptui.tui.screens.profiles import ProfilePicker

    broken = Profile("broken", algorithm="NEXTN", num_steps=1, topk=1, num_draft_tokens=2, extra_args=("--no-such-flag",))
    config = Config(profiles={"broken": broken})
    source, _ = demo.demo_source(demo.build_parser().parse_args([]), FAST)
    before = list(source.argv)
    app = build_app([source], config=config, title="demo", window="all", wall=lambda: 1_800_000_000.0,
                    controls=host_controls([source], config))
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await until(pilot, lambda: app.dash.store.ranks("simulator"), "the demo's first batches")
            await pilot.press("p")
            await until(pilot, lambda: isinstance(app.screen, ProfilePicker), "the picker")
            await pilot.press("down", "enter")  # from mtp3, which runs now, to the config's profile
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the preview")
            assert app.screen.plan.profile.name == "broken"
            await pilot.press("y")
            await until(pilot, lambda: not app.dash.running, "the action's end", seconds=120)
            told = notes(app)
            assert any("rolled back" in m and "unrecognized arguments" in m and sev == "warning" for m, sev in told), told
            assert source.argv == before and source.running
    finally:
        source.kill_now()
