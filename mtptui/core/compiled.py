"""The compiled hot path of `summary` (`_compiled.pyx`), when it was built.

Built at install when a C compiler is there (hatch_build.py); without it, or when it cannot be
loaded (TROUBLE says why, and cli.py prints it), the Python code does the same work with the same
results (tests/unit/test_compiled.py holds the two to it), more slowly. It holds one thing, the
lane: the common lines of SGLang's logs read in C straight into a summary's (or the store's) rows,
no record made per line; it stops at any other line, which the caller parses in Python. A metric's
statistics are numpy's work over those rows as columns (valueset.py, loadmatch.py, figures.py).

A run that is over, its comparison with the runs before it, and the JSON of `summary --json` are
Python's (figures.py with numpy, compare.Comparison, orjson).

Why compiled, and what it buys: docs/performance.md.
"""

from __future__ import annotations

import hashlib
import os
from array import array
from collections.abc import Callable, Sequence
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from mtptui.core._compiled import Lane
    from mtptui.core.parse import LineParser


def built_from_this_source(here: Path) -> bool:
    """An editable install keeps the lane it built after a pull changes `_compiled.pyx`: that lane
    would read lines by other layouts than the Python code's. So a lane is used only if it was
    built from the source that is here (hatch_build.py notes the source's hash beside it)."""
    try:
        noted = (here / "_compiled.sha256").read_text().strip()
        source = (here / "_compiled.pyx").read_bytes()
    except OSError:
        return False
    return noted == hashlib.sha256(source).hexdigest()


def load(here: Path) -> tuple[ModuleType | None, str | None]:
    """The lane, or None and why not. Only one absence goes unsaid: no lane built for this Python
    (none was built, which the install said, or one was for another Python: a file of another
    ABI's name, which this Python does not look for). Any other is said: a lane that is here
    but stale or cannot load makes every line slower, 4-6x, and must not pass without a word."""
    if not any((here / f"_compiled{suffix}").exists() for suffix in EXTENSION_SUFFIXES):
        return None, None
    if not built_from_this_source(here):
        return None, "was built from another _compiled.pyx (reinstall, or run `python hatch_build.py`)"
    try:
        from mtptui.core import _compiled
    except ImportError as e:
        return None, f"does not load ({str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__})"
    return _compiled, None


_loaded, TROUBLE = load(Path(__file__).parent)
if TROUBLE is not None and os.environ.get("MTPTUI_LANE_STRICT"):  # the tests (tests/conftest.py)
    raise ImportError(f"mtptui's compiled lane {TROUBLE}")
BUILT = _loaded is not None
if TYPE_CHECKING:
    from mtptui.core import _compiled
else:
    _compiled = _loaded
# MTPTUI_PURE=1 leaves it unused (to compare the two paths, or to rule it out)
ENABLED = BUILT and not os.environ.get("MTPTUI_PURE")



class LaneSeries(Protocol):
    """A series the lane appends rows to: a Summary's SeriesSummary, a Store's RankSeries."""

    def lane_rows(self, kind: str) -> tuple[array[float], int, Callable[[], object]]: ...

    def lane_add(self, kind: str, n: int, graph_off: int, graph_on: int, first: float, last: float) -> None: ...


@runtime_checkable
class LaneSink(Protocol):
    """A sink the lane writes into (a Summary without a time range, a Store): its columns, its
    series, the time of the last line read; `lane` is the lane writing into it, once there is one."""

    lane: Lane | None

    def lane_columns(self) -> tuple[tuple[str, ...], tuple[str, ...]] | None: ...

    def lane_series(self, ts: float, host: str | None, rank: str) -> LaneSeries: ...

    def lane_time(self, ts: float) -> None: ...


def lane_for(parser: LineParser, sinks: Sequence[object]) -> Lane | None:
    """A lane for a parser feeding these sinks, or None: there must be exactly one sink, one that
    takes the lane (a Summary without a time range)."""
    if not ENABLED or len(sinks) != 1:
        return None
    sink = sinks[0]
    if not isinstance(sink, LaneSink):
        return None
    columns = sink.lane_columns()
    return None if columns is None else _compiled.Lane(parser, sink, *columns)
