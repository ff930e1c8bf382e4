"""The schedule by load a tune proposes from its measurements at several concurrencies (issue 46
item 3; prove/schedule.py): the argmax per bucket kept only where separated from the runner-up,
else the static winner, neighbours with one K merged; what it becomes for vLLM (a per-batch-size
schedule the real rules accept) and SGLang (adaptive tiers), and bench's schedule-against-static
lines. Synthetic rows, as prove.bench makes them (no host)."""

from __future__ import annotations

import json
import random

import pytest

from mtptui.commands.bench import from_tune
from mtptui.control import launch
from mtptui.control.profiles import BUILTINS, ProfileError, check_profile
from mtptui.errors import UsageError
from mtptui.prove import schedule, tune

VLLM = ["vllm", "serve", "deepseek-ai/DeepSeek-V3"]
SGLANG = ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B"]
CANDIDATES = tune.candidates([BUILTINS[n] for n in ("off", "mtp1", "mtp2", "mtp3")], lambda p: True)


def row(name: str, c: int, tok_s: float, n: int = 32, spread: float = 0.02, rnd: int = 1) -> dict:
    """A row of n requests of 64 tokens at about tok_s each at concurrency c."""
    rng = random.Random(f"{name}{c}{rnd}")
    secs = [64 / (tok_s * (1 + rng.gauss(0, spread))) for _ in range(n)]
    return {"profile": name, "concurrency": c, "requests": n, "output_tok_s": tok_s, "errors": 0, "round": rnd,
            "per_request": {"tokens": [64] * n, "seconds": secs}}


def rows_of(table: dict[int, dict[str, float]], **kw) -> list[dict]:
    return [row(name, c, v, **kw) for c, by in table.items() for name, v in by.items()]


def check(version: str, argv: list[str], engine: str):
    ctx = launch.context_of(argv, version)
    return lambda p: check_profile(p, ctx, engine)


# mtp3 wins alone, mtp1 at a middle load, off under heavy load: each separated
LOADS = {1: {"off": 60, "mtp1": 90, "mtp3": 120, "mtp3-top4": 125},
         8: {"off": 400, "mtp1": 560, "mtp3": 470},
         64: {"off": 2400, "mtp1": 1900, "mtp3": 1500}}


def test_buckets_are_geometric_midpoints_from_1():
    assert schedule.bounds([8, 1, 64]) == [(1, 2), (3, 22), (23, 64)]
    assert schedule.bounds([4, 5]) == [(1, 4), (5, 5)]


def test_vllm_gets_the_argmax_per_bucket_as_a_schedule_its_real_rules_accept():
    s = schedule.propose(rows_of(LOADS), CANDIDATES, 8, "vllm", (0, 32, 0), check("0.32.0", VLLM, "vllm"))
    assert s["static"] == "mtp1" and s["static_k"] == 1
    # the tree is ahead at c=1 but no engine switches to a tree by load: mtp3 leads that bucket
    assert [(b["concurrency"], b["runs"], b["k"], b["separated"]) for b in s["buckets"]] == \
        [(1, "mtp3", 3, True), (8, "mtp1", 1, True), (64, "off", 0, True)]
    assert s["ranges"] == [[1, 2, 3], [3, 22, 1], [23, 64, 0]]
    p = schedule.profile_of(s["profile"])
    assert (p.algorithm, p.num_steps, p.schedule) == ("NEXTN", 3, ((1, 2, 3), (3, 22, 1), (23, 64, 0)))
    assert launch.profile_flags(p, "vllm", (0, 32, 0))  # said to vLLM without complaint
    lo, hi = s["buckets"][0]["change_lo_pct"], s["buckets"][0]["change_hi_pct"]
    assert 0 < lo < s["buckets"][0]["change_pct"] < hi
    text = "\n".join(schedule.evidence_lines(s))
    assert "c=1    batch 1-2" in text and "mtp3 ahead of mtp1: +33.3%" in text
    assert "[[1, 2, 3], [3, 22, 1], [23, 64, 0]]" in text and "proposed: schedule-mtp3" in text


def test_a_bucket_not_separated_runs_the_static_winner_and_merges_with_its_neighbour():
    near = {**LOADS, 1: {"off": 60, "mtp1": 118, "mtp3": 120}}
    s = schedule.propose(rows_of(near, spread=0.2), CANDIDATES, 8, "vllm", (0, 32, 0))
    first = s["buckets"][0]
    assert first["leader"] == "mtp3" and not first["separated"] and first["runs"] == "mtp1"
    assert s["ranges"] == [[1, 22, 1], [23, 64, 0]]


def test_one_k_everywhere_proposes_nothing():
    flat = {c: {"off": 10 * c, "mtp1": 15 * c, "mtp3": 11 * c} for c in (1, 8, 64)}
    s = schedule.propose(rows_of(flat), CANDIDATES, 8, "vllm", (0, 32, 0))
    assert s["profile"] is None and s["ranges"] == [[1, 64, 1]] and "every bucket runs mtp1" in s["why"]
    assert schedule.propose(rows_of({8: LOADS[8]}), CANDIDATES, 8, "vllm", None) is None  # one load: no schedule


def test_a_version_without_dynamic_sd_is_told_not_applied():
    s = schedule.propose(rows_of(LOADS), CANDIDATES, 8, "vllm", (0, 20, 0), check("0.20.0", VLLM, "vllm"))
    assert s["profile"] is None and "Dynamic SD came in 0.24.0" in s["why"]
    assert "nothing to apply" in "\n".join(schedule.evidence_lines(s))


def test_sglang_gets_the_tiers_that_win_somewhere_as_an_adaptive_profile():
    s = schedule.propose(rows_of(LOADS), CANDIDATES, 8, "sglang", (0, 5, 16), check("0.5.16", SGLANG, "sglang"))
    assert s["tiers"] == [0, 1, 3] and s["adaptive_config"] == {"1": {"candidate_steps": [0, 1, 3]}}
    p = schedule.profile_of(s["profile"])
    assert (p.adaptive, p.num_steps, p.topk, p.num_draft_tokens) == (True, 3, 1, 4)
    assert "--speculative-adaptive" in launch.profile_flags(p, "sglang", (0, 5, 16))
    # the config file's shape and tier 0 follow the version (adaptive_spec_params.py)
    assert schedule.sglang_config([0, 1, 3], (0, 5, 12)) == {"candidate_steps": [1, 3]}
    assert schedule.sglang_config([0, 1, 3], (0, 5, 13)) == {"1": {"candidate_steps": [1, 3]}}
    assert schedule.sglang_config([0, 3], (0, 5, 12)) is None  # one tier left: 0.5.11-0.5.12 assert 2
    assert schedule.sglang_config([0, 3], (0, 5, 13)) == {"1": {"candidate_steps": [3]}}


def test_sglang_from_0_5_13_refuses_a_first_tier_outside_its_own():
    two = {1: {"off": 60, "mtp2": 120, "mtp1": 90}, 64: {"off": 2400, "mtp2": 1500, "mtp1": 1900}}
    s = schedule.propose(rows_of(two), CANDIDATES, 1, "sglang", (0, 5, 16))
    assert s["tiers"] == [0, 2] and s["profile"] is None and "not 2" in s["why"]
    s = schedule.propose(rows_of(two), CANDIDATES, 1, "sglang", (0, 5, 12))  # 0.5.12 adds it to its tiers
    assert schedule.profile_of(s["profile"]).num_steps == 2
    # DEFAULT_ADAPTIVE_CONFIG's union by version (adaptive_spec_params.py of each release)
    assert [schedule.sglang_default_tiers(v) for v in ((0, 5, 10), (0, 5, 13), (0, 5, 19), (0, 5, 20), None)] == \
        [(), (1, 3, 7), (0, 1, 3, 7), (0, 1, 3, 5, 7), (0, 1, 3, 5, 7)]


def test_the_last_round_decides_and_errors_leave_a_candidate_out():
    old = rows_of({1: {"off": 60, "mtp1": 200}, 64: {"off": 2400, "mtp1": 1900}})
    new = rows_of({1: {"off": 60, "mtp1": 90, "mtp3": 120}, 64: {"off": 2400, "mtp1": 1900, "mtp3": 1500}}, rnd=2)
    broken = {**row("mtp3", 64, 9999, rnd=2), "errors": 3}
    s = schedule.propose(old + new + [broken], CANDIDATES, 1, "vllm", None)
    assert [b["runs"] for b in s["buckets"]] == ["mtp3", "off"]


def test_halving_at_several_loads_keeps_a_candidate_that_leads_anywhere():
    rows = rows_of({1: {"a": 160, "b": 158, "c": 150, "off": 70}, 64: {"a": 1000, "b": 990, "c": 980, "off": 1400}},
                   n=16, spread=0.05)
    d = tune.decide_loads(rows, 1)
    assert d.leader == "a" and "off" in d.kept and not d.stop  # clearly worse at c=1, the best at c=64
    alone = tune.decide([r for r in rows if r["concurrency"] == 1])
    assert "off" in alone.dropped


def test_bench_measures_the_schedule_against_the_static_from_the_tunes_json(tmp_path):
    s = schedule.propose(rows_of(LOADS), CANDIDATES, 8, "vllm", (0, 32, 0))
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"schedule": s}))
    profiles, loads = from_tune(str(f))
    assert [p.name for p in profiles] == ["mtp1", "schedule-mtp3"] and loads == [1, 8, 64]
    assert profiles[0] == BUILTINS["mtp1"]
    report = {"results": [row("mtp1", 1, 90), row("schedule-mtp3", 1, 120), row("mtp1", 8, 560),
                          row("schedule-mtp3", 8, 558)]}
    lines = schedule.against_static(report, "schedule-mtp3", "mtp1")
    assert lines[1].startswith("  c=1: +33.3% (") and lines[1].endswith(": ahead")
    assert lines[2].endswith("level (not separated)")
    f.write_text(json.dumps({"schedule": {**s, "profile": None, "why": "every bucket runs mtp1"}}))
    with pytest.raises(UsageError, match="proposed no schedule: every bucket runs mtp1"):
        from_tune(str(f))
    f.write_text("{}")
    with pytest.raises(UsageError, match="no schedule in it"):
        from_tune(str(f))


def test_a_profile_goes_through_json_and_back():
    p = schedule.profile_of(schedule.profile_json(BUILTINS["mtp3"]))
    assert p == BUILTINS["mtp3"]
    with pytest.raises(ProfileError):
        schedule.profile_of({"name": "x", "colour": "red"})
