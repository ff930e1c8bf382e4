"""A live host that cannot be reached: what its statuses say, and `--give-up-after S`.

The unreachable host is real: an SSH source aimed at a loopback port nobody listens on, which
refuses at once. A stream that is up is a real child process (ProcessSource).
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys

import pytest

from mtptui.config import resolve_hosts
from mtptui.config import Config
from mtptui.sources.base import CONNECTING, ENDED, FAILED, RECONNECTING, STREAMING, SourceStatus
from mtptui.sources.giveup import GiveUpSource
from mtptui.sources.process import ProcessSource
from mtptui.sources.ssh import SshJournalSource


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def refusing_source(port: int | None = None) -> SshJournalSource:
    (host,) = resolve_hosts([f"127.0.0.1:{port or closed_port()}"], Config(), unit="sglang")
    return SshJournalSource(host)


class Collect:
    def __init__(self) -> None:
        self.statuses: list[SourceStatus] = []
        self.got: list[str] = []

    def lines(self, raw, host):
        self.got += raw

    def status(self, st):
        self.statuses.append(st)

    def dropped(self, n, reason, host):
        pass


async def test_a_refusing_host_says_what_failed_and_when_it_retries_without_its_name_twice():
    source = refusing_source()
    feed = Collect()
    task = asyncio.ensure_future(source.run(feed))
    try:
        while sum(st.state == RECONNECTING for st in feed.statuses) < 2:
            await asyncio.sleep(0.05)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    name = source.host
    assert feed.statuses[0].state == CONNECTING and feed.statuses[0].detail == ""
    retry = next(st for st in feed.statuses if st.state == RECONNECTING)
    assert retry.detail == "connection refused (no sshd listening?)"
    assert retry.retry_at is not None and retry.retry_at > retry.ts
    said = retry.describe(retry.ts, name)
    assert said.startswith(f"{name} (retry in ") and said.count(name) == 1, said
    assert retry.describe(retry.retry_at + 1, name).startswith(f"{name} (retrying): ")


async def test_give_up_after_stops_a_host_that_never_answers():
    source = GiveUpSource(refusing_source(), 1.0)
    feed = Collect()
    await asyncio.wait_for(source.run(feed), 30)  # a bound against a hang, not a speed test
    last = feed.statuses[-1]
    assert last.state == FAILED and last.host == source.host
    assert last.detail == "connection refused (no sshd listening?); gave up after 1s without a stream"
    assert source.gave_up == last.detail
    assert [st.state for st in feed.statuses].count(FAILED) == 1


async def test_a_stream_that_is_up_is_never_given_up_on():
    # up for longer than the give-up time, then ends by itself
    child = ProcessSource([sys.executable, "-c", "import time; time.sleep(1.5); print('bye')"], host="up")
    source = GiveUpSource(child, 0.3)
    feed = Collect()
    await asyncio.wait_for(source.run(feed), 30)
    assert [st.state for st in feed.statuses] == [CONNECTING, STREAMING, ENDED]
    assert feed.got == ["bye"] and source.gave_up is None


async def test_a_host_that_fails_for_good_is_given_up_on_at_once():
    child = ProcessSource([sys.executable, "-c", "raise SystemExit(3)"], host="bad")
    source = GiveUpSource(child, 3600)
    feed = Collect()
    await asyncio.wait_for(source.run(feed), 30)
    assert feed.statuses[-1].state == FAILED and source.gave_up == feed.statuses[-1].detail


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mtptui", *args], capture_output=True, text=True,
                          timeout=120)


def test_record_gives_up_and_exits_1(tmp_path):
    port = closed_port()
    r = run("record", f"127.0.0.1:{port}", "--unit", "sglang", "--out", str(tmp_path / "r.json"),
            "--give-up-after", "1")
    assert r.returncode == 1, r.stderr
    lines = r.stderr.splitlines()
    assert any(f"127.0.0.1:{port}: reconnecting (retry in " in x for x in lines), r.stderr
    assert f"127.0.0.1:{port}: failed (not retrying): connection refused (no sshd listening?); " \
           "gave up after 1s without a stream" in r.stderr
    assert lines[-1] == f"127.0.0.1:{port}: 0 entries"
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("value", ["0", "-1", "soon", "inf"])
def test_give_up_after_wants_a_positive_number(value, tmp_path):
    for cmd in (["live"], ["record", "--out", str(tmp_path / "r.json")]):
        r = run(*cmd, "127.0.0.1:1", "--unit", "u", "--give-up-after", value)
        assert r.returncode == 2 and f"--give-up-after: {value!r}: give a number of seconds from 0.1 to" in r.stderr
