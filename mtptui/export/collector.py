"""The Prometheus families `mtptui export` serves, made from an `ExportState` at each scrape.

Names follow Prometheus' conventions: the `mtptui_` prefix, base units (`_seconds`, ratios 0-1 as
`_ratio`), `_total` on counters. Per host and rank (labels `host`, `rank`; `rank` is the log's
rank tokens, e.g. `TP0` or `DP3 TP3 EP3`, empty when the line has none):

  gauges, the rank's last batch lines, served only while the rank logs (see below):
    mtptui_spec_accept_length, mtptui_spec_accept_ratio, mtptui_gen_throughput_tokens_per_second,
    mtptui_running_requests, mtptui_queued_requests, mtptui_token_usage_ratio
  gauge, vLLM's last SpecDecoding line: mtptui_spec_position_accept_ratio{position}
  counters: mtptui_decode_batches_total, mtptui_decode_batches_without_cuda_graph_total

Per host (label `host`): mtptui_spec_info (the speculation settings from `server_args=`),
mtptui_epoch_start_time_seconds, mtptui_events_total{kind}, mtptui_source_connected,
mtptui_last_batch_time_seconds, mtptui_lines_{read,unparsed,dropped}_total; and from the server's
own /metrics (export/scrape.py), where it counts speculation (vLLM): mtptui_server_spec_drafts_total,
mtptui_server_spec_draft_tokens_total, mtptui_server_spec_accepted_tokens_total and
mtptui_server_spec_accepted_tokens_per_position_total{position}, its counters since its start
(summed over its engines), so that rate() of them gives acceptance over any window:
accepted / drafts + 1 the accept length, per position accepted there / drafts.

A rank whose last batch line arrived more than `stale_after` seconds ago is stale: its gauges are
left out (Prometheus then marks the series stale) rather than repeating its last figures forever.
Its counters stay: what they count is still true.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.registry import Collector

from mtptui.core import latency
from mtptui.core.epochs import spec_label
from mtptui.export.state import ExportState
from mtptui.sources.base import STREAMING

# name, the rank's figure, help
RANK_GAUGES = (
    ("mtptui_spec_accept_length", "accept_len",
     "Accept length of the rank's last decode batch line: tokens per request-step, the accepted "
     "drafts plus the bonus token (1 means no draft accepted)."),
    ("mtptui_spec_accept_ratio", "accept_rate",
     "Accept rate of the rank's last decode batch line, 0 to 1, as the server logged it (SGLang's "
     "formula changed in 0.5.8 and 0.5.12; vLLM: the draft acceptance rate)."),
    ("mtptui_gen_throughput_tokens_per_second", "gen_throughput",
     "Generation throughput of the rank's last decode batch line (this scheduler's batch only)."),
    ("mtptui_running_requests", "running_req", "Running requests in the rank's last batch line."),
    ("mtptui_queued_requests", "queue_req", "Queued requests in the rank's last batch line."),
    ("mtptui_token_usage_ratio", "token_usage",
     "KV cache pool usage in the rank's last batch line, 0 to 1 (a hybrid model's full-attention pool)."),
)
RANK = ["host", "rank"]
HOST = ["host"]
# the server's counters served again: name, its family in the scrape (core/latency), help
SERVER_COUNTERS = (
    ("mtptui_server_spec_drafts", latency.VLLM_DRAFTS,
     "Verify steps that had drafts, as the server counts them since its start (vLLM's "
     "spec_decode_num_drafts, every engine summed)."),
    ("mtptui_server_spec_draft_tokens", latency.VLLM_DRAFT_TOKENS,
     "Draft tokens proposed, as the server counts them since its start (vLLM's spec_decode_num_draft_tokens)."),
    ("mtptui_server_spec_accepted_tokens", latency.VLLM_ACCEPTED,
     "Draft tokens accepted, as the server counts them since its start (vLLM's spec_decode_num_accepted_tokens)."),
)


class ExportCollector(Collector):
    def __init__(self, state: ExportState, stale_after: float, clock: Callable[[], float] = time.time) -> None:
        self.state = state
        self.stale_after = stale_after
        self.clock = clock

    def collect(self) -> Iterator[Metric]:
        st = self.state
        with st.lock:
            now = self.clock()
            gauges = [GaugeMetricFamily(name, help_, labels=RANK) for name, _, help_ in RANK_GAUGES]
            batches = CounterMetricFamily("mtptui_decode_batches", "Decode batch lines logged by the rank.",
                                          labels=RANK)
            per_pos = GaugeMetricFamily("mtptui_spec_position_accept_ratio",
                                        "Acceptance at each draft position (0 the first) of the rank's last "
                                        "SpecDecoding line, 0 to 1 (vLLM's per-position acceptance rate).",
                                        labels=RANK + ["position"])
            no_graph = CounterMetricFamily("mtptui_decode_batches_without_cuda_graph",
                                           "Decode batch lines that ran without CUDA graphs (`cuda graph: "
                                           "False`), a slow decode.", labels=RANK)
            last_batch: dict[str | None, float] = {}
            for (host, rank), r in sorted(st.ranks.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
                lab = [host or "", rank]
                batches.add_metric(lab, r.decode_batches)
                no_graph.add_metric(lab, r.graph_off)
                if r.last_ts is not None:
                    last_batch[host] = max(last_batch.get(host, r.last_ts), r.last_ts)
                if now - r.last_arrival > self.stale_after:
                    continue
                for fam, (_, key, _) in zip(gauges, RANK_GAUGES):
                    v = r.values.get(key)
                    if isinstance(v, (int, float)):
                        fam.add_metric(lab, float(v))
                rates = r.values.get("per_position_accept_rate")
                for i, rate in enumerate(rates if isinstance(rates, list) else ()):
                    per_pos.add_metric(lab + [str(i)], float(rate))
            yield from gauges
            yield per_pos
            yield batches
            yield no_graph
            yield from self._hosts(last_batch)

    def _hosts(self, last_batch: dict[str | None, float]) -> Iterator[Metric]:
        st = self.state
        spec = InfoMetricFamily("mtptui_spec", "The host's speculation settings, read from its server's "
                                "`server_args=` line (settings: as the dashboard labels them).", labels=HOST)
        epoch = GaugeMetricFamily("mtptui_epoch_start_time_seconds",
                                  "Log time when the host's current epoch began (its server's start, or the "
                                  "first line seen), Unix seconds.", labels=HOST)
        events = CounterMetricFamily("mtptui_events", "Lifecycle and trouble events in the host's log, by kind "
                                     "(restart: a new server process or systemd start; crash: a server process died or the unit failed).",
                                     labels=HOST + ["kind"])
        connected = GaugeMetricFamily("mtptui_source_connected",
                                      "1 while the host's log stream is connected and streaming, else 0.",
                                      labels=HOST)
        last = GaugeMetricFamily("mtptui_last_batch_time_seconds",
                                 "Log time of the host's newest batch line, Unix seconds.", labels=HOST)
        read = CounterMetricFamily("mtptui_lines_read", "Log lines read from the host.", labels=HOST)
        unparsed = CounterMetricFamily("mtptui_lines_unparsed",
                                       "Lines read that are neither a batch line nor an event (ordinary text).",
                                       labels=HOST)
        dropped = CounterMetricFamily("mtptui_lines_dropped",
                                      "Lines lost or unreadable (a gap in the stream, an overlong or binary line).",
                                      labels=HOST)
        for host, h in sorted(st.hosts.items(), key=lambda kv: str(kv[0])):
            lab = [host or ""]
            settings = st.epochs.spec.get(host)
            if settings is not None:
                spec.add_metric(lab, {
                    "algorithm": str(settings.get("algorithm") or ""),
                    "steps": _text(settings.get("num_steps")), "topk": _text(settings.get("topk")),
                    "draft_tokens": _text(settings.get("num_draft_tokens")),
                    "settings": spec_label(settings)})
            cur = st.epochs.current(host)
            if cur is not None:
                epoch.add_metric(lab, cur.start)
            for kind, n in dict(h.events, restart=st.restarts(host)).items():
                events.add_metric(lab + [kind], n)
            connected.add_metric(lab, 1.0 if h.status is not None and h.status.state == STREAMING else 0.0)
            if host in last_batch:
                last.add_metric(lab, last_batch[host])
            c = h.ingest.counts
            read.add_metric(lab, c.read)
            unparsed.add_metric(lab, c.unparsed)
            dropped.add_metric(lab, c.dropped)
        yield from (spec, epoch, events, connected, last, read, unparsed, dropped)
        yield from self._server()

    def _server(self) -> Iterator[Metric]:
        """The servers' own speculative counters, from each host's newest /metrics scrape."""
        counters = [CounterMetricFamily(name, help_, labels=HOST) for name, _, help_ in SERVER_COUNTERS]
        per_pos = CounterMetricFamily(
            "mtptui_server_spec_accepted_tokens_per_position",
            "Draft tokens accepted at each draft position (0 the first), as the server counts them since "
            "its start (vLLM's spec_decode_num_accepted_tokens_per_pos).", labels=HOST + ["position"])
        for host, h in sorted(self.state.hosts.items(), key=lambda kv: str(kv[0])):
            if h.scrape is None:
                continue
            lab = [host or ""]
            for fam, (_, family, _) in zip(counters, SERVER_COUNTERS):
                if family in h.scrape.counters:
                    fam.add_metric(lab, h.scrape.counters[family])
            for pos, n in sorted(h.scrape.per_pos.items()):
                per_pos.add_metric(lab + [str(pos)], n)
        yield from counters
        yield per_pos


def _text(v) -> str:
    return "" if v is None else str(v)
