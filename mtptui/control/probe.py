"""The server's HTTP side as a witness of a restart, beside systemd's state and the journal.

journald drops lines (a unit's rate limit, a slow write of PID 1's), so the restart watch does not
wait on the journal alone: `/health` answering 200 on the new run is ready, `/server_info` (SGLang
0.5.8+, `/get_server_info` before) holds the settings the server runs and, per DP group, the
lifetime `avg_spec_accept_length` of its speculative decoding. Every answer is bounded in time; a
server that cannot be asked (no port known, the tunnel refused) is None, never an error: the
journal then decides alone, as before.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from mtptui.core import latency
from mtptui.transport import http
from mtptui.transport.tunnel import Forward

ASK_TIMEOUT_S = 3.0
RETRY_ENDPOINT_S = 10.0
INFO_PATHS = ("/server_info", "/get_server_info")
# /server_info's keys (SGLang's ServerArgs field names) for the settings a profile sets
SETTING_KEYS = {"speculative_algorithm": "algorithm", "speculative_num_steps": "num_steps",
                "speculative_eagle_topk": "topk", "speculative_num_draft_tokens": "num_draft_tokens",
                "speculative_draft_model_path": "draft_model_path",
                "model_path": "model_path", "tp_size": "tp_size", "dp_size": "dp_size"}
# its switches (True/False) that mtptui reads: SGLang's adaptive speculation (0.5.11+) and what turns it off
SETTING_SWITCHES = {"speculative_adaptive": "adaptive", "enable_dp_attention": "enable_dp_attention",
                    "enable_two_batch_overlap": "enable_two_batch_overlap"}


class ServerProbe:
    """`endpoint()` gives the server's HTTP side (a Forward), as HostControl.endpoint does."""

    def __init__(self, endpoint: Callable[[], Awaitable[Forward]]) -> None:
        self._endpoint = endpoint
        self.why_not = ""  # why the server could not be asked, the last time it could not
        self.no_metrics = False  # the last /metrics was answered with a status: none served
        self.served = 0.0  # the requests its latency histograms counted, at the last idle() read
        self._retry_at = 0.0

    async def _forward(self) -> Forward | None:
        if time.monotonic() < self._retry_at:
            return None  # finding the endpoint reads the unit: not again every second
        try:
            return await self._endpoint()
        except Exception as e:  # noqa: BLE001 - a ControlError or a transport's: no HTTP witness then
            self.why_not = str(e)
            self._retry_at = time.monotonic() + RETRY_ENDPOINT_S
            return None

    async def healthy(self) -> bool | None:
        """True when /health answers 200, False when it answers otherwise or nothing listens yet,
        None when the server cannot be asked at all."""
        fwd = await self._forward()
        if fwd is None:
            return None
        try:
            return await http.status_of(fwd.host, fwd.port, "/health", ASK_TIMEOUT_S) == 200
        except http.HttpError:
            return False

    async def server_info(self) -> dict | None:
        fwd = await self._forward()
        if fwd is None:
            return None
        for path in INFO_PATHS:
            try:
                return await http.json_request(fwd.host, fwd.port, path, None, ASK_TIMEOUT_S)
            except http.HttpError as e:
                self.why_not = f"{path}: {e}"
                if e.kind != http.STATUS:
                    return None  # down or timing out: the older path will not answer either
        return None


    async def metrics_text(self) -> str | None:
        """The /metrics body, or None when it cannot be had (`why_not` says why; `no_metrics`
        is True when the server answered but serves none: SGLang without --enable-metrics)."""
        fwd = await self._forward()
        if fwd is None:
            return None
        try:
            text = await http.text_request(fwd.host, fwd.port, "/metrics", ASK_TIMEOUT_S)
        except http.HttpError as e:
            self.why_not = f"/metrics: {e}"
            self.no_metrics = e.kind == http.STATUS
            return None
        self.no_metrics = False
        return text

    async def metrics_accept_len(self) -> float | None:
        """The accept length SGLang's /metrics reports (`sglang:spec_accept_length`, the mean over
        its DP groups; served with --enable-metrics), or None: not served, not a number, or 0
        (SGLang exports 0 without speculation and before any verify step)."""
        text = await self.metrics_text()
        return None if text is None else accept_len_in(text)


    async def idle(self) -> bool | None:
        """True when /metrics says the server runs and queues no request (vLLM's
        `num_requests_running`/`_waiting`, SGLang's `num_running_reqs`/`num_queue_reqs`), False
        when it runs some, None when it cannot tell (no /metrics, no such gauge). `served` is
        then the requests its latency histograms have counted (two reads alike: none between)."""
        text = await self.metrics_text()
        if text is None:
            return None
        try:
            s = latency.parse(text, 0.0)
        except latency.NotExposition:
            return None
        if s.running is None:
            return None
        self.served = sum(h.count for h in s.histograms.values())
        return s.running == 0 and not s.waiting


def accept_len_in(exposition: str) -> float | None:
    """`sglang:spec_accept_length` in a Prometheus exposition: the mean of its positive samples."""
    try:
        return latency.parse(exposition, 0.0).accept_len
    except latency.NotExposition:
        return None  # not an exposition mtptui can read: no witness then


def settings_of(info: dict) -> dict:
    """The speculation settings and the layout in a /server_info answer, under the names
    server_args lines give them (None when absent)."""
    out = {}
    for key, name in SETTING_KEYS.items():
        v = info.get(key)
        out[name] = v if isinstance(v, (str, int)) and not isinstance(v, bool) else None
    for key, name in SETTING_SWITCHES.items():
        v = info.get(key)
        out[name] = v if isinstance(v, bool) else None
    return out


def accept_len_of(info: dict) -> float | None:
    """The mean of the DP groups' lifetime `avg_spec_accept_length` (None before any verify step,
    or without speculation)."""
    states = info.get("internal_states")
    given = [s.get("avg_spec_accept_length") for s in states if isinstance(s, dict)] if isinstance(states, list) else []
    vals = [float(v) for v in given if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0]
    return sum(vals) / len(vals) if vals else None
