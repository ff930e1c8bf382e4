"""Lifecycle and trouble lines become events; the speculation settings come from server_args."""

import pytest

from mtptui.core.parse import LineParser
from mtptui.core.parse.events import server_args

CASES = [
    ("Started sglang-qwen.service - SGLang Qwen3.5.", "started"),
    ("Started SGLang Qwen3.5.", "started"),
    ("Stopping sglang-qwen.service - SGLang Qwen3.5...", "stopping"),
    ("Stopped sglang-qwen.service - SGLang Qwen3.5.", "stopped"),
    ("sglang-qwen.service: Main process exited, code=exited, status=1/FAILURE", "failed"),
    ("Main process exited, code=killed, status=9/KILL", "failed"),
    ("sglang-qwen.service: Failed with result 'exit-code'.", "failed"),
    ("Failed to start sglang-qwen.service - SGLang Qwen3.5.", "failed"),
    ("sglang-qwen.service: Scheduled restart job, restart counter is at 3.", "auto_restart"),
    ("[2026-03-09 16:03:25] The server is fired up and ready to roll!", "ready"),
    ("[2026-03-09 16:03:25 TP0] RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.", "oom"),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", "oom"),
    ("[2026-03-09 16:03:25 TP2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5)", "nccl"),
    ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275", "nccl"),
    ("[2026-03-09 16:03:25 TP0] Scheduler hit an exception: Traceback (most recent call last):", "error"),
    ("Traceback (most recent call last):", "error"),
    ("[2026-03-09 16:03:25] Received sigquit from a child process. It usually means the child failed.", "crash"),
    ("[2026-03-09 16:03:25 TP0] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)", "watchdog"),
    ("[2026-03-09 16:03:25 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_tokens_gained: 512, #new_token_ratio: 0.7000 -> 0.8000", "retract"),
    ("[2026-03-09 16:03:25] server_args=ServerArgs(model_path='Qwen/Qwen3.5-122B-A10B', tp_size=4)", "spec_config"),
    ("[2026-03-09 16:03:25] SIGTERM received. signum=None frame=None. Draining requests and shutting down...", "stopping"),
    ("[2026-03-09 16:03:26] Gracefully exiting... Remaining number of requests 0.", "stopped"),
    ('{"MTPTUI_GAP":"1","_HOSTNAME":"gpu1","__REALTIME_TIMESTAMP":"1773072205000000",'
     '"MESSAGE":"-- mtptui: stream lost, lines may be missing until it resumes -- keepalive timeout"}', "gap"),
]


@pytest.mark.parametrize("raw,kind", CASES)
def test_event_kinds(raw, kind):
    p = LineParser().parse(raw)
    assert p.outcome == "event", raw
    assert p.record.kind == kind


@pytest.mark.parametrize("raw", [
    "[2026-03-09 16:03:25] Cache not flushed because there are pending requests. #queue-req: 2, #running-req: 12",
    "[2026-03-09 16:03:25 TP0] Load weight begin. avail mem=77.12 GB",
    'INFO:     127.0.0.1:51234 - "POST /generate HTTP/1.1" 200 OK',
    "sglang-qwen.service: Deactivated successfully.",
    "Main process exited, code=exited, status=0/SUCCESS",
])
def test_ordinary_lines_are_not_events(raw):
    assert LineParser().parse(raw).outcome == "other"


def test_server_args_speculation_settings():
    msg = ("server_args=ServerArgs(model_path='Qwen/Qwen3.5-122B-A10B', tokenizer_path='Qwen/Qwen3.5-122B-A10B', "
           "tp_size=4, dp_size=1, enable_dp_attention=False, speculative_algorithm='EAGLE', "
           "speculative_draft_model_path=None, speculative_num_steps=3, speculative_eagle_topk=1, "
           "speculative_num_draft_tokens=4, speculative_accept_threshold_single=1.0, decode_log_interval=40, "
           "mem_fraction_static=0.85, api_key='it''s', watchdog_timeout=300)")
    assert server_args(msg) == {
        "model_path": "Qwen/Qwen3.5-122B-A10B", "tp_size": 4, "dp_size": 1, "enable_dp_attention": False,
        "algorithm": "EAGLE", "draft_model_path": None, "num_steps": 3, "topk": 1, "num_draft_tokens": 4,
        "decode_log_interval": 40,
    }


def test_server_args_with_speculation_off():
    data = server_args("server_args=ServerArgs(model_path='m', speculative_algorithm=None, speculative_num_steps=None)")
    assert data == {"model_path": "m", "algorithm": None, "num_steps": None}
    ev = LineParser().parse("[2026-03-09 16:03:25] server_args=ServerArgs(model_path='m', speculative_algorithm=None)")
    assert ev.record.data["algorithm"] is None


def _every_rule(msg):
    """What classify gives when every rule is tried in order, without the word pre-filter."""
    from mtptui.core.parse.events import _RULES

    for kind, rx, _ in _RULES:
        if rx.search(msg):
            return kind
    return None


def test_word_filter_never_changes_the_kind():
    """Each rule's words must be necessary for its pattern; checked on the cases, on lines that
    carry the words of several rules at once, and on every line of the sample logs."""
    from pathlib import Path

    from mtptui.core.parse.events import _RULES, classify

    msgs = [raw for raw, _ in CASES] + [raw.lower() for raw, _ in CASES] + [raw.upper() for raw, _ in CASES]
    words = [w for _, _, ws in _RULES for w in ws]
    msgs += [" ".join(words), " ".join(reversed(words)), "ncclInternalError in all_reduce",
             "Failed with result 'timeout' after Watchdog caught collective operation timeout"]
    for f in sorted(Path(__file__).resolve().parents[2].joinpath("sample_logs").glob("*.log")):
        msgs += f.read_text(errors="replace").splitlines()
    seen = set()
    for msg in msgs:
        got = classify(msg)
        assert (got[0] if got else None) == _every_rule(msg), msg
        seen.add(got[0] if got else None)
    assert {"ready", "spec_config", "nccl", "oom", "watchdog"} <= seen


def test_a_settings_line_seen_again_gives_its_own_settings_each_time():
    """The settings of a line seen before come from a cache (a crash loop prints the same line at
    each start): each event still gets a dict of its own, and a line too long to keep is read."""
    from mtptui.core.parse.events import SETTINGS_KEPT, classify

    msg = ("server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=4, speculative_algorithm='EAGLE', "
           "speculative_num_steps=3)")
    first = classify(msg)[1]
    first["frames"] = ["changed by its event"]
    again = classify(msg)[1]
    assert again == {"model_path": "Qwen/Qwen3-8B", "tp_size": 4, "algorithm": "EAGLE", "num_steps": 3}
    assert again is not first
    long = msg[:-1] + ", " + "x" * SETTINGS_KEPT + "=1, speculative_eagle_topk=2)"
    assert classify(long)[1] == {**again, "topk": 2}
    assert classify(long)[1] is not classify(long)[1]
