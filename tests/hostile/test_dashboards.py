"""The dashboards against hostile inputs (issue 42): `open` and `replay` of a hostile file, and
`live`/`local` streaming it as journalctl writes it (the real LocalJournalSource, a journalctl on
PATH that prints the input and waits, as `journalctl -f` does; `live` reads the same JournalSource
over SSH). Each runs in Textual's pilot (in this process: a child per input costs a second), is
shown whole, and gets a few keys (the compare screen, the events and log panes, a seek). An input
fails when the app or one of its workers raised, when a character that drives a terminal (C0, DEL,
C1, a bidi override) is on the screen, or when lines were dropped or malformed and the status bar
does not say how many."""

from __future__ import annotations

import asyncio
import os
import stat
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import LONG, PROFILE, TRIED
from test_hostile import journal_json, log_text

# fewer inputs than a command's: each is a dashboard started and drawn (about 2 s)
DASH = settings(PROFILE, max_examples=PROFILE.max_examples if LONG else max(3, PROFILE.max_examples // 5))
SIZE = (200, 50)  # wide enough that the status bar's counts are never cut
KEYS = ["c", "escape", "e", "l", "left", "space"]
END = "mtptui-hostile-end"  # the stand-in's last entry, after the input (a line of its own)
# the follower (`journalctl -f`) prints the input, then the end, and waits; the source's other
# questions (the newest cursor, the unit's history) get nothing, and so does systemctl's
JOURNALCTL = ('#!/bin/sh\ncase " $* " in *" --follow "*)\n  cat "$MTPTUI_HOSTILE_JOURNAL"\n'
              f"  printf '\\n{{\"__CURSOR\":\"{END}\",\"__REALTIME_TIMESTAMP\":\"1773072205000000\",\"MESSAGE\":\"{END}\"}}\\n'\n"
              "  exec sleep 600;;\nesac\n")


def _raw(text: str) -> set[str]:
    """The characters on screen that a terminal would take as more than text."""
    return {c for c in text if c != "\n" and (unicodedata.category(c) == "Cc" or c in "\u202a\u202b\u202c\u202d\u202e"
                                                "\u2066\u2067\u2068\u2069")}


async def _shown(app, ready) -> None:
    from textual.worker import WorkerState

    from mtptui.tui.widgets.status_bar import StatusBar, _n

    async with app.run_test(size=SIZE) as pilot:
        for _ in range(400):
            if ready(app.dash):
                break
            await pilot.pause(0.05)
        else:
            raise AssertionError("never read: the dashboard did not take its input within 20 s")
        await pilot.pause(0.2)
        for key in KEYS:
            await pilot.press(key)
            await pilot.pause(0.02)
        screen = "\n".join("\n".join(w.render_line(y).text for y in range(w.size.height))
                           for w in app.screen.query("*") if w.display and w.size.height)
        bad = _raw(screen)
        assert not bad, f"raw on screen: {sorted(map(hex, map(ord, bad)))}"
        failed = [f"{w.name}: {w.error!r}" for w in app.workers if w.state == WorkerState.ERROR]
        assert not failed, failed
        c = app.dash.feed.counts
        status = "\n".join(app.screen.query_one(StatusBar).render_line(y).text for y in range(2))
        if c.dropped:
            assert f"{_n(c.dropped)} dropped" in status, (c, status)
        if c.malformed:
            assert f"{_n(c.malformed)} malformed" in status, (c, status)


def _count(name: str) -> None:
    TRIED[name] = TRIED.get(name, 0) + 1


@DASH
@given(data=st.one_of(log_text(), journal_json(), st.binary(max_size=2000)))
def test_open_and_replay_of_hostile_logs(work, data):
    from mtptui.sources.replay import MAX_SPEED, ReplayClock, ReplaySource
    from mtptui.tui.launch import build_app
    from mtptui.tui.opening import Opening

    path = work / "in.log"
    path.write_bytes(data)
    _count("dashboard open")
    app = build_app([], title="open: in.log", window="all", opening=Opening([str(path)]))
    asyncio.run(_shown(app, lambda d: d.opening.done))
    _count("dashboard replay")
    clock = ReplayClock(MAX_SPEED)
    app = build_app([ReplaySource(str(path), clock)], title="replay: in.log", window="all")
    asyncio.run(_shown(app, lambda d: d.replay.ended and d.feed.pending == 0))


@pytest.fixture(scope="module")
def journalctl(tmp_path_factory):
    """A journalctl first on PATH whose follower prints $MTPTUI_HOSTILE_JOURNAL, then waits as -f does."""
    d = tmp_path_factory.mktemp("bin")
    for name, text in (("journalctl", JOURNALCTL), ("systemctl", "#!/bin/sh\n")):
        exe = d / name
        exe.write_text(text)
        exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    old = os.environ["PATH"]
    os.environ["PATH"] = f"{d}{os.pathsep}{old}"
    yield
    os.environ["PATH"] = old


@DASH
@given(data=st.one_of(journal_json(), st.binary(max_size=2000)), cut=st.integers(0, 200))
def test_live_and_local_stream_of_hostile_journal_entries(work, journalctl, data, cut):
    from mtptui.sources.local import LocalJournalSource
    from mtptui.tui.launch import build_app

    path = work / "journal.json"
    path.write_bytes(data[:len(data) - cut] if cut < len(data) else data)  # some end mid-entry, as a cut stream
    os.environ["MTPTUI_HOSTILE_JOURNAL"] = str(path)
    _count("dashboard live/local")
    # read only: the lines, not a control of this machine's unit
    app = build_app([LocalJournalSource("sglang.service", host="gpu1")], title="local", window="all", read_only=True)
    asyncio.run(_shown(app, lambda d: any(END in str(e[-1]) for e in d.log.lines)))
