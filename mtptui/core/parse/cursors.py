"""A journald entry counted once: the cursors (`__CURSOR`) of the entries read lately, to know one
that comes again: a resume that replays an entry, a journal or an export that holds it twice (issue
42). Read by the parser (LineParser.general) and the lane alike (core/_compiled.pyx: a line it
reads itself is added; one whose cursor is here is left to the parser, which drops and counts it).
Bounded: two generations of KEEP cursors; an entry repeated further back is counted again."""

from __future__ import annotations

KEEP = 1 << 14  # cursors a generation (about 200 bytes each: at most 2 x 16384 held)
SAME_ENTRY = "a journald entry read before (the same __CURSOR)"


class Cursors:
    __slots__ = ("new", "old")

    def __init__(self) -> None:
        self.new: set[str] = set()
        self.old: set[str] = set()

    def __contains__(self, cursor: str) -> bool:
        return cursor in self.new or cursor in self.old

    def add(self, cursor: str) -> None:
        new = self.new
        new.add(cursor)
        if len(new) >= KEEP:
            self.old, self.new = new, set()

    def seen(self, cursor: str) -> bool:
        """Whether the entry was read before; it is noted as read now."""
        if cursor in self:
            return True
        self.add(cursor)
        return False
