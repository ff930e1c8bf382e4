"""The compiled hot path of `summary` (`_compiled.pyx`), when it was built.

Built at install when a C compiler is there (hatch_build.py); without it, or when it cannot be
loaded (TROUBLE says why, and cli.py prints it), the Python code does the same work with the same
results (tests/unit/test_compiled.py holds the two to it), more slowly. A metric's statistics
are numpy's work over columns, in Python (valueset.py, stats.py, loadmatch.py). It holds:
- the lane: the common lines of SGLang's logs read in C straight into a summary's rows, no record
  made per line; it stops at any other line, which the caller parses in Python;
- stats_json(): a run that is over, its figures written as JSON without a dict or a float made
  for each (valueset.FrozenRows): a log of 10,000 runs does this tens of thousands of times;
- frozen_row(), ranks_json() and epoch_json(): a run of `summary --json` that is over compared
  with the runs before it (compare.Comparison) from its figures as kept, and written as its JSON
  text from them and its row (summary._text), without the dicts of each figure that its brief
  form and json would make;
- json_lines(): the events of `summary` written as JSON lines (eventlog.EventLog), one buffer for
  a thousand of them;
- pack_epochs() and thaw_epochs(): a parallel reader's runs that are over, sent as a few arrays
  and a tuple each instead of some 27 objects each (EpochTracker.__getstate__).
- freeze_figures(): a run frozen once it is over (Epoch.freeze), its ranks described and its
  buckets averaged straight from their buffers in one call; freeze_rows(): the same from its
  series' row buffers, where its rows still wait (Summary.add_event), none handed over first.

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

stats_json = _compiled.stats_json if ENABLED else None
epoch_json = _compiled.epoch_json if ENABLED else None
json_lines = _compiled.json_lines if ENABLED else None
frozen_row = _compiled.frozen_row if ENABLED else None
ranks_json = _compiled.ranks_json if ENABLED else None
pack_epochs = _compiled.pack_epochs if ENABLED else None
thaw_epochs = _compiled.thaw_epochs if ENABLED else None
freeze_figures = _compiled.freeze_figures if ENABLED else None
freeze_rows = _compiled.freeze_rows if ENABLED else None
# every helper above: a test sets each to None for the Python path, which must give the same
HELPERS = ("stats_json", "epoch_json", "json_lines", "frozen_row", "ranks_json", "pack_epochs", "thaw_epochs",
           "freeze_figures", "freeze_rows")


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
