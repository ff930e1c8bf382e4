"""mtptui's SGLang control path against each release's own code: its argparse parser (flags,
abbreviations, choices) and its speculative-decoding rules (`_handle_speculative_decoding`, from
0.5.13 `arg_groups/speculative_hook.py`, before 0.5.3 the blocks of `__post_init__`), run on the
argv that mtptui's profiles produce for that version.

What is held: no profile mtptui accepts is refused by the real version; where the real version
changes the counts itself, mtptui's `effective` settings (what the preview says and verify
expects) are the real result; the flag reader reads what argparse reads, abbreviations included.
Where mtptui is stricter on purpose, the rule is named (STRICTER below) and the real outcome is
allowed to differ only there.

Not run here, said by the results (`unrun`): rules that reach past the stubs (a kernel's JIT path,
the model's config); those cases are held at the parser only. The model is a plain Qwen3, and every
case with page size > 1 names its attention backend: the backend SGLang picks itself depends on
the GPU, which mtptui leaves to the server.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mtptui.control.launch import (
    apply_profile,
    context_of,
    effective_flags,
    find_launch,
    sglang_spec_flags,
    spec_flags,
)
from mtptui.control.profiles import (
    SGLANG_ALGORITHMS,
    Profile,
    ProfileError,
    check_profile,
    same_algorithm,
    sglang_algorithms,
)

from wheels import extracted

pytestmark = pytest.mark.realcode

WORKER = Path(__file__).with_name("sglang_worker.py")
VERSIONS = ("0.4.3", "0.4.4", "0.4.5", "0.4.6", "0.4.7", "0.4.8", "0.4.9", "0.4.10", "0.5.1", "0.5.2", "0.5.3",
            "0.5.4", "0.5.5", "0.5.6", "0.5.7", "0.5.8", "0.5.9", "0.5.10", "0.5.11", "0.5.12", "0.5.13",
            "0.5.14", "0.5.15", "0.5.16", "0.5.17", "0.5.18", "0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23")

# Rules where mtptui refuses what SGLang lets through, on purpose, and why:
STRICTER = {
    # SGLang changes draft tokens to steps + 1 with topk 1 (a warning in the log): a profile
    # asking for other counts would never show what it asked for, so mtptui says so up front.
    # The same for NGRAM's topk (set from --speculative-ngram-max-bfs-breadth) and DFLASH's
    # steps and topk (set to 1).
    "silently change": "SGLang silently changes the counts",
    # Counts below 1 make no sense for any algorithm; SGLang lets some through (NGRAM) or fails
    # later, deep in the run.
    "must be at least 1": "counts below 1",
    # Without counts SGLang picks them for the model (topk 4 for Llama, 1 for DeepSeek), then
    # refuses a topk > 1 with page size > 1 on some backends, or on trtllm_mha: mtptui cannot
    # know the model's choice, so it asks for the counts there.
    "SGLang picks the counts": "the counts SGLang picks depend on the model",
    # --speculative-adaptive with what turns it off (DP attention, topk > 1, another algorithm):
    # SGLang runs static steps with a warning; mtptui says so up front (control/profiles.py)
    "fall back to static steps": "SGLang falls back to static steps",
}

MODEL = ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-8B"]
BASES = {
    "plain": [],
    **{f"page16-{b}": ["--page-size", "16", "--attention-backend", b]
       for b in ("flashinfer", "fa3", "triton", "torch_native", "trtllm_mha")},
    "dpa": ["--tp", "2", "--dp", "2", "--enable-dp-attention"],
    "dpa-lmhead": ["--tp", "2", "--dp", "2", "--enable-dp-attention", "--enable-dp-lm-head"],
}


def prof(name, algo, steps=None, topk=None, draft=None, path=None, extra=(), adaptive=False):
    return Profile(name, algorithm=algo, num_steps=steps, topk=topk, num_draft_tokens=draft,
                   draft_model_path=path, extra_args=tuple(extra), adaptive=adaptive)


PROFILES = [
    prof("mtp1", "NEXTN", 1, 1, 2), prof("mtp3", "NEXTN", 3, 1, 4),
    prof("nextn-lower", "nextn", 3, 1, 4),  # written as the version spells it: NEXTN
    prof("nextn-auto", "NEXTN"),
    prof("nextn-5", "NEXTN", 3, 1, 5),  # STRICTER: silently changed to 4
    prof("eagle-tree", "EAGLE", 5, 4, 8, "yuhuili/EAGLE-Qwen3-8B"),
    prof("eagle-chain", "EAGLE", 3, 1, 4, "yuhuili/EAGLE-Qwen3-8B"),
    prof("eagle3", "EAGLE3", 3, 1, 4, "Tengyunw/qwen3_8b_eagle3"),
    prof("ngram", "NGRAM"), prof("ngram-10", "NGRAM", topk=10),
    prof("ngram-1", "NGRAM", topk=1),  # STRICTER: silently changed to 10
    prof("ngram-b1", "NGRAM", extra=("--speculative-ngram-max-bfs-breadth", "1")),
    prof("standalone", "STANDALONE", 3, 1, 4, "Qwen/Qwen3-0.6B"),
    prof("dflash", "DFLASH", path="z-lab/Qwen3-8B-DFlash-b16"),
    # adaptive steps (0.5.11+; before, argparse refuses the flag): runs adapting as a chain, falls
    # back to static steps (STRICTER) with a tree, under DP attention, or with another algorithm
    prof("mtp3-adaptive", "NEXTN", 3, 1, 4, adaptive=True),  # STRICTER on 0.5.11: spec v2 there
    prof("mtp3-adaptive-v1", "NEXTN", 3, 1, 4, extra=("--disable-overlap-schedule",), adaptive=True),
    prof("eagle3-adaptive", "EAGLE3", 3, 1, 4, "Tengyunw/qwen3_8b_eagle3", adaptive=True),
    prof("eagle-tree-adaptive", "EAGLE", 5, 4, 8, "yuhuili/EAGLE-Qwen3-8B", adaptive=True),
    prof("standalone-adaptive", "STANDALONE", 3, 1, 4, "Qwen/Qwen3-0.6B", adaptive=True),
]


def run_real(version: str, cases: list[list[str]], need, msgspec_path: str) -> dict:
    root = extracted("sglang", version, "sglang", need)
    r = subprocess.run([sys.executable, str(WORKER), str(root)] + ([msgspec_path] if msgspec_path else []),
                       input=json.dumps(cases), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"SGLang {version}'s code did not load here: {r.stderr[-3000:]}"
    return json.loads(r.stdout)


def _cases(version: str):
    """(name, argv, mtptui's verdict: None accepted or its refusal) for every profile and base."""
    out = [(f"base@{b}", MODEL + base, None) for b, base in BASES.items()]
    for base_name, base in BASES.items():
        for p in PROFILES:
            argv = MODEL + base
            try:
                new = apply_profile(argv, p, version)
                check_profile(p, context_of(argv, version), "sglang")
                verdict = None
            except ProfileError as e:
                verdict = str(e)
            out.append((f"{p.name}@{base_name}", new, verdict))
    return out


ABBREVIATIONS = ["--speculative-draft", "--speculative-draft-model", "--speculative-draft-model-path",
                 "--speculative-num-s", "--speculative-num-d", "--speculative-eagle", "--speculative-alg"]


@pytest.fixture(scope="module")
def real(request, need, msgspec_path):
    cache = {}

    def get(version):
        if version not in cache:
            cases = _cases(version)
            abbrev = [MODEL + ["--speculative-algorithm", "EAGLE", a, "3" if "-num" in a or "-eagle" in a else "X"]
                      for a in ABBREVIATIONS]
            argvs = [argv[find_launch(argv).index:] for _, argv, _ in cases] + \
                    [argv[find_launch(argv).index:] for argv in abbrev]
            result = run_real(version, argvs, need, msgspec_path)
            cache[version] = (cases, abbrev, result)
        return cache[version]
    return get


@pytest.mark.parametrize("version", VERSIONS)
def test_flags_and_choices(version, real):
    """The speculative flag set mtptui reads with (abbreviations) and the algorithm choices are
    the version's own."""
    _, _, result = real(version)
    theirs = sorted(f for f in result["flags"] if f.startswith("--speculative-"))
    assert sorted(sglang_spec_flags(version)) == theirs
    choices = result["choices"].get("--speculative-algorithm")
    ours = sglang_algorithms(version)
    if choices is not None:  # up to 0.5.11: case-sensitive choices
        assert set(ours) == set(choices)
    else:  # 0.5.12+: any name, upper-cased; mtptui knows the built-ins
        assert set(ours) == set(SGLANG_ALGORITHMS)


@pytest.mark.parametrize("version", VERSIONS)
def test_profiles_against_the_real_rules(version, real):
    cases, _, result = real(version)
    results = result["results"][:len(cases)]
    ran = 0
    problems = []
    # A base the version's parser refuses (trtllm_mha on 0.4.x, --enable-dp-lm-head before
    # 0.4.7...) is no server that runs: its cases say nothing.
    bad_bases = {name.split("@")[1] for (name, _, _), r in zip(cases, results)
                 if name.startswith("base@") and "parse_error" in r}
    for (name, argv, verdict), r in zip(cases, results):
        if name.startswith("base@") or name.split("@")[1] in bad_bases:
            continue
        real_refusal = r.get("parse_error") or r.get("refused")
        if verdict is None:
            if real_refusal:
                problems.append(f"{name}: mtptui accepts, SGLang {version} refuses: {real_refusal}")
                continue
            if "settings" in r:
                ran += 1
                want = effective_flags(argv, version)
                got = r["settings"]
                if not same_algorithm(want["algorithm"], got["speculative_algorithm"]):
                    problems.append(f"{name}: algorithm {want['algorithm']} vs {got['speculative_algorithm']}")
                for ours, theirs in (("num_steps", "speculative_num_steps"), ("topk", "speculative_eagle_topk"),
                                     ("num_draft_tokens", "speculative_num_draft_tokens"),
                                     ("adaptive", "speculative_adaptive")):
                    if want[ours] is not None and got[theirs] != want[ours]:
                        problems.append(f"{name}: mtptui expects {ours} {want[ours]}, SGLang {version} "
                                        f"runs {got[theirs]}")
        elif not real_refusal and "unrun" not in r:
            ran += 1
            if not any(marker in verdict for marker in STRICTER):
                problems.append(f"{name}: mtptui refuses ({verdict}), SGLang {version} accepts it")
    assert not problems, "\n".join(problems)
    if result["how"] != "none":
        assert ran, f"SGLang {version}'s rules ({result['how']}) ran for no case: " + \
            "; ".join(sorted({r.get('unrun', '') for r in results})[:3])


@pytest.mark.parametrize("version", VERSIONS)
def test_flag_reader_reads_what_argparse_reads(version, real):
    """argparse takes unique prefixes: `--speculative-draft X` is the draft model path on
    0.4.3-0.5.1 and ambiguous (refused) from 0.5.2; mtptui's reader and `]` agree."""
    _, abbrev, result = real(version)
    for argv, r in zip(abbrev, result["results"][-len(abbrev):]):
        ours = spec_flags(argv, version)["draft_model_path"]
        flag = argv[-2]
        if "parse_error" in r:
            if flag.startswith("--speculative-draft"):
                assert ours is None, (version, flag, r["parse_error"])
            continue
        assert ours == r["parsed"]["speculative_draft_model_path"], (version, flag)
        num = spec_flags(argv, version)
        assert num["num_steps"] is None or str(num["num_steps"]) == str(r["parsed"]["speculative_num_steps"])


@pytest.mark.parametrize("version", __import__("mtptui.sim.flags", fromlist=["VERSIONS"]).VERSIONS)
def test_simulator_flags_are_the_versions(version, real):
    """The simulator (which the control tests lean on) has no speculative flag its version lacks,
    and 0.4.x's fixed --attention-backend choices."""
    from mtptui.sim import flags
    _, _, result = real(version)
    sim = flags.build_parser(version)
    ours = {s for a in sim._actions for s in a.option_strings if s.startswith("--speculative-")}
    assert ours <= set(result["flags"]), sorted(ours - set(result["flags"]))
    backend = next(a for a in sim._actions if "--attention-backend" in a.option_strings)
    real_choices = result["choices"].get("--attention-backend")
    if version < "0.5":
        assert set(backend.choices) == set(real_choices)
    algo = next(a for a in sim._actions if "--speculative-algorithm" in a.option_strings)
    if algo.choices is not None:
        assert set(algo.choices) == set(result["choices"]["--speculative-algorithm"])
