"""Files written and read as a careful tool does (issue 42, items 2 and 3; mtptui/files.py): only a
regular file is replaced, never a device, a FIFO, a socket or a symbolic link's place; the mode and
owner of what is replaced are kept, or it is refused; a read stops at its limit whatever the file."""

from __future__ import annotations

import argparse
import os
import socket
import stat

import pytest

from mtptui.files import (NotReplaced, TooLarge, output_path, read_bounded, read_tail, replaceable,
                          write_replacing)
from mtptui.sources.record import APPEND, FORCE, RecordWriter

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="makes a device node and gives a file away: root")


def _device(path):
    """A device node like /dev/full (1, 7) at path: what `--force` turned into a regular file."""
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    return path


def _fifo(path):
    os.mkfifo(path)
    return path


def _link(path):
    target = path.parent / "target.json"
    target.write_text("kept\n")
    path.symlink_to(target)
    return path


def _socket(path):
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    s.close()
    return path


KINDS = [pytest.param(_device, "a character device", marks=root_only), (_fifo, "a FIFO"),
         (_link, "a symbolic link"), (_socket, "a socket")]


@pytest.mark.parametrize("make, kind", KINDS)
def test_record_force_and_append_replace_only_a_regular_file(tmp_path, make, kind):
    """Issue 42: `record --out P --force` as root renamed a new file over a device node, a symlink."""
    for mode in (FORCE, APPEND):
        p = tmp_path / f"out-{mode}"
        make(p)
        before = os.lstat(p)
        with pytest.raises(NotReplaced, match=f"is {kind}, not a regular file: not replaced"):
            RecordWriter(str(p), mode)
        after = os.lstat(p)
        assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
        assert [x.name for x in tmp_path.iterdir() if x.name.startswith(".")] == []


@pytest.mark.parametrize("make, kind", KINDS)
def test_an_output_path_is_checked_as_it_is_parsed(tmp_path, make, kind):
    p = make(tmp_path / "results.json")
    with pytest.raises(argparse.ArgumentTypeError, match=f"is {kind}"):
        output_path(str(p))
    with pytest.raises(NotReplaced):
        write_replacing(p, "x")
    with pytest.raises(argparse.ArgumentTypeError, match="no directory"):
        output_path(str(tmp_path / "missing" / "r.json"))
    assert output_path(str(tmp_path / "new.json")) == str(tmp_path / "new.json")


@root_only
def test_force_keeps_the_mode_and_owner_of_what_it_replaces(tmp_path):
    """Issue 42: a 0600 file of another user became 0644 and root's."""
    p = tmp_path / "theirs.json"
    p.write_text("old\n")
    os.chmod(p, 0o600)
    os.chown(p, 65534, 65534)
    w = RecordWriter(str(p), FORCE)
    w.write(['{"MESSAGE":"new","__CURSOR":"c1"}'], "gpu1")
    w.close()
    st = os.stat(p)
    assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid) == (0o600, 65534, 65534)
    assert "new" in p.read_text()
    write_replacing(p, "again\n")
    st = os.stat(p)
    assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, p.read_text()) == (0o600, 65534, 65534, "again\n")


def test_a_file_whose_owner_cannot_be_kept_is_refused(tmp_path, monkeypatch):
    p = tmp_path / "theirs.json"
    p.write_text("old\n")
    st = os.stat(p)
    monkeypatch.setattr(os, "geteuid", lambda: st.st_uid + 1)  # as another, unprivileged user sees it
    with pytest.raises(NotReplaced, match="could not keep its owner"):
        replaceable(p)


def test_write_replacing_a_new_file_follows_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        write_replacing(tmp_path / "r.csv", "a,b\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "r.csv").st_mode) == 0o640


def test_a_read_stops_at_its_limit_whatever_the_file(tmp_path):
    """Issue 42: `--config /dev/zero` took all 24 GB of the machine."""
    with pytest.raises(TooLarge, match="/dev/zero: a config larger than 1 MiB: refused"):
        read_bounded("/dev/zero", 1 << 20, "a config")
    p = tmp_path / "ok"
    p.write_bytes(b"x" * 100)
    assert read_bounded(p, 100, "a config") == b"x" * 100


def test_read_tail_keeps_the_newest_whole_lines(tmp_path):
    p = tmp_path / "audit.jsonl"
    p.write_bytes(b"".join(b"%05d\n" % i for i in range(1000)))  # 6 bytes a line
    data, cut = read_tail(p, 60)
    assert cut and data == b"".join(b"%05d\n" % i for i in range(990, 1000))
    data, cut = read_tail(p, 59)
    assert cut and data == b"".join(b"%05d\n" % i for i in range(991, 1000))
    assert read_tail(p, 6000) == (p.read_bytes(), False)


def test_a_fifo_nobody_writes_to_reads_as_empty_not_for_ever(tmp_path):
    """Found by the hostile tier: `--config FIFO` blocked in open() until a writer came."""
    fifo = _fifo(tmp_path / "config.toml")
    assert read_bounded(fifo, 1 << 20, "a config") == b""
