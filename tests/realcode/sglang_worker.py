"""Runs in a subprocess, one SGLang version: imports that version's own server_args.py (from the
wheel's files, every module that is not installed here stubbed), builds its argparse parser, and
for each argv read on stdin (JSON: a list of argument lists) parses it and runs the version's
speculative-decoding rules; prints one JSON result per argv.

    python sglang_worker.py ROOT < cases.json     (ROOT: the wheel's files, extracted)
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import io
import json
import logging
import os
import sys
import textwrap
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from stubs import _Finder, _Stub  # noqa: E402

_REFUSALS = (ValueError, AssertionError, NotImplementedError)
# Errors that come from running here, not from the version's rules.
_ARTIFACTS = ("config.json", "is not found", "values to unpack", "Cannot find sglang")


def load(root: str, extra_paths: list[str]):
    sys.path[:0] = [root, *extra_paths]
    for name, sub in (("sglang", "sglang"), ("sglang.srt", "sglang/srt")):
        m = types.ModuleType(name)
        m.__path__ = [os.path.join(root, sub)]
        sys.modules[name] = m
    sys.meta_path.insert(0, _Finder({"sglang", "msgspec"}))
    logging.disable(logging.CRITICAL)
    try:
        import sglang.srt.platforms as plat
        plat._current_platform = getattr(plat, "CudaSRTPlatform", plat.SRTPlatform)()
    except Exception:  # noqa: BLE001 - versions before platforms/
        pass
    from sglang.srt import server_args
    return server_args


class _HfConfig:
    architectures = ["Qwen3ForCausalLM"]
    model_type = "qwen3"

    def __getattr__(self, k):
        return _Stub(f"hf_config.{k}")


def _inline_rules(sa):
    """0.4.x-0.5.2 run their speculative rules inline in __post_init__: those statements (the
    `if self.speculative_algorithm ...` blocks), as a function of self."""
    src = open(sa.__file__).read()
    tree = ast.parse(src)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ServerArgs")
    post = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__post_init__")
    body = [s for s in post.body if isinstance(s, ast.If) and "self.speculative_algorithm" in ast.unparse(s.test)]
    if not body:
        return None
    code = "def _spec_rules(self):\n" + textwrap.indent("\n".join(ast.unparse(s) for s in body), "    ")
    ns = dict(vars(sa))
    exec(compile(code, sa.__file__, "exec"), ns)
    return ns["_spec_rules"]


def rules_of(sa):
    """(how, function(server_args)) of the version's speculative handling."""
    cls = sa.ServerArgs
    if hasattr(cls, "_handle_speculative_decoding"):
        return "ServerArgs._handle_speculative_decoding", cls._handle_speculative_decoding
    try:
        from sglang.srt.arg_groups import speculative_hook
        return "arg_groups/speculative_hook.handle_speculative_decoding", speculative_hook.handle_speculative_decoding
    except ImportError:
        pass
    f = _inline_rules(sa)
    return ("ServerArgs.__post_init__'s speculative blocks", f) if f else ("none", None)


def _fields(cls):
    if dataclasses.is_dataclass(cls):
        return dataclasses.fields(cls)
    out = []
    for name in getattr(cls, "__struct_fields__", ()):
        f = types.SimpleNamespace(name=name, default=getattr(cls, name, None),
                                  default_factory=dataclasses.MISSING)
        out.append(f)
    return out


def server_args_of(sa, ns: argparse.Namespace):
    cls = sa.ServerArgs
    try:
        obj = object.__new__(cls)
    except TypeError:  # 0.5.23: a record built by its own constructor
        ns.device = ns.device or "cuda"
        if getattr(ns, "enable_dp_attention", False) and getattr(ns, "attn_dp_size", None) in (None, 1):
            ns.attn_dp_size = ns.dp_size  # what its parallel hook resolves before the speculative one
        return cls.from_cli_args(ns)
    for f in _fields(cls):
        if f.default is not dataclasses.MISSING:
            value = f.default
        elif f.default_factory is not dataclasses.MISSING:
            value = f.default_factory()
        else:
            value = None
        object.__setattr__(obj, f.name, value)
    for k, v in vars(ns).items():
        object.__setattr__(obj, k, v)
    if getattr(obj, "page_size", None) is None:
        object.__setattr__(obj, "page_size", 1)
    object.__setattr__(obj, "device", "cuda")
    hf = _HfConfig()
    for name in ("get_hf_config", "get_model_config"):
        if hasattr(cls, name):
            object.__setattr__(obj, name, lambda hf=hf: hf)
    return obj


SPEC = ("speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk",
        "speculative_num_draft_tokens", "speculative_draft_model_path", "speculative_adaptive")


def run_case(sa, parser, how, rules, args: list[str]) -> dict:
    out: dict = {"how": how}
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            ns = parser.parse_args(args)
    except SystemExit:
        out["parse_error"] = err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else "exit"
        return out
    out["parsed"] = {k: getattr(ns, k, None) for k in SPEC}
    if rules is None:
        return out
    try:
        obj = server_args_of(sa, ns)
    except Exception as e:  # noqa: BLE001 - the record itself could not be built here
        out["unrun"] = f"building ServerArgs: {type(e).__name__}: {e}"[:300]
        return out
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            rules(obj)
    except _REFUSALS as e:
        if any(m in str(e) for m in _ARTIFACTS):  # the model's files, or a stub in the way
            out["unrun"] = f"{type(e).__name__}: {e}"[:300]
        else:
            out["refused"] = f"{type(e).__name__}: {e}"
        return out
    except Exception as e:  # noqa: BLE001 - a stub in the way: the rules could not run to the end
        out["unrun"] = f"{type(e).__name__}: {e}"[:300]
        return out
    view = obj
    try:
        from sglang.srt.arg_groups.model_override_base import resolved_view  # 0.5.17+
        view = resolved_view(obj)
    except Exception:  # noqa: BLE001
        pass
    out["settings"] = {k: getattr(view, k, getattr(obj, k, None)) for k in SPEC}
    return out


def main() -> None:
    root = sys.argv[1]
    sa = load(root, sys.argv[2:])
    parser = argparse.ArgumentParser()
    sa.ServerArgs.add_cli_args(parser)
    how, rules = rules_of(sa)
    cases = json.load(sys.stdin)
    flags = sorted(s for a in parser._actions for s in a.option_strings)
    choices = {a.option_strings[0]: list(a.choices) if a.choices else None for a in parser._actions
               if a.option_strings and a.option_strings[0] in ("--speculative-algorithm", "--attention-backend")}
    results = [run_case(sa, parser, how, rules, c) for c in cases]
    json.dump({"flags": flags, "choices": choices, "how": how, "results": results}, sys.stdout, default=str)


if __name__ == "__main__":
    main()
