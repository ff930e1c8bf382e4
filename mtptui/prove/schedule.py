"""A speculation schedule by load, proposed from a tune's measurements at several concurrencies
(`mtptui tune --schedule 1,8,64`), and its comparison with the best static setting (`mtptui bench
--from-tune`).

The rule, kept simple: each concurrency measured is a bucket of batch sizes (from the geometric
midpoint with the one below to the midpoint with the one above, the first from 1); its K is the
number of draft steps of the candidate with the most output tokens/s there (off is K 0), kept only
where that candidate's bootstrap interval against the runner-up lies wholly above 0 (prove.results
.verdict), else the static winner's (the best at the concurrency the tune was asked for);
neighbouring buckets with the same K are merged. Only settings an engine can switch among take
part: off and the chains (topk 1) of one algorithm and draft model.

What it becomes: for vLLM a profile with --speculative-config's num_speculative_tokens_per_batch_size
(vLLM carries the last range's K on to larger batches: vllm 0.32.0 v1/spec_decode/dynamic/utils.py
build_dynamic_sd_schedule_lookup); for SGLang a profile with --speculative-adaptive, its tiers the
set of K that win somewhere, which SGLang reads from an --speculative-adaptive-config file
(srt/speculative/adaptive_spec_params.py, 0.5.11-0.5.23): mtptui writes that file beside the
results, but puts no file on a host, so the profile it applies adapts among SGLang's own default
tiers, started at the highest tier proposed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, fields
from typing import Any

from mtptui.control.profiles import Profile, ProfileError, Version, known_version, same_algorithm
from mtptui.prove import results

SCHEDULE, ADAPTIVE = "schedule", "adaptive"
CHAIN_ALGORITHMS = ("NEXTN", "EAGLE", "EAGLE3", "STANDALONE")
# SGLang's tiers without a config file (DEFAULT_ADAPTIVE_CONFIG's union, or the one list before
# 0.5.13): from 0.5.13 --speculative-num-steps must be one of them ("... is not in the adaptive
# config candidate_steps [...]. Pass one of those values.", arg_groups/speculative_hook.py)
SGLANG_DEFAULT_TIERS = (((0, 5, 20), (0, 1, 3, 5, 7)), ((0, 5, 14), (0, 1, 3, 7)), ((0, 5, 11), (1, 3, 7)))
SGLANG_STEPS_CHECKED = (0, 5, 13)
SGLANG_PER_BS_CONFIG = (0, 5, 13)  # {"1": {"candidate_steps": [...]}}; before, {"candidate_steps": [...]}
SGLANG_TIER_0 = (0, 5, 14)  # candidate_steps may hold 0 (no speculation) from here
# before 0.5.13 one list for every batch size, of at least 2 distinct steps (an assert at start)


def steps_of(p: Profile) -> int | None:
    """The K a schedule can give this setting: 0 for off, the steps of a chain, None for the rest
    (trees, n-grams, counts the server picks): no engine switches to those by load."""
    if not p.on:
        return 0
    if p.algorithm and p.algorithm.upper() in CHAIN_ALGORITHMS and isinstance(p.num_steps, int) \
            and p.topk in (None, 1):
        return p.num_steps
    return None


def _same_chain(a: Profile, b: Profile) -> bool:
    return same_algorithm(a.algorithm, b.algorithm) and a.draft_model_path == b.draft_model_path


def switchable(candidates: Sequence[Profile], static: Profile | None) -> dict[str, int]:
    """name -> K of the candidates one schedule can switch among: off, and the chains of the static
    winner's algorithm and draft model (of the first chain where the static winner is off)."""
    chains = [p for p in candidates if p.on and steps_of(p) is not None]
    ref = static if static is not None and static.on and steps_of(static) is not None else (chains[0] if chains else None)
    out = {p.name: 0 for p in candidates if not p.on}
    if ref is not None:
        out.update({p.name: steps_of(p) or 0 for p in chains if _same_chain(p, ref)})
    return out


def bounds(concurrencies: Sequence[int]) -> list[tuple[int, int]]:
    """Each concurrency's bucket of batch sizes: from 1 (the first) or the one after the bucket
    below, to the geometric midpoint with the next concurrency (loads compare as ratios), the
    last to itself (vLLM carries its K on)."""
    cs = sorted(set(concurrencies))
    ends = [max(c, math.floor(math.sqrt(c * n))) for c, n in zip(cs, cs[1:])] + cs[-1:]
    starts = [1, *(e + 1 for e in ends[:-1])]
    return list(zip(starts, ends))


def latest(rows: Sequence[dict]) -> list[dict]:
    """Each (profile, concurrency)'s row from the last round that measured it."""
    out: dict[tuple[str, int], dict] = {}
    for r in rows:
        key = (r["profile"], r["concurrency"])
        if key not in out or (r.get("round") or 0) >= (out[key].get("round") or 0):
            out[key] = r
    return list(out.values())


def static_winner(rows: Sequence[dict], ks: dict[str, int], at: int) -> str | None:
    """The switchable candidate with the most output tokens/s at concurrency `at`, without errors."""
    ok = [r for r in rows if r["concurrency"] == at and r["profile"] in ks and r["requests"] and not r["errors"]
          and r["output_tok_s"]]
    return max(ok, key=lambda r: r["output_tok_s"])["profile"] if ok else None


def buckets(rows: Sequence[dict], ks: dict[str, int], static: str) -> list[dict]:
    """The evidence of each concurrency: its leader among the switchable candidates against the
    runner-up (change and 95% interval), and the K that bucket gets."""
    cs = sorted({r["concurrency"] for r in rows})
    out = []
    for c, (lo, hi) in zip(cs, bounds(cs)):
        v = results.verdict([r for r in rows if r["concurrency"] == c and r["profile"] in ks])
        kept = v is not None and v["separated"]
        runs = v["leader"] if kept and v is not None else static
        out.append({"concurrency": c, "from": lo, "to": hi, "leader": v and v["leader"],
                    "runner_up": v and v["runner_up"], "change_pct": v and v["change_pct"],
                    "change_lo_pct": v and v["change_lo_pct"], "change_hi_pct": v and v["change_hi_pct"],
                    "separated": kept, "runs": runs, "k": ks[runs]})
    return out


def merged(bs: Sequence[dict]) -> list[list[int]]:
    """[[first batch size, last, K], ...]: neighbouring buckets with the same K made one."""
    out: list[list[int]] = []
    for b in bs:
        if out and out[-1][2] == b["k"]:
            out[-1][1] = b["to"]
        else:
            out.append([b["from"], b["to"], b["k"]])
    return out


def sglang_default_tiers(version: Version | None) -> tuple[int, ...]:
    v, _ = known_version(version)
    return next((tiers for since, tiers in SGLANG_DEFAULT_TIERS if v >= since), ())


def sglang_config(tiers: Sequence[int], version: Version | None) -> dict | None:
    """The --speculative-adaptive-config file for these tiers, in the version's shape; None where
    the version cannot say them (tier 0 before 0.5.14; one tier left before 0.5.13, which wants 2)."""
    v, _ = known_version(version)
    steps = sorted(t for t in tiers if t > 0 or v >= SGLANG_TIER_0)
    if v >= SGLANG_PER_BS_CONFIG:
        return {"1": {"candidate_steps": steps}} if steps else None
    return {"candidate_steps": steps} if len(steps) >= 2 else None


def profile_json(p: Profile) -> dict:
    return {k: v for k, v in asdict(p).items() if v is not None and v is not False and v != ()}


def profile_of(d: dict) -> Profile:
    """A profile from profile_json's dict (a tune's JSON). Raises ProfileError."""
    known = {f.name for f in fields(Profile)}
    if not isinstance(d, dict) or not isinstance(d.get("name"), str) or set(d) - known:
        raise ProfileError(f"not a profile: {d!r}")
    tuples: dict[str, Callable[[Any], Any]] = {"schedule": lambda v: tuple(tuple(int(x) for x in e) for e in v),
                                               "env": lambda v: tuple(tuple(e) for e in v), "extra_args": tuple}
    kw: dict[str, Any] = {k: tuples[k](v) if k in tuples else v for k, v in d.items()}
    try:
        return Profile(**kw)
    except (TypeError, ValueError):
        raise ProfileError(f"not a profile: {d!r}") from None


def propose(rows: Sequence[dict], candidates: Sequence[Profile], at: int, engine: str,
            version: Version | None, check: Callable[[Profile], None] | None = None) -> dict | None:
    """The schedule the measurements propose (rows: prove.bench's, at several concurrencies, any
    rounds; `at`: the concurrency the tune was asked for, whose best switchable candidate is the
    static winner; check: the server's rules, raising ProfileError). None with fewer than two
    concurrencies. The dict (the tune JSON's "schedule"): static, buckets (the evidence), ranges,
    tiers, profile (what applying it runs; None where nothing differs from the static winner or the
    server's rules refuse it), why (then)."""
    rows = latest([r for r in rows if r["profile"] in {p.name for p in candidates}])
    if len({r["concurrency"] for r in rows}) < 2:
        return None
    by_name = {p.name: p for p in candidates}
    static = static_winner(rows, switchable(candidates, None), at)
    if static is None:
        return {"static": None, "buckets": [], "ranges": [], "tiers": [], "profile": None,
                "why": f"no candidate an engine can switch among (off or a chain) ran without errors at c={at}"}
    ks = switchable(candidates, by_name[static])
    bs = buckets(rows, ks, static)
    ranges = merged(bs)
    tiers = sorted({b["k"] for b in bs})
    out: dict[str, Any] = {"engine": engine, "static": static, "static_k": ks[static],
                           "static_profile": profile_json(by_name[static]), "buckets": bs, "ranges": ranges,
                           "tiers": tiers, "profile": None, "why": ""}
    if len(ranges) == 1:
        out["why"] = f"every bucket runs {static} (no other candidate separated from it anywhere)"
        return out
    base = by_name[max(bs, key=lambda b: b["k"])["runs"]]  # the chain of the most steps any bucket runs
    top = max(tiers)
    if engine == "vllm":
        p = Profile(f"schedule-{base.name}", algorithm=base.algorithm, num_steps=top, topk=base.topk,
                    num_draft_tokens=None if base.num_draft_tokens is None else top + 1,
                    draft_model_path=base.draft_model_path, schedule=tuple((a, b, k) for a, b, k in ranges),
                    env=base.env, extra_args=base.extra_args)
    else:
        out["adaptive_config"] = sglang_config(tiers, version)  # None: the version cannot say them
        out["default_tiers"] = list(sglang_default_tiers(version))
        p = Profile(f"adaptive-{base.name}", algorithm=base.algorithm, num_steps=top, topk=1,
                    num_draft_tokens=top + 1, draft_model_path=base.draft_model_path, adaptive=True,
                    env=base.env, extra_args=base.extra_args)
        v, _ = known_version(version)
        if v >= SGLANG_STEPS_CHECKED and top not in out["default_tiers"]:
            out["why"] = (f"SGLang {'.'.join(map(str, v))} starts --speculative-adaptive only at one of its tiers "
                          f"({', '.join(map(str, out['default_tiers']))} without a config file), not {top}: "
                          "put the adaptive config on the host and name it in a profile's adaptive_config")
            return out
    try:
        if check is not None:
            check(p)
    except ProfileError as e:
        out["why"] = f"the server's rules refuse it: {e}"
        return out
    out["profile"] = profile_json(p)
    return out


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:+.1f}%"


def evidence_lines(s: dict) -> list[str]:
    """The proposal for people: a line per bucket (its batch sizes, what runs there and why, the
    leader's change against the runner-up with its interval), then the ranges or tiers and what
    applying it would run."""
    if not s.get("static"):
        return [f"schedule: none ({s['why']})"]
    out = [f"schedule by load (static winner {s['static']}, K {s['static_k']}; a bucket keeps its leader only "
           "where its 95% interval against the runner-up lies above 0):"]
    for b in s["buckets"]:
        span = f"batch {b['from']}-{b['to']}" if b["from"] != b["to"] else f"batch {b['from']}"
        if b["leader"] is None:
            why = "fewer than two candidates without errors"
        else:
            why = (f"{b['leader']} ahead of {b['runner_up']}: {_pct(b['change_pct'])} "
                   f"({_pct(b['change_lo_pct'])} to {_pct(b['change_hi_pct'])})" if b["change_lo_pct"] is not None
                   else f"{b['leader']} ahead of {b['runner_up']}: {_pct(b['change_pct'])}, too few requests for an interval")
            why += "" if b["separated"] else ", not separated"
        out.append(f"  c={b['concurrency']:<4} {span:<14} K {b['k']} ({b['runs']})  {why}")
    if s.get("engine") == "vllm":
        out.append("  num_speculative_tokens_per_batch_size: " + str(s["ranges"])
                   + " (the last K carried on to larger batches)")
    else:
        out.append(f"  adaptive tiers: {', '.join(map(str, s['tiers']))}; --speculative-adaptive-config file: "
                   + (json.dumps(s["adaptive_config"]) if s.get("adaptive_config")
                      else "none (this SGLang's file cannot hold these: tier 0 needs 0.5.14, one tier 0.5.13)"))
    p = s.get("profile")
    out.append(f"  proposed: {p['name']}" + (" (SGLang's own tiers "
                                             f"{', '.join(map(str, s.get('default_tiers') or []))} unless the config file is put on "
                                             "the host and named in adaptive_config)" if p.get("adaptive") else "")
               if p else f"  nothing to apply: {s['why']}")
    return out


def against_static(report: dict, schedule: str, static: str) -> list[str]:
    """bench's comparison: at each concurrency the schedule's output tokens/s against the static
    setting's, with the interval, and where the schedule is ahead, behind or level."""
    out = [f"{schedule} against {static}, the best static setting:"]
    for c in results.concurrencies(report):
        rows = {r["profile"]: r for r in results.at(report, c)}
        a, b = rows.get(schedule), rows.get(static)
        got = results.change(a, b) if a and b else None
        if got is None:
            out.append(f"  c={c}: not measured (a profile failed)")
            continue
        pct, lo, hi = got
        said = ("ahead" if lo is not None and lo > 0 else "behind" if hi is not None and hi < 0
                else "level (not separated)" if lo is not None else "too few requests for an interval")
        out.append(f"  c={c}: {_pct(pct)} ({_pct(lo)} to {_pct(hi)}, 95%): {said}")
    return out
