"""Lifecycle and trouble events, from systemd's lines about the unit and the server's own lines."""

from __future__ import annotations

import re

# What a record file holds where a live stream was lost (mtptui/sources/record.py writes it).
GAP_MARK = "-- mtptui: stream lost, lines may be missing until it resumes --"

# (kind, pattern, words): the first rule that matches wins, so the specific ones come before the
# generic ones. A rule's pattern cannot match without one of its words, so a line is searched for
# the words once and only the rules whose words it has are tried (most lines have none).
_RULES: list[tuple[str, re.Pattern[str], tuple[str, ...]]] = [
    ("gap", re.compile("^" + re.escape(GAP_MARK)), ("-- mtptui: ",)),
    ("spec_config", re.compile(r"server_args=ServerArgs\("), ("server_args=",)),
    ("ready", re.compile(r"The server is fired up and ready to roll!"), ("fired up",)),
    ("watchdog", re.compile(r"[Ww]atchdog timeout \(|Scheduler watchdog timeout"), ("atchdog",)),
    ("nccl", re.compile(r"NCCL error|DistBackendError|Watchdog caught collective operation timeout|NCCL timeout"
                        r"|ncclInternalError|ncclSystemError"), ("NCCL", "nccl", "DistBackend", "atchdog")),
    ("oom", re.compile(r"Not enough memory\. Please try to increase --mem-fraction-static|CUDA out of memory"
                       r"|OutOfMemoryError"), ("memory", "OutOfMemory")),
    ("retract", re.compile(r"KV cache pool is full\. Retract requests\."), ("Retract",)),
    ("error", re.compile(r"Scheduler hit an exception|^Traceback \(most recent call last\)|Received sigquit from a "
                         r"child process|Initialization failed\. |Health check failed\. "),
     ("Scheduler hit", "Traceback", "sigquit", "Initialization failed", "Health check failed")),
    ("auto_restart", re.compile(r"^(?:\S+: )?Scheduled restart job, restart counter is at \d+"), ("restart job",)),
    ("failed", re.compile(r"^(?:\S+: )?(?:Main process exited, code=(?:exited, status=[1-9]\d*|killed|dumped)"
                          r"|Failed with result '|Failed to start )"), ("Main process exited", "Failed ")),
    ("started", re.compile(r"^Started "), ("Started ",)),
    ("stopping", re.compile(r"^Stopping |^SIGTERM received\. "), ("Stopping ", "SIGTERM received")),
    ("stopped", re.compile(r"^Stopped |^Gracefully exiting\.\.\. "), ("Stopped ", "Gracefully exiting")),
]
# A line without any of these words is no event: classify() returns None for it.
WORDS = tuple(sorted({w for r in _RULES for w in r[2]}, key=len, reverse=True))
_WORDS = re.compile("|".join(re.escape(w) for w in WORDS))

_SPEC_KEYS = {
    "speculative_algorithm": "algorithm",
    "speculative_num_steps": "num_steps",
    "speculative_eagle_topk": "topk",
    "speculative_num_draft_tokens": "num_draft_tokens",
    "speculative_draft_model_path": "draft_model_path",
    "model_path": "model_path",
    "tp_size": "tp_size",
    "dp_size": "dp_size",
    "enable_dp_attention": "enable_dp_attention",
    "decode_log_interval": "decode_log_interval",
}
_ARG = re.compile(r"(?:\(|, )(" + "|".join(_SPEC_KEYS) + r")=('(?:[^'\\]|\\.)*'|None|True|False|-?\d{1,30}(?:\.\d{1,30})?)")


def _value(v: str):
    if v == "None":
        return None
    if v in ("True", "False"):
        return v == "True"
    if v.startswith("'"):
        return v[1:-1]
    try:
        return int(v)
    except ValueError:
        return float(v)


def server_args(msg: str) -> dict:
    """The speculation settings (and the layout) read from `server_args=ServerArgs(...)`."""
    out = {}
    for key, v in _ARG.findall(msg):
        out[_SPEC_KEYS[key]] = _value(v)
    return out


def classify(msg: str, words: set[str] | None = None) -> tuple[str, dict] | None:
    """(kind, data) for an event line, else None. words: the WORDS that msg holds, when the
    caller has found them (the compiled lane does): no two of them overlap, so these are the
    words findall finds."""
    if words is None:
        if not _WORDS.search(msg):
            return None
        words = set(_WORDS.findall(msg))
    for kind, rx, needs in _RULES:
        if not words.isdisjoint(needs) and rx.search(msg):
            return kind, (server_args(msg) if kind == "spec_config" else {})
    return None
