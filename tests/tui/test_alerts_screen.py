"""A host-wide collapse on screen (8 DP-attention ranks, the simulator's accept-collapse fault):
one alert line per condition naming the ranks, badges no longer green on those ranks, and the
timeline keeping the kinds of alert apart."""

from __future__ import annotations

import pytest
from textual.content import Content
from tui_helpers import DATA, make_app, screen_text, settle

from mtptui.core.alerts import BADGE, DIVERGE, RANK_RULES, Alert
from mtptui.tui.widgets.alerts_bar import AlertsBar
from mtptui.tui.widgets.events import TimelineEntry, coalesce
from mtptui.tui.widgets.rank_grid import RankPanel, alert_words, badges
from mtptui.tui.widgets.rank_table import state_badge
from mtptui.tui.viewmodel import PanelView

COLLAPSE = str(DATA / "dp8-collapse.log")
SIZES = [(80, 24), (120, 36), (160, 48)]


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x36", "160x48"])
async def test_a_host_wide_collapse_is_one_alert_naming_all_ranks(size):
    app = make_app(COLLAPSE, window="all")
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        lines = screen_text(app)
        text = "\n".join(lines)
        bar = app.screen.query_one(AlertsBar).region
        assert bar.height == len(app.dash.active_alerts["gpu-h2"]) == 2  # a line per condition
        first, second = lines[bar.y:bar.y + 2]
        assert first.startswith("  ALERT  accept len ≈ 1.0 on all 8 ranks: nothing accepted · since 16:00:32")
        assert second.startswith("  WARN  accept rate < 0.35 on all 8 ranks · since 16:00:30")
        # Every rank on screen wears the alert: a table row's ⚠ badge, or a panel's ⚠ and word.
        if app.screen.query_one("RankGrid").table_mode:
            assert text.count("⚠SPEC ON") == sum(f"│ {i} DP{i - 1} " in text for i in range(1, 9)) > 0
        else:
            panels = list(app.screen.query(RankPanel))
            assert len(panels) == 8
            for p in panels:
                title, note = (Content.from_markup(str(b)) for b in (p.border_title, p.border_subtitle))
                assert title.plain.endswith(" SPEC ON  ⚠") and "$success" not in str(p.border_title)
                assert note.plain.startswith("⚠ accept len 1, accept rate low · ")


async def test_the_timeline_keeps_kinds_of_alert_apart():
    app = make_app(COLLAPSE, window="all")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        await pilot.press("e")
        await pilot.pause()
        text = "\n".join(screen_text(app))
        assert "16:00:30 WARN      accept rate < 0.35 on" in text
        assert "16:00:32 ALERT     accept len ≈ 1.0 on" in text
        assert "×" not in text


def test_coalesce_folds_an_alert_only_with_itself():
    rows = [TimelineEntry(1, "alert", "accept rate < 0.35 on all 8 ranks", fold="accept_rate_low"),
            TimelineEntry(2, "alert", "queue growing on DP3: 0 -> 40 waiting", fold="queue_growing"),
            TimelineEntry(3, "alert", "queue growing on DP3: 2 -> 50 waiting", fold="queue_growing"),
            TimelineEntry(4, "retract", "retracted 3 requests"), TimelineEntry(5, "retract", "retracted 1")]
    out = coalesce(rows)
    assert [(e.text, e.count, e.first) for e in out] == [
        ("accept rate < 0.35 on all 8 ranks", 1, None), ("queue growing on DP3: 2 -> 50 waiting", 2, 2),
        ("retracted 1", 2, 4)]


def test_every_alert_kind_has_a_badge_word():
    assert set(BADGE) == {"spec_fallback", "throughput_down", *RANK_RULES, *DIVERGE}


def test_badges_turn_from_green_under_an_alert():
    view = PanelView(None, "TP0", "on", True, False, 0, 10, None, 4, {}, False)
    error = Alert("accept_len_one", None, "error", "t", "d", ranks=("TP0",))
    warn = Alert("queue_growing", None, "warning", "t", "d", ranks=("TP0",))
    assert state_badge(view) == ("SPEC ON", "bold $text on $success")
    assert state_badge(view, [error, warn]) == ("⚠SPEC ON", "bold $text on $error")
    assert state_badge(view, [warn]) == ("⚠SPEC ON", "bold $text on $warning-darken-1")
    green = badges(view)
    red = badges(view, [error, warn])
    assert "$success" in str(green.spans) and "$success" not in str(red.spans)
    assert red.plain == " SPEC ON  ⚠"
    assert alert_words([error, warn]) == "accept len 1, queue growing"
