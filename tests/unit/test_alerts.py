"""Alerts on a real Store fed real SGLang lines: each fires only once its condition has held for
the hold span, names the right rank, and clears when the data no longer supports it."""

from __future__ import annotations

import time

from mtptui.config import parse_config
from mtptui.core.alerts import AlertTracker, Thresholds, evaluate
from mtptui.core.ingest import Ingest
from mtptui.core.store import Store

T0 = 1773072000.0  # 2026-03-09 16:00:00 UTC
SPEC = ("server_args=ServerArgs(model_path='m', tp_size=4, speculative_algorithm='NEXTN', "
        "speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4)")
NOSPEC = "server_args=ServerArgs(model_path='m', tp_size=4, speculative_algorithm=None)"


def stamp(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))


def decode(t: float, rank: int, *, al: float | None = 2.8, rate: float | None = None, tput: float = 1000.0,
           queue: int = 0, graph: bool = True) -> str:
    body = "#running-req: 20, #token: 1000, token usage: 0.20, "
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
    return {(a.kind, a.rank) for a in alerts}


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
    assert [(a.rank, a.severity) for a in one] == [("TP0", "error")]
    assert found[0].severity == "error"  # errors first


def test_spec_fallback_when_configured_but_no_accept_len():
    store = store_of([f"[{stamp(T0)}] {SPEC}"] + series(30, f=lambda r, k: {"al": None}))
    found = [a for a in evaluate(store, None, T0 + 40) if a.kind == "spec_fallback"]
    assert len(found) == 1
    assert "NEXTN" in found[0].title and "TP0, TP1, TP2, TP3" in found[0].title
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
    found = kinds(evaluate(store, None, T0 + 128))
    assert ("queue_growing", "TP0") in found
    assert ("queue_growing", "TP1") not in found


def test_rank_diverging_names_the_outlier():
    store = store_of(series(60, f=lambda r, k: {"al": 2.0 if r == 3 else 2.8}))
    div = [a for a in evaluate(store, None, T0 + 68) if a.kind == "rank_diverging"]
    assert {a.rank for a in div} == {"TP3"}
    assert "accept len" in div[0].title and "-29%" in div[0].title


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
    assert sorted(a.kind for a in fired) == ["accept_rate_low", "rank_diverging"]
    (f,) = [h for h in tr.history if h.alert.kind == "accept_rate_low"]
    assert f.cleared is not None and f.cleared > f.at
    tr.update(None, [], T0 + 50)  # seek back before it fired
    assert list(tr.history) == [] and tr.active == {}
