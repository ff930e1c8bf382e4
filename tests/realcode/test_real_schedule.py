"""The schedule `tune --schedule` proposes (prove/schedule.py, issue 46 item 3), run through each
engine's own code for it: vLLM's build_dynamic_sd_schedule_lookup (v1/spec_decode/dynamic/utils.py)
gives every batch size of a bucket that bucket's K and the last bucket's K beyond it; SGLang's
adaptive_spec_params.py loads the --speculative-adaptive-config file mtptui writes with exactly the
tiers proposed (where mtptui says a version cannot hold them, that version refuses them), its
default tiers are the ones mtptui names, and it starts a proposal's num_steps without the file
exactly where mtptui offers to apply the proposal."""

from __future__ import annotations

import importlib.util
import json
import random
import sys
import types
from contextlib import contextmanager

import pytest
from test_real_vllm import dynamic_sd
from wheels import extracted

from mtptui.config.profile import BUILTINS, Profile
from mtptui.control.version import vtuple
from mtptui.prove import schedule

pytestmark = pytest.mark.realcode

VLLM_VERSIONS = ("0.24.0", "0.32.0", "0.33.0")
SGLANG_VERSIONS = ("0.5.11", "0.5.12", "0.5.13", "0.5.14", "0.5.19", "0.5.20", "0.5.23")
CANDIDATES = [BUILTINS["off"], *(Profile(f"mtp{n}", "NEXTN", n, 1, n + 1) for n in (1, 2, 3, 5))]
# (concurrency -> tokens/s by profile): each table separates its leaders by far
TABLES = [{1: {"off": 60, "mtp1": 90, "mtp3": 120}, 8: {"off": 400, "mtp1": 560, "mtp3": 470},
           64: {"off": 2400, "mtp1": 1900, "mtp3": 1500}},
          {1: {"off": 60, "mtp2": 120, "mtp1": 90}, 32: {"off": 2400, "mtp2": 1500, "mtp1": 1900}},
          {2: {"off": 60, "mtp5": 130, "mtp3": 100}, 16: {"off": 400, "mtp3": 600, "mtp5": 450}},
          {1: {"off": 60, "mtp3": 120}, 4: {"off": 200, "mtp3": 400}, 48: {"off": 1800, "mtp3": 1200}}]


def rows_of(table: dict) -> list[dict]:
    out = []
    for c, by in table.items():
        for name, tok_s in by.items():
            rng = random.Random(f"{name}{c}")
            secs = [64 / (tok_s * (1 + rng.gauss(0, 0.02))) for _ in range(32)]
            out.append({"profile": name, "concurrency": c, "requests": 32, "output_tok_s": tok_s, "errors": 0,
                        "round": 1, "per_request": {"tokens": [64] * 32, "seconds": secs}})
    return out


def proposals(engine: str, version: str) -> list[dict]:
    out = []
    for table in TABLES:
        s = schedule.propose(rows_of(table), CANDIDATES, min(table), engine, vtuple(version))
        assert s is not None and len(s["tiers"]) > 1, s  # each table changes K somewhere
        out.append(s)
    return out


@pytest.mark.parametrize("version", VLLM_VERSIONS)
def test_vllm_runs_each_bucket_at_its_k(version, real_vllm_utils):
    mod = real_vllm_utils(version)
    for s in proposals("vllm", version):
        p = schedule.profile_of(s["profile"])
        lookup = mod.build_dynamic_sd_schedule_lookup([list(e) for e in p.schedule], 512, p.num_steps)
        for b in s["buckets"]:
            assert {lookup[bs] for bs in range(b["from"], b["to"] + 1)} == {b["k"]}, (s["ranges"], b)
        last = s["buckets"][-1]
        assert set(lookup[last["to"]:]) == {last["k"]}  # carried on to the largest batch


@pytest.fixture(scope="module")
def real_vllm_utils(need):
    def load(version):
        return dynamic_sd(version, need)
    return load


@contextmanager
def _stubs():
    """The few names adaptive_spec_params.py imports from the rest of SGLang, only while it loads."""
    names = ("sglang", "sglang.srt", "sglang.srt.utils", "sglang.srt.arg_groups", "sglang.srt.arg_groups.overrides",
             "sglang.srt.runtime_context", "sglang.srt.speculative", "sglang.srt.speculative.spec_info")
    saved = {n: sys.modules.get(n) for n in names}
    for n in names:
        sys.modules[n] = types.ModuleType(n)
    sys.modules["sglang.srt.utils"].log_info_on_rank0 = lambda logger, msg: None  # type: ignore[attr-defined]
    overrides = sys.modules["sglang.srt.arg_groups.overrides"]
    overrides.resolved_view = overrides.resolving_view = lambda a: a  # type: ignore[attr-defined]
    sys.modules["sglang.srt.runtime_context"].attn_dp_enabled_of = lambda a: False  # type: ignore[attr-defined]
    sys.modules["sglang.srt.speculative.spec_info"].SpeculativeAlgorithm = object  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for n, m in saved.items():
            if m is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = m


def _adaptive_module(version: str, need):
    root = extracted("sglang", version, "sglang", need)  # the SGLang tests' own extraction
    path = root / "sglang/srt/speculative/adaptive_spec_params.py"
    need(path.exists(), f"{path} is missing")
    spec = importlib.util.spec_from_file_location(f"adaptive_spec_{version.replace('.', '_')}", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    with _stubs():
        spec.loader.exec_module(mod)
    return mod


def _tiers(mod, version: str, initial: int, config: dict | None, tmp_path) -> list[int]:
    """The tiers SGLang adapts among, started at `initial`, with this config file (None: none)."""
    path = None
    if config is not None:
        path = tmp_path / "adaptive.json"
        path.write_text(json.dumps(config))
    if vtuple(version) >= schedule.SGLANG_PER_BS_CONFIG:
        return list(mod.AdaptiveSpeculativeParams(initial, None if path is None else str(path)).candidate_steps)
    return list(mod.AdaptiveSpeculativeParams(initial, mod.load_adaptive_config(None if path is None else str(path)))
                .candidate_steps)


@pytest.mark.parametrize("version", SGLANG_VERSIONS)
def test_sglang_reads_the_tiers_mtptui_writes_and_starts_what_it_applies(version, need, tmp_path):
    mod = _adaptive_module(version, need)
    v = vtuple(version)
    if v >= schedule.SGLANG_STEPS_CHECKED:
        assert tuple(mod.resolve_candidate_steps_from_config(None)) == schedule.sglang_default_tiers(v)
    for s in proposals("sglang", version):
        top = max(s["tiers"])
        config = s["adaptive_config"]
        if config is not None:
            want = [t for t in s["tiers"] if t > 0 or v >= schedule.SGLANG_TIER_0]
            got = _tiers(mod, version, top, config, tmp_path)
            assert got == sorted(set(want) | ({top} if v == (0, 5, 12) else set())), (config, got)
        else:  # only before 0.5.13, a single tier left without 0: the version refuses that file
            assert v < schedule.SGLANG_PER_BS_CONFIG
            with pytest.raises(AssertionError, match="at least 2 distinct"):
                _tiers(mod, version, top, {"candidate_steps": [t for t in s["tiers"] if t > 0]}, tmp_path)
        # without the file: SGLang starts num_steps `top` exactly where mtptui offers the profile
        # (0.5.13+ checks it against its own tiers; before, any start is taken in)
        starts = v < schedule.SGLANG_STEPS_CHECKED or top in mod.resolve_candidate_steps_from_config(None)
        offered = s["profile"] is not None
        assert offered == starts, (version, s["tiers"], s["why"])
        if offered:
            assert top in _tiers(mod, version, top, None, tmp_path) or v < (0, 5, 12)
