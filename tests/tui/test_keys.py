"""Every key of the dashboard, pressed through Textual's Pilot on a replayed log; every binding of
mtptui.tui found by walking its classes and held to the one key table (config/keys.py); the
config's keymap applied by the dashboard and by the fleet view alike."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest
from textual.command import CommandPalette
from textual.widgets import Input
from tui_helpers import SMALL_LOG, make_app, settle

from mtptui.config import Config, ConfigError, parse_config
from mtptui.config.keys import BINDING_IDS, BY_ID, KEY_HINT, TABLE
from mtptui.sources.replay import MAX_SPEED
from mtptui.tui.screens.help import HelpScreen
from mtptui.tui.themes import PROD_ACCENT
from mtptui.tui.widgets.chart import MetricChart
from mtptui.tui.widgets.events import EventTimeline
from mtptui.tui.widgets.host_bar import HostBar
from mtptui.tui.widgets.log_view import LogView
from mtptui.tui.widgets.rank_grid import RankPanel

SIZE = (160, 48)


@pytest.fixture
def two_hosts(tmp_path) -> tuple[str, str]:
    second = tmp_path / "gpu2.log"
    second.write_text(Path(SMALL_LOG).read_text().replace(" gpu1 ", " gpu2 "))
    return SMALL_LOG, str(second)


def host_text(app) -> str:
    return str(app.screen.query_one(HostBar).render())


async def test_q_quits():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0
    assert not app.is_running


async def test_space_pauses_and_resumes_the_replay():
    app = make_app(speed=1.0)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.2)
        clock = app.dash.replay
        assert not clock.paused
        await pilot.press("space")
        assert clock.paused
        assert "paused" in app.dash.timeline.state_label()
        await pilot.press("space")
        assert not clock.paused


async def test_left_and_right_seek_the_replay():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        tl = app.dash.timeline
        end = tl.playhead()
        step = tl.step()
        await pilot.press("left")
        assert tl.playhead() == pytest.approx(end - step)
        assert app.dash.replay.paused, "a seek at full speed holds the replay there"
        await pilot.press("left", "left")
        assert tl.playhead() == pytest.approx(end - 3 * step)
        await pilot.press("right")
        assert tl.playhead() == pytest.approx(end - 2 * step)
        # The log pane does not show lines stamped after the playhead.
        log = app.screen.query_one(LogView)
        assert "held" in str(log.border_title) and log.new_lines > 0


async def test_plus_and_minus_change_the_speed():
    app = make_app(speed=1.0)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.1)
        await pilot.press("plus")
        assert app.dash.replay.speed == 2.0
        await pilot.press("plus", "plus")
        assert app.dash.replay.speed == 10.0
        await pilot.press("minus")
        assert app.dash.replay.speed == 5.0
        assert "5x" in app.dash.timeline.state_label()


async def test_tab_and_shift_tab_switch_hosts(two_hosts):
    app = make_app(*two_hosts)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert app.dash.hosts() == ["gpu1", "gpu2"]
        assert app.dash.host == "gpu1" and "gpu1" in host_text(app)
        await pilot.press("tab")
        assert app.dash.host == "gpu2" and "gpu2" in host_text(app)
        await pilot.press("shift+tab")
        assert app.dash.host == "gpu1"
        tabs = app.screen.query_one("#hosts")
        assert tabs.display and tabs.active == "host-0"


async def test_digits_focus_a_rank_and_again_unfocus():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("2")
        assert app.dash.focused_rank == "TP1"
        panels = list(app.screen.query(RankPanel))
        assert [p.has_class("-focused") for p in panels] == [False, True, False, False]
        assert app.screen.query_one(MetricChart).data.focus == "TP1"
        await pilot.press("2")
        assert app.dash.focused_rank is None
        await pilot.press("9")  # there are 4 ranks
        assert app.dash.focused_rank is None


async def test_m_cycles_the_chart_metric():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        chart = app.screen.query_one(MetricChart)
        seen = [chart.data.metric]
        for _ in range(6):
            await pilot.press("m")
            seen.append(chart.data.metric)
        assert seen == ["accept_len", "accept_rate", "gen_throughput", "running_req", "queue_req",
                        "token_usage", "accept_len"]


async def test_w_cycles_the_window():
    app = make_app(window="1m")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        seen = [app.dash.timeline.window_label]
        for _ in range(5):
            await pilot.press("w")
            seen.append(app.dash.timeline.window_label)
        assert seen == ["1m", "5m", "15m", "1h", "all", "1m"]
        chart = app.screen.query_one(MetricChart)
        assert chart.data.t1 - chart.data.t0 == 60


async def test_slash_filters_the_log():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("slash")
        box = app.screen.query_one("#filter", Input)
        assert box.display and box.has_focus
        await pilot.press(*"ready", "enter")
        log = app.screen.query_one(LogView)
        assert log.filter == "ready" and not box.display
        shown = str(log.render())
        assert "fired up and ready" in shown and "Decode batch" not in shown
        await pilot.press("slash", "ctrl+a", "ctrl+k", "enter")  # empty clears
        assert log.filter == "" and "Decode batch" in str(log.render())


async def test_e_and_l_enlarge_and_escape_restores():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("e")
        assert isinstance(app.screen.maximized, EventTimeline)
        await pilot.press("escape")
        assert app.screen.maximized is None
        await pilot.press("l")
        assert isinstance(app.screen.maximized, LogView)
        await pilot.press("l")
        assert app.screen.maximized is None


async def test_t_cycles_the_themes():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert app.theme == "mtptui-dark"
        seen = []
        for _ in range(3):
            await pilot.press("t")
            seen.append(app.theme)
        assert seen == ["mtptui-high-contrast", "mtptui-light", "mtptui-dark"]


async def test_question_mark_opens_help():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("Static").render())
        assert "seek_back" in text and "SPEC OFF" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_ctrl_p_palette_runs_a_dashboard_command():
    app = make_app(window="5m")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+p")
        assert CommandPalette.is_open(app)
        await pilot.press(*"Window: 1h")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert app.dash.timeline.window_label == "1h"


async def test_the_palette_runs_the_key_tables_actions():
    """The palette's actions are the key table's (config/keys.py KEYS): by name, they do what their keys do."""
    app = make_app(speed=1.0)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.2)
        assert not app.dash.replay.paused
        await pilot.press("ctrl+p", *"Pause / resume")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert app.dash.replay.paused


async def test_keys_remap_from_config():
    app = make_app(speed=1.0, config=parse_config('[keys]\npause = "z"\nmetric = "ctrl+x"\n'))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.1)
        await pilot.press("z")
        assert app.dash.replay.paused
        await pilot.press("ctrl+x")
        assert app.dash.metric == "accept_rate"
        await pilot.press("space")  # no longer bound
        assert app.dash.replay.paused
        assert app.theme_problems == []
        # the help lists the keys as this session binds them
        await pilot.press("question_mark")
        text = str(app.screen.query_one("Static").render())
        assert "  z           pause" in text and "  ctrl+x      metric" in text


async def test_a_key_textual_does_not_know_is_refused_at_load_and_in_code_left_as_it_was():
    """The config's reader refuses `lefft` with its line; a Config made in code (never read) gets
    it reported as a toast, and its binding keeps its default key."""
    with pytest.raises(ConfigError, match="^config.toml:2: keys.window: no such key 'lefft'"):
        parse_config('[keys]\nwindow = "lefft"\n')
    app = make_app(config=Config(keys={"window": "lefft", "pause": "z"}))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert app.theme_problems == [f"[keys] window: no such key 'lefft' ({KEY_HINT})"]
        await pilot.press("w")
        assert app.dash.timeline.window_label != "all"


async def test_config_theme_and_host_accent():
    config = parse_config('theme = "mtptui-light"\n\n[[hosts]]\nname = "gpu1"\nunit = "u"\ntags = ["prod"]\n')
    app = make_app(config=config)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert app.theme == "mtptui-light"
        bar = app.screen.query_one(HostBar)
        assert bar._last[1:3] == (PROD_ACCENT, ("prod",))  # red for a host tagged prod
    assert make_app(theme="mtptui-high-contrast", config=config).theme == "mtptui-high-contrast"  # --theme wins


async def test_live_keys_freeze_and_scrub_without_a_replay():
    """The same keys on a live source: space freezes the view, left scrubs, right follows again."""
    from mtptui.tui.launch import build_app

    class Lines:
        label = "test lines"

        async def run(self, feed):
            from mtptui.sources.file import open_lines

            feed.lines(list(open_lines(SMALL_LOG)), None)

    wall = [1_800_000_000.0]
    app = build_app([Lines()], wall=lambda: wall[0], window="all")
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(50):
            await pilot.pause(0.02)
            if app.dash.feed.counts.read == 377:
                break
        tl = app.dash.timeline
        assert tl.state_label() == "LIVE" and tl.playhead() == tl.newest()
        await pilot.press("space")
        assert tl.state_label() == "LIVE paused"
        await pilot.press("space", "left")
        assert tl.state_label() == "LIVE scrubbing" and tl.playhead() < tl.newest()
        await pilot.press("right", "right")
        assert tl.state_label() == "LIVE"
        await pilot.press("plus")  # no speed in live mode: a notice, nothing breaks
        assert MAX_SPEED


def test_every_default_key_is_bindable():
    """The check that reports a key Textual does not know passes every key mtptui ships."""
    from mtptui.tui.bindings import keymap_from

    defaults = {k.id: k.keys for k in TABLE}
    assert keymap_from(defaults) == (defaults, [])
    assert keymap_from({"pause": "p,period"})[1] == [f"[keys] pause: no such key 'period' ({KEY_HINT})"]


def _bindings_by_class() -> list[tuple[type, list]]:
    """(class, its own BINDINGS as Textual Bindings) for every class of mtptui.tui that declares some."""
    from textual.binding import Binding

    import mtptui.tui

    found = []
    for info in pkgutil.walk_packages(mtptui.tui.__path__, "mtptui.tui."):
        mod = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(mod, inspect.isclass):
            if cls.__module__ == mod.__name__ and "BINDINGS" in cls.__dict__:
                found.append((cls, [b if isinstance(b, Binding) else Binding(*b) for b in cls.__dict__["BINDINGS"]]))
    return found


def test_every_binding_has_an_id_and_its_row_in_the_key_table():
    """Walked, so a binding added without an id (or beside the table) fails here: each binding of
    each Screen, Widget and App of mtptui.tui has an id of BINDING_IDS, and is its row (keys,
    action, footer word, screen); each row of the table is bound exactly once."""
    from textual.app import App
    from textual.widget import Widget

    from mtptui.config.keys import SCREENS

    found = _bindings_by_class()
    names = {cls.__name__ for cls, _ in found}
    assert {"MainScreen", "MtpApp", "FleetScreen", "FleetTable", "LogView", "EventTimeline", "HelpScreen"} <= names
    bound: list[str] = []
    for cls, binds in found:
        assert issubclass(cls, (Widget, App)), cls
        for b in binds:
            assert b.id in BINDING_IDS, f"{cls.__name__}: {b.key!r} -> {b.action} has no id of the key table"
            row = BY_ID[b.id]
            assert (b.key, b.action, b.description, b.show, b.priority) == (
                row.keys, row.action, row.footer, row.shown, row.priority), b.id
            assert SCREENS[row.screen][1].endswith(f": {cls.__name__}"), (b.id, cls.__name__)
            bound.append(b.id)
    assert sorted(bound) == sorted(BINDING_IDS)


def test_the_configs_key_names_are_textuals():
    """config/keys.py knows Textual's key names without importing Textual: for every name Textual
    has (and some it has not), its bindable and key_name say what Textual's own tables say."""
    import string

    from textual.keys import KEY_NAME_REPLACEMENTS, KEY_TO_UNICODE_NAME, REPLACED_KEYS, Keys, _character_to_key, \
        key_to_character

    from mtptui.config.keys import MODIFIERS, bindable, key_name

    def textual_bindable(key: str) -> bool:
        *mods, base = key.split("+")
        return all(m in MODIFIERS for m in mods) and (
            len(base) == 1 or base in {k.value for k in Keys}
            or key_to_character(REPLACED_KEYS.get(base, base)) is not None)

    # (`ctrl-at`, Textual's old spelling of ctrl+@, is no key name the config's shape takes: no `-`)
    names = {k.value.split("+")[-1] for k in Keys if not k.value.startswith("<") and "-" not in k.value}
    names |= set(KEY_TO_UNICODE_NAME) | set(KEY_NAME_REPLACEMENTS) | set(REPLACED_KEYS)
    names |= {_character_to_key(c) for c in string.printable if not c.isspace() or c == " "}
    names |= {k for row in TABLE for k in row.keys.split(",")}
    typos = {"lefft", "pgup", "escap", "f25", "ctl+x", "cmd+p", "questionmark", "latin_small_letter_a", "euro_sign"}
    for name in sorted(names | typos | {f"ctrl+{n}" for n in names} | {f"shift+alt+{n}" for n in list(names)[:20]}):
        assert bindable(name) == textual_bindable(name), name
    for c in string.printable + "€é":
        assert key_name(c) == _character_to_key(c), repr(c)


async def test_the_fleet_view_applies_the_keymap():
    """mtptui fleet takes [keys] as the dashboard does: its remapped key does the action, the old
    key no longer does, and the footer shows the new one."""
    from textual.widgets import Footer

    from mtptui.fleet.query import SGLANG, Host, Rank
    from mtptui.tui.fleet_app import FleetApp
    from mtptui.tui.widgets.fleet_table import FleetTable

    hosts = [Host(f"10.0.0.{i}:30000", SGLANG, {"model_name": "m"}, [Rank("TP0", 2.0 + i / 10, 0.3, 1000.0 - i, 8, 0, True)])
             for i in range(5)]
    config = parse_config('[keys]\nfleet_sort = "o"\nfleet_down = "j,down"\nfleet_ranks = "x"\n')
    app = FleetApp(lambda: hosts, config=config, hosts=hosts, interval=3600, title="t")
    async with app.run_test(size=(120, 20)) as pilot:
        table = app.query_one(FleetTable)
        sort = app.fleet.state.sort
        await pilot.press("s")  # no longer bound
        assert app.fleet.state.sort == sort
        await pilot.press("o")
        assert app.fleet.state.sort != sort
        await pilot.press("j", "j")
        assert table.cursor_row == 2
        await pilot.press("x")
        assert app.fleet.state.expanded and table.row_count == 6
        assert app.keymap_used == config.keys and app.theme_problems == []
        await pilot.pause()
        footer = app.screen.query_one(Footer)
        keys = [str(k.render()) for k in footer.query("FooterKey")]
        assert any(k.lstrip().startswith("o ") for k in keys), keys


async def test_help_and_palette_come_from_the_one_table():
    """? lists every row of the dashboard's screens that exists in the session (its own, the app's,
    the panes') with its id and help text; the palette offers every such row with a palette name,
    with the same help text. (A replay: no acting keys, the replay's speed.)"""
    from mtptui.config.keys import ACTING_IDS, screen_keys, shown_keys
    from mtptui.config.keys import REPLAY_ONLY
    from mtptui.tui.palette import DashboardCommands

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        commands = {name: help_ for name, help_, _ in DashboardCommands(app.screen)._commands()}
        assert not app.dash.can_act
        shown = shown_keys(True)
        want = {k.palette: k.help for k in shown if k.palette}
        assert {n: h for n, h in commands.items() if n in want} == want
        assert set(REPLAY_ONLY) <= {k.id for k in shown if k.palette}
        assert not {k.palette for k in screen_keys("main") if k.id in ACTING_IDS} & set(commands)
        await pilot.press("question_mark")
        text = str(app.screen.query_one("Static").render())
        for k in [*shown, *screen_keys("app"), *screen_keys("log"), *screen_keys("events")]:
            assert f"{k.id} " in text and k.help in text, k.id
        assert not [k.id for k in screen_keys("main") if k.id in ACTING_IDS and f"{k.id} " in text]
        assert BY_ID["help_close"].help in text
