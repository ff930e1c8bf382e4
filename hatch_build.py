"""Builds the compiled hot path (mtptui/core/_compiled.pyx) when a wheel or an editable install is made.

Without a C compiler (or Python's headers) the build goes on without it, saying so in one line:
mtptui then reads every line in Python, with the same results, more slowly.
`python hatch_build.py` builds it in place (after editing the .pyx by hand).
"""

from __future__ import annotations

import hashlib
import os
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
SOURCE = "mtptui/core/_compiled.pyx"
MODULE = "mtptui.core._compiled"
STAMP = "mtptui/core/_compiled.sha256"  # the source the lane was built from (core/compiled.py checks it)


def built_here() -> Path | None:
    """The lane beside its source when it was built from this source for this Python (its stamp
    matches): a wheel made after an editable install (CI) takes it, not compiling it again."""
    path = ROOT / (MODULE.replace(".", "/") + sysconfig.get_config_var("EXT_SUFFIX"))
    try:
        fresh = (ROOT / STAMP).read_text().strip() == hashlib.sha256((ROOT / SOURCE).read_bytes()).hexdigest()
    except OSError:
        return None
    return path if fresh and path.exists() else None


def build_in_place() -> Path:
    """Compiles the lane next to its source; returns the extension's path. Raises on failure."""
    from Cython.Build import cythonize
    from setuptools import Distribution, Extension

    ext = Extension(MODULE, [str(ROOT / SOURCE)], extra_compile_args=["-O2"])
    with tempfile.TemporaryDirectory() as tmp:
        modules = cythonize([ext], build_dir=tmp, quiet=True, language_level=3)
        dist = Distribution({"name": "mtptui-lane", "ext_modules": modules})
        dist.script_args = []
        cmd = dist.get_command_obj("build_ext")
        cmd.inplace = True
        cmd.build_temp = tmp
        cwd = os.getcwd()
        os.chdir(ROOT)  # in place means relative to here
        try:
            cmd.ensure_finalized()
            cmd.run()
        finally:
            os.chdir(cwd)
    path = ROOT / (MODULE.replace(".", "/") + sysconfig.get_config_var("EXT_SUFFIX"))
    if not path.exists():
        raise RuntimeError(f"{path.name} was not made")
    (ROOT / STAMP).write_text(hashlib.sha256((ROOT / SOURCE).read_bytes()).hexdigest() + "\n")
    return path


try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # run as a script
    BuildHookInterface = object


class LaneBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        try:
            path = built_here() if version != "editable" else None
            path = path or build_in_place()
        except Exception as e:  # noqa: BLE001 - any failure of the toolchain means: no lane
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            self.app.display_warning(f"mtptui: compiled hot path not built ({first}); summary reads in Python")
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        if version != "editable":  # an editable install imports it from the source tree
            for built in (path, ROOT / STAMP):
                build_data["force_include"][str(built)] = str(built.relative_to(ROOT))


if __name__ == "__main__":
    print(build_in_place())
    sys.exit(0)
