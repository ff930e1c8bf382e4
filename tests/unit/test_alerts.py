"""Alerts on a real Store fed real SGLang lines: each fires only once its condition has held for
the hold span, names the right ranks in one alert per condition, and clears when the data no
longer supports it. Rank divergence and queue growth are also run over the simulator's own steady
and burst loads, where nothing is wrong."""

from __future__ import annotations

import re
import time

import pytest

from mtptui.config import parse_config
from mtptui.core.alerts import AlertTracker, Thresholds, by_rank, evaluate, where
from mtptui.core.ingest import Ingest
from mtptui.core.store import Store

T0 = 1773072000.0  # 2026-03-09 16:00:00 UTC
SPEC = ("server_args=ServerArgs(model_path='m', tp_size=4, speculative_algorithm='NEXTN', "
        "speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4)")
NOSPEC = "server_args=ServerArgs(model_path='m', tp_size=4, speculative_algorithm=None)"


def stamp(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))


def decode(t: float, rank: int, *, al: float | None = 2.8, rate: float | None = None, tput: float = 1000.0,
           queue: int = 0, graph: bool = True, running: int = 20) -> str:
    body = f"#running-req: {running}, #token: 1000, token usage: 0.20, "
    if al is not None:
        body += f"accept len: {al:.2f}, accept rate: {(rate if rate is not None else (al - 1) / 3):.2f}, "
    body += f"cuda graph: {graph}, gen throughput (token/s): {tput:.2f}, #queue-req: {queue}"
    return f"[{stamp(t)} TP{rank}] Decode batch, {body}"


def store_of(lines: list[str]) -> Store:
    store = Store()
    ing = Ingest(store)
    for raw in lines:
        ing.feed(raw)
    return store


def series(seconds, ranks=4, every=2, start=T0 + 10, f=lambda r, k: {}):
    return [decode(start + k, r, **f(r, k)) for k in range(0, seconds, every) for r in range(ranks)]


def kinds(alerts) -> set[tuple[str, str]]:
    """(kind, rank) for every rank each alert names."""
    return {(a.kind, r) for a in alerts for r in a.ranks}


def test_healthy_run_raises_nothing():
    store = store_of([f"[{stamp(T0)}] {SPEC}"] + series(300))
    assert evaluate(store, None, T0 + 300) == []


def test_accept_rate_low_holds_before_it_fires_and_clears():
    th = Thresholds(accept_rate_min=0.35, accept_rate_hold_s=30)
    # TP1's accept rate drops to 0.20 from t=100 to t=160, then recovers.
    lines = [f"[{stamp(T0)}] {SPEC}"] + series(
        240, f=lambda r, k: {"al": 1.6, "rate": 0.20} if r == 1 and 100 <= k < 160 else {})
    store = store_of(lines)
    at = lambda s: kinds(evaluate(store, None, T0 + 10 + s, th))  # noqa: E731
    assert ("accept_rate_low", "TP1") not in at(115)  # low for 15 s: not yet
    assert ("accept_rate_low", "TP1") in at(135)  # low for 35 s
    assert ("accept_rate_low", "TP0") not in at(135)
    assert ("accept_rate_low", "TP1") not in at(200)  # recovered
    # Judged late (a replay read at full speed), it still says when the trouble began.
    (low,) = [a for a in evaluate(store, None, T0 + 10 + 150, th) if a.kind == "accept_rate_low"]
    assert low.since == T0 + 10 + 100


def test_accept_len_one_is_an_error():
    store = store_of([f"[{stamp(T0)}] {SPEC}"] + series(60, f=lambda r, k: {"al": 1.0, "rate": 0.0} if r == 0 else {}))
    found = evaluate(store, None, T0 + 70)
    one = [a for a in found if a.kind == "accept_len_one"]
    assert [(a.ranks, a.severity) for a in one] == [(("TP0",), "error")]
    assert one[0].title == "accept len ≈ 1.0 on TP0: nothing accepted"
    assert found[0].severity == "error"  # errors first


def test_spec_fallback_when_configured_but_no_accept_len():
    store = store_of([f"[{stamp(T0)}] {SPEC}"] + series(30, f=lambda r, k: {"al": None}))
    found = [a for a in evaluate(store, None, T0 + 40) if a.kind == "spec_fallback"]
    assert len(found) == 1
    assert "NEXTN" in found[0].title and found[0].title.endswith("no accept len on all 4 ranks")
    assert found[0].ranks == ("TP0", "TP1", "TP2", "TP3")
    # The same lines without speculation configured are simply SPEC OFF, not an alert.
    plain = store_of([f"[{stamp(T0)}] {NOSPEC}"] + series(30, f=lambda r, k: {"al": None}))
    assert not [a for a in evaluate(plain, None, T0 + 40) if a.kind == "spec_fallback"]


def test_spec_fallback_waits_for_its_hold():
    store = store_of([f"[{stamp(T0)}] {SPEC}"] + series(6, f=lambda r, k: {"al": None}))
    assert not [a for a in evaluate(store, None, T0 + 16, Thresholds(fallback_hold_s=10)) if a.kind == "spec_fallback"]


def test_graph_off_in_decode():
    store = store_of(series(60, f=lambda r, k: {"graph": r != 2}))
    assert ("graph_off", "TP2") in kinds(evaluate(store, None, T0 + 68))
    assert ("graph_off", "TP0") not in kinds(evaluate(store, None, T0 + 68))


def test_queue_growing():
    store = store_of(series(120, f=lambda r, k: {"queue": k // 3 if r == 0 else 2}))
    found = evaluate(store, None, T0 + 128)
    assert kinds(found) == {("queue_growing", "TP0")}
    assert found[0].title == "queue growing on TP0: 19 -> 39 waiting"  # over the last 60 s


def test_a_queue_that_fills_and_drains_is_not_growing():
    # 40 waiting for 20 s of every minute, 0 otherwise: a burst, served.
    store = store_of(series(300, f=lambda r, k: {"queue": 40 if k % 60 >= 35 and k % 60 < 55 else 0}))
    for s in range(70, 300, 5):
        assert not [a for a in evaluate(store, None, T0 + 10 + s) if a.kind == "queue_growing"], s


def test_rank_diverging_names_the_outlier():
    store = store_of(series(60, f=lambda r, k: {"al": 2.0 if r == 3 else 2.8}))
    (div,) = [a for a in evaluate(store, None, T0 + 68) if a.kind.endswith("_diverging")]
    assert (div.kind, div.ranks) == ("accept_len_diverging", ("TP3",))
    assert div.title == "accept len on TP3: 2.00 (-29%), others 2.80"


def test_rank_diverging_needs_every_part_of_the_hold_and_a_minimum_effect():
    th = Thresholds(rank_diverge_hold_s=60, rank_diverge_parts=4)
    # TP3 decodes 40% slower for 20 s of every 60: never in all four parts.
    swing = store_of(series(240, f=lambda r, k: {"tput": 600.0 if r == 3 and k % 60 < 20 else 1000.0}))
    for s in range(70, 240, 5):
        assert not [a for a in evaluate(swing, None, T0 + 10 + s, th) if a.kind.endswith("_diverging")], s
    # The same dip for a whole minute fires, once the minute has passed.
    slow = store_of(series(240, f=lambda r, k: {"tput": 600.0 if r == 3 and k >= 100 else 1000.0}))
    assert ("throughput_diverging", "TP3") not in kinds(evaluate(slow, None, T0 + 10 + 150, th))
    (div,) = evaluate(slow, None, T0 + 10 + 165, th)
    assert (div.kind, div.ranks) == ("throughput_diverging", ("TP3",))
    assert div.title == "tok/s per request on TP3: 30.0 (-40%), others 50.0"
    # 50% apart, yet 3 tok/s per request against 6: below the minimum effect (5).
    small = store_of(series(120, f=lambda r, k: {"tput": 60.0 if r == 3 else 120.0}))
    assert not [a for a in evaluate(small, None, T0 + 128, th) if a.kind.endswith("_diverging")]
    assert ("throughput_diverging", "TP3") in kinds(
        evaluate(small, None, T0 + 128, Thresholds(rank_diverge_min_req_tok_s=2)))


def test_a_rank_with_more_requests_is_not_diverging():
    """Twice the requests and twice the tokens: the same speed per request, so no alert."""
    store = store_of(series(120, f=lambda r, k: {"tput": 2000.0, "running": 40} if r == 0 else {}))
    assert evaluate(store, None, T0 + 128) == []


def test_a_host_wide_condition_is_one_alert_naming_the_ranks():
    collapse = lambda ranks: lambda r, k: {"al": 1.02, "rate": 0.01} if r in ranks and k >= 40 else {}  # noqa: E731
    store = store_of([f"[{stamp(T0)}] {SPEC}"] + series(120, ranks=8, f=collapse(range(8))))
    found = evaluate(store, None, T0 + 130)
    assert sorted(a.kind for a in found) == ["accept_len_one", "accept_rate_low"]
    one = found[0]
    assert one.title == "accept len ≈ 1.0 on all 8 ranks: nothing accepted"
    assert one.since == T0 + 50 and len(one.ranks) == 8
    part = store_of([f"[{stamp(T0)}] {SPEC}"] + series(120, ranks=8, f=collapse({2, 5})))
    (one,) = [a for a in evaluate(part, None, T0 + 130) if a.kind == "accept_len_one"]
    assert one.title == "accept len ≈ 1.0 on TP2, TP5 (2 of 8 ranks): nothing accepted"
    assert set(by_rank(evaluate(part, None, T0 + 130))) == {"TP2", "TP5"}


def test_where_names_ranks_briefly():
    dp = [f"DP{i} TP{i} EP{i}" for i in range(8)]
    assert where(dp, dp) == " on all 8 ranks"
    assert where(dp[3:4], dp) == " on DP3"
    assert where([dp[0], dp[3]], dp) == " on DP0, DP3 (2 of 8 ranks)"
    assert where(dp[:3] + dp[4:], dp) == " on 7 of 8 ranks (all but DP3)"
    assert where(dp[:5], dp) == " on 5 of 8 ranks (all but DP5, DP6, DP7)"
    assert where(dp[:2] + dp[4:6], dp) == " on DP0, DP1, DP4, DP5 (4 of 8 ranks)"
    assert where([""], [""]) == ""  # a server that logs no rank: nothing to name


def test_throughput_down_against_the_epoch_baseline():
    lines = [f"[{stamp(T0)}] {SPEC}"] + series(400, f=lambda r, k: {"tput": 500.0 if k >= 320 else 1000.0})
    store = store_of(lines)
    assert "throughput_down" in {a.kind for a in evaluate(store, None, T0 + 10 + 398)}
    assert "throughput_down" not in {a.kind for a in evaluate(store, None, T0 + 10 + 300)}
    # A new epoch has no baseline yet: no alert right after a restart.
    lines2 = lines + [f"[{stamp(T0 + 420)}] {SPEC}"] + series(60, start=T0 + 430, f=lambda r, k: {"tput": 200.0})
    store2 = store_of(lines2)
    assert "throughput_down" not in {a.kind for a in evaluate(store2, None, T0 + 488)}


def test_config_thresholds_change_what_fires():
    """[thresholds] of the config reach the rules: a lower accept_rate_min silences the alert."""
    lines = [f"[{stamp(T0)}] {SPEC}"] + series(60, f=lambda r, k: {"al": 1.6, "rate": 0.20} if r == 1 else {})
    store = store_of(lines)
    assert ("accept_rate_low", "TP1") in kinds(evaluate(store, None, T0 + 60, parse_config("").thresholds))
    th = parse_config("[thresholds]\naccept_rate_min = 0.1\n").thresholds
    assert th.accept_rate_min == 0.1
    assert ("accept_rate_low", "TP1") not in kinds(evaluate(store, None, T0 + 60, th))


def test_tracker_fires_once_clears_and_forgets_on_seek_back():
    store = store_of([f"[{stamp(T0)}] {SPEC}"] + series(
        240, f=lambda r, k: {"al": 1.6, "rate": 0.2} if r == 1 and 100 <= k < 160 else {}))
    tr = AlertTracker()
    fired = []
    for s in range(0, 240, 5):
        fired += tr.update(None, evaluate(store, None, T0 + 10 + s), T0 + 10 + s)
    # TP1 is both low and unlike the others; each alert fires once.
    assert sorted(a.kind for a in fired) == ["accept_len_diverging", "accept_rate_low"]
    (f,) = [h for h in tr.history if h.alert.kind == "accept_rate_low"]
    assert f.cleared is not None and f.cleared > f.at
    # A step back while it holds (a live playhead moves back within a log second): no second firing.
    tr2 = AlertTracker()
    at = T0 + 10 + 150
    assert [a.kind for a in tr2.update(None, evaluate(store, None, at), at)] == ["accept_rate_low"]
    assert tr2.update(None, evaluate(store, None, at - 0.5), at - 0.5) == []
    assert tr2.update(None, evaluate(store, None, at + 1), at + 1) == []
    assert len(tr2.history) == 1 and tr2.history[0].cleared is None
    # Back to before it cleared: it holds again, the same one; back before it fired: gone.
    assert tr.update(None, evaluate(store, None, at), at) == []
    assert f.cleared is None and tr.active[f.alert.key] is f
    tr.update(None, [], T0 + 50)
    assert list(tr.history) == [] and tr.active == {}


def test_tracker_keeps_one_alert_as_ranks_join():
    """Ranks joining a condition widen the alert that holds; they do not fire a new one."""
    def lines(r, k):
        return {"al": 1.0, "rate": 0.0} if k >= 20 + 20 * r else {}
    store = store_of([f"[{stamp(T0)}] {SPEC}"] + series(200, f=lines))
    tr = AlertTracker()
    fired = []
    for s in range(0, 200, 5):
        fired += [a for a in tr.update(None, evaluate(store, None, T0 + 10 + s), T0 + 10 + s)
                  if a.kind == "accept_len_one"]
    assert [a.title for a in fired] == ["accept len ≈ 1.0 on TP0: nothing accepted"]
    (f,) = [h for h in tr.history if h.alert.kind == "accept_len_one"]
    assert f.last.title == "accept len ≈ 1.0 on all 4 ranks: nothing accepted" and f.cleared is None
    assert f.at == T0 + 30  # when TP0's run of 1.0 began


# -- the simulator's own loads: nothing is wrong, so nothing may fire --------------------------

DP8 = ["--model-path", "deepseek-ai/DeepSeek-V3-0324", "--tp", "8", "--dp", "8", "--enable-dp-attention",
       "--ep", "8", "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
       "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]


def sim_log(load: str, seconds: float = 600.0, seed: int = 0) -> list[str]:
    from mtptui.sim import scenario

    return [ln.text for ln in scenario.render_argv(DP8 + ["--sim-load", load], duration=seconds, seed=seed)]


def fired_over(lines: list[str], th: Thresholds | None = None) -> list:
    """Every alert that fires while the log is judged every 5 s of log time, as the dashboard does."""
    store = Store(capacity=100_000)
    ing = Ingest(store)
    for raw in lines:
        ing.feed(raw)
    (host,) = store.hosts()
    assert len(store.ranks(host)) == 8
    times = [t for s in store.ranks(host) for t in s.decode.times()]
    tr = AlertTracker()
    fired = []
    t = min(times)
    while t <= max(times):
        fired += tr.update(host, evaluate(store, host, t, th), t)
        t += 5.0
    return fired


@pytest.fixture(scope="module")
def burst() -> list[str]:
    return sim_log("burst")


@pytest.mark.parametrize("seed", [0, 1])
def test_simulator_steady_load_raises_nothing(seed):
    assert fired_over(sim_log("steady", seed=seed)) == []


def test_simulator_burst_load_raises_nothing(burst):
    assert fired_over(burst) == []
    # Yet the ranks' raw throughput is far apart: over 30 s some rank is more than 25% away from
    # the others' median (what the rule of before, on raw throughput, alerted on).
    store = store_of(burst)
    (host,) = store.hosts()
    apart = 0
    for t in range(int(T0) + 120, int(T0) + 600, 30):
        means = sorted(s.stats("gen_throughput", t - 30, t)["mean"] for s in store.ranks(host))
        med = (means[3] + means[4]) / 2
        apart += abs(means[0] - med) > 0.25 * med or abs(means[-1] - med) > 0.25 * med
    assert apart >= 5


def test_a_slow_rank_under_burst_load_fires(burst):
    """DP3 made 60% slower from 300 s on, the load still bursting: the divergence is found, on DP3 only."""
    start = None
    out = []
    for raw in burst:
        m = re.search(r"\[(\S+ \S+) DP3 TP3 EP3\] Decode batch.*gen throughput \(token/s\): ([\d.]+)", raw)
        if m:
            t = time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S"))
            start = start if start is not None else t
            if t - start >= 300:
                raw = raw.replace(f"(token/s): {m.group(2)}", f"(token/s): {float(m.group(2)) * 0.4:.2f}")
        out.append(raw)
    fired = fired_over(out)
    assert {(a.kind, a.ranks) for a in fired} == {("throughput_diverging", ("DP3 TP3 EP3",))}
    assert fired[0].since + Thresholds().rank_diverge_hold_s > start + 300  # judged after DP3 slowed
    assert fired[0].title.startswith("tok/s per request on DP3: ")
