"""Speculation profiles: SGLang's rules checked before anything is touched, in agreement with the
simulator's copy of those rules; resolving names, stepping with `[`/`]`, matching server_args."""

import shlex
from contextlib import nullcontext

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtptui.control.launch import Context, apply_profile, context_of, find_launch
from mtptui.control.profiles import (
    sglang_paged_topk_backends,
    BUILTINS,
    Profile,
    ProfileError,
    check_profile,
    matches,
    resolve,
    step,
)
from mtptui.core.parse.events import server_args
from mtptui.sim import flags
from mtptui.sim.scenario import config_from_argv

SGL = Context(model_path="Qwen/Qwen3-8B")
DPA = Context(model_path="Qwen/Qwen3-8B", tp=2, dp=2, enable_dp_attention=True)


def p(algorithm, steps=None, topk=None, draft=None, path=None, name="t"):
    return Profile(name, algorithm=algorithm, num_steps=steps, topk=topk, num_draft_tokens=draft,
                   draft_model_path=path)


@pytest.mark.parametrize("profile,ctx", [
    (BUILTINS["off"], DPA),
    (BUILTINS["mtp1"], DPA),
    (BUILTINS["mtp3"], Context(page_size=64, attention_backend="trtllm_mha")),
    (p("NEXTN"), SGL),  # SGLang chooses steps, topk and draft itself
    (p("EAGLE", 5, 4, 8), Context(page_size=16, attention_backend="fa3")),
    (p("EAGLE", 5, 4, 8), Context(page_size=16)),  # the backend SGLang picks is not ours to judge
    (p("EAGLE3", 5, 4, 8), Context(page_size=1, attention_backend="torch_native")),
    (p("NGRAM"), SGL),
    (p("NGRAM", 1, 10, 12), SGL),  # NGRAM: no all-or-none, no steps + 1 rule; its topk is the BFS breadth (10)
    (p("STANDALONE", 3, 1, 4, "Qwen/Qwen3-0.6B"), SGL),
    (p("DFLASH", path="z-lab/dflash"), SGL),
])
def test_accepted(profile, ctx):
    check_profile(profile, ctx, "sglang")


@pytest.mark.parametrize("profile,ctx,message", [
    (p("NEXTN", 3), SGL, "num_steps, topk and num_draft_tokens go together, give all three or none "
                         r"\(it gives num_steps\)"),
    (p("NEXTN", None, 1, 2), SGL, r"\(it gives topk, num_draft_tokens\)"),
    (p("NEXTN", 3, 1, 5), SGL, r"with topk 1, draft tokens must be steps \+ 1 \(SGLang would silently "
                               r"change 5 to 4\)"),
    (p("EAGLE", 0, 1, 1), SGL, "num_steps must be at least 1, not 0"),
    (p("NGRAM", None, 0), SGL, "topk must be at least 1, not 0"),
    (p("NGRAM"), DPA, "SGLang refuses NGRAM with DP attention"),
    (p("STANDALONE", 3, 1, 4, "d"), DPA, "Currently standalone speculative decoding does not support dp"),
    (p("DFLASH", path="d"), DPA, "DFLASH with DP attention"),
    (p("DFLASH"), SGL, "DFLASH needs draft_model_path"),
    (p("DFLASH", 3, path="d"), SGL, "DFLASH runs with num_steps 1 \\(SGLang would silently change 3 to 1\\)"),
    (p("EAGLE", 5, 4, 8), Context(attention_backend="trtllm_mha"), "trtllm_mha attention backend needs topk 1"),
    (p("EAGLE", 5, 4, 8), Context(decode_attention_backend="trtllm_mha"), "needs topk 1"),
    (p("EAGLE", 5, 4, 8), Context(page_size=16, attention_backend="torch_native"),
     "topk 4 with page size 16 works only on the flashinfer, fa3, triton attention backends, not torch_native"),
    (Profile("odd", num_steps=3), SGL, "profile odd sets num_steps but no algorithm"),
])
def test_refused(profile, ctx, message):
    with pytest.raises(ProfileError, match=message):
        check_profile(profile, ctx, "sglang")


@pytest.mark.parametrize("profile,message", [
    (BUILTINS["mtp3"], None),
    (BUILTINS["off"], None),
    (p("MTP", 2), None),
    (p("NGRAM", 4), None),
    (p("EAGLE3", 3, path="d"), None),
    (p("EAGLE3", 3), "vLLM needs draft_model_path for EAGLE3"),
    (p("STANDALONE", 3), "needs draft_model_path for STANDALONE"),
    (p("DFLASH", path="d"), "vLLM has no speculative method for DFLASH"),
    (p("EAGLE", 5, 4, 8, "d"), "has no topk \\(4\\)"),
    (p("NEXTN", 3, 1, 8), "num_draft_tokens other than steps \\+ 1"),
])
def test_vllm(profile, message):
    if message is None:
        check_profile(profile, Context(), "vllm")
    else:
        with pytest.raises(ProfileError, match=message):
            check_profile(profile, Context(), "vllm")


# --- agreement with the simulator ----------------------------------------------------------------

ALGORITHMS = ("NEXTN", "EAGLE", "EAGLE3", "STANDALONE", "NGRAM")  # DFLASH is not simulated
counts = st.one_of(st.none(), st.integers(0, 6))
# Half of them give all three counts, so the rules past the all-or-none one are reached often.
triplets = st.one_of(st.tuples(counts, counts, counts),
                     st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(1, 8)))
profiles = st.builds(lambda a, t, path: p(a, *t, path), st.sampled_from(ALGORITHMS), triplets,
                     st.sampled_from([None, "Qwen/Qwen3-0.6B"]))
contexts = st.builds(dict, dpa=st.booleans(), page=st.sampled_from([1, 16]),
                     backend=st.sampled_from([None, "flashinfer", "fa3", "triton", "trtllm_mha", "torch_native"]),
                     version=st.sampled_from([v for v in flags.VERSIONS if v >= "0.5"]))


def server_argv(profile: Profile, c: dict) -> list[str]:
    base = ["python3", "-m", "mtptui.sim", "--model-path", "Qwen/Qwen3-8B", "--tp", "2", "--page-size",
            str(c["page"]), "--sim-version", c.get("version", flags.DEFAULT_VERSION)]
    if c["dpa"]:
        base += ["--dp", "2", "--enable-dp-attention"]
    if c["backend"]:
        base += ["--attention-backend", c["backend"]]
    return apply_profile(base, profile)


@settings(max_examples=300, deadline=None)
@given(profiles, contexts)
def test_check_profile_agrees_with_the_simulator(profile, c):
    """check_profile refuses exactly what the simulator (SGLang's rules) refuses, except where
    it is stricter on purpose: counts below 1 for NGRAM (the simulator, like SGLang, lets them
    through) and topk 1 with draft tokens other than steps + 1 (SGLang changes them, with a warning)."""
    argv = server_argv(profile, c)
    try:
        check_profile(profile, context_of(argv, c.get("version", flags.DEFAULT_VERSION)), "sglang")
        ours = None
    except ProfileError as e:
        ours = str(e)
    try:
        cfg = config_from_argv(argv[find_launch(argv).index:])
        sim = None
    except flags.ServerArgsError as e:
        sim = e.message or e.source
    if ours and not sim:
        zero = any(v is not None and v < 1 for v in (profile.num_steps, profile.topk, profile.num_draft_tokens))
        # ... and without counts where a backend would refuse the topk > 1 that SGLang picks for
        # some models (mtptui does not know the model's choice: it asks for the counts).
        assert (zero and profile.algorithm == "NGRAM") or "silently change" in ours \
            or "SGLang picks the counts" in ours, (ours, argv)
        if "silently change" in ours and profile.algorithm != "NGRAM":  # NGRAM's topk: no warning
            assert any("adjusted to speculative_num_steps + 1" in w for w in cfg.warnings)
    elif sim and not ours and all(v is None for v in (profile.num_steps, profile.topk, profile.num_draft_tokens)):
        # Left to the server on purpose: the counts SGLang picks itself depend on the model's
        # architecture (before 0.5.8 topk 4 for most), which mtptui does not know.
        assert "page_size > 1" in sim, (sim, argv)
    else:
        assert bool(ours) == bool(sim), (ours, sim, argv)


@pytest.mark.parametrize("version", [v for v in flags.VERSIONS if v >= "0.5"])
@pytest.mark.parametrize("backend", [None, "flashinfer", "fa3", "triton", "torch_native", "flashmla", "aiter"])
def test_paged_topk_backends_are_the_simulators(backend, version):
    """The one rule whose lists live twice (the simulator imports nothing from control)."""
    c = {"dpa": False, "page": 16, "backend": backend, "version": version}
    test_check_profile_agrees_with_the_simulator.hypothesis.inner_test(p("EAGLE", 5, 4, 8), c)
    refused = backend is not None and backend not in sglang_paged_topk_backends(version)
    argv = server_argv(p("EAGLE", 5, 4, 8), c)
    with pytest.raises(ProfileError) if refused else nullcontext():
        check_profile(p("EAGLE", 5, 4, 8), context_of(argv, version), "sglang")


# --- resolve, step, matches ------------------------------------------------------------------------

def test_resolve():
    mine = {"fast": p("EAGLE", 5, 4, 8, name="fast"), "mtp3": p("NEXTN", 3, 1, 4, name="mtp3")}
    assert resolve("mtp2", mine) is BUILTINS["mtp2"]
    assert resolve("fast", mine) is mine["fast"]
    assert resolve("mtp3", mine) is mine["mtp3"]  # the user's definition wins
    with pytest.raises(ProfileError, match=r"unknown profile 'mtp9' \(known: off, mtp1, mtp2, mtp3, fast\)"):
        resolve("mtp9", mine)


def test_step():
    mtp = {"algorithm": "NEXTN", "num_steps": 2, "topk": 1, "num_draft_tokens": 3, "draft_model_path": None}
    assert step(mtp, +1) is BUILTINS["mtp3"]
    assert step(mtp, -1) is BUILTINS["mtp1"]
    assert step({**mtp, "num_steps": 3}, +1) == Profile("mtp4", "NEXTN", 4, 1, 5)
    eagle = {"algorithm": "EAGLE3", "num_steps": 3, "topk": 1, "num_draft_tokens": 4, "draft_model_path": "/d"}
    assert step(eagle, -1) == Profile("eagle32", "EAGLE3", 2, 1, 3, "/d")
    with pytest.raises(ProfileError, match="already at 1 step; `s` turns speculation off"):
        step({**mtp, "num_steps": 1}, -1)
    for current, message in [({"algorithm": None}, "speculation is off"),
                             ({**mtp, "topk": 4}, "topk 4"),
                             ({**mtp, "num_steps": None}, "the server chooses"),
                             ({**mtp, "algorithm": "NGRAM"}, "NGRAM has no draft steps")]:
        with pytest.raises(ProfileError, match=message):
            step(current, +1)


def test_matches_what_the_server_logs():
    logged = server_args("server_args=ServerArgs(model_path='Qwen/Qwen3-8B', speculative_algorithm='EAGLE', "
                         "speculative_draft_model_path=None, speculative_num_steps=3, speculative_eagle_topk=1, "
                         "speculative_num_draft_tokens=4, tp_size=2)")
    assert matches(BUILTINS["mtp3"], logged)
    assert not matches(BUILTINS["mtp2"], logged)
    assert not matches(BUILTINS["off"], logged)
    assert matches(p("NEXTN"), logged)  # steps left to SGLang: any
    assert not matches(p("EAGLE3", 3, 1, 4), logged)
    off = server_args("server_args=ServerArgs(model_path='m', speculative_algorithm=None, tp_size=1)")
    assert matches(BUILTINS["off"], off) and not matches(BUILTINS["mtp1"], off)
    assert matches(BUILTINS["mtp1"], {"algorithm": "FROZEN_KV_MTP", "num_steps": 1, "topk": 1,
                                      "num_draft_tokens": 2})


@pytest.mark.parametrize("name", ["mtp1", "mtp2", "mtp3"])
def test_builtins_as_the_simulator_logs_them(name):
    argv = shlex.split("python3 -m mtptui.sim --model-path Qwen/Qwen3-8B")
    new = apply_profile(argv, BUILTINS[name])
    cfg = config_from_argv(new[find_launch(new).index:])
    assert matches(BUILTINS[name], flags.spec_truth(cfg.args))
    assert not cfg.warnings or all("adjusted" not in w for w in cfg.warnings)


# --- the rules by version (read from each release's code; tests/realcode runs that code) ---------

@pytest.mark.parametrize("version,algo,ok", [
    ((0, 4, 3), "NEXTN", False), ((0, 4, 4), "NEXTN", True), ((0, 4, 4), "EAGLE3", False),
    ((0, 4, 5), "EAGLE3", True), ((0, 5, 1), "STANDALONE", False), ((0, 5, 2), "STANDALONE", True),
    ((0, 5, 2), "NGRAM", False), ((0, 5, 3), "NGRAM", True), ((0, 5, 10), "DFLASH", False),
    ((0, 5, 11), "DFLASH", True), ((0, 5, 12), "SOMETHING_REGISTERED", True),  # 0.5.12+: any name
    (None, "DFLASH", True),
])
def test_algorithms_by_version(version, algo, ok):
    profile = p(algo, path="d") if algo in ("STANDALONE", "DFLASH") else p(algo)
    with nullcontext() if ok else pytest.raises(ProfileError, match="has no speculative algorithm"):
        check_profile(profile, Context(version=version), "sglang")


@pytest.mark.parametrize("version,backend,ok", [
    ((0, 4, 9), "torch_native", True),  # no such rule before 0.5.2
    ((0, 5, 2), "fa3", False), ((0, 5, 5), "flashinfer", True), ((0, 5, 5), "fa3", False),
    ((0, 5, 6), "fa3", True), ((0, 5, 12), "triton", False), ((0, 5, 13), "triton", True),
    (None, "triton", True), (None, "torch_native", False),
])
def test_paged_topk_backends_by_version(version, backend, ok):
    ctx = Context(page_size=16, attention_backend=backend, version=version)
    with nullcontext() if ok else pytest.raises(ProfileError, match="works only on the"):
        check_profile(p("EAGLE", 5, 4, 8, "d"), ctx, "sglang")


def test_silent_changes_are_what_the_server_runs():
    """0.4.6-0.4.8 chain with page size > 1 (topk 1, draft tokens steps + 1), 0.4.5 sets topk 1
    only; NGRAM's topk is the BFS breadth: verify expects what the server runs."""
    from mtptui.control.launch import effective_flags
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--page-size", "16"]
    tree = apply_profile(argv, p("EAGLE", 5, 4, 8, "d"))
    assert effective_flags(tree, "0.4.6")["topk"] == 1 and effective_flags(tree, "0.4.6")["num_draft_tokens"] == 6
    assert (effective_flags(tree, "0.4.5")["topk"], effective_flags(tree, "0.4.5")["num_draft_tokens"]) == (1, 8)
    assert effective_flags(tree, "0.4.9")["topk"] == 4
    ngram = apply_profile(argv, p("NGRAM"))
    assert effective_flags(ngram, None)["topk"] == 10
    assert effective_flags(ngram + ["--speculative-ngram-max-bfs-breadth", "4"], "0.5.3")["topk"] == 4
    with pytest.raises(ProfileError, match="silently change 1 to 10"):
        check_profile(p("NGRAM", topk=1), SGL, "sglang")  # STRICTER: the profile would not show


def test_dflash_with_dp_attention_by_version():
    dflash = p("DFLASH", path="d")
    for version in ((0, 5, 19), (0, 5, 22)):
        with pytest.raises(ProfileError, match="0.5.23 allows it with --enable-dp-lm-head"):
            check_profile(dflash, Context(enable_dp_attention=True, version=version), "sglang")
    with pytest.raises(ProfileError, match="needs --enable-dp-lm-head"):
        check_profile(dflash, Context(enable_dp_attention=True, version=(0, 5, 23)), "sglang")
    check_profile(dflash, Context(enable_dp_attention=True, enable_dp_lm_head=True, version=(0, 5, 23)), "sglang")


def test_lower_case_algorithm_is_written_upper_case():
    """Up to 0.5.11 --speculative-algorithm's choices are case-sensitive: `nextn` is refused there."""
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", "m"]
    new = apply_profile(argv, p("nextn", 3, 1, 4), "0.4.9")
    assert new[new.index("--speculative-algorithm") + 1] == "NEXTN"
    check_profile(p("nextn", 3, 1, 4), Context(version=(0, 4, 9)), "sglang")


@pytest.mark.parametrize("version,algo,method", [
    ("0.8.5", "NEXTN", None), ("0.9.0", "NEXTN", "deepseek_mtp"), ("0.10.2", "NEXTN", "deepseek_mtp"),
    ("0.11.2", "NEXTN", "mtp"), (None, "NEXTN", "mtp"), ("0.9.0", "EAGLE3", None), ("0.9.1", "EAGLE3", "eagle3"),
    ("0.8.5", "EAGLE", "eagle"),
])
def test_vllm_method_by_version(version, algo, method):
    from mtptui.control.profiles import vllm_method
    if method is None:
        with pytest.raises(ProfileError, match="has no"):
            vllm_method(algo, version)
        with pytest.raises(ProfileError):
            check_profile(p(algo, 3, path="d"), Context(version=vllm_version(version)), "vllm")
    else:
        assert vllm_method(algo, version) == method


def vllm_version(v):
    from mtptui.control.version import vtuple
    return vtuple(v) if v else None


def test_preview_says_whose_rules_and_what_the_server_runs():
    from mtptui.control.plan import APPLY, Plan
    from mtptui.control.session import expected
    base = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--page-size", "16"]
    tree = p("EAGLE", 5, 4, 8, "d", name="tree")

    def plan(version):
        new = apply_profile(base, tree, version)
        return Plan(host="h", unit="u", action=APPLY, profile=tree, engine="sglang", old_argv=base,
                    new_argv=new, old_dropin=None, new_dropin="x", commands=[], server_version=version)
    unknown = plan(None).preview_lines()
    assert "rules:    version unknown: checked against SGLang 0.5.23's rules" in unknown
    assert not any(line.startswith("runs:") for line in unknown)
    old = plan("0.4.6")
    assert not any(line.startswith("rules:") for line in old.preview_lines())
    assert "runs:     topk 1 (asked 4), num_draft_tokens 6 (asked 8): the server sets these itself; " \
           "verify expects them" in old.preview_lines()
    assert expected(old.new_argv, "0.4.6")["topk"] == 1 and expected(old.new_argv, None)["topk"] == 4
