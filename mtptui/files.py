"""Files a user names, read and written as a careful tool does (issue 42).

Written: `replaceable()` says whether what is at a path may be replaced: nothing, or a regular file
whose mode and owner the new file can keep. Never a device (`/dev/full` must not become a regular
file), a FIFO, a socket, a directory or a symbolic link (whose place a rename would take instead of
following it). `Replacing` writes beside the old file and renames over it only on `commit()`, the
old mode and owner given to the new one first, and the old file's identity checked again, so what
was checked is what is replaced. `write_replacing()` is both for a whole text.

Read: `read_bounded()` reads at most its limit and refuses past it in one line, so `--config
/dev/zero` costs the limit, not the machine; `read_tail()` keeps the newest part of a log that
only grows (the audit log).

The lowest layer (beside errors.py): the config reads its file here too.
"""

from __future__ import annotations

import os
import stat

from mtptui.errors import UsageError, UserError

KIB, MIB = 1 << 10, 1 << 20


def size_text(n: int) -> str:
    return f"{n // MIB} MiB" if n >= MIB and n % MIB == 0 else f"{n // KIB} KiB" if n % KIB == 0 else f"{n} bytes"


class NotReplaced(UsageError):
    """What is at the path is not a file mtptui may replace."""


class TooLarge(UserError):
    """A file or an answer past its documented limit."""


_KIND = {stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device", stat.S_IFIFO: "a FIFO",
         stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a directory", stat.S_IFLNK: "a symbolic link"}


def replaceable(path: str | os.PathLike) -> os.stat_result | None:
    """None where nothing is at `path`; else the lstat of a regular file that may be replaced with
    its mode and owner kept. Raises NotReplaced, in one line, for anything else."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    kind = stat.S_IFMT(st.st_mode)
    if kind != stat.S_IFREG:
        hint = " (name its target)" if kind == stat.S_IFLNK else ""
        raise NotReplaced(f"{path}: is {_KIND.get(kind, 'not a regular file')}, not a regular file: "
                          f"not replaced{hint}")
    if not _can_own(st):
        raise NotReplaced(f"{path}: belongs to uid {st.st_uid} gid {st.st_gid}: not replaced (the new file could "
                          "not keep its owner)")
    return st


def _can_own(st: os.stat_result) -> bool:
    if os.geteuid() == 0:
        return True
    return st.st_uid == os.geteuid() and (st.st_gid == os.getegid() or st.st_gid in os.getgroups())


class Replacing:
    """A new file for `path`, written beside it (hidden, mode 0600 until it is done) and renamed over
    the old one by commit(), which gives it the old file's mode and owner (or, for a new file, what
    the umask allows). abandon() removes it and leaves the old one as it was. Raises NotReplaced
    (here or at commit, if the path changed meanwhile) and OSError."""

    def __init__(self, path: str | os.PathLike, encoding: str = "utf-8") -> None:
        self.path = os.fspath(path)
        self.old = replaceable(self.path)
        d, name = os.path.split(os.path.abspath(self.path))
        self.tmp = os.path.join(d, f".{name}.mtptui-{os.getpid()}")
        fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        self.file = os.fdopen(fd, "w", encoding=encoding, newline="\n")

    def commit(self) -> None:
        f = self.file
        try:
            f.flush()
            now = replaceable(self.path)  # the same file as when we began, or still none
            if (now is None) != (self.old is None) or (now and self.old and (now.st_dev, now.st_ino) !=
                                                        (self.old.st_dev, self.old.st_ino)):
                raise NotReplaced(f"{self.path}: changed while mtptui wrote its new file: not replaced")
            if now is not None:
                if (now.st_uid, now.st_gid) != (os.geteuid(), os.getegid()):
                    os.fchown(f.fileno(), now.st_uid, now.st_gid)
                os.fchmod(f.fileno(), stat.S_IMODE(now.st_mode))
            else:
                umask = os.umask(0)
                os.umask(umask)
                os.fchmod(f.fileno(), 0o666 & ~umask)
            os.fsync(f.fileno())
            os.replace(self.tmp, self.path)
        except BaseException:
            self.abandon()
            raise

    def abandon(self) -> None:
        self.file.close()
        try:
            os.unlink(self.tmp)
        except FileNotFoundError:
            pass


def write_replacing(path: str | os.PathLike, text: str) -> None:
    """`text` as the whole of the file at `path`, replacing a regular file there (mode and owner
    kept) and nothing else. Raises NotReplaced or OSError; the old file is then as it was."""
    r = Replacing(path)
    try:
        r.file.write(text)
    except BaseException:
        r.abandon()
        raise
    r.commit()
    r.file.close()


def read_bounded(path: str | os.PathLike, limit: int, what: str) -> bytes:
    """The whole of the file at `path`, at most `limit` bytes (never more read, whatever the file:
    /dev/zero, a FIFO that never ends); past it, TooLarge in one line. Raises OSError."""
    # Opened without waiting: a FIFO that nobody writes to would block open() for ever (the hostile
    # tier's `--config FIFO`); then read as usual: with no writer it reads as empty.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    os.set_blocking(fd, True)
    with open(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(f"{path}: {what} larger than {size_text(limit)}: refused")
    return data


def read_tail(path: str | os.PathLike, limit: int) -> tuple[bytes, bool]:
    """The last `limit` bytes of a file that grows at its end, from the first whole line in them,
    and whether older lines were left out. Raises OSError."""
    with open(path, "rb") as f:
        try:
            size = os.fstat(f.fileno()).st_size
            start = size - limit if stat.S_ISREG(os.fstat(f.fileno()).st_mode) and size > limit else 0
        except OSError:
            start = 0
        if start:
            f.seek(start - 1)
        data = f.read(limit + 1)
    if not start and len(data) <= limit:
        return data, False
    cut = data.find(b"\n")  # a line cut by the start is left out whole
    return (data[cut + 1:] if cut >= 0 else b""), True


def output_path(text: str) -> str:
    """An argparse type for a file mtptui will write at the end of a long run (bench's --json): what
    is there may be replaced, and its directory is there to write in, checked before the run."""
    import argparse

    try:
        replaceable(text)
    except NotReplaced as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    d = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(d):
        raise argparse.ArgumentTypeError(f"{text}: no directory {d} to write it in")
    if not os.access(d, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{text}: cannot write in {d}")
    return text
