"""Adaptive speculation as a profile (issue 46): SGLang's --speculative-adaptive (0.5.11+) and
vLLM's per-batch-size schedule in --speculative-config (0.24.0+), checked by each version's rules
(tests/realcode holds them to the releases' own code), written into the argv, read back from an
ExecStart, a settings line and /server_info, held by verify, and shown on the settings line with
the engine's fallback when it turns them off."""

from __future__ import annotations

import json
import shlex

import pytest

from mtptui.config import ConfigError, parse_config
from mtptui.config.profile import Profile
from mtptui.control.launch import apply_profile, context_of, effective_flags, spec_flags
from mtptui.control.probe import settings_of
from mtptui.control.profiles import ProfileError, adaptive_off_reason, check_profile
from mtptui.control.session import profile_of
from mtptui.control.verify import mismatch
from mtptui.core.epochs import adaptive_words, spec_settings
from mtptui.core.parse.events import server_args, vllm_args

SGL = "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 2"
VLLM = "vllm serve Qwen/Qwen3-8B"
ADAPTIVE = Profile("mtp3a", algorithm="NEXTN", num_steps=3, topk=1, num_draft_tokens=4, adaptive=True)
SCHEDULE = Profile("mtp3s", algorithm="NEXTN", num_steps=3, schedule=((1, 8, 3), (9, 64, 1), (65, 4096, 0)))


def sglang(flags: str = "", version: str = "0.5.23") -> tuple[list[str], object]:
    argv = shlex.split(f"{SGL} {flags}")
    return argv, context_of(argv, version)


# -- the config -------------------------------------------------------------------------------

def test_the_config_says_adaptive_and_a_schedule():
    c = parse_config('[profiles.a]\nalgorithm = "NEXTN"\nnum_steps = 3\ntopk = 1\nnum_draft_tokens = 4\n'
                     'adaptive = true\nadaptive_config = "/etc/sglang/adaptive.json"\n'
                     '[profiles.s]\nalgorithm = "MTP"\nnum_steps = 3\nschedule = [[1, 8, 3], [9, 64, 1], [65, 4096, 0]]\n')
    assert c.profiles["a"].adaptive and c.profiles["a"].adaptive_config == "/etc/sglang/adaptive.json"
    assert c.profiles["s"].schedule == SCHEDULE.schedule


@pytest.mark.parametrize("body,said", [
    ("schedule = [[1, 8]]", "each entry must be [first batch size, last batch size, K]"),
    ("schedule = []", "must be a list of [first batch size, last batch size, K]"),
    ("schedule = [[1, 8, -1]]", "schedule"),
    ("adaptive = 1", "must be true or false"),
])
def test_the_config_refuses_what_is_no_schedule(body, said):
    with pytest.raises(ConfigError, match=said.replace("[", r"\[").replace("]", r"\]")):
        parse_config(f'[profiles.x]\nalgorithm = "NEXTN"\nnum_steps = 3\n{body}\n')


def test_an_off_profile_may_not_adapt():
    with pytest.raises(ConfigError, match="needs an algorithm"):
        parse_config("[profiles.x]\nadaptive = true\n")


# -- SGLang: --speculative-adaptive -----------------------------------------------------------

def test_an_adaptive_profile_writes_its_flags_and_reads_back():
    argv, ctx = sglang()
    check_profile(ADAPTIVE, ctx, "sglang")
    new = apply_profile(argv, ADAPTIVE, "0.5.23")
    assert new[-9:] == ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3", "--speculative-eagle-topk",
                        "1", "--speculative-num-draft-tokens", "4", "--speculative-adaptive"]
    assert spec_flags(new, "0.5.23")["adaptive"] is True
    assert effective_flags(new, "0.5.23")["adaptive"] is True
    # the switch takes no value: the word after it is the next flag's, or the model's
    argv2 = shlex.split(f"{SGL} --speculative-adaptive --speculative-adaptive-config /a.json --port 30001")
    read = spec_flags(argv2, "0.5.23")
    assert read["adaptive"] is True and read["adaptive_config"] == "/a.json"
    # a profile without it takes it away, and the run is expected with it off
    plain = apply_profile(argv2, Profile("mtp3", algorithm="NEXTN", num_steps=3, topk=1, num_draft_tokens=4), "0.5.23")
    assert "--speculative-adaptive" not in plain and "--port" in plain
    assert effective_flags(plain, "0.5.23")["adaptive"] is False
    assert "adaptive" not in {k for k, v in effective_flags(plain, "0.5.10").items() if v is not None}


def test_adaptive_config_is_written_beside_the_switch():
    p = Profile("a", algorithm="EAGLE3", num_steps=3, topk=1, num_draft_tokens=4, draft_model_path="/d",
                adaptive=True, adaptive_config="/etc/a.json")
    assert apply_profile(sglang()[0], p, "0.5.23")[-3:] == ["--speculative-adaptive", "--speculative-adaptive-config",
                                                          "/etc/a.json"]


@pytest.mark.parametrize("profile,flags,version,said", [
    (ADAPTIVE, "", "0.5.10", "SGLang 0.5.10 has no --speculative-adaptive (it came in 0.5.11)"),
    (ADAPTIVE, "", "0.5.11", "SGLang 0.5.11 adapts only without its overlap scheduler (spec v2): add "
                             "--disable-overlap-schedule"),
    (ADAPTIVE, "--dp 2 --enable-dp-attention", "0.5.23", "fall back to static steps with --speculative-adaptive: "
                                                         "DP attention"),
    (ADAPTIVE, "--enable-two-batch-overlap", "0.5.23", "two-batch overlap"),
    (ADAPTIVE, "--enable-pdmux", "0.5.23", "PD multiplexing"),
    (Profile("t", algorithm="EAGLE", num_steps=5, topk=4, num_draft_tokens=8, draft_model_path="/d", adaptive=True),
     "", "0.5.23", "topk 4 (only topk 1 adapts)"),
    (Profile("n", algorithm="NGRAM", adaptive=True), "", "0.5.23", "NGRAM (only EAGLE, EAGLE3 and NEXTN adapt)"),
    (Profile("auto", algorithm="NEXTN", adaptive=True), "", "0.5.23", "SGLang picks the counts"),
    (Profile("c", algorithm="NEXTN", num_steps=3, topk=1, num_draft_tokens=4, adaptive_config="/a.json"), "",
     "0.5.23", "adaptive_config without adaptive = true"),
    (SCHEDULE, "", "0.5.23", "schedule is vLLM's"),
])
def test_sglang_refuses_or_would_fall_back(profile, flags, version, said):
    _, ctx = sglang(flags, version)
    with pytest.raises(ProfileError, match=said.replace("(", r"\(").replace(")", r"\)")):
        check_profile(profile, ctx, "sglang")


def test_0_5_11_adapts_on_spec_v1():
    _, ctx = sglang("--disable-overlap-schedule", "0.5.11")
    check_profile(ADAPTIVE, ctx, "sglang")
    check_profile(Profile("a", algorithm="NEXTN", num_steps=3, topk=1, num_draft_tokens=4, adaptive=True,
                          env=(("SGLANG_ENABLE_SPEC_V2", "false"),)), sglang("", "0.5.11")[1], "sglang")
    check_profile(ADAPTIVE, sglang("", "0.5.12")[1], "sglang")


def test_the_fallback_reasons_follow_sglangs():
    assert adaptive_off_reason("NEXTN", 1, frozenset()) is None  # NEXTN runs as EAGLE
    assert adaptive_off_reason("EAGLE3", None, ()) is None
    assert adaptive_off_reason("STANDALONE", 1, ()) is not None


# -- vLLM: num_speculative_tokens_per_batch_size ----------------------------------------------

def test_a_schedule_goes_into_the_speculative_config_and_back():
    argv = shlex.split(VLLM)
    check_profile(SCHEDULE, context_of(argv, "0.32.0"), "vllm")
    new = apply_profile(argv, SCHEDULE, "0.32.0")
    config = json.loads(new[new.index("--speculative-config") + 1])
    assert config == {"method": "mtp", "num_speculative_tokens": 3,
                      "num_speculative_tokens_per_batch_size": [[1, 8, 3], [9, 64, 1], [65, 4096, 0]]}
    assert spec_flags(new)["schedule"] == SCHEDULE.schedule
    # a profile without a schedule drops the unit's, though it keeps the operator's other keys
    kept = apply_profile(shlex.split(VLLM) + ["--speculative-config", json.dumps({**config, "disable_padded_drafter_batch": True})],
                         Profile("mtp2", algorithm="NEXTN", num_steps=2), "0.32.0")
    again = json.loads(kept[kept.index("--speculative-config") + 1])
    assert "num_speculative_tokens_per_batch_size" not in again and again["disable_padded_drafter_batch"] is True


@pytest.mark.parametrize("schedule,steps,flags,version,said", [
    (((1, 8, 3),), 3, "", "0.23.0", "vLLM 0.23.0 has no num_speculative_tokens_per_batch_size"),
    (((1, 8, 3),), None, "", "0.32.0", "a schedule needs num_steps"),
    (((2, 8, 3),), 3, "", "0.32.0", "must start at batch size 1"),
    (((1, 8, 3), (8, 16, 1)), 3, "", "0.32.0", "ranges overlap at 8"),
    (((1, 8, 3), (16, 9, 1)), 3, "", "0.32.0", "16-9 is not a range"),
    (((1, 8, 4),), 3, "", "0.32.0", "K 4 for 1-8 is above num_steps 3"),
    (((1, 8, 3),), 3, "--data-parallel-size 2", "0.32.0", "drops the schedule with data parallel 2"),
])
def test_vllm_refuses_a_schedule_it_would_refuse_or_change(schedule, steps, flags, version, said):
    p = Profile("s", algorithm="NEXTN", num_steps=steps, schedule=schedule)
    with pytest.raises(ProfileError, match=said):
        check_profile(p, context_of(shlex.split(f"{VLLM} {flags}"), version), "vllm")


def test_vllm_takes_gaps_in_a_schedule_and_says_adaptive_is_sglangs():
    p = Profile("s", algorithm="NEXTN", num_steps=3, schedule=((1, 8, 3), (32, 64, 0)))  # 9-31 carry K 3
    check_profile(p, context_of(shlex.split(VLLM), "0.32.0"), "vllm")
    with pytest.raises(ProfileError, match="vLLM adapts by a schedule"):
        check_profile(ADAPTIVE, context_of(shlex.split(VLLM), "0.32.0"), "vllm")


# -- what the server says, and verify ---------------------------------------------------------

def test_the_settings_line_and_server_info_say_adaptive():
    line = ("server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=2, speculative_algorithm='EAGLE', "
            "speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4, "
            "speculative_adaptive=False, enable_two_batch_overlap=True, dp_size=1)")
    got = server_args(line)
    assert got["adaptive"] is False and got["enable_two_batch_overlap"] is True
    info = settings_of({"speculative_algorithm": "EAGLE", "speculative_adaptive": True, "enable_dp_attention": False})
    assert info["adaptive"] is True and info["enable_dp_attention"] is False


def test_vllms_args_line_says_its_schedule():
    line = ("non-default args: {'model': 'Qwen/Qwen3-8B', 'data_parallel_size': 2, 'speculative_config': "
            "{'method': 'mtp', 'num_speculative_tokens': 3, 'num_speculative_tokens_per_batch_size': [[1, 8, 3], "
            "[9, 4096, 0]]}}")
    got = vllm_args(line)
    assert got["schedule"] == [[1, 8, 3], [9, 4096, 0]] and got["dp_size"] == 2


def test_verify_holds_a_run_that_fell_back_to_static_steps():
    expect = effective_flags(apply_profile(sglang()[0], ADAPTIVE, "0.5.23"), "0.5.23")
    seen = {"algorithm": "EAGLE", "num_steps": 3, "topk": 1, "num_draft_tokens": 4, "adaptive": False}
    assert mismatch(expect, seen) == "the server runs adaptive False, asked for True"
    assert mismatch(expect, {**seen, "adaptive": True}) is None
    assert mismatch(expect, {**seen, "adaptive": None}) is None  # a version that does not say
    sched = {"algorithm": "NEXTN", "num_steps": 3, "schedule": SCHEDULE.schedule}
    assert mismatch(sched, {**sched, "schedule": [list(e) for e in SCHEDULE.schedule]}) is None
    assert mismatch(sched, {**sched, "schedule": [[1, 4096, 3]]}) is not None


def test_a_previous_run_that_adapted_is_put_back_adapting():
    p = profile_of({"algorithm": "EAGLE", "num_steps": 3, "topk": 1, "num_draft_tokens": 4, "adaptive": True}, ADAPTIVE)
    assert p.name == "previous" and p.adaptive
    v = profile_of({"algorithm": "NEXTN", "num_steps": 3, "schedule": [[1, 8, 3]]}, SCHEDULE)
    assert v.schedule == ((1, 8, 3),)


# -- the settings line, and the badge where the engine turns it off ---------------------------

def test_the_settings_line_says_how_it_adapts_and_when_it_is_off():
    base = {"algorithm": "EAGLE", "num_steps": 3, "topk": 1, "num_draft_tokens": 4}
    assert spec_settings({**base, "adaptive": True}).endswith("draft=4 adaptive")
    assert adaptive_words({**base, "adaptive": True, "enable_dp_attention": True}) == "adaptive (OFF: DP attention)"
    assert adaptive_words({**base, "adaptive": True, "enable_two_batch_overlap": True}) == \
        "adaptive (OFF: two-batch overlap)"
    assert adaptive_words({**base, "adaptive": False}) is None
    assert adaptive_words({"algorithm": "NEXTN", "schedule": [[1, 8, 3], [9, 64, 0]], "dp_size": 1}) == \
        "schedule=1-8:3,9-64:0"
    assert adaptive_words({"algorithm": "NEXTN", "schedule": [[1, 8, 3]], "dp_size": 2}) == \
        "schedule=1-8:3 (OFF: data parallel 2)"


def test_the_profile_picker_tells_adaptive_from_static():
    from mtptui.config.profile import BUILTINS
    from mtptui.control.profiles import matches

    running = {"algorithm": "EAGLE", "num_steps": 3, "topk": 1, "num_draft_tokens": 4, "adaptive": True}
    assert matches(ADAPTIVE, running) and not matches(BUILTINS["mtp3"], running)
    assert matches(BUILTINS["mtp3"], {**running, "adaptive": False}) and not matches(ADAPTIVE, {**running, "adaptive": False})
    assert matches(BUILTINS["mtp3"], {**running, "adaptive": None})  # a version that does not say
    vllm = {"algorithm": "NEXTN", "num_steps": 3, "schedule": [list(e) for e in SCHEDULE.schedule]}
    assert matches(SCHEDULE, vllm) and not matches(Profile("n3", algorithm="NEXTN", num_steps=3), vllm)


def test_what_mtptui_accepts_the_simulator_runs_adapting():
    """The simulator (which the control tests run) and the profile check agree: an adaptive
    profile mtptui accepts adapts there; one it refuses for a fallback runs static there."""
    from mtptui.sim import flags as sim_flags
    from mtptui.sim.scenario import config_from_argv

    base = ["--model-path", "Qwen/Qwen3-8B"]
    cases = [("", ADAPTIVE), ("--tp 2 --dp 2 --enable-dp-attention", ADAPTIVE),
             ("", Profile("tree", algorithm="EAGLE", num_steps=5, topk=4, num_draft_tokens=8,
                          draft_model_path="/d", adaptive=True)),
             ("--disable-overlap-schedule", ADAPTIVE)]
    for version in ("0.5.12", "0.5.19", "0.5.23"):
        for extra, p in cases:
            argv = shlex.split(f"python3 -m mtptui.sim {' '.join(base)} {extra} --sim-version {version}")
            try:
                check_profile(p, context_of(argv, version), "sglang")
                ours = True
            except ProfileError:
                ours = False
            new = apply_profile(argv, p, version)
            cfg = config_from_argv(new[3:])
            assert sim_flags.spec_truth(cfg.args)["adaptive"] is ours, (version, extra, p.name)


def test_an_adapting_exec_start_is_said_and_put_back_adapting():
    from mtptui.control.session import runs_what

    argv = apply_profile(sglang()[0], ADAPTIVE, "0.5.23")
    assert runs_what(spec_flags(argv, "0.5.23")) == "NEXTN num_steps=3 topk=1 num_draft_tokens=4 adaptive"
    p = profile_of(spec_flags(argv, "0.5.23"), ADAPTIVE)
    assert p.name == "previous" and p.adaptive  # not the built-in mtp3, which would drop it
    plain = apply_profile(sglang()[0], Profile("x", algorithm="NEXTN", num_steps=3, topk=1, num_draft_tokens=4), "0.5.23")
    assert runs_what(spec_flags(plain, "0.5.23")) == "mtp3"
