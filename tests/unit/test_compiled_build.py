"""The compiled lane is built where it can be, and a lane built from another source is not used."""

from __future__ import annotations

import hashlib
import os
import shutil
import sysconfig
from pathlib import Path

import pytest

from mtptui.core import compiled


def can_compile() -> bool:
    """What the build would find: the compiler CC names (as setuptools takes it), else cc or gcc."""
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    cc = os.environ.get("CC", "").split()
    found = shutil.which(cc[0]) if cc else shutil.which("cc") or shutil.which("gcc")
    return bool(found) and headers.exists()


@pytest.mark.skipif(not can_compile(), reason="no C compiler or Python headers here")
def test_the_lane_is_built_and_used_where_a_compiler_is():
    """Else every test of the compiled lane would be skipped without a word (test_compiled.py)."""
    assert compiled.BUILT


def test_a_lane_is_used_only_if_built_from_the_source_beside_it(tmp_path):
    source = b"cdef int x = 1\n"
    (tmp_path / "_compiled.pyx").write_bytes(source)
    assert not compiled.built_from_this_source(tmp_path)  # no hash noted: built by no one we know
    (tmp_path / "_compiled.sha256").write_text(hashlib.sha256(source).hexdigest() + "\n")
    assert compiled.built_from_this_source(tmp_path)
    (tmp_path / "_compiled.pyx").write_bytes(source + b"cdef int y = 2\n")  # a pull changed it
    assert not compiled.built_from_this_source(tmp_path)
