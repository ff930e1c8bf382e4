"""The servers' own /metrics, read by `mtptui export` every few seconds through each host's HTTP
endpoint (over SSH the forwarded port `smoke`, `bench` and the dashboard use) and kept, parsed
(core/latency.parse), for the collector: vLLM's speculative counters, per draft position too,
served again under the host's name. The logs say acceptance per stats interval; these counters
say it since the server started, and Prometheus' rate() gives any window of them.

A server that serves no /metrics (SGLang without --enable-metrics) or cannot be asked leaves its
host without these families; the newest scrape stands until the next one replaces it, and one
older than STALE_SCRAPES polls is dropped, as a rank's gauges are when its log falls silent."""

from __future__ import annotations

import asyncio

from mtptui.control.probe import ServerProbe
from mtptui.core import latency
from mtptui.export.state import ExportState

POLL_S = 5.0  # the counters move per verify step: a few seconds between reads is plenty
STALE_SCRAPES = 3  # polls without an answer after which the last scrape is no longer served


async def poll(state: ExportState, host: str | None, endpoint, every: float | None = None) -> None:
    """Reads one host's /metrics into `state` until cancelled."""
    probe = ServerProbe(endpoint)
    missed = 0
    while True:
        text = await probe.metrics_text()
        scrape = None
        if text is not None:
            try:
                # off the event loop: a server's whole exposition is parsed in milliseconds, but
                # the sources' lines wait for nothing
                scrape = await asyncio.to_thread(latency.parse, text, state.clock())
            except latency.NotExposition:
                scrape = None
        missed = 0 if scrape is not None else missed + 1
        if scrape is not None or missed >= STALE_SCRAPES:
            state.server_scrape(host, scrape)
        await asyncio.sleep(every if every is not None else POLL_S)
