"""The tune's halving on synthetic measurements (no host): which candidates a round drops, when
it stops, what the next round would cost, and that it measures fewer points than the grid."""

from __future__ import annotations

import random

from mtptui.control import launch
from mtptui.control.profiles import BUILTINS
from mtptui.prove import tune

ARGV = ["/usr/bin/python3", "-m", "mtptui.sim", "--model-path", "Qwen/Qwen3.5-397B-A17B", "--tp", "8"]
ALLOWED = tune.allowed_on(launch.context_of(ARGV, None), "sglang")
PROFILES = [BUILTINS[n] for n in ("off", "mtp1", "mtp2", "mtp3")]


def row(name: str, tok_s: float, n: int = 16, spread: float = 0.05, seed: int = 0, errors: int = 0) -> dict:
    """A round's row: n requests of 64 tokens at about tok_s each (their speeds spread by `spread`)."""
    rng = random.Random(f"{name}{seed}")
    secs = [64 / (tok_s * (1 + rng.gauss(0, spread))) for _ in range(n)]
    return {"profile": name, "concurrency": 1, "requests": n, "output_tok_s": tok_s, "errors": errors,
            "per_request": {"tokens": [64] * n, "seconds": secs}}


def test_the_candidates_are_the_profiles_and_their_neighbourhood_the_server_allows():
    c = tune.candidates(PROFILES, ALLOWED)
    names = [p.name for p in c]
    assert names[:4] == ["off", "mtp1", "mtp2", "mtp3"] and "mtp4" in names and "mtp3-top4" in names
    assert len(set(names)) == len(names)
    assert all(p.num_draft_tokens == p.num_steps + 1 for p in c if p.on)
    # trtllm_mha refuses topk > 1: the control path's rule leaves only chains
    chains_only = tune.allowed_on(launch.context_of(ARGV + ["--attention-backend", "trtllm_mha"], None), "sglang")
    assert all((p.topk or 1) == 1 for p in tune.candidates(PROFILES, chains_only))


def test_the_grid_it_replaces_is_larger():
    c, g = tune.candidates(PROFILES, ALLOWED), tune.grid(PROFILES, ALLOWED)
    assert (len(c), len(g)) == (13, 53)
    assert {tune._key(p) for p in c} <= {tune._key(p) for p in g}


def test_a_round_drops_only_the_clearly_worse_of_its_lower_half():
    rows = [row("a", 160), row("b", 158), row("c", 150), row("d", 100), row("e", 70)]
    d = tune.decide(rows)
    assert d.leader == "a" and not d.stop
    assert set(d.dropped) == {"d", "e"} and d.kept == ["a", "b", "c"]
    assert "clearly worse than a" in d.dropped["e"]


def test_too_few_requests_drop_nothing_and_errors_drop_at_once():
    d = tune.decide([row("a", 160, n=3), row("b", 100, n=3), row("c", 90, n=3, errors=1)])
    assert d.kept == ["a", "b"] and set(d.dropped) == {"c"} and not d.stop


def test_a_separated_leader_ends_the_tune():
    d = tune.decide([row("a", 200, n=32, spread=0.02), row("b", 150, n=32, spread=0.02), row("c", 140, n=32)])
    assert d.stop == tune.SEPARATED and d.kept == ["a"] and d.verdict["separated"]


def test_successive_halving_finds_the_best_with_fewer_points_than_the_grid():
    truth = {p.name: 100 + 5 * i for i, p in enumerate(tune.candidates(PROFILES, ALLOWED))}
    best = max(truth, key=truth.get)
    alive, n, rounds = list(truth), 8, []
    for k in range(1, 10):
        d = tune.decide([row(x, truth[x], n=n, seed=k) for x in alive])
        rounds.append({"candidates": alive, "requests": n})
        if d.stop:
            break
        alive, n = d.kept, n * 2
    assert d.leader == best
    report = {"rounds": rounds, "candidates": list(truth), "grid": len(tune.grid(PROFILES, ALLOWED))}
    assert tune.points(rounds) < report["grid"]
    said = tune.counts(report)
    assert f"measured {tune.points(rounds)} points" in said and "grid" in said and "53 points" in said


def test_the_next_round_is_estimated_from_this_ones_times():
    assert tune.next_round_s([8.0, 10.0], [3.0, 5.0], kept=3) == 2 * 9.0 + 3 * 4.0 * 2
    assert tune.next_round_s([], [], kept=0) == 0.0


def test_the_served_load_is_the_median_and_dp_groups_add_up_and_the_tune_rides_on_it():
    one = tune.served([("TP0", 3), ("TP0", 4), ("TP0", 9)])
    assert (one.running, one.groups, one.own()) == (4, 1, 1)
    assert one.words("in 10 s") == ("one at a time, on top of the 4 running that its log shows, the median "
                                   "#running-req of 3 decode lines in 10 s")
    # the demo's DP 8: 167 running in all; the tune sends one request per group, not 167 more
    dp = tune.served([(f"DP{i} TP{i}", 21) for i in range(7)] + [("DP7 TP7", 20)])
    assert (dp.running, dp.groups, dp.own()) == (167, 8, 8)
    assert dp.words("in its log's last 60 s").startswith(
        "one per DP group, on top of the 167 running that its log shows: 8 DP groups, about 21 each, ")
    assert tune.served([("DP0 TP0", 2), ("DP1 TP1", 3)]).running == 5
    assert tune.served([]) is None


def test_a_tune_stopped_in_its_first_round_says_so_and_what_it_measured():
    data = {"rounds": [], "results": [{"profile": "off"}, {"profile": "mtp1"}], "candidates": [{}] * 13, "grid": 53,
            "winner": None, "separated": False, "stopped": "", "kept": None, "restored": True}
    assert tune.ending_lines(data) == [
        "winner: none (no round finished)",
        "no round finished: 2 of 13 settings measured in the first; a grid over the same steps, topk and draft "
        "tokens: 53 points", "host: restored"]
