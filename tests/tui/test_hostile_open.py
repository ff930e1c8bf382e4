"""`mtptui open` of a hostile log (issue 42): a line dated year 10000 crashed the dashboard; a
journal line's escape sequences reached the terminal raw. The file opens, the year-10000 line is
dropped and counted, and the log pane and the event timeline show the escapes as text."""

from __future__ import annotations

import json

from test_screen_truth import plain
from tui_helpers import open_app, settle, until

from mtptui.tui.widgets.events import EventTimeline
from mtptui.tui.widgets.log_view import LogView

T0 = 1773072000


def entry(t: float, msg: str) -> str:
    return json.dumps({"__REALTIME_TIMESTAMP": str(int(t * 1_000_000)), "_HOSTNAME": "gpu\x1b[2J1", "MESSAGE": msg})


async def test_open_of_a_hostile_log(tmp_path):
    batch = ("Decode batch, #running-req: 4, #token: 10, token usage: 0.01, accept len: 2.50, accept rate: 0.50, "
             "cuda graph: True, gen throughput (token/s): 100.00, #queue-req: 0")
    log = tmp_path / "hostile.json"
    log.write_text("\n".join([entry(T0, batch), entry(253402300800, batch),
                              entry(T0 + 1, "Scheduler hit an exception: \x1b]0;owned\x07 boom"),
                              entry(T0 + 2, batch)]) + "\n")
    app = open_app(str(log))
    async with app.run_test(size=(160, 48)) as pilot:
        d = app.dash
        await until(pilot, lambda: d.opening.done, "the file read")
        await settle(pilot, app)
        c = d.feed.counts
        assert (c.read, c.batch, c.event, c.dropped) == (4, 2, 1, 1), c
        await pilot.press("l")  # the log pane, large
        await pilot.pause(0.2)
        shown = plain(app.screen.query_one(LogView)) + plain(app.screen.query_one(EventTimeline))
        assert "\x1b" not in shown and "\x07" not in shown
        assert "\\x1b]0;owned\\x07" in shown, shown
