"""The trouble lines a release's code can print: every `logger.error/exception/critical/fatal` call's
template, and each `raise ...Error("...")` whose words speak of memory, NCCL or a process's death
(a raise reaches the log as its traceback's last line), read with `ast` from the release's own files.

A template is the message as the code writes it, its placeholders (`%s`, `{x}` in an f-string or
`.format()`) filled with `1`. A call whose message has no words of its own (`logger.error(e)`,
`logger.exception(msg)`) gives None: its text is an exception's or a variable's.

Templates are kept per release in the real-code tier's cache (a JSON file named with EXTRACTOR: a
change here reads the releases again), so a run after the first reads no source."""

from __future__ import annotations

import ast
import json
import re
import tempfile
import threading
from pathlib import Path

import wheels

EXTRACTOR = 1  # the version of what this module extracts, in the cache's file names
LEVELS = ("error", "exception", "critical", "fatal")
_CALL = re.compile(rb"\b(?:logger|logging|log)\.(?:error|exception|critical|fatal)\(|\braise \w+(?:Error|Exception)\(")
_PLACEHOLDER = re.compile(r"%(?:\([^)]*\))?[-+ #0]*\d*(?:\.\d+)?[sdrfigxXeE]")
# the words that make a raised exception's text a line for the triage (else its traceback's event says it)
# CPython 3.11.2 (Debian's) can fail ast.parse run in two threads at once with "SystemError: AST
# constructor recursion depth mismatch" (CPython gh-106905; make test, 13:45): the pool below extracts
# releases side by side, so their parsing takes turns (it holds the GIL throughout anyway).
_PARSING = threading.Lock()
TROUBLE_WORDS = re.compile(r"memory|OOM|NCCL|nccl|died|dead|[Kk]illed|timed out|[Ww]atchdog|crash|terminated")
FILL = "1"


def render(node: ast.AST) -> str | None:
    """The text a message expression prints, its placeholders filled; None for one with no words of its own."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _PLACEHOLDER.sub(FILL, node.value).replace("%%", "%")
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else FILL for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = render(node.left), render(node.right)
        return None if left is None and right is None else (left or FILL) + (right or FILL)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return render(node.left)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        text = render(node.func.value)
        return None if text is None else re.sub(r"\{[^{}]*\}", FILL, text)
    return None


def _is_logger_call(node: ast.Call) -> bool:
    f = node.func
    return (isinstance(f, ast.Attribute) and f.attr in LEVELS and isinstance(f.value, ast.Name)
            and f.value.id in ("logger", "logging", "log") and bool(node.args))


def _raised(node: ast.Raise) -> tuple[str, ast.AST] | None:
    exc = node.exc
    if isinstance(exc, ast.Call) and isinstance(exc.func, ast.Name) and exc.args \
            and exc.func.id.endswith(("Error", "Exception")):
        return exc.func.id, exc.args[0]
    return None


def templates(root: Path, top: str) -> list[dict]:
    """Every template under root/top: {file, line, level ("error", ..., or "raise"), text}."""
    out = []
    for f in sorted((root / top).rglob("*.py")):
        data = f.read_bytes()
        if not _CALL.search(data):
            continue
        try:
            with _PARSING:
                tree = ast.parse(data)
        except (SyntaxError, ValueError):
            continue
        rel = f.relative_to(root).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _is_logger_call(node):
                assert isinstance(node.func, ast.Attribute)
                out.append({"file": rel, "line": node.lineno, "level": node.func.attr, "text": render(node.args[0])})
            elif isinstance(node, ast.Raise) and (hit := _raised(node)) is not None:
                text = render(hit[1])
                if text is not None and TROUBLE_WORDS.search(text):
                    out.append({"file": rel, "line": node.lineno, "level": "raise", "text": f"{hit[0]}: {text}"})
    return out


def _cached(name: str, make) -> list[dict]:
    path = wheels.CACHE / "triage" / f"{name}.v{EXTRACTOR}.json"
    if path.exists():
        return json.loads(path.read_text())
    found = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(found))
    return found


def sglang(version: str, need) -> list[dict]:
    """SGLang's templates, from its wheel (extracted as the tier's other tests extract it)."""
    return _cached(f"sglang-{version}", lambda: templates(wheels.extracted("sglang", version, "sglang", need), "sglang"))


def vllm(version: str, need) -> list[dict]:
    """vLLM's templates, from its source distribution (its wheel where it has none), read where
    it is unpacked: no file of it is kept."""
    def make() -> list[dict]:
        with tempfile.TemporaryDirectory(dir=wheels._scratch(), prefix="mtptui-triage-") as tmp:
            tree, why = wheels._sdist_tree("vllm", version, Path(tmp))
            if tree is None:
                root = Path(tmp) / "wheel"
                import zipfile
                with zipfile.ZipFile(wheels.wheel("vllm", version, need)) as z:
                    z.extractall(root, [n for n in z.namelist() if n.startswith("vllm/") and n.endswith(".py")])
                tree = root
            return templates(tree, "vllm")
    return _cached(f"vllm-{version}", make)
