"""The words the pipeline speaks: a line as read, a batch-stats record, a lifecycle event.

Absent stays absent: a field that the log line did not carry is missing from ``fields``,
never a zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, get_args

# Engines
SGLANG = "sglang"
VLLM = "vllm"

# Batch kinds
DECODE = "decode"
PREFILL = "prefill"
# vLLM prints its speculative metrics on a line of their own, after the throughput line.
# Such a record adds accept_len/accept_rate samples to the decode series without being a batch.
SPEC = "spec"

# Event kinds
EventKind: TypeAlias = Literal[
    "started",  # systemd: Started UNIT
    "stopping",  # systemd: Stopping UNIT
    "stopped",  # systemd: Stopped UNIT, or the server logged its own shutdown
    "failed",  # main process exited with failure, Failed with result, Failed to start
    "auto_restart",  # systemd: Scheduled restart job (crash loop)
    "starting",  # vLLM's API server coming up (vLLM API server version, Starting vLLM API server)
    "ready",  # The server is fired up and ready to roll! (vLLM: uvicorn's Application startup complete.)
    "oom",
    "nccl",
    "crash",  # a server or engine process ended without being asked: a scheduler terminated, sigquit from
    # a child, vLLM's engine core or a worker died, a start that failed, a fault handler's dump, a bare `Killed`
    "error",  # logged trouble the server may live through: a scheduler exception, a traceback (one event,
    # its exception line as text), a failed health check or warmup
    "watchdog",
    "retract",
    "spec_config",  # server_args=ServerArgs(...) / {...} read, or vLLM's non-default args: {...}
    "spec_witness",  # the current run's settings read off the host (ExecStart, /server_info) where no
    # line of the log gave them; data["witness"] says where
    "gap",  # a live stream lost its connection; lines may be missing until it resumes
    "restart_requested",  # mtptui itself asked for a restart
    "spec_steps",  # SGLang's adaptive controller switched its steps: data {"steps", "draft_tokens"} now in use
]
EVENT_KINDS: tuple[EventKind, ...] = get_args(EventKind)


@dataclass(slots=True)
class LogLine:
    """One message as the envelope delivered it."""

    text: str
    host: str | None = None
    unit: str | None = None
    ts: float | None = None  # epoch seconds (UTC) from the envelope, if it had a usable time
    cursor: str | None = None  # journald cursor, when the envelope is json
    # True when ts is an absolute instant (json, short-iso). journald's `short` modes print local
    # time without year or zone, so the server's own stamp inside the message is preferred then.
    zoned: bool = False
    # mtptui's own entry of a record (core/recorded.py): its key (OWN_KEYS) and payload, not log text
    own: tuple[str, object] | None = None


# The keys of mtptui's own entries in a record, each a journald JSON entry with its payload under one
# key: a /metrics scrape (core/latency.to_json, and the epoch it was read in) and a batch of GPU samples
# (a list of core/gpus.GpuSample.to_json). Here, beside LogLine.own, so the envelope knows them without
# importing what reads them (core/recorded.py imports the statistics: a cycle through the lane).
OWN_METRICS = "MTPTUI_METRICS"
OWN_GPUS = "MTPTUI_GPUS"
OWN_KEYS = (OWN_METRICS, OWN_GPUS)


@dataclass(slots=True)
class BatchStats:
    """One Prefill/Decode batch line (SGLang) or one stats line (vLLM)."""

    kind: str  # DECODE, PREFILL or SPEC
    ts: float | None
    host: str | None
    rank: str  # "TP0", "DP3 TP3 EP3", "" when the line carries no rank token
    engine: str  # SGLANG or VLLM
    fields: dict[str, Any]  # normalised names: accept_len, gen_throughput, graph, ...
    extra: dict[str, str] = field(default_factory=dict)  # keys we do not know, kept verbatim
    truncated: bool = False  # the head was there but the body was cut or unreadable in part


# A column of a row that no field of a line fills: the line's time (the dashboard's rows are
# timed; the compiled lane writes it where a sink's columns name it).
TIME = "\x00time"

def token_usage(fields: dict[str, Any]) -> float | None:
    """A batch line's KV pool usage; for a hybrid model's pools (SWA, mamba), the full one."""
    usage = fields.get("token_usage")
    return usage if usage is not None else fields.get("full_token_usage")


@dataclass(slots=True)
class Event:
    kind: EventKind
    ts: float | None
    host: str | None
    text: str
    rank: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "host": self.host, "ts": self.ts, "text": self.text}
        if self.rank:
            out["rank"] = self.rank
        if self.data:
            out["data"] = self.data
        return out
