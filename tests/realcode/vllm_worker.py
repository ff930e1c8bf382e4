"""Runs in a subprocess, one vLLM version: imports that version's own SpeculativeConfig (from its
source files: vllm/config/speculative.py from 0.11, before it vllm/config.py or
vllm/config/__init__.py; every other module stubbed, pydantic real), and for each case read on
stdin (JSON: a list of {"config": the --speculative-config object, "target": a model name}) builds
the SpeculativeConfig as the version's create_speculative_config does, running its validation
(pydantic's field checks, the method's Literal among them, from 0.9.1; __post_init__'s method
handling); before 0.8.2 ({"legacy": the --speculative-model, --num-speculative-tokens and
--ngram-prompt-lookup-* values}) its SpeculativeConfig.maybe_create_spec_config. Prints one JSON
result per case: the method it ends with, or its refusal (a `raise` or `assert` of the release's
own code, or a pydantic field check), or why it could not run here (anything else: a stub in the
way).

    python vllm_worker.py ROOT [PYDANTIC_PATH] < cases.json   (ROOT: the release's files, extracted)

The model configs are fakes (ModelConfig would read the model's files): a target and a draft
have the architecture and model_type their names say (MODELS), and the version's own
hf_overrides are applied to the draft's, so its MTP detection (deepseek_v3 -> deepseek_mtp) runs.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import importlib.machinery
import io
import json
import logging
import os
import sys
import types
import typing

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from stubs import _Finder  # noqa: E402

_REFUSALS = (ValueError, AssertionError, NotImplementedError)

# name -> (model_type, architectures, more hf config): what a target or draft is taken to be.
MODELS = {
    "deepseek-ai/DeepSeek-V3": ("deepseek_v3", ["DeepseekV3ForCausalLM"], {"num_nextn_predict_layers": 1}),
    "meta-llama/Llama-3.1-8B-Instruct": ("llama", ["LlamaForCausalLM"], {}),
    "meta-llama/Llama-3.2-1B-Instruct": ("llama", ["LlamaForCausalLM"], {}),
    "yuhuili/EAGLE-LLaMA3.1-Instruct-8B": ("llama", ["LlamaForCausalLMEagle"], {}),
    "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B": ("llama", ["LlamaForCausalLMEagle3"], {}),
}


class _Stub:
    """What a module that is not here gives: not a str (SGLang's stubs are, and pydantic would
    take one in an annotation for a forward reference), usable as an annotation (any value),
    a base class, a decorator, an isinstance() class (nothing is one)."""

    def __init__(self, name: str = "stub"):
        self._n = name

    def __getattr__(self, k):
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return _Stub(f"{self._n}.{k}")

    def __call__(self, *a, **k):
        if len(a) == 1 and not k and isinstance(a[0], (types.FunctionType, type)):
            return a[0]  # a decorator
        return _Stub(self._n + "()")

    def __get_pydantic_core_schema__(self, source, handler):
        from pydantic_core import core_schema
        return core_schema.any_schema()

    def __mro_entries__(self, bases):
        return (type(self._n.rsplit(".", 1)[-1].strip("()") or "Stub", (), {}),)

    def __instancecheck__(self, obj):
        return False

    def __subclasscheck__(self, cls):
        return False

    def __getitem__(self, k):
        return _Stub(self._n + "[]")

    def __setitem__(self, k, v):
        pass

    def __or__(self, other):
        return self

    __ror__ = __or__

    def __bool__(self):
        return False

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __contains__(self, k):
        return False

    def __eq__(self, other):
        return other is self

    def __hash__(self):
        return id(self)

    def __lt__(self, other):
        return False

    __gt__ = __le__ = __ge__ = __lt__

    def __int__(self):
        return 0

    __index__ = __int__

    def __str__(self):
        return self._n

    __repr__ = __str__


class _StubModule(types.ModuleType):
    fakes: dict = {}  # names every stub module gives as these (ModelConfig: the fake one)

    def __getattr__(self, k):
        if k in self.fakes:
            return self.fakes[k]
        if k == "__version__":
            return "99.0.0"
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return _Stub(f"{self.__name__}.{k}")


class _Only(_Finder):
    """vllm.*: the modules named in real come from ROOT, every other one is a stub; any other
    package that is not installed here is a stub."""

    def __init__(self, real: set[str]):
        super().__init__(set())
        self.real = real

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] == "vllm":
            if name in self.real:
                return None
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return super().find_spec(name, path, target)

    def create_module(self, spec):
        m = _StubModule(spec.name)
        m.__path__ = []
        return m


def load(root: str, extra_paths: list[str]):
    """(the module that defines SpeculativeConfig, its file relative to ROOT)."""
    sys.path[:0] = [root, *extra_paths]
    vllm = types.ModuleType("vllm")
    vllm.__path__ = [os.path.join(root, "vllm")]
    sys.modules["vllm"] = vllm
    logging.disable(logging.CRITICAL)
    config_dir = os.path.join(root, "vllm", "config")
    if os.path.exists(os.path.join(config_dir, "speculative.py")):
        # 0.11+: only speculative.py and the `config` decorator it needs; the package is a stub
        # (`from vllm.config import LoadConfig` gives a stub), so its other modules stay unread.
        pkg = _StubModule("vllm.config")
        pkg.__path__ = [config_dir]
        sys.modules["vllm.config"] = pkg
        sys.meta_path.insert(0, _Only({"vllm.config.speculative", "vllm.config.utils"}))
        import vllm.config.speculative as mod
        return mod, "vllm/config/speculative.py"
    real = {"vllm.config"}
    if os.path.isdir(config_dir):  # 0.10.1-0.10.2: a package, the config classes in __init__.py
        real |= {f"vllm.config.{f[:-3]}" for f in os.listdir(config_dir) if f.endswith(".py")}
        where = "vllm/config/__init__.py"
    else:
        where = "vllm/config.py"
    sys.meta_path.insert(0, _Only(real))
    import vllm.config as mod
    return mod, where


class _HfConfig:
    def __init__(self, name: str):
        model_type, archs, more = MODELS.get(name, ("llama", ["LlamaForCausalLM"], {}))
        self.model_type = model_type
        self.architectures = list(archs)
        self.max_position_embeddings = 4096
        self.vocab_size = 32000
        self.__dict__.update(more)

    def update(self, values: dict) -> None:
        self.__dict__.update(values)

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    def get_text_config(self, **_):
        return self


class _ModelConfig:
    """What SpeculativeConfig reads of a ModelConfig; anything else is a stub."""

    def __init__(self, model: str, hf_overrides=None, **kw):
        self.model = model
        self.model_weights = None
        self.hf_config = _HfConfig(model)
        if callable(hf_overrides):
            self.hf_config = hf_overrides(self.hf_config) or self.hf_config
        elif isinstance(hf_overrides, dict):
            self.hf_config.update(hf_overrides)
        self.hf_text_config = self.hf_config
        self.architectures = self.hf_config.architectures
        self.max_model_len = kw.get("max_model_len") or 4096
        self.quantization = kw.get("quantization")
        self.hf_overrides = None
        self.tokenizer = model
        self.is_moe = False
        self.dtype = "bfloat16"
        self.enforce_eager = False
        self.trust_remote_code = False

    def using_transformers_backend(self) -> bool:
        return False

    @property
    def registry(self):
        archs = self.architectures
        return types.SimpleNamespace(inspect_model_cls=lambda *a, **k: (_Stub("model_info"), archs[0]))

    def get_vocab_size(self) -> int:
        return 32000

    def __getattr__(self, k):
        if k.startswith("__"):
            raise AttributeError(k)
        return _Stub(f"model_config.{k}")


class _EAGLEConfig(_HfConfig):
    """vllm.transformers_utils.configs.eagle's EAGLEConfig: what the version wraps an EAGLE
    draft's config in (before 0.8.5 the only sign that it took the draft for EAGLE)."""

    def __init__(self, model=None, **kw):
        self.__dict__.update(getattr(model, "__dict__", {}))
        self.model_type = "eagle"


class _ParallelConfig:
    tensor_parallel_size = 1
    pipeline_parallel_size = 1
    data_parallel_size = 1

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __getattr__(self, k):
        if k.startswith("__"):
            raise AttributeError(k)
        return _Stub(f"parallel_config.{k}")


def _strings(tp) -> set[str]:
    """The strings a Literal (of Literals, maybe Optional) allows."""
    out: set[str] = set()
    for a in typing.get_args(tp):
        out |= {a} if isinstance(a, str) else _strings(a)
    return out


def _field_names(cls) -> set[str]:
    try:
        return {f.name for f in dataclasses.fields(cls)}
    except TypeError:
        return set()


def _raised_by_the_code(e: BaseException, root: str) -> bool:
    """Whether e comes from a `raise` or `assert` statement in the release's own files (its
    refusal), not from an operation on a stub (an unpacking, a call) deeper down."""
    tb = e.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return False
    path = last.tb_frame.f_code.co_filename
    if not os.path.abspath(path).startswith(os.path.abspath(root) + os.sep):
        return False
    line = last.tb_lineno
    tree = _TREES.get(path)
    if tree is None:
        with open(path) as f:
            tree = _TREES[path] = ast.parse(f.read())
    hits = [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and n.lineno <= line <= (n.end_lineno or n.lineno)]
    innermost = min(hits, key=lambda n: (n.end_lineno or n.lineno) - n.lineno, default=None)
    return isinstance(innermost, (ast.Raise, ast.Assert))


_TREES: dict = {}


def _legacy(cls, target, given: dict):
    """Before 0.8.2: SpeculativeConfig.maybe_create_spec_config, as arg_utils calls it with the
    --speculative-model, --num-speculative-tokens and --ngram-prompt-lookup-* values given (the
    rest at their defaults); the method it ends with, as the later versions name it."""
    import inspect
    defaults = {"target_model_config": target, "target_parallel_config": _ParallelConfig(),
                "target_dtype": "auto", "enable_chunked_prefill": False, "disable_log_stats": False,
                "draft_token_acceptance_method": "rejection_sampler"}
    kw = {name: given.get(name, defaults.get(name)) for name in inspect.signature(cls.maybe_create_spec_config).parameters}
    obj = cls.maybe_create_spec_config(**kw)
    if obj is None:
        return None
    if given.get("speculative_model") == "[ngram]":
        return "ngram"
    return "eagle" if isinstance(obj.draft_model_config.hf_config, _EAGLEConfig) else "draft_model"


def run_case(mod, root: str, case: dict) -> dict:
    cls = mod.SpeculativeConfig
    values = dict(case["config"])
    target = _ModelConfig(case["target"])
    if "legacy" in case:
        values = case["legacy"]
        try:
            with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
                return {"method": _legacy(cls, target, values)}
        except _REFUSALS as e:
            text = f"{type(e).__name__}: {e}"
            return {"refused": text[:600]} if _raised_by_the_code(e, root) else {"unrun": text[:400]}
        except Exception as e:  # noqa: BLE001
            return {"unrun": f"{type(e).__name__}: {e}"[:400]}
    extra = {"target_model_config": target, "target_parallel_config": _ParallelConfig(),
             "enable_chunked_prefill": False, "disable_log_stats": False}
    names = _field_names(cls)
    values.update({k: v for k, v in extra.items() if k in names})
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            obj = cls.from_dict(values) if hasattr(cls, "from_dict") else cls(**values)
    except _REFUSALS as e:
        if os.environ.get("VLLM_WORKER_DEBUG"):
            import traceback
            traceback.print_exc(file=sys.__stderr__)
        text = f"{type(e).__name__}: {e}"
        if hasattr(e, "errors") and type(e).__name__ == "ValidationError":
            # pydantic: a field's own check (the method's Literal) refuses a value that was
            # given; an error out of a validator or __post_init__ is judged as below
            for err in e.errors():
                inner = err.get("ctx", {}).get("error")
                if isinstance(inner, BaseException):
                    if not _raised_by_the_code(inner, root):
                        return {"unrun": text[:400]}
                elif not (err.get("loc") and str(err["loc"][0]) in case["config"]):
                    return {"unrun": text[:400]}
            return {"refused": text[:600]}
        if not _raised_by_the_code(e, root):
            return {"unrun": text[:400]}
        return {"refused": text[:600]}
    except Exception as e:  # noqa: BLE001 - a stub in the way: the validation did not run to the end
        if os.environ.get("VLLM_WORKER_DEBUG"):
            import traceback
            traceback.print_exc(file=sys.__stderr__)
        return {"unrun": f"{type(e).__name__}: {e}"[:400]}
    return {"method": obj.method, "model": obj.model, "num_speculative_tokens": obj.num_speculative_tokens}


def main() -> None:
    root = sys.argv[1]
    mod, where = load(root, sys.argv[2:])
    _StubModule.fakes.update(ModelConfig=_ModelConfig, ParallelConfig=_ParallelConfig, EAGLEConfig=_EAGLEConfig)
    for name, fake in _StubModule.fakes.items():
        setattr(mod, name, fake)
    cls = mod.SpeculativeConfig
    hints = getattr(cls, "__annotations__", {})
    literal = sorted(_strings(getattr(mod, "SpeculativeMethod", None))) if hasattr(mod, "SpeculativeMethod") else None
    cases = json.load(sys.stdin)
    results = [run_case(mod, root, c) for c in cases]
    json.dump({"where": where, "pydantic": hasattr(cls, "__pydantic_fields__"),
               "method_annotation": str(hints.get("method")), "literal": literal,
               "results": results}, sys.stdout, default=str)


if __name__ == "__main__":
    main()
