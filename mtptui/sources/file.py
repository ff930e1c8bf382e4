"""Saved logs as line iterators: plain text, gzip, or standard input, streamed (never held whole)."""

from __future__ import annotations

import gzip
import io
import os
import sys
import zlib
from collections.abc import Callable, Iterator
from typing import BinaryIO

from mtptui.core.parse import MAX_LINE
from mtptui.errors import UserError

JOURNAL_MAGIC = b"LPKSHHRH"
GZIP_MAGIC = b"\x1f\x8b"


class InputError(UserError):
    """A one-line, user-facing reason why an input cannot be read."""


def _text(binary: BinaryIO | gzip.GzipFile) -> io.TextIOWrapper:
    # newline="\n": a lone \r (a progress bar redraw) must not split a line in two.
    return io.TextIOWrapper(binary, encoding="utf-8", errors="replace", newline="\n")


def _check_head(path: str, head: bytes) -> None:
    if head.startswith(JOURNAL_MAGIC):
        file = "FILE" if path == "stdin" else path
        raise InputError(f"{path}: a binary journal file; export it first: "
                         f"journalctl --file {file} -o json > log.json")
    if _looks_binary(head.lstrip(b"\0")):  # NULs before line 1: what copytruncate leaves (read past)
        raise InputError(f"{path}: binary data, not a text log")


_CONTROL = bytes(c for c in range(32) if c not in b"\t\n\r\x1b") + b"\x7f"


def _looks_binary(head: bytes) -> bool:
    """A log with a stray NUL line is still a log (that line is dropped and counted); a file whose
    start is full of NULs or control bytes is not one."""
    if not head:
        return False
    control = len(head) - len(head.translate(None, _CONTROL))
    return head.count(0) > len(head) // 100 or control > len(head) // 10


TRUNCATED = "truncated gzip: its end is missing"


def open_lines(path: str, name: str | None = None,
               truncated: Callable[[], None] | None = None) -> Iterator[str]:
    """Yields the lines of PATH (or stdin for '-'), each with its line ending.

    Raises InputError with a one-line message for a missing, unreadable, binary or corrupt input,
    also part way through (a truncated gzip is only found out at its end: with `truncated`, that is
    called instead and the lines read stand). Messages name the input `name` (default: the path, or
    `stdin` for '-').
    """
    shown = name or ("stdin" if path == "-" else path)
    if path == "-":
        yield from _decoded(shown, sys.stdin.buffer, truncated)
        return
    if os.path.isdir(path):
        raise InputError(f"{shown}: is a directory")
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        raise InputError(f"{shown}: no such file") from None
    except PermissionError:
        raise InputError(f"{shown}: permission denied") from None
    except OSError as e:
        raise InputError(f"{shown}: {e.strerror or e}") from None
    with f:
        yield from _decoded(shown, f, truncated)


def _decoded(name: str, f: BinaryIO, truncated: Callable[[], None] | None) -> Iterator[str]:
    """The same checks for a file and a pipe: a binary journal or junk is refused at its head, a
    gzip is unpacked."""
    head = f.peek(4096)[:4096] if hasattr(f, "peek") else b""
    if head.startswith(GZIP_MAGIC):
        gz = gzip.GzipFile(fileobj=f)
        try:
            head = gz.peek(4096)[:4096]
        except (OSError, EOFError, zlib.error) as e:
            raise InputError(f"{name}: corrupt gzip ({e})") from None
        _check_head(name, head)
        yield from _lines(name, _text(gz), "gzip", truncated)
    else:
        _check_head(name, head)
        yield from _lines(name, _text(f), None, truncated)


# A line is read at most this far (characters, so at least MAX_LINE bytes): the parser drops it and
# counts it (longer than MAX_LINE); the rest of it is skipped, never held (a 500 MB line once cost 1 GB).
LINE_READ = MAX_LINE + 1


def _lines(path: str, text: io.TextIOWrapper, kind: str | None,
           truncated: Callable[[], None] | None = None) -> Iterator[str]:
    readline = text.readline
    try:
        first = True
        while line := readline(LINE_READ):
            if first:  # copytruncate's NULs before line 1 are no line of the log
                line, first = line.lstrip("\0"), False
                if not line:
                    continue
            if len(line) == LINE_READ and line[-1] != "\n":  # too long: what it held is cut here
                while (rest := readline(LINE_READ)) and rest[-1] != "\n":
                    pass
                line += "\n"
            yield line
    except EOFError:
        if truncated is not None:  # what was read stands; the caller counts the missing end
            truncated()
            return
        raise InputError(f"{path}: truncated {kind or 'input'} (it ends before its end marker)") from None
    except (OSError, zlib.error) as e:
        raise InputError(f"{path}: read error: {e}") from None


def splittable(path: str) -> bool:
    """Whether PATH is a plain file that can be read in parts from any line boundary."""
    if path == "-" or not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as f:
            return f.read(2) != GZIP_MAGIC
    except OSError:  # unreadable (not root): open_lines says so, in one line
        return False


def byte_blocks(path: str, start: int, end: int, block: int = 1 << 18) -> Iterator[bytes]:
    """Bytes [start, end) of a plain file (start and end at line boundaries) in blocks of whole
    lines (cheaper per line than a text stream); a line longer than a block is carried over until
    its end. Each block is one read cut at its last newline, the next read beginning there (no
    tail copied onto the next block), a quarter MiB that stays in the CPU's cache: a JSON journal
    of 1,000,000 lines (814 MB) took 0.55 s of CPU to read in 1 MiB blocks with a carried tail,
    0.10 s so."""
    with open(path, "rb", buffering=0) as f:
        f.seek(start)
        pos = start
        tail = b""
        if start == 0:  # copytruncate's NULs before line 1 are no line of the log
            while (head := f.read(4096)).startswith(b"\0"):
                kept = head.lstrip(b"\0")
                pos += len(head) - len(kept)
                if kept:
                    break
            f.seek(pos)
        while pos < end:
            data = f.read(min(block, end - pos))
            if not data:
                break
            pos += len(data)
            if pos < end:
                cut = data.rfind(b"\n") + 1
                if cut == 0:  # no line ends in it: carried over until one does, at most past
                    if len(tail) <= MAX_LINE:  # the parser's limit: it drops and counts the line
                        tail = (tail + data)[:MAX_LINE + 1]
                    continue
                if cut < len(data):
                    pos -= len(data) - cut
                    f.seek(pos)
                    data = data[:cut]
            if tail:
                data, tail = tail + data, b""
            yield data
        if tail:
            yield tail


def tail_lines(path: str, n: int, block: int = 1 << 16) -> list[str]:
    """The last n lines of a plain file (without their endings), read from its end."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        pos = f.tell()
        data = b""
        while pos > 0 and data.count(b"\n") <= n:
            step = min(block, pos)
            pos -= step
            f.seek(pos)
            data = f.read(step) + data
            block *= 2
    lines = data.decode("utf-8", "replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if pos > 0:
        lines = lines[1:]  # the first is cut
    return lines[-n:] if n else []
