"""The restart watch's other witnesses: systemd's state and the server's HTTP answers stand in for
journal lines that never come, and never turn a healthy restart into a failure."""

from __future__ import annotations

import pytest

from mtptui.control.probe import accept_len_of, settings_of
from mtptui.control.verify import FAILED, LOADING, READY, STARTING, VERIFIED, Watch
from mtptui.sources.journal import Run

MTP1 = {"algorithm": "NEXTN", "num_steps": 1, "topk": 1, "num_draft_tokens": 2}
OFF = {"algorithm": None}
OLD = Run("sglang-qwen.service", "0ld", "4242")


def show(inv: str, active: str = "active", sub: str = "running", result: str = "success", nrestarts: str = "0",
         status: str = "0") -> dict[str, str]:
    return {"ActiveState": active, "SubState": sub, "Result": result, "InvocationID": inv,
            "NRestarts": nrestarts, "ExecMainStatus": status, "MainPID": "99"}


# /server_info as SGLang 0.5.x answers it (entrypoints/http_server.py get_server_info: the server
# args, then the scheduler's internal states, one a DP group)
INFO_MTP1 = {"model_path": "m", "speculative_algorithm": "EAGLE", "speculative_num_steps": 1,
             "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 2,
             "internal_states": [{"avg_spec_accept_length": 1.8}, {"avg_spec_accept_length": 1.9}]}
INFO_OFF = {"model_path": "m", "speculative_algorithm": None, "speculative_num_steps": None,
            "speculative_eagle_topk": None, "speculative_num_draft_tokens": None,
            "internal_states": [{"last_gen_throughput": 30.0}]}


def test_a_new_invocation_is_the_start_when_no_line_came():
    w = Watch(MTP1, replaced=OLD)
    w.systemd(show("0ld", "deactivating", "stop-sigterm"))
    assert not w.started and w.state == STARTING
    w.systemd(show("n3w", "activating", "start"))
    assert w.started and w.state == LOADING and w.new_invocation == "n3w"


def test_ready_by_health_and_settings_from_server_info_verify_without_any_line():
    w = Watch(MTP1, replaced=OLD)
    w.systemd(show("n3w"))
    w.http_ready()
    assert w.state == READY and w.needs_settings
    w.http_settings(settings_of(INFO_MTP1))
    assert not w.needs_settings and w.state == READY
    w.http_accept(accept_len_of(INFO_MTP1))
    assert w.state == VERIFIED
    assert w.summary() == ("verified (ready by /health (the journal's ready line did not come); settings from "
                           "/server_info (no server_args line came); accept len 1.85 from /server_info "
                           "(decode lines did not come))")


def test_health_answering_before_the_ready_line_is_no_note_when_the_line_comes():
    # /health answered first, then the journal's ready line came: nothing stood in for it, and the
    # audit's message says so no more (issue 42: it said "did not come")
    w = Watch(MTP1, replaced=OLD)
    w.systemd(show("n3w"))
    w.http_ready()
    w.http_settings(settings_of(INFO_MTP1))
    w.feed(["[2026-03-09 16:00:09] The server is fired up and ready to roll!"])
    w.http_accept(accept_len_of(INFO_MTP1))
    assert w.state == VERIFIED
    assert "ready line" not in w.summary() and "ready by /health" not in w.summary(), w.summary()


def test_health_before_the_new_run_is_not_ready():
    # the old run's server still answers 200 until systemd has started the new one
    w = Watch(MTP1, replaced=OLD)
    w.systemd(show("0ld"))
    w.http_ready()
    assert w.state == STARTING


def test_server_info_settings_that_differ_fail():
    w = Watch(MTP1, replaced=OLD)
    w.systemd(show("n3w"))
    w.http_ready()
    w.http_settings(settings_of(INFO_OFF))
    assert w.state == FAILED and w.reason == "the server runs algorithm none, asked for NEXTN (from /server_info)"


def test_off_is_verified_by_settings_and_no_accept_length_and_fails_on_one():
    w = Watch(OFF, replaced=OLD)
    w.systemd(show("n3w"))
    w.http_ready()
    w.http_settings(settings_of(INFO_OFF))
    w.http_accept(accept_len_of(INFO_OFF))
    assert w.state == VERIFIED
    w = Watch(OFF, replaced=OLD)
    w.systemd(show("n3w"))
    w.http_ready()
    w.http_settings(settings_of(INFO_OFF))
    w.http_accept(1.9)
    assert w.state == FAILED and "accept len 1.90" in w.reason


def test_speculation_on_without_an_accept_length_yet_waits():
    w = Watch(MTP1, replaced=OLD)
    w.systemd(show("n3w"))
    w.http_ready()
    w.http_settings(settings_of(INFO_MTP1))
    w.http_accept(None)  # no verify step yet (no traffic)
    assert w.state == READY


@pytest.mark.parametrize("later, why", [
    (show("n3w", "failed", "failed", "exit-code", status="1"), "the unit failed (exit-code)"),
    (show("n3w", "activating", "auto-restart", "exit-code"), "the new run exited and systemd schedules a restart"),
    (show("n3w", "inactive", "dead", "success"), "the new run exited (status 0, success)"),
    (show("4n0ther", "activating", "start", nrestarts="1"), "systemd started the unit again"),
])
def test_systemd_says_the_new_run_ended(later, why):
    w = Watch(MTP1, replaced=OLD)
    w.systemd(show("n3w"))
    w.systemd(later)
    assert w.state == FAILED and why in w.reason


def test_the_old_runs_failure_is_not_the_new_runs():
    # the old run's stop fails (a flood, a SIGKILL): systemd shows failed with the old invocation
    w = Watch(MTP1, replaced=OLD)
    w.systemd(show("0ld", "failed", "failed", "signal"))
    assert w.state == STARTING and not w.started


def test_a_stopped_unit_started_by_the_action():
    w = Watch(MTP1, replaced=None)
    w.systemd(show("", "inactive", "dead"))
    assert not w.started
    w.systemd(show("n3w", "activating", "start"))
    assert w.started


def test_a_target_without_invocations_fails_on_failed_once_started():
    # the demo's child: ActiveState alone
    w = Watch(MTP1)
    w.systemd({"ActiveState": "failed", "Result": "exit-code 1"})
    assert w.state == STARTING
    w.feed(["Started x."])
    w.systemd({"ActiveState": "failed", "Result": "exit-code 1"})
    assert w.state == FAILED and "exit-code 1" in w.reason


@pytest.mark.parametrize("info, want", [
    ({"internal_states": [{"avg_spec_accept_length": 2.5}]}, 2.5),
    ({"internal_states": [{"avg_spec_accept_length": 0}]}, None),
    ({"internal_states": "x"}, None),
    ({"internal_states": [None, {"avg_spec_accept_length": True}, {"avg_spec_accept_length": "2"}]}, None),
    ({}, None),
])
def test_accept_len_of_hostile_answers(info, want):
    assert accept_len_of(info) == want


def test_settings_of_ignores_wrong_types():
    assert settings_of({"speculative_algorithm": ["EAGLE"], "speculative_num_steps": True, "tp_size": 4.5}) == {
        "algorithm": None, "num_steps": None, "topk": None, "num_draft_tokens": None, "draft_model_path": None,
        "model_path": None, "tp_size": None, "dp_size": None, "adaptive": None, "enable_dp_attention": None,
        "enable_two_batch_overlap": None}


def test_the_reason_is_the_runs_first_error_not_its_last_words():
    # SGLang's scheduler dies of OOM at start: its traceback, the exception, then the parent's
    # "Received sigquit" and systemd's exit (sglang 0.5.x scheduler.py run_scheduler_process,
    # entrypoints/engine.py sigquit_handler)
    w = Watch(MTP1)
    w.feed(["Started sglang-qwen.service - SGLang.",
            "[2026-03-09 16:00:05 TP0] Scheduler hit an exception: Traceback (most recent call last):",
            '  File "/sglang/srt/managers/scheduler.py", line 2345, in run_scheduler_process',
            "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
            "[2026-03-09 16:00:05] Received sigquit from a child process. It usually means the child failed.",
            "sglang-qwen.service: Main process exited, code=killed, status=9/KILL"])
    assert w.state == FAILED
    assert w.reason == ("the unit failed: sglang-qwen.service: Main process exited, code=killed, status=9/KILL "
                        "(RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.)")


def test_an_exception_behind_a_prefix_is_a_cause():
    w = Watch(MTP1)
    w.feed(["Started x.", "[2026-03-09 16:00:05 TP0] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
            "[2026-03-09 16:00:06] Received sigquit from a child process. It usually means the child failed."])
    w.systemd({"ActiveState": "failed", "Result": "signal"})
    assert w.state == FAILED and "torch.OutOfMemoryError: CUDA out of memory" in w.reason, w.reason


EXPOSITION = """# HELP sglang:spec_accept_length The average acceptance length of speculative decoding.
# TYPE sglang:spec_accept_length gauge
sglang:spec_accept_length{engine_type="unified",model_name="Qwen/Qwen3-8B",pp_rank="0",tp_rank="0"} 2.5
sglang:spec_accept_length{engine_type="unified",model_name="Qwen/Qwen3-8B",pp_rank="0",tp_rank="1"} 2.25
# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{engine_type="unified",model_name="Qwen/Qwen3-8B",pp_rank="0",tp_rank="0"} 12.0
"""


@pytest.mark.parametrize("text, want", [
    (EXPOSITION, 2.375),  # the mean over the DP groups' gauges
    (EXPOSITION.replace(" 2.5\n", " 0.0\n").replace(" 2.25\n", " 0\n"), None),  # 0: off, or no verify step yet
    ("", None), ("not an exposition {{{", None), ("sglang:spec_accept_length NaN\n", None),
    ("\x00\xff" * 100, None),
])
def test_accept_len_in_a_metrics_exposition(text, want):
    from mtptui.control.probe import accept_len_in

    assert accept_len_in(text) == want


def test_metrics_stand_in_for_an_info_without_an_accept_length():
    w = Watch(MTP1, replaced=OLD)
    w.systemd(show("n3w"))
    w.http_ready()
    w.http_settings(settings_of(INFO_MTP1))
    w.http_accept(2.375, "/metrics")
    assert w.state == VERIFIED and "accept len 2.38 from /metrics (decode lines did not come)" in w.notes
