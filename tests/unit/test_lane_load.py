"""Why the compiled lane is off, said (core/compiled.load): only a lane never built for this Python
goes unsaid; a stale one or one that does not load is one line for a user and an error in the tests
(tests/process/test_lane_first.py runs the command so)."""

from __future__ import annotations

import hashlib
import sysconfig
from pathlib import Path

from mtptui.core import compiled

LANE = "_compiled" + sysconfig.get_config_var("EXT_SUFFIX")


def _core(tmp_path: Path, source: bytes = b"cdef int x = 1\n") -> Path:
    (tmp_path / "_compiled.pyx").write_bytes(source)
    (tmp_path / "_compiled.sha256").write_text(hashlib.sha256(source).hexdigest() + "\n")
    return tmp_path


def test_no_lane_for_this_python_goes_unsaid(tmp_path):
    here = _core(tmp_path)
    (here / "_compiled.cpython-399-x86_64-linux-gnu.so").write_bytes(b"")  # another Python's
    assert compiled.load(here) == (None, None)


def test_a_stale_lane_is_said(tmp_path):
    here = _core(tmp_path)
    (here / LANE).write_bytes(b"")
    (here / "_compiled.pyx").write_bytes(b"cdef int y = 2\n")  # a pull changed the source
    lane, why = compiled.load(here)
    assert lane is None and why is not None and "built from another _compiled.pyx" in why
