"""Downloading and extracting the released wheels for the real-code tier, once, into the cache."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

CACHE = Path(os.environ.get("MTPTUI_TEST_CACHE", Path.home() / ".cache" / "mtptui-test"))


def wheel(package: str, version: str, need) -> Path:
    """The wheel of package==version in the cache, downloaded once."""
    d = CACHE / "wheels"
    d.mkdir(parents=True, exist_ok=True)
    prefix = f"{package.replace('-', '_')}-{version}-"
    found = sorted(d.glob(prefix + "*.whl"))
    if not found:
        r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(d),
                            f"{package}=={version}"], capture_output=True, text=True, timeout=900)
        found = sorted(d.glob(prefix + "*.whl"))
        last = (r.stderr.strip().splitlines() or ["no output"])[-1]
        need(found, f"cannot download {package}=={version} from the package registry ({last})")
    return found[0]


def extracted(package: str, version: str, top: str, need, keep=None) -> Path:
    """The wheel's files under top/ (the .py files and small data files; keep(name) narrows it),
    extracted once into the cache."""
    root = CACHE / package / version
    done = root / ".done"
    if not done.exists():
        with zipfile.ZipFile(wheel(package, version, need)) as z:
            names = [i.filename for i in z.infolist()
                     if i.filename.startswith(top + "/") and not i.is_dir() and i.file_size < 2_000_000
                     and not i.filename.endswith((".so", ".cubin", ".a")) and (keep is None or keep(i.filename))]
            z.extractall(root, names)
        done.write_text("ok\n")
    return root
