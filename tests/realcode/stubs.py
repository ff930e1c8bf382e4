"""Import one SGLang version's server_args.py from its wheel, heavy imports stubbed."""
import importlib.abc, importlib.machinery, importlib.util, sys, types

import abc
class _StubMeta(abc.ABCMeta):
    def __getattr__(cls, k):
        if k.startswith("__") and k.endswith("__"): raise AttributeError(k)
        return _Stub(f"{cls.__name__}.{k}")

class _StubBase(metaclass=_StubMeta):
    def __init__(self, *a, **k): pass
    def __init_subclass__(cls, **kw): pass

_ABSENT = {"npu", "hpu", "xpu", "musa", "mlu", "_is_fake", "__version__"}

class _Stub(str):
    def __new__(cls, name="stub"):
        o = str.__new__(cls, name); o._n = name; return o
    def __getattr__(self, k):
        if (k.startswith("__") and k.endswith("__")) or k in _ABSENT: raise AttributeError(k)
        return _Stub(f"{self._n}.{k}")
    def __call__(self, *a, **k):
        if len(a) == 1 and isinstance(a[0], types.FunctionType) and not k: return a[0]  # decorator
        return _Stub(self._n + "()")
    def __bool__(self): return False
    def __iter__(self): return iter(())
    def __len__(self): return 0
    def __getitem__(self, k): return _Stub(self._n + "[]")
    def __mro_entries__(self, bases): return (type(self._n.rsplit(".", 1)[-1] or "Stub", (_StubBase,), {}),)
    def __or__(self, o): return self
    __ror__ = __or__
    def __int__(self): return 0
    def __float__(self): return 0.0
    def __index__(self): return 0
    def __lt__(self, o): return False
    __gt__ = __le__ = __ge__ = __lt__
    def __eq__(self, o): return o is self
    def __hash__(self): return id(self)
    def __fspath__(self): return "/nonexistent"

class _StubModule(types.ModuleType):
    def __getattr__(self, k):
        if k == "__version__": return "99.0.0"
        if (k.startswith("__") and k.endswith("__")) or k in _ABSENT: raise AttributeError(k)
        return _Stub(f"{self.__name__}.{k}")

class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, real_top): self.real_top = real_top
    def find_spec(self, name, path, target=None):
        top = name.split(".")[0]
        if top in self.real_top: return None
        for f in sys.meta_path:
            if f is self: continue
            try: spec = f.find_spec(name, path, target) if hasattr(f, "find_spec") else None
            except Exception: spec = None
            if spec is not None: return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)
    def create_module(self, spec):
        m = _StubModule(spec.name); m.__path__ = []; return m
    def exec_module(self, module): pass

def _setitem(self, k, v): pass
_Stub.__setitem__ = _setitem
