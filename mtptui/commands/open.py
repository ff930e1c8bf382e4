"""`mtptui open PATH...`: saved logs read at once and shown whole (`replay --speed max`)."""

from __future__ import annotations

from mtptui.commands import replay


def main(argv: list[str]) -> int:
    return replay.main(argv, prog="mtptui open")
