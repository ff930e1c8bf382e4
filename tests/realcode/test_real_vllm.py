"""mtptui's vLLM control path against each release's own source, every release from 0.8.1 (the
last before --speculative-config) to 0.33.0.

Executed (vllm_worker.py, in a subprocess per version): the version's SpeculativeConfig, built
from the --speculative-config mtptui writes as the version's create_speculative_config builds it
(before 0.8.2 `SpeculativeConfig.maybe_create_spec_config` from --speculative-model and
--num-speculative-tokens), every module but its config file stubbed and pydantic real: the method
check (pydantic's Literal from 0.9.1, the method handling of __post_init__ in all), and the method
the version ends with (before 0.8.5 it goes by the draft's name). The model configs are fakes
with the architecture their names say (vllm_worker.MODELS).

Read with `ast`, not executed: the flags of vllm/engine/arg_utils.py (its parser is built from
every config class, with torch and the platform behind them: too much to stub well), and the
SpeculativeMethod Literal (held equal to the executed one).

What is held: no profile mtptui accepts is refused by the version, or run as another method;
where mtptui refuses what the version would run as asked, the rule is named (STRICTER).

The source distribution is read (a few MB; the few .py files needed are kept in the cache, see
wheels.sources), the wheel (about 500 MB) only where a release has none (0.15.0, 0.15.1)."""

from __future__ import annotations

import ast
import functools
import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from wheels import CACHE, sources

from mtptui.control.launch import Context, apply_profile, spec_flags
from mtptui.control.profiles import (
    VLLM_METHODS,
    Profile,
    ProfileError,
    check_profile,
    same_algorithm,
    vllm_algorithm,
)
from mtptui.control.version import vtuple

pytestmark = pytest.mark.realcode

WORKER = Path(__file__).with_name("vllm_worker.py")
VERSIONS = ("0.8.1", "0.8.2", "0.8.3", "0.8.4", "0.8.5", "0.8.5.post1", "0.9.0", "0.9.0.1", "0.9.1", "0.9.2",
            "0.10.0", "0.10.1", "0.10.1.1", "0.10.2", "0.11.0", "0.11.1", "0.11.2", "0.12.0", "0.13.0", "0.14.0",
            "0.14.1", "0.15.0", "0.15.1", "0.16.0", "0.17.0", "0.17.1", "0.18.0", "0.18.1", "0.19.0", "0.19.1",
            "0.20.0", "0.20.1", "0.20.2", "0.21.0", "0.22.0", "0.22.1", "0.23.0", "0.24.0", "0.25.0", "0.25.1",
            "0.26.0", "0.27.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0")


DYNAMIC_SD = "vllm/v1/spec_decode/dynamic/utils.py"  # Dynamic SD's schedule rules (0.24.0+)


def _wanted(path: str) -> bool:
    return path.endswith(".py") and (path in ("vllm/config.py", "vllm/engine/arg_utils.py", DYNAMIC_SD)
                                     or path.startswith("vllm/config/"))


EAGLE, EAGLE3 = "yuhuili/EAGLE-LLaMA3.1-Instruct-8B", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
PROFILES = [Profile("mtp3", algorithm="NEXTN", num_steps=3, topk=1, num_draft_tokens=4),
            Profile("eagle", algorithm="EAGLE", num_steps=3, draft_model_path=EAGLE),
            Profile("eagle-other-name", algorithm="EAGLE", num_steps=3, draft_model_path="org/head-for-llama"),
            Profile("eagle3", algorithm="EAGLE3", num_steps=3, draft_model_path=EAGLE3),
            Profile("ngram", algorithm="NGRAM", num_steps=4),
            Profile("ngram-lookup", algorithm="NGRAM", num_steps=4, extra_args=("--ngram-prompt-lookup-max", "4")),
            Profile("draft", algorithm="STANDALONE", num_steps=3, draft_model_path="meta-llama/Llama-3.2-1B-Instruct"),
            # Dynamic SD (0.24.0+): K per range of batch sizes, 0 past 64
            Profile("mtp-schedule", algorithm="NEXTN", num_steps=3, schedule=((1, 8, 3), (9, 64, 1), (65, 4096, 0)))]
BASE = ["vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct"]
TARGETS = {"NEXTN": "deepseek-ai/DeepSeek-V3"}  # MTP needs a model with MTP layers
DEFAULT_TARGET = "meta-llama/Llama-3.1-8B-Instruct"

# (algorithm, first version, last version): mtptui refuses what these versions would run as asked.
STRICTER = {
    # 0.8.5-0.9.0 take eagle3 (their method handling passes "eagle", "eagle3") though their
    # SpeculativeMethod Literal has it only from 0.9.1: mtptui goes by the declared methods.
    ("EAGLE3", "0.8.5", "0.9.0.1"): "eagle3 is not one of the declared methods before 0.9.1",
}


def _stricter(algorithm: str, version: str) -> str | None:
    v = vtuple(version)
    for (algo, first, last), why in STRICTER.items():
        if algo == algorithm and vtuple(first) <= v <= vtuple(last):
            return why
    return None


def _flags_of(arg_utils: str) -> set[str]:
    """The option strings in arg_utils.py (every string constant that looks like one)."""
    return {n.value for n in ast.walk(ast.parse(arg_utils))
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and _OPTION.fullmatch(n.value)}


_OPTION = re.compile(r"--?[a-zA-Z][a-zA-Z0-9_-]*")


def _literal_values(tree: ast.Module, name: str) -> set[str]:
    """The strings of `name = Literal[...]`, nested Literal names resolved."""
    assigns = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigns[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            assigns[node.target.id] = node.value

    def values(expr) -> set[str]:
        if isinstance(expr, ast.Subscript):
            items = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
            return set().union(*(values(i) for i in items))
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return {expr.value}
        if isinstance(expr, ast.Name) and expr.id in assigns:
            return values(assigns[expr.id])
        return set()
    return values(assigns[name]) if name in assigns else set()


def _case(argv: list[str], algorithm: str) -> dict:
    """What the version is given for argv's speculative flags: the --speculative-config object,
    or before 0.8.2 the values of --speculative-model, --num-speculative-tokens, --ngram-*."""
    target = TARGETS.get(algorithm.upper(), DEFAULT_TARGET)
    if "--speculative-config" in argv:
        return {"config": json.loads(argv[argv.index("--speculative-config") + 1]), "target": target}
    legacy: dict = {}
    for flag, key, kind in (("--speculative-model", "speculative_model", str),
                            ("--num-speculative-tokens", "num_speculative_tokens", int),
                            ("--ngram-prompt-lookup-max", "ngram_prompt_lookup_max", int),
                            ("--ngram-prompt-lookup-min", "ngram_prompt_lookup_min", int)):
        if flag in argv:
            legacy[key] = kind(argv[argv.index(flag) + 1])
    return {"config": {}, "legacy": legacy, "target": target}


def _spellings(profile: Profile, version: str) -> list[dict]:
    """For a profile mtptui refuses: the ways the version could be asked for it (every method
    name the algorithm has had), to see whether it would run it."""
    algo = profile.algorithm.upper()
    target = TARGETS.get(algo, DEFAULT_TARGET)
    if vtuple(version) < (0, 8, 2):
        model = "[ngram]" if algo == "NGRAM" else profile.draft_model_path
        legacy = {"num_speculative_tokens": profile.num_steps}
        if model:
            legacy["speculative_model"] = model
        return [{"config": {}, "legacy": legacy, "target": target}]
    methods = ["mtp", "deepseek_mtp"] if algo in ("NEXTN", "MTP") else [VLLM_METHODS[algo]] if algo in VLLM_METHODS else []
    out = []
    for method in methods:
        config = {"method": method, "num_speculative_tokens": profile.num_steps}
        if profile.draft_model_path:
            config["model"] = profile.draft_model_path
        if profile.schedule:
            config["num_speculative_tokens_per_batch_size"] = [list(e) for e in profile.schedule]
        out.append({"config": config, "target": target})
    return out


def _cases(version: str):
    """(profile, mtptui's argv or None, its refusal or None, the cases for the worker)."""
    out = []
    for profile in PROFILES:
        try:
            check_profile(profile, Context(version=vtuple(version)), "vllm")
            argv = apply_profile(BASE, profile, version)
        except ProfileError as e:
            out.append((profile, None, str(e), _spellings(profile, version)))
            continue
        out.append((profile, argv, None, [_case(argv, profile.algorithm)]))
    return out


@functools.lru_cache(maxsize=None)
def _real(version: str, root: str, pydantic: str) -> dict:
    cases = [c for _, _, _, cs in _cases(version) for c in cs]
    r = subprocess.run([sys.executable, str(WORKER), root, pydantic], input=json.dumps(cases),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"vLLM {version}'s SpeculativeConfig did not load here: {r.stderr[-3000:]}"
    out = json.loads(r.stdout)
    src = Path(root)
    args = (src / "vllm/engine/arg_utils.py").read_text()
    out["flags"] = sorted(_flags_of(args))
    out["arg_utils"] = args
    out["ast_methods"] = sorted(set().union(*(
        _literal_values(ast.parse(f.read_text()), "SpeculativeMethod")
        for f in (src / "vllm/config.py", src / "vllm/config/__init__.py", src / "vllm/config/speculative.py")
        if f.exists())))
    return out


@pytest.fixture(scope="session")
def fetched(request, need) -> dict:
    """The source files of every version this session's tests ask for, fetched four at a time
    (a version that could not be: its error, said again by its own tests)."""
    versions = {item.callspec.params["version"] for item in request.session.items
                if item.module.__name__ == __name__ and hasattr(item, "callspec")}

    def one(version):
        try:
            return sources("vllm", version, _wanted, need)
        except BaseException as e:  # noqa: BLE001 - need's skip or failure, for that version's tests
            return e
    with ThreadPoolExecutor(4) as pool:
        return dict(zip(versions, pool.map(one, versions)))


@pytest.fixture
def real(need, pydantic_path, fetched):
    def get(version):
        root = fetched.get(version)
        if not isinstance(root, Path):
            root = sources("vllm", version, _wanted, need)
        return _real(version, str(root), pydantic_path)
    return get


@pytest.mark.parametrize("version", VERSIONS)
def test_flags(version, real):
    """--speculative-config from 0.8.2, before it --speculative-model and
    --num-speculative-tokens: every flag mtptui writes is one the version's parser has."""
    flags = set(real(version)["flags"])
    v = vtuple(version)
    if v >= (0, 8, 2):
        assert "--speculative-config" in flags
    else:
        assert "--speculative-config" not in flags
        assert {"--speculative-model", "--num-speculative-tokens", "--ngram-prompt-lookup-max"} <= flags
    for profile, argv, _, _ in _cases(version):
        if argv:  # the profile's own extra_args are the user's
            written = {a for a in argv[len(BASE):len(argv) - len(profile.extra_args)] if a.startswith("-")}
            assert written <= flags, (version, sorted(written - flags))


@pytest.mark.parametrize("version", VERSIONS)
def test_methods(version, real):
    """The SpeculativeMethod Literal read with ast is the one the version's module defines, and
    every method mtptui writes is in it (0.8.5+; 0.8.2-0.8.4 have none, the method there is free
    text that __post_init__ replaces)."""
    result = real(version)
    if result["literal"] is not None:
        assert set(result["literal"]) == set(result["ast_methods"])
    v = vtuple(version)
    if v >= (0, 8, 5):
        assert result["ast_methods"], f"no SpeculativeMethod found in vLLM {version}'s source"
    for profile, argv, _, _ in _cases(version):
        if argv and "--speculative-config" in argv and v >= (0, 8, 5):
            method = json.loads(argv[argv.index("--speculative-config") + 1])["method"]
            assert method in result["ast_methods"], (version, profile.name, method)


@pytest.mark.parametrize("version", VERSIONS)
def test_profiles_against_the_real_config(version, real):
    result = real(version)
    results = iter(result["results"])
    problems = []
    for profile, argv, verdict, cases in _cases(version):
        outcomes = [next(results) for _ in cases]
        for case, r in zip(cases, outcomes):
            if profile.schedule and "num_speculative_tokens_per_batch_size" in r.get("unrun", ""):
                continue  # a plain dataclass (before 0.9.1) refuses the unknown key: refused, as mtptui does
            if "unrun" in r:
                problems.append(f"{profile.name}: vLLM {version}'s config did not run here: {r['unrun']}")
        if verdict is None:
            (r,) = outcomes
            if "refused" in r:
                problems.append(f"{profile.name}: mtptui accepts, vLLM {version} refuses: {r['refused']}")
            elif "method" in r and not same_algorithm(vllm_algorithm(r["method"] or ""), profile.algorithm):
                problems.append(f"{profile.name}: mtptui asks for {profile.algorithm}, vLLM {version} "
                                f"runs method {r['method']}")
            if "--speculative-config" in argv:  # verify reads the method back as the algorithm asked for
                assert same_algorithm(spec_flags(argv)["algorithm"], profile.algorithm)
            continue
        ran_as_asked = [c for c, r in zip(cases, outcomes) if r.get("method")
                        and same_algorithm(vllm_algorithm(r["method"]), profile.algorithm)]
        if profile.schedule and not _has_schedule(real_root(version)):
            ran_as_asked = []  # it runs the method, the schedule ignored: not as asked
        if ran_as_asked and not _stricter(profile.algorithm, version):
            problems.append(f"{profile.name}: mtptui refuses ({verdict}), vLLM {version} runs it "
                            f"as {ran_as_asked[0]['config'] or ran_as_asked[0].get('legacy')}")
    assert not problems, "\n".join(problems)


def real_root(version: str) -> Path:
    return CACHE / "vllm-src" / version


def _has_schedule(root: Path) -> bool:
    """Whether the version's SpeculativeConfig has the Dynamic SD schedule field."""
    return any("num_speculative_tokens_per_batch_size" in f.read_text()
               for f in (root / "vllm/config.py", root / "vllm/config/speculative.py") if f.exists())


SPEC_SHORTHANDS = ("--spec-method", "--spec-model", "--spec-tokens")


@pytest.mark.parametrize("version", VERSIONS)
def test_profile_replaces_the_spec_shorthands(version, real):
    """0.22+ also take --spec-method, --spec-model and --spec-tokens, and refuse one beside the
    same key in --speculative-config ("... are mutually exclusive"): applying a profile to a
    launch that uses them must drop them, as it drops --speculative-config."""
    result = real(version)
    has = set(SPEC_SHORTHANDS) & set(result["flags"])
    assert has == (set(SPEC_SHORTHANDS) if vtuple(version) >= (0, 22, 0) else set()), sorted(has)
    if not has:
        return
    assert "are mutually exclusive" in result["arg_utils"]
    old = BASE + ["--spec-method", "ngram", "--spec-tokens", "3"]
    assert spec_flags(old, version)["algorithm"] == "NGRAM" and spec_flags(old, version)["num_steps"] == 3
    new = apply_profile(old, PROFILES[1], version)
    assert not set(SPEC_SHORTHANDS) & set(new), new


@pytest.mark.parametrize("version", VERSIONS)
def test_short_speculative_config_is_read(version, real):
    """0.19+ take -sc for --speculative-config: the settings of a launch that uses it are read."""
    has = "-sc" in real(version)["flags"]
    assert has == (vtuple(version) >= (0, 19, 0))
    if has:
        argv = BASE + ["-sc", json.dumps({"method": "ngram", "num_speculative_tokens": 3})]
        assert spec_flags(argv, version)["algorithm"] == "NGRAM"
        assert "-sc" not in apply_profile(argv, PROFILES[1], version)


# -- Dynamic SD's schedule ----------------------------------------------------------------------
# The versions whose schedule rules are run here: the first two with Dynamic SD, the first that drops
# it with data parallel above 1 (VllmConfig._maybe_disable_dynamic_sd_for_data_parallel), the
# engine tier's and the newest.
SCHEDULE_VERSIONS = ("0.24.0", "0.25.0", "0.28.0", "0.32.0", "0.33.0")
SCHEDULES = [((1, 8, 3), (9, 64, 1), (65, 4096, 0)), ((1, 4096, 2),), ((1, 8, 3), (32, 64, 0)),
             ((2, 8, 3),), ((1, 8, 3), (8, 16, 1)), ((1, 8, 3), (16, 9, 1)), ((9, 64, 1), (1, 8, 3)),
             ((0, 8, 3),), ((1, 8, 5),)]


def dynamic_sd(version: str, need):
    """The version's own vllm/v1/spec_decode/dynamic_sd module (DYNAMIC_SD), loaded from its sources."""
    import importlib.util

    root = sources("vllm", version, _wanted, need)  # the vLLM tests' own selection of files
    path = root / DYNAMIC_SD
    need(path.exists(), f"{path} is missing: a cache from before {DYNAMIC_SD} was kept (remove {root})")
    spec = importlib.util.spec_from_file_location(f"dynamic_sd_{version.replace('.', '_')}", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("version", SCHEDULE_VERSIONS)
def test_schedules_against_the_real_rules(version, real, need):
    """The version's validate_and_normalize_dynamic_sd_schedule (its scheduler builds the lookup
    from it at start and refuses what it refuses) and mtptui's check agree on every schedule: what
    vLLM refuses mtptui refuses; what mtptui refuses vLLM refuses or changes (a K above
    num_speculative_tokens, which build_dynamic_sd_schedule_lookup clamps); the field is in the
    version's SpeculativeConfig, and its data-parallel fallback is there from 0.26.0."""
    real(version)  # its files fetched
    root = sources("vllm", version, _wanted, need)
    mod = dynamic_sd(version, need)
    assert "num_speculative_tokens_per_batch_size" in (root / "vllm/config/speculative.py").read_text()
    problems = []
    for schedule in SCHEDULES:
        p = Profile("s", algorithm="NEXTN", num_steps=3, schedule=schedule)
        try:
            check_profile(p, Context(version=vtuple(version)), "vllm")
            ours = None
        except ProfileError as e:
            ours = str(e)
        try:
            lookup = mod.build_dynamic_sd_schedule_lookup([list(e) for e in schedule], 4096, 3)
            theirs = None
        except ValueError as e:
            lookup, theirs = None, str(e)
        if theirs and not ours:
            problems.append(f"{schedule}: mtptui accepts, vLLM {version} refuses: {theirs}")
        if ours and not theirs:
            asked = {bs: k for a, b, k in schedule for bs in range(a, b + 1) if bs <= 4096}
            changed = lookup is not None and any(lookup[bs] != k for bs, k in asked.items())
            if not changed:
                problems.append(f"{schedule}: mtptui refuses ({ours}), vLLM {version} runs it as asked")
    assert not problems, "\n".join(problems)
    fallback = "_maybe_disable_dynamic_sd_for_data_parallel" in (root / "vllm/config/vllm.py").read_text()
    assert fallback == (vtuple(version) >= (0, 26, 0))
    with pytest.raises(ProfileError, match="data parallel 2"):
        check_profile(Profile("s", algorithm="NEXTN", num_steps=3, schedule=SCHEDULES[0]),
                      Context(dp=2, version=vtuple(version)), "vllm")
