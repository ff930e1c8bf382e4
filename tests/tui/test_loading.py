"""After a restart that turns speculation on, the server loads for a while: the panels say LOADING
(then WAITING FOR FIRST BATCH once ready), never SPEC OFF with "configured, yet no accept len",
and no figure of the run before is shown as now. Logs: the simulator's restart scenario, cut at
the moment between the restart and the new run's first batch, as a live screen would have it."""

from __future__ import annotations

import pytest
from test_screen_truth import plain
from tui_helpers import make_app, settle

from mtptui.core.alerts import evaluate
from mtptui.sim import scenario
from mtptui.tui.viewmodel import LOADING, WAITING
from mtptui.tui.widgets.epoch_strip import EpochStrip
from mtptui.tui.widgets.rank_grid import RankGrid, RankPanel


def restart_log(tmp_path, until: str) -> str:
    """mtp-toggle-restarts (spec off, then NEXTN 3 steps) up to the NEXTN run's server_args plus
    its loading lines (`until` "loading"), or up to its ready line (`until` "ready"): in both, the
    new run has not decoded yet."""
    lines = list(scenario.render("mtp-toggle-restarts"))
    spec_on = next(i for i, ln in enumerate(lines) if ln.truth.get("event") == "spec_config"
                   and ln.truth["data"].get("algorithm"))
    ready = next(i for i, ln in enumerate(lines) if i > spec_on and ln.truth.get("event") == "ready")
    first_batch = next(i for i, ln in enumerate(lines) if i > spec_on and ln.truth.get("kind") == "decode")
    assert spec_on < ready < first_batch
    if until == "loading":  # halfway through the loading, in log time
        half = (lines[spec_on].truth["ts"] + lines[ready].truth["ts"]) / 2
        cut = max(i for i in range(spec_on, ready) if lines[i].truth["ts"] <= half) + 1
    else:
        cut = ready + 1
    assert not any(ln.truth.get("kind") == "decode" for ln in lines[spec_on:cut])
    path = tmp_path / f"restart-{until}.log"
    scenario.write_log(str(path), lines[:cut])
    return str(path)


@pytest.mark.parametrize("size", [(160, 48), (80, 24)], ids=["160x48", "80x24"])
async def test_between_the_restart_and_the_first_batch_the_panels_say_loading(tmp_path, size):
    app = make_app(restart_log(tmp_path, "loading"), window="5m")
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        d = app.dash
        (view,) = app.screen._views[1]
        assert view.spec == LOADING and view.spec_configured
        assert all(v is None for v in view.now.values())  # nothing of the spec-off run is "now"
        assert view.stale_s is None  # silence while loading is the state, not staleness
        grid = app.screen.query_one(RankGrid)
        if grid.table_mode:
            text = plain(grid._table)
            assert "LOADING" in text and "SPEC OFF" not in text
        else:
            (panel,) = app.screen.query(RankPanel)
            title, note = str(panel.border_title), str(panel.border_subtitle)
            assert "LOADING" in title and "SPEC OFF" not in title and "STALE" not in title
            assert "configured, yet no accept len" not in note and "no decode line in this run yet" in note
            # The panel covers the new run: no figure from the run before, and no sparkline.
            rows = plain(panel).splitlines()
            assert rows[0].startswith("epoch 2")
            assert all(set(r.split()[2:]) == {"-"} for r in rows if r.startswith(("accept len", "gen tok/s")))
            assert not any(ch in "▁▂▃▄▅▆▇█" for ch in "".join(rows))
        strip = " ".join(plain(app.screen.query_one(EpochStrip)).split())
        assert "epoch 2/2" in strip and "EAGLE steps=3" in strip and "LOADING" in strip
        assert "gen tok/s" not in strip and "%" not in strip
        # No alert claims a silent fallback of speculation while the model loads.
        now = d.timeline.playhead()
        assert [a.kind for a in evaluate(d.store, "gpu-h1", now, d.th)] == []
        assert not any(f.alert.kind == "spec_fallback" for f in d.alerts.history)


async def test_the_whole_window_still_shows_no_figure_of_the_run_before_as_now(tmp_path):
    app = make_app(restart_log(tmp_path, "loading"), window="5m")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        await pilot.press("W")
        (view,) = app.screen._views[1]
        assert view.spec == LOADING
        # min/mean/max of the window include the spec-off run (that is what W asks for) ...
        assert view.metrics["gen_throughput"].stats is not None
        # ... but "now" is not its last line.
        (panel,) = app.screen.query(RankPanel)
        row = next(r for r in plain(panel).splitlines() if r.startswith("gen tok/s")).split()
        assert row[2] == "-" and row[3] != "-"


async def test_ready_without_a_batch_says_waiting_for_the_first_batch(tmp_path):
    app = make_app(restart_log(tmp_path, "ready"), window="5m")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        (view,) = app.screen._views[1]
        assert view.spec == WAITING
        (panel,) = app.screen.query(RankPanel)
        assert "WAITING FOR FIRST BATCH" in str(panel.border_title)
        strip = " ".join(plain(app.screen.query_one(EpochStrip)).split())
        assert "WAITING FOR FIRST BATCH" in strip and "ready at" in strip
        assert evaluate(app.dash.store, "gpu-h1", app.dash.timeline.playhead(), app.dash.th) == []
