"""Downloading a release's files for the real-code tier, once, into the cache: the wheel's
(`extracted`), or only the files asked for, from the source distribution (`sources`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

CACHE = Path(os.environ.get("MTPTUI_TEST_CACHE", Path.home() / ".cache" / "mtptui-test"))


def _pip_download(args: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", *args],
                          capture_output=True, text=True, timeout=900, **kw)


def _last(r: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in r.stderr.strip().splitlines() if not ln.startswith("WARNING")]
    return (lines or ["no output"])[-1]


def wheel(package: str, version: str, need) -> Path:
    """The wheel of package==version in the cache, downloaded once."""
    d = CACHE / "wheels"
    d.mkdir(parents=True, exist_ok=True)
    prefix = f"{package.replace('-', '_')}-{version}-"
    found = sorted(d.glob(prefix + "*.whl"))
    if not found:
        r = _pip_download(["-d", str(d), f"{package}=={version}"])
        found = sorted(d.glob(prefix + "*.whl"))
        need(found, f"cannot download {package}=={version} from the package registry ({_last(r)})")
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


def _sdist_tree(package: str, version: str, tmp: Path) -> tuple[Path | None, str]:
    """The unpacked source distribution of package==version under tmp, or (None, why).

    `pip download` of an sdist prepares its metadata, which runs the project's build backend:
    vLLM's setup.py imports torch and stops there (without build isolation nothing is installed
    for it), and `--no-clean` leaves the unpacked tree in TMPDIR. Where the metadata does come
    out, pip saves the archive instead, and that is unpacked here."""
    dist = tmp / "dist"
    r = _pip_download(["--no-binary", ":all:", "--no-build-isolation", "--no-clean", "--no-cache-dir",
                       "-d", str(dist), f"{package}=={version}"], env={**os.environ, "TMPDIR": str(tmp)})
    for archive in sorted(dist.glob("*.tar.gz")):
        with tarfile.open(archive) as t:
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            t.extractall(tmp / "archive", **safe)
    for info in sorted(tmp.glob("*/*/PKG-INFO")) + sorted(tmp.glob("archive/*/PKG-INFO")):
        if f"\nVersion: {version}\n" in info.read_text(errors="replace"):
            return info.parent, ""
    return None, _last(r)


def _scratch() -> Path:
    """Where a source tree is unpacked for the moment: memory (/dev/shm) where there is one, as
    pip writes thousands of files there (a vLLM sdist: 7,000, 10 s on a disk, 3 s in memory)."""
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK) else CACHE


def sources(package: str, version: str, keep, need) -> Path:
    """The files of package==version whose path (e.g. "vllm/config.py") keep() selects, extracted
    once into CACHE/<package>-src/<version>: from the source distribution (a few MB), or from the
    wheel where the release has none (deleted again unless MTPTUI_KEEP_WHEELS=1)."""
    root = CACHE / f"{package}-src" / version
    done = root / ".done"
    if done.exists():
        return root
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=_scratch(), prefix="mtptui-sdist-") as tmp:
        tree, _why = _sdist_tree(package, version, Path(tmp))
        if tree is not None:
            for f in tree.rglob("*"):
                rel = f.relative_to(tree).as_posix()
                if f.is_file() and keep(rel):
                    (root / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(f, root / rel)
            (root / ".from").write_text("sdist\n")
        else:
            path = wheel(package, version, need)
            with zipfile.ZipFile(path) as z:
                z.extractall(root, [n for n in z.namelist() if not n.endswith("/") and keep(n)])
            (root / ".from").write_text("wheel\n")
            if not os.environ.get("MTPTUI_KEEP_WHEELS"):
                path.unlink()
    done.write_text("ok\n")
    return root
