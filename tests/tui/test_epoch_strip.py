"""The epoch strip answers "did the restart help?" on the main screen, without a key: each epoch's
host total and its change against the run before and the spec-off run, equal to `summary --json`'s
epochs for the same log."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_screen_truth import plain, seek_to, summary_json
from tui_helpers import make_app, settle

from mtptui.core.compare import DELTA_MIN_BATCHES, percent
from mtptui.tui.widgets.epoch_strip import EpochStrip
from mtptui.tui.widgets.host_bar import HostBar
from mtptui.tui.widgets.status_bar import StatusBar

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
TOGGLE = str(SAMPLES / "mtp-toggle-restarts.log")  # spec off, NEXTN 3 steps, 1 step
DP8 = str(SAMPLES / "dp-attention-8.log")  # 8 DP-attention ranks: 8 streams to add up

# Wide enough for the strip's fullest form on one line (narrower, it takes its compact one).
FULL = (230, 48)


def last_decode_line(app, host: str, index: int) -> float:
    e = app.dash.store.epochs[host][index]
    return max(t for s in app.dash.store.ranks(host) for t in s.decode.times()
               if e.start < t and (e.end is None or t <= e.end))


def strip_text(app) -> str:
    return " ".join(plain(app.screen.query_one(EpochStrip)).split())


def strip_row(app):
    """The numbers the strip was drawn from (EpochRow, core/compare.py)."""
    d = app.dash
    from mtptui.tui.viewmodel import run_state, strip_view

    t1 = d.timeline.playhead()
    rows = app.screen._epoch_rows[3]
    return strip_view(run_state(d.store, d.host, t1), rows, app.screen._views[1], t1).row


def delta_json(d) -> dict | None:
    return None if d is None else d.to_json()


@pytest.mark.parametrize("size", [(160, 48), (120, 36), (80, 24)], ids=["160x48", "120x36", "80x24"])
async def test_each_epochs_strip_equals_summary_json(size):
    doc = summary_json(TOGGLE)
    epochs = doc["epochs"]
    assert [e["vs_previous"] and percent(e["vs_previous"]["change"]) for e in epochs] == [None, "+39%", "-7%"]
    app = make_app(TOGGLE, window="all")
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        for e in reversed(epochs):  # from the end of the replay, back through each epoch
            await seek_to(pilot, app, last_decode_line(app, "gpu-h1", e["index"]))
            row = strip_row(app)
            assert row.index == e["index"]
            totals = e["host_totals"]
            assert row.totals_json() == totals
            assert delta_json(row.vs_previous) == e["vs_previous"]
            assert delta_json(row.vs_baseline) == e["vs_baseline"]
            # As the operator reads it, on one or two lines at every size.
            text = strip_text(app)
            tiny = size[1] < 30
            assert app.screen.query_one(EpochStrip).size.height <= (1 if size[1] < 40 else 2)
            if tiny:  # one line: the settings are left to the status bar
                assert f"epoch {e['index'] + 1}/3 " in text
                assert e["label"] in " ".join(plain(app.screen.query_one(StatusBar)).split())
            else:
                assert f"epoch {e['index'] + 1}/3 {e['label']}" in text
            # narrow screens say it in fewer words (`host 2086 tok/s`), the same figures
            assert re.search(rf"host (total )?{totals['gen_throughput']:.0f} (gen )?tok/s", text), text
            if totals["accept_len"] is not None:
                assert re.search(rf"acc(ept len)? {totals['accept_len']:.2f}", text), text
            for key, name in (("vs_previous", "vs "), ("vs_baseline", "spec off")):
                if e[key] is not None:
                    assert f"{percent(e[key]['change'])}" in text and name in text


async def test_the_strip_at_the_end_of_a_replay_shows_both_changes_without_a_key():
    app = make_app(TOGGLE, window="all")
    async with app.run_test(size=FULL) as pilot:
        await settle(pilot, app)
        text = strip_text(app)
        assert "epoch 3/3 EAGLE steps=1 topk=1 draft=2" in text and "since restart (systemd) 16:04:07" in text
        assert "vs epoch 2 -7%" in text and "vs spec off (epoch 1) +29%" in text
        # The settings are the strip's: the host line keeps the host and its layout only.
        assert plain(app.screen.query_one(HostBar)).split() == ["host", "gpu-h1", "TP", "4", "·", "model",
                                                                 "Qwen/Qwen3.5-122B-A10B"]


async def test_dp_groups_add_up_to_the_host_total():
    doc = summary_json(DP8)
    (e,) = doc["epochs"]
    totals = e["host_totals"]
    assert totals["dp_groups"] == 8
    means = [r["gen_throughput"]["mean"] for r in e["ranks"].values()]
    assert totals["gen_throughput"] == pytest.approx(sum(means))
    app = make_app(DP8, window="all")
    async with app.run_test(size=FULL) as pilot:
        await settle(pilot, app)
        assert strip_row(app).totals_json() == totals
        assert f"host total {totals['gen_throughput']:.0f} gen tok/s (8 DP groups)" in strip_text(app)


async def test_no_change_is_claimed_before_enough_lines(tmp_path):
    """Right after the first batches of a run the strip says how many lines it waits for."""
    lines = Path(TOGGLE).read_text().splitlines()
    # The toggle sample up to its 5th decode line after the second restart.
    cut, seen, restarts = 0, 0, 0
    for i, ln in enumerate(lines):
        restarts += "systemd[1]: Started" in ln
        if restarts == 2 and "Decode batch" in ln:
            seen += 1
            if seen == 5:
                cut = i + 1
                break
    log = tmp_path / "five.log"
    log.write_text("\n".join(lines[:cut]) + "\n")
    app = make_app(str(log), window="all")
    async with app.run_test(size=FULL) as pilot:
        await settle(pilot, app)
        text = strip_text(app)
        assert f"changes after {DELTA_MIN_BATCHES} decode lines (5 so far)" in text
        assert "vs epoch" not in text and "%" not in text
        (e2,) = [e for e in summary_json(str(log))["epochs"] if e["index"] == 1]
        assert e2["vs_previous"] is None and not e2["host_totals"]["comparable"]


async def test_W_toggles_the_panels_between_the_epoch_and_the_window():
    app = make_app(TOGGLE, window="all")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        from mtptui.tui.widgets.rank_grid import RankPanel

        (panel,) = app.screen.query(RankPanel)
        epoch_mean = panel.view.metrics["gen_throughput"].stats["mean"]
        assert plain(panel).startswith("epoch 3")
        await pilot.press("W")
        (panel,) = app.screen.query(RankPanel)
        assert plain(panel).startswith("window all")
        whole = summary_json(TOGGLE)["series"][0]["decode"]["gen_throughput"]
        assert panel.view.metrics["gen_throughput"].stats["mean"] == pytest.approx(whole["mean"])
        assert epoch_mean != pytest.approx(whole["mean"])
        await pilot.press("W")
        assert plain(app.screen.query_one(RankPanel)).startswith("epoch 3")


async def test_a_run_too_short_to_compare_is_named(tmp_path):
    """The toggle sample with only 5 decode lines left in its MTP 3-step run: the 1-step run
    after it is compared with the spec-off run, and the strip says why not with the one before."""
    out, restarts, kept = [], 0, 0
    for ln in Path(TOGGLE).read_text().splitlines():
        restarts += "systemd[1]: Started" in ln
        if restarts == 2 and "Decode batch" in ln:
            kept += 1
            if kept > 5:
                continue
        out.append(ln)
    log = tmp_path / "short.log"
    log.write_text("\n".join(out) + "\n")
    epochs = summary_json(str(log))["epochs"]
    assert epochs[2]["vs_previous"]["epoch"] == 0 and epochs[2]["vs_baseline"]["epoch"] == 0
    app = make_app(str(log), window="all")
    async with app.run_test(size=FULL) as pilot:
        await settle(pilot, app)
        text = strip_text(app)
        assert f"vs epoch 1 (spec off) {percent(epochs[2]['vs_previous']['change'])}" in text
        assert "epoch 2 too short to compare (5 decode lines)" in text
