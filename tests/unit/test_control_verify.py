"""The verdict after a restart, from the server's own lines, and the argvs the target runs: by value."""

from __future__ import annotations

import json

import pytest

from mtptui.control.plan import APPLY, Plan
from mtptui.control.profiles import BUILTINS
from mtptui.control.target import SystemdTarget, last_start_seconds
from mtptui.control.verify import FAILED, READY, VERIFIED, Watch, mismatch
from mtptui.sources.journal import Run

MTP3 = {"algorithm": "NEXTN", "num_steps": 3, "topk": 1, "num_draft_tokens": 4}
ARGS_ON = ("[2026-03-09 16:00:01] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE', "
           "speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4, tp_size=1)")
ARGS_OFF = ("[2026-03-09 16:00:01] server_args=ServerArgs(model_path='m', speculative_algorithm=None, "
            "speculative_num_steps=None, speculative_eagle_topk=None, speculative_num_draft_tokens=None)")
READY_LINE = "[2026-03-09 16:00:09] The server is fired up and ready to roll!"


def decode(accept: float | None) -> str:
    spec = f"accept len: {accept:.2f}, accept rate: 0.60, " if accept is not None else ""
    return (f"[2026-03-09 16:00:10] Decode batch, #running-req: 4, #token: 900, token usage: 0.01, {spec}"
            "cuda graph: True, gen throughput (token/s): 300.00, #queue-req: 0")


def test_a_good_start_is_verified_after_the_batches():
    w = Watch(MTP3, batches=3)
    w.feed(["Stopping sglang-qwen.service - SGLang...", "Stopped sglang-qwen.service - SGLang.",
            "Started sglang-qwen.service - SGLang.", ARGS_ON, "[2026-03-09 16:00:02] Load weight begin. avail mem=70 GB"])
    assert w.state not in (READY, VERIFIED, FAILED) and w.step == "loading weights"
    w.feed([READY_LINE, decode(2.5), decode(2.3)])
    assert w.state == READY
    w.feed([decode(2.4)])
    assert w.state == VERIFIED and w.summary() == "verified: accept len 2.40 after 3 batches"


def test_the_old_runs_lines_before_started_are_not_judged():
    w = Watch(MTP3)
    w.feed([ARGS_OFF, READY_LINE, "Main process exited, code=exited, status=1/FAILURE",
            "Started sglang-qwen.service - SGLang.", ARGS_ON, READY_LINE])
    assert w.state == READY


UNIT = "sglang-qwen.service"
OLD, NEW = Run(UNIT, "0ld", "4242"), Run(UNIT, "n3w", "4343")


def entry(n: int, message: str, *, run: Run | None = None, about: Run | None = OLD, **fields: str) -> str:
    """One entry as `journalctl --output=json` writes it: a line of a unit's process, stamped with
    its run, or PID 1's about a run of the unit (run None: INVOCATION_ID and UNIT, without the _)."""
    e = {"__CURSOR": f"s=ab;i={n:x};b=cd;m={n:x};t={n:x};x={n:x}", "MESSAGE": message}
    if run:
        e.update({"_SYSTEMD_UNIT": run.unit, "_SYSTEMD_INVOCATION_ID": run.invocation, "_PID": run.pid})
    else:
        e.update({"_PID": "1", "_SYSTEMD_UNIT": "init.scope", "UNIT": UNIT},
                 **({"INVOCATION_ID": about.invocation} if about else {}))
    e.update(fields)
    return json.dumps(e, separators=(",", ":"))


def test_the_new_run_is_seen_by_its_invocation_when_systemds_started_line_is_lost():
    # PID 1 drops a line journald does not take within 10 ms: the old run's last words, then the
    # new run's lines, and no `Started` between them
    w = Watch(MTP3, batches=3, replaced=OLD)
    w.feed([entry(1, "Stopping sglang-qwen.service - SGLang..."),
            entry(2, "[2026-03-09 16:00:00] SIGTERM received. Draining requests and shutting down...", run=OLD),
            entry(3, ARGS_OFF, run=OLD),  # the old run's late line is not the new run's
            entry(4, "Stopped sglang-qwen.service - SGLang.")])
    assert not w.started and w.step == "stopping" and w.state not in (FAILED, READY)
    w.feed([entry(5, ARGS_ON, run=NEW), entry(6, READY_LINE, run=NEW)])
    assert w.started and w.state == READY and w.seen["num_steps"] == 3
    # systemd's line, late behind the run's own first lines, changes nothing
    w.feed([entry(7, "Started sglang-qwen.service - SGLang.", about=NEW)]
           + [entry(8 + i, decode(2.4), run=NEW) for i in range(3)])
    assert w.state == VERIFIED, w.summary()
    assert w.cursor == "s=ab;i=a;b=cd;m=a;t=a;x=a"


@pytest.mark.parametrize("writer, message, about", [
    (Run("systemd-coredump@0-977-0.service", "c0re", "977"), "Process 4242 (python3) of user 0 dumped core.",
     {"COREDUMP_UNIT": UNIT, "COREDUMP_PID": "4242", "_UID": "0"}),
    (Run("systemd-journald.service", "j0urnald", "63"), "Suppressed 2113 messages from sglang-qwen.service",
     {"OBJECT_SYSTEMD_UNIT": UNIT, "OBJECT_PID": "4242", "OBJECT_SYSTEMD_INVOCATION_ID": "0ld", "_UID": "0"}),
])
def test_another_writers_line_about_the_unit_is_not_the_new_run(writer, message, about):
    # `journalctl --unit` also shows what systemd-coredump and journald say about the unit; they
    # stamp it with their own runs. The old run dying badly on its stop is not the new run failing.
    w = Watch(MTP3, batches=3, replaced=OLD)
    w.feed([entry(1, "Stopping sglang-qwen.service - SGLang..."), entry(2, message, run=writer, **about),
            entry(3, "sglang-qwen.service: Main process exited, code=dumped, status=11/SEGV"),
            entry(4, "sglang-qwen.service: Failed with result 'core-dump'.")])
    assert not w.started and w.state != FAILED, w.summary()
    w.feed([entry(5, "Started sglang-qwen.service - SGLang.", about=NEW), entry(6, ARGS_ON, run=NEW),
            entry(7, READY_LINE, run=NEW)] + [entry(8 + i, decode(2.4), run=NEW) for i in range(3)])
    assert w.state == VERIFIED, w.summary()


def test_the_old_runs_late_lines_are_not_the_new_runs_even_stamped_with_its_invocation():
    # journald reads a process's InvocationID by its unit's name: a line the old run wrote and
    # journald took after the new run began carries the new run's. The restore after a benchmark
    # of mtp3 brings back a server without speculation; the old run's last batches had accept len.
    late = Run(UNIT, NEW.invocation, OLD.pid)
    w = Watch({"algorithm": None}, batches=3, replaced=OLD)
    w.feed([entry(1, "Stopping sglang-qwen.service - SGLang..."), entry(2, decode(2.4), run=OLD),
            entry(3, decode(2.4), run=late)])
    assert not w.started
    w.feed([entry(4, "Started sglang-qwen.service - SGLang.", about=NEW), entry(5, ARGS_OFF, run=NEW),
            entry(6, READY_LINE, run=NEW), entry(7, decode(2.4), run=late), entry(8, decode(2.4), run=OLD)]
           + [entry(9 + i, decode(None), run=NEW) for i in range(3)])
    assert w.state == VERIFIED and w.summary() == "verified: speculation off, 3 decode batches without accept len"


def test_the_replaced_runs_own_start_after_the_mark_is_not_the_new_run():
    # A ctrl-c during a benchmark's apply, just after its restart: the restore's mark finds the
    # applied run just begun, its `Started` after the mark. That run's start, and its bad end when
    # the restore stops it, are not the restored run's.
    applied = Run(UNIT, "mtp3", "4444")
    w = Watch({"algorithm": None}, batches=3, replaced=applied)
    w.feed([entry(1, "Started sglang-qwen.service - SGLang.", about=applied), entry(2, ARGS_ON, run=applied),
            entry(3, "Stopping sglang-qwen.service - SGLang...", about=applied),
            entry(4, "sglang-qwen.service: Main process exited, code=killed, status=9/KILL", about=applied),
            entry(5, "sglang-qwen.service: Failed with result 'signal'.", about=applied)])
    assert not w.started and w.state != FAILED, w.summary()
    w.feed([entry(6, "Started sglang-qwen.service - SGLang.", about=NEW), entry(7, ARGS_OFF, run=NEW),
            entry(8, READY_LINE, run=NEW)] + [entry(9 + i, decode(None), run=NEW) for i in range(3)])
    assert w.state == VERIFIED, w.summary()


def test_systemds_lines_without_an_invocation_keep_the_old_rule():
    # a systemd that stamps no run on its own lines: its Started starts the new run, as before
    w = Watch({"algorithm": None}, batches=3, replaced=OLD)
    w.feed([entry(1, "Started sglang-qwen.service - SGLang.", about=None)])
    assert w.started


@pytest.mark.parametrize("lines, why", [
    ([ARGS_OFF], "the server runs algorithm none, asked for NEXTN (from server_args)"),
    ([ARGS_ON.replace("speculative_num_steps=3", "speculative_num_steps=2")],
     "the server runs num_steps 2, asked for 3 (from server_args)"),
    ([ARGS_ON, READY_LINE, decode(None), decode(None), decode(None)],
     "speculation is configured, yet 3 decode batches carry no accept len"),
    (["usage: launch_server.py [-h]", "launch_server.py: error: unrecognized arguments: --x",
      "sglang-qwen.service: Main process exited, code=exited, status=2/INVALIDARGUMENT"],
     "the unit failed: sglang-qwen.service: Main process exited, code=exited, status=2/INVALIDARGUMENT "
     "(launch_server.py: error: unrecognized arguments: --x)"),
    (["Scheduled restart job, restart counter is at 3."], "the unit failed: Scheduled restart job, restart counter is at 3."),
])
def test_failures_say_why(lines, why):
    w = Watch(MTP3)
    w.feed(["Started sglang-qwen.service - SGLang.", *lines])
    assert w.state == FAILED and w.reason == why


def test_off_fails_on_a_batch_with_accept_len_and_passes_without():
    w = Watch({"algorithm": None})
    w.feed(["Started x.", ARGS_OFF, READY_LINE, decode(None), decode(2.0)])
    assert w.state == FAILED and "speculation is off, yet a decode batch carries accept len 2.00" == w.reason
    w = Watch({"algorithm": None})
    w.feed(["Started x.", ARGS_OFF, READY_LINE] + [decode(None)] * 3)
    assert w.state == VERIFIED and "speculation off" in w.summary()


def test_an_idle_server_is_judged_by_its_arguments():
    w = Watch(MTP3)
    w.feed(["Started x.", ARGS_ON, READY_LINE])
    w.idle_verdict()
    assert w.state == VERIFIED and "no decode batch yet" in w.summary()


def test_an_idle_server_is_verified_at_its_metrics_word_and_says_so():
    w = Watch(MTP3)
    w.feed(["Started x.", ARGS_ON, READY_LINE])
    w.http_idle()
    assert w.state == VERIFIED and "idle: no request running or waiting per /metrics" in w.summary()
    w = Watch(MTP3)  # without the settings it reported there is nothing to judge by yet
    w.feed(["Started x.", READY_LINE])
    w.http_idle()
    assert w.state == READY


def test_pydantics_detail_is_the_reason_not_its_header():
    # vLLM 0.32.0 refusing a flag in VllmConfig's validation (vllm/config/vllm.py), as its unit
    # logged it in the engine tier: the first line names only the model
    w = Watch({"algorithm": None}, engine="vllm")
    w.feed(["Started vllm.service.", "Traceback (most recent call last):",
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig",
            "  Value error, --per-request-spec-decode-metrics requires speculative decoding to be enabled "
            "(via --speculative-config). [type=value_error, input_value=ArgsKwargs((), {}), input_type=ArgsKwargs]",
            "    For further information visit https://errors.pydantic.dev/2.14/v/value_error",
            "vllm.service: Main process exited, code=exited, status=1/FAILURE"])
    assert w.state == FAILED
    assert w.reason.endswith("(pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig: "
                             "Value error, --per-request-spec-decode-metrics requires speculative decoding to be "
                             "enabled (via --speculative-config).)"), w.reason


def test_vllm_is_read_from_speculative_config():
    w = Watch({"algorithm": "NEXTN", "num_steps": 2}, engine="vllm")
    w.feed(["Started vllm.service.",
            "INFO 09-09 05:27:57 [core.py:74] Initializing a V1 LLM engine (v0.10.1) with config: model='m', "
            "speculative_config=SpeculativeConfig(method='mtp', model='m', num_spec_tokens=2), tokenizer='m'",
            "INFO 09-09 05:28:30 [launcher.py:37] Application startup complete."])
    assert w.state == READY
    w = Watch({"algorithm": "NEXTN", "num_steps": 2}, engine="vllm")
    w.feed(["Started vllm.service.", "INFO 09-09 05:27:57 [core.py:74] Initializing ... speculative_config=None, x=1"])
    assert w.state == FAILED and "algorithm none" in w.reason


def test_mismatch_treats_nextn_as_eagle_and_ignores_counts_not_asked():
    assert mismatch({"algorithm": "NEXTN"}, {"algorithm": "EAGLE", "num_steps": 3}) is None
    assert mismatch({"algorithm": None}, {"algorithm": None}) is None
    assert mismatch({"algorithm": "EAGLE3"}, {"algorithm": "EAGLE"}) == "the server runs algorithm EAGLE, asked for EAGLE3"


def test_target_argvs_by_value():
    t = SystemdTarget(None, "sglang-qwen", sudo=True, host="gpu1")
    d = "/etc/systemd/system/sglang-qwen.service.d"
    assert t.commands_for("[Service]\n") == [
        ["sudo", "-n", "--", "mkdir", "/run/lock/mtptui-sglang-qwen.service"],
        ["sudo", "-n", "--", "tee", "/run/lock/mtptui-sglang-qwen.service/owner"],
        ["sudo", "-n", "--", "mkdir", "-p", "--", d],
        ["sudo", "-n", "--", "tee", "--", f"{d}/.50-mtptui-spec.conf.mtptui-tmp"],
        ["sudo", "-n", "--", "mv", "-f", "--", f"{d}/.50-mtptui-spec.conf.mtptui-tmp", f"{d}/50-mtptui-spec.conf"],
        ["sudo", "-n", "--", "systemctl", "daemon-reload"],
        ["sudo", "-n", "--", "systemctl", "restart", "--no-block", "--", "sglang-qwen.service"],
        ["sudo", "-n", "--", "rm", "-rf", "--", "/run/lock/mtptui-sglang-qwen.service"]]
    t = SystemdTarget(None, "sglang-qwen.service")
    assert t.commands_for(None)[2] == ["rm", "-f", "--", f"{d}/50-mtptui-spec.conf"]
    assert ["systemctl", "daemon-reload"] not in t.commands_for(None, write=False)


@pytest.mark.parametrize("unit", ["../etc/passwd", "a b", "x;y", "x.socket", "a/b"])
def test_unit_names_that_could_escape_a_path_are_refused(unit):
    from mtptui.control.errors import ControlError

    with pytest.raises(ControlError):
        SystemdTarget(None, unit)


def test_last_start_from_the_journal():
    def e(ts, msg):
        return json.dumps({"__REALTIME_TIMESTAMP": str(int(ts * 1e6)), "MESSAGE": msg})

    lines = [e(100, "Started a.service - A."), e(160, "[x] The server is fired up and ready to roll!"),
             e(200, "Started a.service - A."), e(290.5, "[x] The server is fired up and ready to roll!"),
             e(300, "Started a.service - A.")]
    assert last_start_seconds(lines) == 90.5
    assert last_start_seconds([e(1, "Started a.")]) is None


def test_plan_preview_shows_commands_diff_and_downtime():
    plan = Plan(host="gpu1", unit="sglang-qwen.service", action=APPLY, profile=BUILTINS["mtp1"], engine="sglang",
                old_argv=["python3", "-m", "sglang.launch_server", "--tp", "4"],
                new_argv=["python3", "-m", "sglang.launch_server", "--tp", "4", "--speculative-algorithm", "NEXTN",
                          "--speculative-num-steps", "1"],
                old_dropin=None, new_dropin="[Service]\n", commands=[["systemctl", "daemon-reload"]],
                last_start_s=612.0, prod=True, where="ops@10.0.0.5")
    text = "\n".join(plan.preview_lines())
    assert "host:     gpu1 (ops@10.0.0.5)  [prod]" in text
    assert "downtime: last start 10 min 12 s (Started → ready)\n" in text
    assert "  systemctl daemon-reload" in text
    assert "  + --speculative-algorithm NEXTN\n  + --speculative-num-steps 1" in text
    assert plan.title() == "gpu1 · sglang-qwen.service: → mtp1"


def test_a_restart_scheduled_for_a_run_that_ended_before_the_mark_is_not_the_new_runs():
    # Restart=on-failure, RestartSec=1: the failed run's restart timer ran out as the rollback
    # marked and restarted the unit, so the run it replaced (`replaced`) is the one systemd began
    # then, and PID 1's "Scheduled restart job" about the failed run (never seen by the watch) came
    # after the mark. The rollback read it as its own run looping and gave up (CI, 2026-12-07).
    failed, began = Run(UNIT, "fa1l", "4141"), Run(UNIT, "0ld", "4242")
    w = Watch(MTP3, batches=3, replaced=began)
    w.feed([entry(1, "sglang-qwen.service: Scheduled restart job, restart counter is at 1.", about=failed),
            entry(2, "Stopping sglang-qwen.service - SGLang...", about=began)])
    assert w.state != FAILED, w.summary()
    w.feed([entry(3, "Started sglang-qwen.service - SGLang.", about=NEW), entry(4, ARGS_ON, run=NEW),
            entry(5, READY_LINE, run=NEW)] + [entry(6 + i, decode(2.4), run=NEW) for i in range(3)])
    assert w.state == VERIFIED, w.summary()


def test_the_new_run_looping_is_still_a_failure():
    w = Watch(MTP3, batches=3, replaced=OLD)
    w.feed([entry(1, "Started sglang-qwen.service - SGLang.", about=NEW), entry(2, ARGS_ON, run=NEW),
            entry(3, "sglang-qwen.service: Scheduled restart job, restart counter is at 1.", about=NEW)])
    assert w.state == FAILED and "Scheduled restart job" in w.reason, w.summary()
