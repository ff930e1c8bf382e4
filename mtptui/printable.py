"""Text from outside made safe to print: a log, a host's journal, an audit line, a Prometheus
answer, a config. A terminal obeys what it is sent, so an escape sequence in a server's journal line
quoted by a rollback message could set the operator's window title, clear the screen or move the
cursor; a carriage return could overwrite what was printed before it. `printable()` shows each
such character escaped, as Python writes it in a string (`\\x1b`, `\\r`, `\\u202e`), and a byte that
was not UTF-8 (kept by surrogateescape) as the byte (`\\xff`). Everything else, every printable
character of any script, is kept as is.

The lowest layer (beside errors.py): every layer, the config included, may print outside text.
"""

from __future__ import annotations

import re
from typing import TypeVar, cast

_T = TypeVar("_T")

# What a terminal may act on or a reader cannot see: C0 controls and DEL, C1 controls (U+009B is a
# CSI on its own on some terminals), lone surrogates (a byte that was not UTF-8, or a bad \\ud800
# in JSON), the bidirectional overrides and isolates (text shown in an order it is not read in), and
# the line and paragraph separators.
_OTHERS = "\x7f-\x9f\ud800-\udfff\u200e\u200f\u2028-\u202e\u2066-\u2069"
_BAD = re.compile(f"[\x00-\x1f{_OTHERS}]")
_BAD_BUT_NEWLINE = re.compile(f"[\x00-\x09\x0b-\x1f{_OTHERS}]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escaped(m: re.Match[str]) -> str:
    c = m.group()
    n = ord(c)
    if c in _NAMED:
        return _NAMED[c]
    if 0xDC80 <= n <= 0xDCFF:  # surrogateescape's stand-in for the byte n - 0xDC00
        return f"\\x{n - 0xDC00:02x}"
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def printable(text: object, *, newlines: bool = False) -> str:
    """`text` (str() of anything else) with every character a terminal could act on shown escaped;
    with `newlines`, a newline is kept (a message of several lines of our own)."""
    s = text if isinstance(text, str) else str(text)
    pattern = _BAD_BUT_NEWLINE if newlines else _BAD
    if pattern.search(s) is None:  # nearly always: one pass in C
        return s
    return pattern.sub(_escaped, s)


def printable_json(text: str) -> str:
    """A JSON document written with ensure_ascii=False (its strings as they came) with what
    `printable()` escapes written as JSON escapes (`\\u001b`): the same document, safe on a
    terminal, and a lone surrogate no longer a UnicodeEncodeError on the way out."""
    return text if _BAD.search(text) is None else _BAD.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def printable_values(value: _T) -> _T:
    """`value` with every string in it, at any depth of dicts and lists, made printable: an entry
    read from outside (an audit line) made safe once, for every place that shows a part of it."""
    if isinstance(value, str):
        return cast(_T, printable(value))
    if isinstance(value, dict):
        return cast(_T, {printable(k) if isinstance(k, str) else k: printable_values(v) for k, v in value.items()})
    if isinstance(value, list):
        return cast(_T, [printable_values(v) for v in value])
    return value
