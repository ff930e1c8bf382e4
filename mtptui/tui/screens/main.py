"""The main screen: host tabs, rank grid, the large chart, events and log, status bar.

Everything visible is redrawn from the store on one fixed tick (at most 10 Hz), whatever the
line rate; a widget is touched only when what it shows changed. Keys act on the ``Dashboard``
controller and then redraw at once, so a keypress shows within one frame.
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

from textual import on
from textual.app import ComposeResult
from textual.css.query import NoMatches
from textual.containers import Horizontal, Vertical
from textual.geometry import Size
from textual.screen import Screen
from textual.widgets import Header, Input, ProgressBar, Tab, Tabs

from mtptui.core.alerts import ERROR, by_rank
from mtptui.core.records import EventKind
from mtptui.tui.bindings import screen_bindings
from mtptui.config.keys import ACTING_ACTIONS
from mtptui.tui.controller import Dashboard
from mtptui.tui.gcpace import Paced
from mtptui.tui.themes import host_accent, host_tags
from mtptui.tui.viewmodel import (METRICS, accept_len_cap, after, chart_series, clock_text, exact_rows, host_epoch_rows,
                                  host_label, host_scales, layout_text, panel_view, run_state, spec_for,
                                  spec_short, spec_text, strip_view)
from mtptui.tui.widgets.action_bar import ActionBar
from mtptui.tui.widgets.gpu_panel import GpuPanel
from mtptui.tui.widgets.latency_bar import LatencyBar
from mtptui.tui.widgets.advice import AdviceBar
from mtptui.tui.widgets.alerts_bar import AlertsBar
from mtptui.tui.widgets.chart import EVENT_MARKS, ChartData, MetricChart
from mtptui.tui.widgets.epoch_strip import EpochStrip, figures_behind
from mtptui.tui.widgets.events import EventTimeline, TimelineEntry
from mtptui.tui.widgets.host_bar import HostBar
from mtptui.tui.widgets.key_footer import KeyFooter
from mtptui.tui.widgets.log_view import LogView
from mtptui.tui.widgets.rank_grid import RankGrid, RankScroll
from mtptui.tui.widgets.status_bar import StatusBar, StatusData

MAX_TIMELINE = 300
CHART_HZ = 4.0
FLOOD_CHART_HZ = 2.0  # under a flood the panels' numbers come first (DATA_HZ); the plot, half as often
FLOOD_LINES_PER_S = 5000
FLASH_S = 3.0
DATA_HZ = 5.0
EPOCH_ROWS_S = 1.0  # an epoch's figures cover every line since it began: recounted at most this often


@runtime_checkable
class DashboardApp(Paced, Protocol):
    """What the main screen asks of its app (MtpApp, tui/app.py) besides Textual's: the
    collector's pacer, and the next theme."""

    def cycle_theme(self) -> str:
        """Switches to the next theme; its name."""
        ...


def _chart_events(store, host, t0, t1) -> list[tuple[float, EventKind]]:
    """The events the chart marks in [t0, t1], newest first."""
    events = []
    for e in reversed(store.events):  # newest first: stop at the window's start
        if e.ts is None or e.host != host:
            continue
        if t0 is not None and e.ts < t0:
            break
        if e.kind in EVENT_MARKS and (t1 is None or e.ts <= t1):
            events.append((e.ts, e.kind))
    return events


def _event_entries(store, host, t1) -> list[TimelineEntry]:
    """The host's events up to t1 as the pane words them, in log order. Newest first, and only as
    many as the pane keeps: a log full of retractions holds thousands of events, and this runs on
    every data redraw."""
    entries: list[TimelineEntry] = []
    for e in reversed(store.events):
        if e.host != host or e.ts is None or (t1 is not None and e.ts > t1):
            continue
        text = e.text
        if e.kind == "spec_config":  # the settings line in the engine's own name
            text = ("non-default args: " if "non-default args: " in e.text else "server_args: ") + spec_text(e.data)
        elif e.kind == "spec_witness":
            text = f"{e.text}: {spec_text(e.data)}"
        elif e.rank:
            text = f"[{e.rank}] {text}"
        entries.append(TimelineEntry(e.ts, e.kind, text))
        if len(entries) >= MAX_TIMELINE:
            break
    entries.reverse()  # log order again (the pane's sort is stable for equal times)
    return entries


def _epoch_entries(store, host, t1) -> tuple[list[TimelineEntry], list[TimelineEntry]]:
    """How each run up to t1 ended, and where each after the first began."""
    ends, begins = [], []
    for ep in store.epochs.get(host, []):
        if ep.index and (t1 is None or ep.start <= t1):
            begins.append(TimelineEntry(ep.start, "epoch", f"epoch {ep.index + 1} begins ({ep.reason}): {ep.label}"))
        if ep.end is not None and (t1 is None or ep.end <= t1):
            ends.append(TimelineEntry(ep.end, "epoch", f"epoch {ep.index + 1} ended: {ep.ending(False)['text']}"))
    return ends, begins


def _alert_entries(history, host, t1) -> list[TimelineEntry]:
    """The host's alerts up to t1, and their clearing, folded by kind."""
    entries = []
    for f in history:
        if f.alert.host == host and (t1 is None or f.at <= t1):
            kind = "alert_error" if f.alert.severity == ERROR else "alert"
            entries.append(TimelineEntry(f.at, kind, f.alert.title, fold=f.alert.kind))
            if f.cleared is not None and (t1 is None or f.cleared <= t1):
                entries.append(TimelineEntry(f.cleared, "cleared", f"cleared: {(f.last or f.alert).title}",
                                             fold=f.alert.kind))
    return entries


class MainScreen(Screen):
    BINDINGS = screen_bindings()
    # Short terminals: a smaller chart and log (app.tcss).
    VERTICAL_BREAKPOINTS = [(0, "-tiny"), (30, "-short"), (40, "-tall")]
    AUTO_FOCUS = "LogView"
    # An enlarged pane (e, l, r) keeps the status bar and the keys under it.
    ALLOW_IN_MAXIMIZED_VIEW = "#bars, #filter"

    def __init__(self, dash: Dashboard, *, tick_hz: float = 10.0) -> None:
        super().__init__()
        self.dash = dash
        self.tick_hz = min(10.0, tick_hz)
        self._stamp: tuple | None = None
        self._hosts_shown: list = []
        self.redraws = 0  # full redraws done, by the tick or by a key (the benchmark reads them)
        self.tick_redraws = 0
        self.data_redraws = 0  # the panels' numbers computed afresh from the store, by a tick or a key
        self._chart_at = 0.0
        self._data_at = 0.0
        self._flash: tuple[str, float] | None = None
        self._ticks = 0
        self._views: tuple[tuple, list] | None = None  # (what they were drawn for, panel views)
        self._epoch_rows: tuple | None = None  # (host, store version, monotonic time, rows)

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◆")
        yield Tabs(id="hosts")
        yield HostBar(id="hostbar")
        yield EpochStrip(id="epochs")
        yield ActionBar(id="acting")
        yield LatencyBar(id="latency")
        yield GpuPanel(id="gpus")
        yield AlertsBar(id="alerts")
        yield AdviceBar(id="advice")
        with RankScroll(id="grid-scroll"):
            yield RankGrid(id="grid")
        yield MetricChart(id="chart")
        with Horizontal(id="bottom"):
            yield EventTimeline(id="events")
            yield LogView(self.dash.log, id="log")
        yield Input(placeholder="filter the log: a word or phrase (Enter applies, Esc closes, empty clears)",
                    id="filter")
        with Vertical(id="bars"):
            yield ProgressBar(id="loading", show_eta=False)
            yield StatusBar(id="status")
            yield KeyFooter()

    def on_mount(self) -> None:
        self.title = "mtptui"
        self.sub_title = self.dash.title or self.dash.source_label()
        self.query_one("#hosts", Tabs).display = False
        self.query_one("#filter", Input).display = False
        self.query_one("#loading", ProgressBar).display = self.dash.opening is not None
        self.query_one("#events", EventTimeline).border_title = "events"
        self.set_interval(1 / self.tick_hz, self.tick, name="redraw")
        self.call_after_refresh(self.tick)

    # -- the tick -----------------------------------------------------------------------------
    def tick(self, force_chart: bool = False) -> None:
        d = self.dash
        if not force_chart and d.feed.holding():
            return  # a key is being shown: its own redraw did this tick's work
        self._ticks += 1
        if (not force_chart and self._ticks % 2 and (d.lines_per_s or 0) > FLOOD_LINES_PER_S
                and time.monotonic() - self._data_at < 0.9 / DATA_HZ):
            return  # a flood: every frame costs parsing time, so the screen moves at DATA_HZ
        d.tick()
        self._draw_loading()
        self._sync_tabs()
        t0, t1 = d.timeline.bounds()
        host = d.host
        stamp = (d.store.version, d.steps_noted, None if t1 is None else round(t1, 1), d.timeline.window_index,
                 d.metric_index, host, d.focus_rank, d.epoch_scope, self.app.theme, self.size,
                 tuple((a.key, a.ranks) for a in d.active_alerts.get(host, ())))
        now = time.monotonic()
        # Data alone moves the panels at most DATA_HZ times a second (a flood changes every
        # number on every tick); keys and the status bar are not held back.
        if stamp != self._stamp and (force_chart or now - self._data_at >= 0.9 / DATA_HZ):
            self._stamp = stamp
            self.redraws += 1
            if not force_chart:
                self.tick_redraws += 1
            self._draw_data(host, t0, t1, force_chart)
        self.query_one(ActionBar).show(list(d.running.values()))
        self.query_one(LatencyBar).show(d.latency_now(host), d.latency_note.get(host))
        self.query_one(GpuPanel).show_host(d, host, t1)
        pinned = not d.timeline.following() or d.timeline.is_replay
        self.query_one(LogView).show(t1, host, len(d.hosts()) > 1, pinned)
        self._draw_status(host, t1)
        if not force_chart:  # a key's frame goes first; the collection follows the next tick's
            self.call_after_refresh(self.dashboard_app.gc_pacer.after_frame)

    @property
    def dashboard_app(self) -> DashboardApp:
        app = self.app
        assert isinstance(app, DashboardApp), type(app)  # the dashboard's own app
        return app

    def redraw_now(self) -> None:
        """After a key: show its effect in this frame, not at the next tick."""
        self._stamp = None
        self.tick(force_chart=True)
        # The parser pump was held when the key came in (MtpApp.on_event); once this frame is
        # on screen it may run again, and the collector may take its turn.
        self.call_after_refresh(self._after_key_frame)

    def _after_key_frame(self) -> None:
        self.dash.feed.release()
        self.dashboard_app.gc_pacer.after_key_frame()

    def _draw_data(self, host, t0, t1, force_chart: bool = False) -> None:
        d = self.dash
        spec = spec_for(d.store, host, t1)
        run = run_state(d.store, host, t1)
        views = self._panel_views(host, t0, t1, spec, run, force_chart)
        self._draw_strip(host, t1, run, views, force_chart)
        self._draw_host(host, t1, spec)
        alerts = d.active_alerts.get(host, [])
        since = {k: clock_text(f.at) for k, f in d.alerts.active.items()}
        self.query_one(AlertsBar).show(alerts, since)
        self.query_one(AdviceBar).show(d.advice.get(host, []), getattr(self.app, "keymap_used", {}) or {}, d.can_act)
        self.query_one(RankGrid).show(views, d.focused_rank, by_rank(alerts), room=self._grid_room(alerts),
                                      enlarged=self.maximized is self.query_one("#grid-scroll"))
        self._draw_chart(host, t0, t1, force_chart)
        self._draw_events(host, t1)

    def _panel_views(self, host, t0, t1, spec, run, force_chart: bool) -> list:
        """The rank panels' views: fresh, or the last data redraw's where a key changed none of
        what they show."""
        d = self.dash
        store = d.store
        # The panels cover the epoch at the playhead (its part of the window) unless W widened them.
        pt0 = t0
        if d.epoch_scope and run.epoch is not None and (pt0 is None or run.epoch.start >= pt0):
            pt0 = after(run.epoch.start)
        # A key that changes neither the host nor the window nor the playhead (metric, focus,
        # pause) keeps the panels of the last data redraw, at most 1/DATA_HZ old, so its frame
        # costs less; the next tick brings their numbers up to date.
        views_key = (host, d.timeline.window_index, d.epoch_scope, None if d.timeline.following() else t1,
                     len(store.ranks(host)), d.steps_noted)
        if force_chart and self._views is not None and self._views[0] == views_key:
            self._stamp = None
            return self._views[1]
        # Fresh numbers: the next tick's come 1/DATA_HZ after these (a key that reused the
        # panels of the last redraw does not put them off).
        self.data_redraws += 1
        self._data_at = time.monotonic()
        spark_from = pt0 if pt0 is not None else d.timeline.oldest()
        views = [panel_view(s, pt0, t1, spec=spec, th=d.th, run=run, spark_from=spark_from,
                            exact=exact_rows(s, pt0, t1, run, d.epoch_scope), host_steps=d.scrape_steps.get(host))
                 for s in store.ranks(host)]
        scales = host_scales(views, accept_len_cap(store, host, pt0, t1))
        scope = (f"epoch {run.number}" if d.epoch_scope and run.epoch is not None
                 else f"window {d.timeline.window_label}")
        for v in views:
            v.scales, v.scope = scales, scope
        self._views = (views_key, views)
        return views

    def _draw_chart(self, host, t0, t1, force: bool) -> None:
        """The plot is the costliest widget (plotext builds it in Python): while data streams it is
        redrawn at most CHART_HZ times a second (FLOOD_CHART_HZ under a flood); a key redraws it at once."""
        d = self.dash
        store = d.store
        now = time.monotonic()
        chart_hz = FLOOD_CHART_HZ if (d.lines_per_s or 0) > FLOOD_LINES_PER_S else CHART_HZ
        if not force and now - self._chart_at < 0.9 / chart_hz:
            self._stamp = None  # come back next tick for the chart
            return
        self._chart_at = now
        chart = self.query_one(MetricChart)
        points = max(20, chart.size.width * 2)
        if t0 is None:  # window "all": from the oldest sample kept
            t0 = d.timeline.oldest()
        epochs = [(e.start, e.label) for e in store.epochs.get(host, [])[1:]]
        chart.show(ChartData(d.metric, t0, t1, chart_series(store, host, d.metric, t0, t1, points),
                             epochs, _chart_events(store, host, t0, t1), d.focused_rank, d.timeline.window_label,
                             accept_len_cap(store, host, t0, t1)))

    def _draw_loading(self) -> None:
        """The bar of an open while it reads; gone once the file is on screen."""
        opening = self.dash.opening
        bar = self.query_one("#loading", ProgressBar)
        if opening is None or not bar.display:
            return
        if opening.done:
            # The screen has a row more: once laid out without the bar, the grid is fitted anew.
            bar.display = False
            self.call_after_refresh(self.redraw_now)
            return
        frac = opening.progress.fraction()
        if frac is None:
            bar.update(total=None)
        else:
            bar.update(total=100, progress=round(frac * 100, 1))

    def _grid_room(self, alerts: list) -> int:
        """Rows the rank grid may take: its box's max-height (app.tcss) as Textual resolves it,
        against the screen less its docked bars, and no more than the chart and the log leave at
        their min heights below the lines above it (a short screen with alerts); or all of that
        while the box is enlarged (r)."""
        box = self.query_one("#grid-scroll")
        shown = [box, *self.query_children(self.ALLOW_IN_MAXIMIZED_VIEW)] if self.maximized is box else self.children
        docked = sum(w.outer_size.height for w in shown if w.display and w.styles.dock in ("top", "bottom"))
        avail = Size(self.size.width, max(0, self.size.height - docked))
        if self.maximized is box:
            return avail.height
        mh = box.styles.max_height
        room = avail.height if mh is None else int(mh.resolve(avail, self.size))
        # The lines above it: the alerts bar as it is about to be (its layout comes after this frame).
        bar = self.query_one(AlertsBar)
        above = sum(w.outer_size.height for w in self.children
                    if w.display and w.styles.dock not in ("top", "bottom") and w is not bar
                    and w.id not in ("grid-scroll", "chart", "bottom"))
        above += min(len(alerts), bar.lines())
        below = sum(int(w.styles.min_height.resolve(avail, self.size)) if w.styles.min_height is not None else 0
                    for w in (self.query_one("#chart"), self.query_one("#bottom")))
        return max(0, min(room, avail.height - above - below))

    def _draw_host(self, host, t1, spec) -> None:
        d = self.dash
        self.query_one(HostBar).show(host_label(host), host_accent(d.config, host), host_tags(d.config, host),
                                     layout_text(spec))

    def _draw_strip(self, host, t1, run, views, force: bool) -> None:
        """The epoch strip. Its figures cover every line of the epoch (not a ring buffer's
        window), so they are recounted when the store changed, at most every EPOCH_ROWS_S
        while lines stream, at once on a key or a new host."""
        store = self.dash.store
        now = time.monotonic()
        cached = self._epoch_rows
        if (cached is None or cached[0] != host or len(cached[3]) != len(store.epochs.get(host) or ())
                or (cached[1] != store.version and (force or now - cached[2] >= EPOCH_ROWS_S
                                                    or figures_behind(cached[3], run, views)))):
            cached = self._epoch_rows = (host, store.version, now, host_epoch_rows(store, host))
        elif cached[1] != store.version:
            self._stamp = None  # come back next tick for the figures
        self.query_one(EpochStrip).show(strip_view(run, cached[3], views, t1))

    def _draw_events(self, host, t1) -> None:
        d = self.dash
        entries = _event_entries(d.store, host, t1)
        ends, begins = _epoch_entries(d.store, host, t1)
        entries[:0] = ends  # how each run ended, before the lines of the next one at the same time
        entries += begins + _alert_entries(d.alerts.history, host, t1)
        entries.sort(key=lambda e: e.ts)
        title = f"events · {host_label(host)}" if len(d.hosts()) > 1 else "events"
        pane = self.query_one(EventTimeline)
        pane.show(entries, f"{title} · e or Esc shrinks" if pane.is_maximized else f"{title} (e enlarges)")

    def _draw_status(self, host, t1) -> None:
        d = self.dash
        c = d.feed.counts
        lag = d.lag_s()
        problems = [st.describe(d.wall(), host_label(st.host)) for st in
                    sorted(d.feed.statuses.values(), key=lambda st: st.host != host)  # the shown host first
                    if st.state in ("failed", "reconnecting")]
        flash = ""
        if self._flash is not None:
            if time.monotonic() < self._flash[1]:
                flash = self._flash[0]
            else:
                self._flash = None
        self.query_one(StatusBar).show(StatusData(
            source=d.source_label(), state=d.state_label(), playhead=clock_text(t1),
            lines_per_s=d.lines_per_s, read=c.read, parsed=c.batch + c.event, unparsed=c.unparsed,
            dropped=c.dropped, malformed=c.malformed, backlog=d.feed.pending,
            lag="" if lag is None else f"last line {lag:.1f}s ago",
            settings=spec_short(spec_for(d.store, host, t1), d.servers.get(host)), problems=" │ ".join(problems), flash=flash,
            read_only=d.read_only))

    def _sync_tabs(self) -> None:
        d = self.dash
        hosts = d.hosts()
        tabs = self.query_one("#hosts", Tabs)
        labels = []
        for h in hosts:
            n = len(d.active_alerts.get(h, ()))
            labels.append(host_label(h) + (f" ⚠{n}" if n else ""))
        if labels != self._hosts_shown:
            # Hosts only ever appear (the store keeps them in first-seen order): add the new
            # tabs, relabel the old ones (alert counts). Never clear and re-add: removal is
            # asynchronous and the ids would clash.
            shown = list(self._hosts_shown)
            for i, lab in enumerate(labels):
                if i >= len(shown):
                    tabs.add_tab(Tab(lab, id=f"host-{i}"))
                    shown.append(lab)
                elif lab != shown[i]:
                    try:
                        tabs.query_one(f"#host-{i}", Tab).label = lab
                        shown[i] = lab
                    except NoMatches:  # still being mounted: next tick
                        pass
            self._hosts_shown = shown
            tabs.display = len(hosts) > 1
        if len(hosts) > 1:
            want = f"host-{min(d.host_index, len(hosts) - 1)}"
            if tabs.active != want and tabs.query(f"#{want}"):
                tabs.active = want

    @on(Tabs.TabActivated, "#hosts")
    def _tab_activated(self, event: Tabs.TabActivated) -> None:
        tid = event.tab.id or ""
        if tid.startswith("host-"):
            i = int(tid[5:])
            if i != self.dash.host_index:
                self.dash.host_index = i
                self.dash.focus_rank = None
                self.redraw_now()

    def flash(self, text: str, seconds: float = FLASH_S) -> None:
        """A short answer to a key, in the status bar: a toast would mount a widget, and the
        layout pass that costs is what a keypress under a flood of lines cannot afford."""
        self._flash = (text, time.monotonic() + seconds)

    # -- actions (bound in bindings.py) -------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # False: the key is not in the footer and does nothing (--read-only, or a replay).
        return self.dash.can_act or action not in ACTING_ACTIONS

    def action_quit(self) -> None:
        # an action under way is stopped and its host put back first (tui/quitting.py)
        self.app.request_leave("q")  # type: ignore[attr-defined]  # MtpApp's

    def action_pause(self) -> None:
        state = self.dash.timeline.toggle_pause()
        self.flash(f"view {state}" if not self.dash.timeline.is_replay else f"replay {state}")
        self.redraw_now()

    def action_seek(self, direction: int) -> None:
        tl = self.dash.timeline
        t = tl.seek(direction)
        if t is None:
            self.flash("nothing to seek in yet")
        self.redraw_now()

    def action_speed(self, direction: int) -> None:
        s = self.dash.timeline.change_speed(direction)
        if s is None:
            self.flash("speed applies to a replay; a live stream runs at its own pace")
        else:
            from mtptui.sources.replay import speed_label

            self.flash(f"replay speed {speed_label(s)}")
        self.redraw_now()

    def action_host(self, direction: int) -> None:
        if len(self.dash.hosts()) < 2:
            self.flash("only one host in this session")
            return
        self.dash.cycle_host(direction)
        self.redraw_now()

    def action_focus_rank(self, n: int) -> None:
        rank = self.dash.toggle_focus(n)
        if rank is None and self.dash.focus_rank is None:
            if n > len(self.dash.store.ranks(self.dash.host)):
                self.flash(f"no rank {n} on this host")
            else:
                self.flash("chart shows every rank")
        else:
            self.flash(f"chart shows rank {rank or '(TP=1)'} only; {n} again for all")
        self.redraw_now()

    def action_metric(self) -> None:
        m = self.dash.cycle_metric()
        self.flash(f"chart: {METRICS[m].title}")
        self.redraw_now()

    def action_window(self) -> None:
        w = self.dash.timeline.cycle_window()
        self.flash(f"window {w}")
        self.redraw_now()

    def action_scope(self) -> None:
        on = self.dash.toggle_scope()
        w = self.dash.timeline.window_label
        self.flash(f"rank panels: this epoch's part of the window {w} (W: the whole window)" if on
                   else f"rank panels: the whole window {w}, across restarts (W: this epoch only)")
        self.redraw_now()

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.value = self.query_one(LogView).filter
        box.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.query_one(LogView).set_filter(event.value)

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        self.query_one(LogView).set_filter(event.value)
        self._close_filter()

    def _close_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = False
        self.query_one(LogView).focus()

    def action_events(self) -> None:
        self._toggle_max(self.query_one(EventTimeline))

    def action_log(self) -> None:
        self._toggle_max(self.query_one(LogView))

    def action_ranks(self) -> None:
        self._toggle_max(self.query_one("#grid-scroll"), focus=False)

    def _toggle_max(self, widget, focus: bool = True) -> None:
        if self.maximized is widget:
            self.minimize()
        else:
            self.minimize()
            self.maximize(widget, container=False)
            if focus:
                widget.focus()

    def watch_maximized(self) -> None:
        # However a pane was enlarged or restored (e, l, r, Esc, Textual's own minimize): titles
        # say how to shrink again, and the rank grid has other room. Once laid out, redraw.
        self.call_after_refresh(self.redraw_now)

    def action_escape(self) -> None:
        box = self.query_one("#filter", Input)
        if box.display:
            self._close_filter()
        elif self.maximized is not None:
            self.minimize()

    def action_theme(self) -> None:
        name = self.dashboard_app.cycle_theme()
        self.flash(f"theme {name}")

    def action_help(self) -> None:
        from mtptui.tui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen(self.dash.acting_off(), self.dash.timeline.is_replay))

    def action_compare(self) -> None:
        from mtptui.tui.screens.compare import CompareScreen

        self.app.push_screen(CompareScreen(self.dash))

    def action_advisor(self) -> None:
        from mtptui.tui.screens.advisor import AdvisorScreen

        self.app.push_screen(AdvisorScreen(self.dash))

    def action_audit(self) -> None:
        from mtptui.control import audit
        from mtptui.tui.screens.audit import AuditScreen

        path = audit.audit_path()
        self.app.push_screen(AuditScreen(lambda: audit.read_audit(path), str(path)))

    # The acting keys: each a flow in a worker (act.py): plan, confirm, execute, tell the outcome.
    def action_spec_toggle(self) -> None:
        from mtptui.tui import act

        act.start(self, act.toggle)

    def action_spec_step(self, delta: int) -> None:
        from functools import partial

        from mtptui.tui import act

        act.start(self, partial(act.step, delta=delta))

    def action_profiles(self) -> None:
        from mtptui.tui import act

        act.start(self, act.pick)

    def action_restart(self) -> None:
        from mtptui.tui import act

        act.start(self, act.restart)

    # The keys that prove a change (prove.py): x asks the server, b benchmarks profiles, T tunes.
    def action_smoke(self) -> None:
        from mtptui.tui import prove

        prove.smoke(self)

    def action_bench(self) -> None:
        from mtptui.tui import prove

        prove.bench(self)

    def action_tune(self) -> None:
        from mtptui.tui import prove

        prove.tune(self)
