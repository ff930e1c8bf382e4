"""The dashboard's state apart from any widget: store, feed, timeline, alerts, what is selected.

The screen calls ``tick()`` on its timer and reads from here; keys call the small methods here.
No Textual, so the behaviour behind every key is testable without a terminal.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

from mtptui.config import Config
from mtptui.core.adaptive import steps_between
from mtptui.core.advisor import Advice, advise
from mtptui.core.alerts import Alert, AlertTracker, evaluate
from mtptui.core.latency import HostLatency, Scrape, by_epoch, window_at
from mtptui.core.gpus import GpuHistory, GpuSample
from mtptui.core.records import Event
from mtptui.core.store import Store
from mtptui.sources.base import Source
from mtptui.sources.opener import Opened
from mtptui.sources.replay import MAX_SPEED, ReplayClock, ReplaySource
from mtptui.tui.feed import DashboardFeed
from mtptui.tui.opening import Opening
from mtptui.tui.quitting import Quitting
from mtptui.tui.running import Running
from mtptui.tui.timeline import Timeline
from mtptui.tui.viewmodel import CHART_METRICS

RATE_SPAN_S = 2.0  # lines/s is measured over this much wall time
STEPS_KEPT = 4096  # a host's steps in use from /metrics: 5 h 40 min of scrapes 5 s apart
ALERT_EVERY_S = 0.5  # alerts hold for tens of seconds: judging them twice a second is plenty


def _step_name(spec: dict, delta: int) -> str | None:
    """The profile `[` (-1) or `]` (+1) would apply to these settings, or None where it refuses."""
    from mtptui.control.profiles import ProfileError, step
    from mtptui.core.advisor import launch_settings

    try:
        return step(launch_settings(spec), delta).name
    except ProfileError:
        return None


class Dashboard:
    def __init__(self, sources: list[Source], *, config: Config | None = None, read_only: bool = False,
                 title: str = "", wall: Callable[[], float] = time.time, store_capacity: int = 4096,
                 log_lines: int = 20000, controls: dict | None = None, opening: Opening | None = None) -> None:
        from mtptui.tui.logbuffer import LogBuffer

        self.sources = list(sources)
        self.config = config if config is not None else Config()
        self.read_only = read_only
        # host -> its HostControl (mtptui.control.session): what the acting keys drive
        self.controls: dict = {} if read_only else dict(controls or {})
        # ... and how the smoke test (x) reaches the host's server, read-only too: it changes nothing
        self.reach: dict = dict(controls or {})
        self.running: dict[str | None, Running] = {}  # host -> the action under way there
        self.quitting = Quitting(self.running)  # what q does while an action is under way
        self.servers: dict[str | None, str] = {}  # host -> `SGLang 0.5.23`, as the host says
        self.title = title
        self.wall = wall
        self.th = self.config.thresholds
        self.store = Store(capacity=store_capacity, clock=wall)
        self.log = LogBuffer(log_lines)
        self.feed = DashboardFeed(self.store, log=self.log, wall=wall)
        clocks = {id(s.clock): s.clock for s in self.sources if isinstance(s, ReplaySource)}
        self.replay: ReplayClock | None = next(iter(clocks.values()), None)
        # open: the files read at once (opening.py); then a replay at its end, to seek back in
        self.opening = opening
        if opening is not None:
            opening.start(self.store.capacity, self.store.events.maxlen or 5000)  # read while the screen starts
            if self.replay is None:
                self.replay = ReplayClock(MAX_SPEED)
        self.feed.clock = self.replay  # the replay's lines are released to the store at its pace
        self.timeline = Timeline(self.store, replay=self.replay, wall=wall,
                                 last_arrival=lambda: self.feed.last_arrival,
                                 link=lambda: self.feed.state_of(self.host), opened=opening is not None)
        self.alerts = AlertTracker()
        self.active_alerts: dict[str | None, list[Alert]] = {}
        self.advice: dict[str | None, list[Advice]] = {}  # host -> what the advisor says holds now
        self.host_index = 0
        self.metric_index = 0
        self.focus_rank: int | None = None  # index into the current host's ranks
        # The rank panels' numbers and sparklines: the epoch at the playhead (its part of the
        # window), so runs before and after a restart never mix; False: the whole window.
        self.epoch_scope = True
        self._alert_rr = 0  # hosts are judged round-robin, one per tick, to bound the tick's work
        self._rate_marks: list[tuple[float, int]] = []
        self.lines_per_s: float | None = None
        self._read_at_once: int | None = None  # the lines when opened files were adopted
        self._judged_at: tuple[float, float | None] | None = None  # (monotonic, playhead)
        # host -> its server's latency from /metrics (tui/metrics_poll.py), and why a host has none
        self.latency: dict[str | None, HostLatency] = {}
        self.latency_note: dict[str | None, str] = {}
        # host -> the (scrape, epoch) a replayed record holds: shown at the playhead
        self.recorded: dict[str | None, list[tuple[Scrape, float | None]]] = {}
        # host -> (time, steps in use) from its /metrics, live or recorded (core/adaptive.py)
        self.scrape_steps: dict[str | None, deque[tuple[float, float]]] = {}
        self.steps_noted = 0  # how many came: the panels redraw for them (no line need come with them)
        # host -> its GPUs from nvidia-smi (tui/gpu_poll.py, or a replayed record's), and why a host has none
        self.gpus: dict[str | None, GpuHistory] = {}
        self.gpu_note: dict[str | None, str] = {}
        # host -> its server's CUDA_VISIBLE_DEVICES as read from its unit (tui/gpu_poll.py; None:
        # unset); a host without an entry gets no rank shown on a GPU
        self.gpu_visible: dict[str | None, list[int] | None] = {}

    @property
    def can_act(self) -> bool:
        """Whether the keys that change a server exist in this session: not with --read-only,
        and not where nothing can be acted on (a replay only reads a log)."""
        return self.acting_off() is None

    def acting_off(self) -> str | None:
        """Why the keys that change a server are off in this session, or None when they are on."""
        if self.read_only:
            return "READ-ONLY (--read-only): the keys that change a server are off"
        if not self.controls:
            return "this session only reads logs: the keys that change a server are off"
        return None

    # -- what is selected ---------------------------------------------------------------------
    def hosts(self) -> list[str | None]:
        return self.store.hosts()

    @property
    def host(self) -> str | None:
        hosts = self.hosts()
        if not hosts:
            return None
        return hosts[min(self.host_index, len(hosts) - 1)]

    @property
    def metric(self) -> str:
        return CHART_METRICS[self.metric_index]

    def cycle_host(self, direction: int) -> str | None:
        hosts = self.hosts()
        if hosts:
            self.host_index = (min(self.host_index, len(hosts) - 1) + direction) % len(hosts)
            self.focus_rank = None
        return self.host

    def select_host(self, host: str | None) -> None:
        hosts = self.hosts()
        if host in hosts:
            self.host_index = hosts.index(host)
            self.focus_rank = None

    def cycle_metric(self, direction: int = 1) -> str:
        self.metric_index = (self.metric_index + direction) % len(CHART_METRICS)
        return self.metric

    def set_metric(self, metric: str) -> None:
        self.metric_index = CHART_METRICS.index(metric)

    def toggle_scope(self) -> bool:
        self.epoch_scope = not self.epoch_scope
        return self.epoch_scope

    def toggle_focus(self, n: int) -> str | None:
        """Focus rank n (1-based) of the current host; again to unfocus. Returns the rank or None."""
        ranks = self.store.ranks(self.host)
        if n < 1 or n > len(ranks):
            return None
        idx = n - 1
        self.focus_rank = None if self.focus_rank == idx else idx
        return None if self.focus_rank is None else ranks[idx].rank

    @property
    def focused_rank(self) -> str | None:
        if self.focus_rank is None:
            return None
        ranks = self.store.ranks(self.host)
        return ranks[self.focus_rank].rank if self.focus_rank < len(ranks) else None

    # -- per tick -----------------------------------------------------------------------------
    def tick(self) -> None:
        self.store.fold()  # what the lane read since the last tick, in the rings and epochs
        now_wall = self.wall()
        read = self.feed.counts.read
        marks = self._rate_marks
        marks.append((now_wall, read))
        while len(marks) > 2 and now_wall - marks[1][0] >= RATE_SPAN_S:
            marks.pop(0)
        t_old, n_old = marks[0]
        self.lines_per_s = (read - n_old) / (now_wall - t_old) if now_wall > t_old else None
        if read == self._read_at_once:
            self.lines_per_s = None  # a file read at once, nothing after it: no rate (not 0)
        mono = time.monotonic()
        playhead = self.timeline.playhead()
        last = self._judged_at
        # Judge on a slow clock, but at once after a seek (the playhead jumped) or a host switch.
        if (last is None or mono - last[0] >= ALERT_EVERY_S or playhead is None or last[1] is None
                or abs(playhead - last[1]) > 5.0 or self.host not in self.active_alerts):
            self._judged_at = (mono, playhead)
            self._judge_alerts()

    def _judge_alerts(self) -> None:
        hosts = self.hosts()
        now = self.timeline.playhead()
        if not hosts or now is None:
            return
        # The shown host every tick; the others in turn.
        judge = [self.host]
        others = [h for h in hosts if h != self.host]
        if others:
            self._alert_rr = (self._alert_rr + 1) % len(others)
            judge.append(others[self._alert_rr])
        for h in judge:
            found = evaluate(self.store, h, now, self.th)
            self.alerts.update(h, found, now)
            self.active_alerts[h] = found
            g = self.gpus.get(h)
            self.advice[h] = advise(self.store, h, now, th=self.th, step_name=_step_name,
                                    gpus=g.samples if g is not None else ())

    def adopt(self, opened: Opened) -> None:
        """The opened files' store becomes this one's content (on the app's thread, at once):
        their figures, the log pane's last lines, and a replay clock that has reached the end."""
        self.store.merge(opened.store)
        self.feed.counts.merge(opened.counts)
        if self.opening is not None:
            self.log.add_raw(self.opening.log_tail(self.log.lines.maxlen or 0), None)  # read when shown
            self.opening.finish()
        self._rate_marks.clear()
        self._read_at_once = self.feed.counts.read  # no rate of lines to show until more come
        clock = self.replay
        if clock is not None:
            clock.sources_seen += 1  # one source, already at its end
            if self.store.last_ts is not None:
                clock.note_released(self.store.last_ts)

    def needs_settings(self, host: str | None) -> bool:
        """Whether the host's current run has no settings yet (no settings line in what was read)."""
        cur = self.store.current_epoch(host)
        return not (cur.spec if cur is not None else self.store.spec.get(host))

    def note_settings(self, host: str | None, spec: dict, witness: str) -> None:
        """The current run's settings as the host says it was started (ExecStart, /server_info):
        for a run whose settings line the journal no longer holds. They label the current epoch;
        a settings line read later is a new run's (it begins its own epoch)."""
        if self.needs_settings(host):
            cur = self.store.current_epoch(host)
            self.store.add_event(Event("spec_witness", cur.start if cur else None, host, f"settings from {witness}, no server_args "
                                       "line of this run in the journal", data={**spec, "witness": witness}))

    def note_restart(self, host: str | None, target: str) -> None:
        """mtptui restarts the host's server now (for a profile, or as it is): how the run ends."""
        self.store.add_event(Event("restart_requested", None, host, f"mtptui restarts the server ({target})",
                                   data={"profile": target}))

    def note_scrape(self, host: str | None, scrape: Scrape) -> float | None:
        """A /metrics scrape of the host's server: its latency now, and its current epoch's
        (whose start is returned: the record keeps it beside the scrape)."""
        cur = self.store.current_epoch(host)
        epoch = cur.start if cur is not None else None
        h = self.latency.setdefault(host, HostLatency())
        self._note_steps(host, h.last, scrape)
        h.add(scrape, epoch)
        self.latency_note.pop(host, None)
        return epoch

    def _note_steps(self, host: str | None, old: Scrape | None, new: Scrape) -> None:
        k = steps_between(old, new)
        if k is not None:
            self.scrape_steps.setdefault(host, deque(maxlen=STEPS_KEPT)).append((new.t, k))
            self.steps_noted += 1

    def adopt_recorded(self, found: dict[str | None, list[tuple[Scrape, float | None]]]) -> None:
        """The scrapes of the record being replayed (sources/record.recorded_scrapes): each
        epoch's figures as the recording dashboard had them, and the window at the playhead."""
        for host, got in found.items():
            got = sorted(got, key=lambda x: x[0].t)
            self.scrape_steps.pop(host, None)
            for (old, _), (new, _) in zip([(None, None), *got], got):
                self._note_steps(host, old, new)
            h = HostLatency()
            h.epochs = by_epoch(got, [])
            self.latency[host] = h
            self.recorded[host] = got

    def adopt_recorded_gpus(self, found: dict[str | None, list[GpuSample]]) -> None:
        """The GPU samples of the record being replayed (sources/record.recorded_gpus)."""
        for host, got in found.items():
            h = GpuHistory(keep=max(4096, len(got)))
            h.add(sorted(got, key=lambda s: s.t))
            self.gpus[host] = h

    def gpus_now(self, host: str | None) -> list[GpuSample]:
        """The host's GPUs at the playhead (live: the newest)."""
        h = self.gpus.get(host)
        if h is None:
            return []
        t = self.timeline.playhead() if self.replay is not None else None
        return h.at(t)

    def latency_now(self, host: str | None) -> dict | None:
        got = self.recorded.get(host)
        if got:
            t = self.timeline.playhead()
            if t is not None and self.store.last_ts is not None and t >= self.store.last_ts:
                t = None  # at the record's end: its last scrapes too (read after its last line)
            return window_at(got, t)
        h = self.latency.get(host)
        return h.now() if h is not None else None

    def state_label(self) -> str:
        if self.opening is not None and not self.opening.done:
            return "OPENING"
        return self.timeline.state_label()

    def source_label(self) -> str:
        if self.opening is not None:
            return self.opening.label if self.opening.done else self.opening.status()
        labels = [s.label for s in self.sources if s.label]
        if not labels:
            return "no source"
        if len(labels) > 3:
            return f"{labels[0]} (+{len(labels) - 1} more)"
        return ", ".join(labels)

    def lag_s(self) -> float | None:
        """Live: wall seconds since the newest line arrived. None for a replay."""
        if self.replay is not None or self.feed.last_arrival is None:
            return None
        return max(0.0, self.wall() - self.feed.last_arrival)
