"""The server's /metrics, read every few seconds through the connection the dashboard already
holds (the host's HTTP endpoint: over SSH the forwarded port smoke and bench use), for the
latency panel and the compare screen (core/latency.py). A server that serves none is said once;
a host that cannot be asked is its source's to say. Recorded beside the lines when the session
records (sources/record.py: an MTPTUI_METRICS entry), so replay and `summary` have them too."""

from __future__ import annotations

import asyncio

from mtptui.control.probe import ServerProbe
from mtptui.core import latency
from mtptui.core.recorded import Recorded
from mtptui.sources.record import RecordingSource, RecordWriter, recorded
from mtptui.sources.replay import ReplaySource
from mtptui.tui.controller import Dashboard

POLL_S = 5.0  # histograms move per request: a few seconds between reads is plenty


def writer_for(dash: Dashboard, host: str | None) -> RecordWriter | None:
    for src in dash.sources:
        if isinstance(src, RecordingSource) and getattr(src, "host", None) == host:
            return src.writer
    return None


async def _poll(dash: Dashboard, host: str | None, ctl, every: float | None = None) -> None:
    probe = ServerProbe(ctl.endpoint)
    writer = writer_for(dash, host)
    while True:
        text = await probe.metrics_text()
        if text is None:
            if probe.no_metrics:
                dash.latency_note[host] = latency.NO_METRICS
        else:
            try:
                # off the event loop: a server's whole exposition (64 KB for 8 DP ranks: 9 ms)
                scrape = await asyncio.to_thread(latency.parse, text, dash.wall())
            except latency.NotExposition:
                scrape = None
            if scrape is None or not scrape.has_latency:
                dash.latency_note.setdefault(host, latency.NO_METRICS)
            else:
                epoch = dash.note_scrape(host, scrape)
                if writer is not None:
                    writer.metrics(host, dict(latency.to_json(scrape), epoch=epoch), scrape.t)
        await asyncio.sleep(every if every is not None else POLL_S)


def start(app, dash: Dashboard, *, poll: bool = True) -> None:
    """One poller per host the session reaches; a replay or `open` reads its records' scrapes and GPU samples."""
    for host, ctl in dash.reach.items() if poll else ():
        if hasattr(ctl, "endpoint"):
            app.run_worker(_poll(dash, host, ctl), group="metrics", exit_on_error=False)
    paths = [s.path for s in dash.sources if isinstance(s, ReplaySource) and s.path != "-"]
    if dash.opening is not None:
        paths += dash.opening.paths
    if paths:
        app.run_worker(lambda: _read_recorded(app, dash, paths), group="metrics", thread=True, exit_on_error=False)


def _read_recorded(app, dash: Dashboard, paths: list[str]) -> None:
    """In a thread: one byte search of each file for its scrapes and its GPU samples (the GPU
    poller reads none: one pass serves both), handed to the dashboard on the app's thread."""
    found = Recorded()
    for p in paths:
        found.merge(recorded(p))
    if found.scrapes:
        app.call_from_thread(dash.adopt_recorded, found.scrapes)
    if found.gpus:
        app.call_from_thread(dash.adopt_recorded_gpus, found.gpus)
