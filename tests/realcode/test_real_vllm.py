"""mtptui's vLLM control path against each release's own source, read with `ast` (not executed:
vLLM's arg_utils pulls in torch and its config classes at import, too much to stub well): whether
`--speculative-config` exists (0.8.2+; before it `--speculative-model` and
`--num-speculative-tokens`), and the methods `SpeculativeMethod` allows (a Literal of Literals).
The wheels are hundreds of MB: each is downloaded once, the few .py files read here are
extracted into the cache, and the wheel is deleted again (MTPTUI_KEEP_WHEELS=1 keeps it)."""

from __future__ import annotations

import ast
import json
import os

import pytest
from wheels import CACHE, wheel

from mtptui.control.launch import Context, apply_profile, spec_flags
from mtptui.control.profiles import Profile, ProfileError, check_profile, same_algorithm, vllm_method
from mtptui.control.version import vtuple

pytestmark = pytest.mark.realcode

VERSIONS = ("0.8.1", "0.8.5", "0.9.0", "0.9.1", "0.9.2", "0.10.2", "0.11.0", "0.11.2", "0.33.0")
FILES = ("vllm/engine/arg_utils.py", "vllm/config.py", "vllm/config/__init__.py", "vllm/config/speculative.py")
PROFILES = [Profile("mtp3", algorithm="NEXTN", num_steps=3, topk=1, num_draft_tokens=4),
            Profile("eagle", algorithm="EAGLE", num_steps=3, draft_model_path="d"),
            Profile("eagle3", algorithm="EAGLE3", num_steps=3, draft_model_path="d"),
            Profile("ngram", algorithm="NGRAM", num_steps=4),
            Profile("draft", algorithm="STANDALONE", num_steps=3, draft_model_path="d")]


def sources(version: str, need) -> dict[str, str]:
    root = CACHE / "vllm" / version
    if not (root / ".done").exists():
        import zipfile
        path = wheel("vllm", version, need)
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
            z.extractall(root, [f for f in FILES if f in names])
        (root / ".done").write_text("ok\n")
        if not os.environ.get("MTPTUI_KEEP_WHEELS"):
            path.unlink()
    return {f: (root / f).read_text() for f in FILES if (root / f).exists()}


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


def real_of(version: str, need) -> dict:
    src = sources(version, need)
    args = src["vllm/engine/arg_utils.py"]
    methods: set[str] = set()
    for f in FILES[1:]:
        if f in src:
            methods |= _literal_values(ast.parse(src[f]), "SpeculativeMethod")
    # 0.11+ make their flags from the config dataclasses' field names: no "--speculative-config" literal
    config = "--speculative-config" in args or ("speculative_config" in args and "--speculative-model" not in args)
    return {"config": config,
            "old": "--speculative-model" in args and "--num-speculative-tokens" in args,
            "methods": methods}


@pytest.mark.parametrize("version", VERSIONS)
def test_vllm_flags_and_methods(version, need):
    real = real_of(version, need)
    v = vtuple(version)
    assert real["config"] == (v >= (0, 8, 2)) or real["old"], real
    if v < (0, 8, 2):
        assert real["old"] and not real["config"]
    else:
        assert real["methods"], f"no SpeculativeMethod found in vLLM {version}'s source"
    base = ["vllm", "serve", "Qwen/Qwen3-8B"]
    for profile in PROFILES:
        try:
            check_profile(profile, Context(version=v), "vllm")
            argv = apply_profile(base, profile, version)
        except ProfileError as e:
            if v >= (0, 8, 2):  # refused: the version's own spelling must be missing
                try:
                    method = vllm_method(profile.algorithm, None)
                except ProfileError:
                    continue
                alternatives = {method, "deepseek_mtp"} if method == "mtp" else {method}
                assert not (alternatives & real["methods"]), (version, profile.name, str(e))
            continue
        if v < (0, 8, 2):
            assert "--speculative-config" not in argv and "--speculative-model" in argv
            continue
        config = json.loads(argv[argv.index("--speculative-config") + 1])
        assert config["method"] in real["methods"], (version, profile.name, config["method"], real["methods"])
        # verify reads the method back as the algorithm asked for
        assert same_algorithm(spec_flags(argv)["algorithm"], profile.algorithm)
