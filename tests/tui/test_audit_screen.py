"""The audit screen (a): the audit log newest first; Enter shows an action's phases with their
durations and the ExecStart before and after; an empty log says where the log is."""

from __future__ import annotations

import json

from textual.widgets import DataTable, Static
from tui_helpers import make_app, settle

from mtptui.tui.screens.audit import AuditScreen

SIZE = (160, 48)
BEFORE = ["/usr/bin/python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "4"]
AFTER = BEFORE + ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3"]


def entry(t: float, host: str, profile: str, result: str, exit_code: int, message: str, phases: list) -> dict:
    return {"id": f"{host}-{t}", "time": t, "user": "ops", "host": host, "unit": "sglang.service", "action": "apply", "profile": profile,
            "exec_start_before": BEFORE, "exec_start_after": AFTER, "dropin_before": None,
            "dropin_after": "[Service]\n", "phases": phases, "result": result, "exit_code": exit_code,
            "message": message}


def phase(name: str, state: str, at: float, detail: str = "") -> dict:
    return {"phase": name, "state": state, "detail": detail, "elapsed_s": at}


def write_log(path, entries) -> None:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))


async def open_audit(pilot, monkeypatch, log) -> None:
    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(log))
    await settle(pilot, pilot.app)
    await pilot.press("a")
    assert isinstance(pilot.app.screen, AuditScreen)


async def test_newest_first_and_enter_shows_phases_and_exec_start(tmp_path, monkeypatch):
    log = tmp_path / "audit.jsonl"
    write_log(log, [
        entry(1_800_000_000, "gpu1", "mtp3", "applied", 0, "verified: accept len 2.41 after 3 batches",
              [phase("lock", "start", 0.0), phase("lock", "ok", 0.2), phase("restart", "start", 0.5),
               phase("restart", "ok", 1.5), phase("wait", "start", 1.5), phase("wait", "progress", 30, "loading"),
               phase("wait", "ok", 44.0, "ready"), phase("verify", "ok", 47.25, "accept len 2.41")]),
        entry(1_800_000_600, "gpu2", "mtp1", "rolled_back", 3, "no ready within 900 s",
              [phase("wait", "start", 1.0), phase("wait", "fail", 901.0, "no ready line")]),
    ])
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_audit(pilot, monkeypatch, log)
        table = app.screen.query_one(DataTable)
        assert [str(table.get_row_at(i)[1]) for i in range(table.row_count)] == ["gpu2", "gpu1"]
        assert str(table.get_row_at(0)[4]) == "rolled_back" and str(table.get_row_at(1)[3]) == "apply mtp3"
        drawn = [table.render_line(y).text for y in range(3)]
        assert "rolled_back" in drawn[1] and "applied" in drawn[2], drawn  # whole, as drawn
        await pilot.press("down", "enter")
        text = str(app.screen.query_one("#detail", Static).render())
        lines = [" ".join(ln.split()) for ln in text.splitlines()]
        assert "lock ok 0.2 s" in lines and "restart ok 1.0 s" in lines
        assert "wait ok 42.5 s ready" in lines  # from its start, not from the progress event
        assert "verify ok 3.2 s accept len 2.41" in lines  # no start: from the event before
        assert "--speculative-algorithm NEXTN --speculative-num-steps 3" in text
        assert text.index("ExecStart before") < text.index("ExecStart after")
        await pilot.press("up")
        text = str(app.screen.query_one("#detail", Static).render())
        assert "rolled_back (exit 3): no ready within 900 s" in text and "wait fail" in " ".join(text.split())
        await pilot.press("escape")
        assert not isinstance(app.screen, AuditScreen)


async def test_an_empty_log_says_where_it_is(tmp_path, monkeypatch):
    log = tmp_path / "none-yet.jsonl"
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_audit(pilot, monkeypatch, log)
        assert str(app.screen.query_one("#empty", Static).render()) == f"no actions yet (the audit log is {log})"
        assert not app.screen.query(DataTable)


async def test_a_bad_line_is_skipped_and_counted_not_a_crash(tmp_path, monkeypatch):
    log = tmp_path / "audit.jsonl"
    good = entry(1_800_000_000, "gpu1", "mtp3", "applied", 0, "verified", [phase("lock", "ok", 0.2)])
    bad = [{**entry(1_800_000_100, "gpu2", "mtp1", "applied", 0, "x", []), "time": "yesterday"},
           {**entry(1_800_000_200, "gpu3", "mtp1", "applied", 0, "x", []), "result": ["applied"]},
           {**entry(1_800_000_300, "gpu4", "mtp1", "applied", 0, "x", []), "phases": [{"phase": "lock", "elapsed_s": "x"}]}]
    log.write_text(json.dumps(good) + "\n" + "".join(json.dumps(e) + "\n" for e in bad) + "not json\n")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_audit(pilot, monkeypatch, log)
        table = app.screen.query_one(DataTable)
        assert [str(table.get_row_at(i)[1]) for i in range(table.row_count)] == ["gpu1"]
        assert str(app.screen.query_one("#bad", Static).render()).startswith("4 bad lines skipped")
        await pilot.press("enter")
        assert "lock ok 0.2 s" in " ".join(str(app.screen.query_one("#detail", Static).render()).split())
        await pilot.press("escape")
        assert not isinstance(app.screen, AuditScreen)


async def test_a_log_that_is_a_directory_says_so_in_one_line(tmp_path, monkeypatch):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_audit(pilot, monkeypatch, tmp_path)
        text = str(app.screen.query_one("#error", Static).render())
        assert text == f"{tmp_path}: is a directory, not an audit log (see MTPTUI_AUDIT_LOG)"
        assert not app.screen.query(DataTable) and not app.screen.query("#bad")
