"""A log file followed as it grows (`tail -F`): appended lines, a line written in two parts, a file
that appears late, logrotate's rename-and-create, copytruncate. Real files, a real event loop."""

from __future__ import annotations

import asyncio
import os
import time

from mtptui.sources.base import CONNECTING, STREAMING
from mtptui.sources.follow import FollowFileSource


class Feed:
    """The Feed: keeps what it is given."""

    def __init__(self) -> None:
        self.got: list[str] = []
        self.states: list[str] = []

    def lines(self, raw, host):
        assert host == "box"
        self.got.extend(raw)

    def status(self, st):
        self.states.append(st.state)

    def dropped(self, n, reason, host):
        raise AssertionError(f"dropped {n}: {reason}")


async def until(cond, what: str, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


def append(path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


async def test_follows_appends_rotation_and_truncation(tmp_path):
    path = tmp_path / "server.log"
    feed = Feed()
    task = asyncio.ensure_future(FollowFileSource(str(path), host="box", poll=0.01).run(feed))
    try:
        await until(lambda: feed.states == [CONNECTING], "waiting for the file")
        append(path, "one\ntwo\n")
        await until(lambda: feed.got == ["one", "two"], "the first lines")
        assert feed.states == [CONNECTING, STREAMING]
        append(path, "thr")
        await asyncio.sleep(0.1)
        assert feed.got == ["one", "two"]  # half a line waits for its end
        append(path, "ee\rstill three\n")
        await until(lambda: feed.got[-1] == "three\rstill three", "the line's end")

        # logrotate: the old file is renamed (and gets a last line), a new one takes the path
        os.rename(path, tmp_path / "server.log.1")
        append(tmp_path / "server.log.1", "last of the old\n")
        append(path, "first of the new\n")
        await until(lambda: feed.got[-2:] == ["last of the old", "first of the new"], "the rotation")

        # copytruncate: the same file, cut to nothing, then written again
        with open(path, "r+", encoding="utf-8") as f:
            f.truncate(0)
        await asyncio.sleep(0.1)
        append(path, "after the cut\n")
        await until(lambda: feed.got[-1] == "after the cut", "the truncation")
        assert feed.got == ["one", "two", "three\rstill three", "last of the old", "first of the new",
                            "after the cut"]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_a_directory_fails_with_its_reason(tmp_path):
    feed = Feed()
    await asyncio.wait_for(FollowFileSource(str(tmp_path), host="box").run(feed), 5)
    assert feed.states == ["failed"]
