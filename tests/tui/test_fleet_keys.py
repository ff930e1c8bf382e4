"""The fleet table's keys and mouse on a fleet too tall for the screen (hand-made hosts, flagged by
the real outliers code): the cursor stays in view and the detail follows it, a sort or an expand
keeps the cursor's host, a header click sorts, Enter or a second click opens the host, and one
refresh runs at a time. (Against a real Prometheus: tests/integration/test_fleet_prometheus.py.)"""

from __future__ import annotations

import threading

from mtptui.config import load_config
from mtptui.fleet.outliers import Limits, flag_fleet
from mtptui.fleet.query import SGLANG, Host, Rank
from mtptui.fleet.table import COLUMN_KEYS, SPARE
from mtptui.tui.fleet_app import FleetApp
from mtptui.tui.widgets.fleet_table import FleetTable

HOSTS, RANKS = 60, 4


def fleet() -> list[Host]:
    hosts = []
    for i in range(HOSTS):
        accept = 1.02 if i == 7 else 2.5 + (i % 5) * 0.1
        hosts.append(Host(f"10.0.{i // 10}.{i % 10}:30000", SGLANG, {"model_name": "m"},
                          [Rank(f"TP{r}", accept, (accept - 1) / 3, 1000.0 + i, 8, 0, True) for r in range(RANKS)]))
    return flag_fleet(hosts, Limits())


class Opening(FleetApp):
    """Records the host that Enter would open instead of ending the app."""

    def open_host(self, host: Host) -> str | None:
        self.opened.append(host.host)
        return None


def make_app() -> Opening:
    hosts = fleet()
    app = Opening(lambda: hosts, config=load_config("/dev/null"), hosts=hosts, interval=3600, title="t")
    app.opened = []
    return app


def in_view(table: FleetTable) -> bool:
    top = round(table.scroll_y)
    return top <= table.cursor_row < top + table.scrollable_content_region.height - 1


async def test_cursor_keys_keep_the_cursor_in_view_and_the_detail_follows():
    app = make_app()
    async with app.run_test(size=(120, 20)) as pilot:
        table = app.query_one(FleetTable)
        assert table.row_count == HOSTS and table.has_focus
        await pilot.press("pagedown", "pagedown", "down")
        assert table.cursor_row > 10 and in_view(table) and table.scroll_y > 0
        row = table.rows[table.cursor_row]
        assert app.fleet.state.cursor == row.key
        assert str(app.query_one("#fleet-detail").render()).startswith(f"{row.host.host} (sglang)")
        await pilot.press("end")
        assert table.cursor_row == HOSTS - 1 and in_view(table)
        await pilot.press("home")
        assert table.cursor_row == 0 and table.scroll_y == 0


async def test_sort_and_expand_keep_the_cursors_host():
    app = make_app()
    async with app.run_test(size=(120, 20)) as pilot:
        table = app.query_one(FleetTable)
        await pilot.press(*["down"] * 7)
        collapsed = table.rows[table.cursor_row].host.host
        assert collapsed == "10.0.0.7:30000"
        await pilot.press(*"ssss")  # accept len, ascending: the collapsed host first
        assert table.header("accept_len") == "accept len ▲"
        assert table.cursor_row == 0 and table.column("host")[0] == collapsed
        await pilot.press("S")
        assert table.column("host")[table.cursor_row] == collapsed and in_view(table)
        values = table.column("accept_len")
        assert values == sorted(values, key=float, reverse=True)
        await pilot.press("e")  # every host's ranks, under each
        assert table.row_count == HOSTS * (RANKS + 1)
        assert table.column("host")[table.cursor_row] == collapsed and in_view(table)
        await pilot.press("e", "space")  # all folded again, then the cursor's host opened
        assert table.row_count == HOSTS + RANKS
        i = table.cursor_row
        assert [h.strip() for h in table.column("host")[i:i + RANKS + 1]] == [collapsed, "TP0", "TP1", "TP2", "TP3"]


async def test_a_header_click_sorts_and_a_second_click_or_enter_opens():
    app = make_app()
    async with app.run_test(size=(120, 20)) as pilot:
        table = app.query_one(FleetTable)
        gen = table.drawn.index(COLUMN_KEYS.index("gen_throughput"))
        x = sum(table.widths[i] + 2 for i in table.drawn[:gen]) + 2  # inside the gen tok/s column
        await pilot.click(FleetTable, offset=(x, 0))
        assert table.header("gen_throughput") == "gen tok/s ▲"
        values = table.column("gen_throughput")
        assert values == sorted(values, key=lambda v: float(v.replace(",", "")))
        await pilot.click(FleetTable, offset=(2, 3))  # the third row: the cursor moves there
        assert table.cursor_row == 2 and app.opened == []
        await pilot.click(FleetTable, offset=(2, 3))
        assert app.opened == [table.rows[2].host.host]
        await pilot.press("down", "enter")
        assert app.opened[-1] == table.rows[3].host.host


async def test_a_narrow_screen_leaves_out_the_spare_columns_and_tells_their_figures_below():
    """At 100 columns the flags still show: source, ranks, settings... are left out, in SPARE's order,
    the title says how many, and the line under the table gives the cursor row's; widened, all come back."""
    app = make_app()
    async with app.run_test(size=(100, 20)) as pilot:
        table = app.query_one(FleetTable)
        await pilot.pause()
        assert table.hidden and table.hidden == [k for k in COLUMN_KEYS if k in SPARE[:len(table.hidden)]]
        assert "flags" not in table.hidden and table.virtual_size.width <= 100
        assert f"{len(table.hidden)} columns hidden" in str(app.screen.query_one("#fleet-title").render())
        detail = str(app.screen.query_one("#fleet-detail").render())
        assert "ranks 4" in detail and ("queue 0" in detail) == ("queue" in table.hidden)
        await pilot.press("end", "home", "e")  # drawn lines cached, then other rows under them
        drawn = [table.render_line(y).text for y in range(1, table.scrollable_content_region.height)]
        assert [line.split()[0] for line in drawn] == [r.cells[0].strip() for r in table.rows[:len(drawn)]]
        assert all(r.cells[-1] in line for r, line in zip(table.rows, drawn))  # the flags drawn
        await pilot.resize_terminal(220, 20)
        await pilot.pause()
        assert table.hidden == [] and "hidden" not in str(app.screen.query_one("#fleet-title").render())
        assert "ranks 4" not in str(app.screen.query_one("#fleet-detail").render())


async def test_a_refresh_is_not_started_over_one_under_way():
    """A refresh's thread cannot be cancelled: ticks and `r` during one start no other."""
    hosts, gate, calls = fleet(), threading.Event(), []

    def load() -> list[Host]:
        calls.append(1)
        gate.wait(10)
        return hosts

    app = Opening(load, config=load_config("/dev/null"), interval=0.05, title="t")
    app.opened = []
    async with app.run_test(size=(120, 20)) as pilot:
        await pilot.press("r", "r")
        await pilot.pause(0.3)  # several ticks
        assert calls == [1] and app.fleet.refreshed is None
        gate.set()
        while app.fleet.refreshed is None:
            await pilot.pause(0.05)
        assert app.query_one(FleetTable).row_count == HOSTS
        while len(calls) < 2:  # the next tick starts the next one
            await pilot.pause(0.05)
