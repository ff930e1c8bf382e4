"""The bounds of a read line, in a leaf of its own: the parser and the compiled lane both import it,
and the lane imports nothing from the parse package's __init__, only whole modules of it (a name
defined there after its imports is what "cannot import name MAX_LINE" once failed on, issue 44)."""

from __future__ import annotations

# Lines longer than this are counted as dropped rather than parsed: no stats line comes near it,
# and a runaway line (a dumped tensor, a binary blob) must not stall the pipeline.
MAX_LINE = 1 << 20
