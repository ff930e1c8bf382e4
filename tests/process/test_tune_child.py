"""The tune on the demo's path: the real simulator as a child, its candidates applied through
the real control path (ChildTarget), in rounds; the child left as found."""

from __future__ import annotations

import json

from test_prove_child import child, control, started, stopped

from mtptui.control.audit import read_audit
from mtptui.control.profiles import BUILTINS
from mtptui.prove import tune
from mtptui.prove.bench import DONE


async def test_tune_measures_in_rounds_drops_off_and_leaves_the_child_as_found(tmp_path, monkeypatch):
    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    src = child()
    hc = control(src)
    before = list(src.argv)
    task = await started(src)
    try:
        t = tune.Tune(hc, [BUILTINS["off"], BUILTINS["mtp1"], BUILTINS["mtp3"]], 1, 8, budget_s=45,
                      grid_points=53, max_tokens=32)
        report = await t.run()
    finally:
        await stopped(task)
    assert report.exit_code == DONE and report.restored, t.summary()
    data = report.to_json()
    assert json.loads(json.dumps(data)) == data
    first = data["rounds"][0]
    assert first["candidates"] == ["off", "mtp1", "mtp3"] and first["requests"] == 8
    # off is far behind both (the model: 66 against 95 and 102 tokens/s): clearly worse, dropped
    assert "off" in first["dropped"] and data["winner"] in ("mtp1", "mtp3")
    assert all(r["round"] >= 1 for r in data["results"]) and data["points"] == tune.points(data["rounds"])
    assert hc.target.dropin is None and src.argv == before
    entries = read_audit(tmp_path / "audit.jsonl")
    assert entries[0]["action"] == "tune" and entries[0]["result"] == "done"
    assert entries[-1]["action"] == "restore"
