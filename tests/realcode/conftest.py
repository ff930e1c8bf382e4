"""The real-code tier: each SGLang release's own argument parser and speculative rules, and each
vLLM release's speculative config, executed here with their heavy imports stubbed, hold mtptui's
control path to the real outcome. SGLang's wheels and vLLM's source distributions (its wheel
where a release has none) are downloaded once (`pip download --no-deps`) into $MTPTUI_TEST_CACHE
(default ~/.cache/mtptui-test); only the .py files (and small data files) needed are extracted,
per version. Without the registry the tests skip with the reason (CI fails). Select the tier
with `-m realcode`."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest
from wheels import CACHE



@pytest.fixture(scope="session")
def msgspec_path(need) -> str:
    """msgspec (SGLang 0.5.14+ defines its arguments with it): a real one, from its wheel."""
    try:
        import msgspec  # noqa: F401
        return ""
    except ImportError:
        pass
    import sysconfig
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    root = CACHE / "msgspec" / tag
    if not (root / ".done").exists():
        d = CACHE / "wheels"
        d.mkdir(parents=True, exist_ok=True)
        r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(d),
                            "--only-binary=:all:", "msgspec"], capture_output=True, text=True, timeout=600)
        found = sorted(d.glob(f"msgspec-*-{tag}-*.whl"))
        need(found, f"cannot download msgspec ({(r.stderr.strip().splitlines() or ['?'])[-1]}, "
                    f"{sysconfig.get_platform()})")
        with zipfile.ZipFile(found[-1]) as z:
            z.extractall(root)
        (root / ".done").write_text("ok\n")
    return str(root)


@pytest.fixture(scope="session")
def pydantic_path(need) -> str:
    """pydantic (vLLM 0.9.1+ makes SpeculativeConfig a pydantic dataclass, whose validation is the
    speculative method check): the newest one and what it needs, from their wheels, extracted
    once. The vLLM worker puts it first on its path; this process does not import it."""
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    root = CACHE / "pydantic" / tag
    if not (root / ".done").exists():
        d = CACHE / "wheels" / f"pydantic-{tag}"
        d.mkdir(parents=True, exist_ok=True)
        r = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "-d", str(d),
                            "--only-binary=:all:", "pydantic"], capture_output=True, text=True, timeout=600)
        found = sorted(d.glob("*.whl"))
        need(any(f.name.startswith("pydantic_core-") for f in found),
             f"cannot download pydantic ({(r.stderr.strip().splitlines() or ['?'])[-1]})")
        for f in found:
            with zipfile.ZipFile(f) as z:
                z.extractall(root)
        (root / ".done").write_text("ok\n")
    return str(root)
