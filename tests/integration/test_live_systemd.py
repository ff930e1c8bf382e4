"""The live layer against real systemd + journald + sshd hosts (systemd-nspawn containers).

Each test starts its own transient unit (`systemd-run`) running the numbered line writer, follows
it with the real SshJournalSource, and compares what arrived with journald's own
`journalctl -u UNIT -o json` for the same unit: the same entries, in the same order, none twice.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
from hosts.helpers import Collect, host_config, journal_of, start_writer, unique_unit, until

from mtptui.sources.base import FAILED, RECONNECTING, STREAMING
from mtptui.sources.record import RecordingFeed, RecordWriter
from mtptui.sources.ssh import SshJournalSource

pytestmark = pytest.mark.systemd


def cursors(entries: list[dict]) -> list[str]:
    return [e["__CURSOR"] for e in entries]


def seqs(lines: list[str]) -> list[int]:
    out = []
    for x in lines:
        msg = json.loads(x).get("MESSAGE")
        if isinstance(msg, str) and ", seq: " in msg:
            out.append(int(msg.split(", seq: ")[1].split(",")[0]))
    return out


async def stop(task: asyncio.Task) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def record_lines(path, gaps: bool = False) -> list[dict]:
    """The journal entries of a record (or, with gaps=True, its gap markers)."""
    entries = [json.loads(x) for x in path.read_text().splitlines()]
    return [e for e in entries if ("MTPTUI_GAP" in e) == gaps]


async def test_two_hosts_stream_at_once(cluster, tmp_path):
    h1, h2 = cluster.hosts[:2]
    unit = unique_unit("two")
    feed = Collect()
    writer = RecordWriter(str(tmp_path / "rec.json"))
    rec = RecordingFeed(feed, writer)
    sources = [SshJournalSource(host_config(h, unit)) for h in (h1, h2)]
    tasks = [asyncio.ensure_future(s.run(rec)) for s in sources]
    try:
        await until(lambda: all(STREAMING in feed.states(s.host) for s in sources), 15, "both streaming")
        for h in (h1, h2):
            start_writer(h, unit, rate=100, count=300)
        await until(lambda: all(len(seqs(feed.got(s.host))) >= 300 for s in sources), 30,
                    "300 lines from each host")
        # systemd's own entries of the unit's end come after its last line: the journals are
        # whole once each writer's unit is gone, and the feed must then have every entry
        await until(lambda: all(h.ssh(["systemctl", "is-active", unit], check=False).stdout.strip() not in ("active", "activating",
                                                                                              "deactivating")
                                for h in (h1, h2)), 30, "the writers' end", step=0.5)
        await until(lambda: all(cursors([json.loads(x) for x in feed.got(s.host)]) == cursors(journal_of(h, unit))
                                for s, h in zip(sources, (h1, h2))), 30, "every entry of each journal", step=0.5)
    finally:
        for t in tasks:
            await stop(t)
        writer.close()
    for s, h in zip(sources, (h1, h2)):
        assert seqs(feed.got(s.host)) == list(range(300))
        assert cursors([json.loads(x) for x in feed.got(s.host)]) == cursors(journal_of(h, unit))
    recorded = record_lines(tmp_path / "rec.json")
    assert {e["_HOSTNAME"] for e in recorded} == {"gpu1", "gpu2"}
    assert all(e["_SYSTEMD_UNIT"] == f"{unit}.service" for e in recorded if "seq: " in str(e["MESSAGE"]))


@pytest.mark.parametrize("cut", ["link", "kill-sshd"])
async def test_cut_and_restore_loses_nothing_and_doubles_nothing(cluster, tmp_path, cut):
    h = cluster.hosts[0]
    unit = unique_unit("cut")
    feed = Collect()
    writer = RecordWriter(str(tmp_path / "rec.json"))
    source = SshJournalSource(host_config(h, unit))
    task = asyncio.ensure_future(source.run(RecordingFeed(feed, writer)))
    total = 500
    try:
        await until(lambda: STREAMING in feed.states("gpu1"), 15, "streaming")
        start_writer(h, unit, rate=50, count=total)
        await until(lambda: len(seqs(feed.got("gpu1"))) >= 60, 20, "60 lines before the cut")
        if cut == "link":
            h.link(False)
            try:
                await until(lambda: RECONNECTING in feed.states("gpu1"), 15, "the cut to be noticed")
                await asyncio.sleep(1.5)  # the writer goes on; these lines must come after the resume
            finally:
                h.link(True)
        else:
            port = source.transport.conn.get_extra_info("sockname")[1]
            pids = h.ssh(f"ss -Htnp state established dport = :{port}").stdout
            victims = sorted({int(p.split("=")[1]) for p in pids.replace(",", " ").split()
                              if p.startswith("pid=")})
            assert victims, f"no sshd found for port {port}: {pids!r}"
            h.ssh(["kill", "-9", *map(str, victims)])
            await until(lambda: RECONNECTING in feed.states("gpu1"), 15, "the kill to be noticed")
        n_connects = source.connects
        await until(lambda: source.connects > n_connects and feed.last("gpu1").state == STREAMING,
                    30, "the stream to resume")
        await until(lambda: len(seqs(feed.got("gpu1"))) >= total, 30, f"all {total} lines")
        await asyncio.sleep(0.5)  # anything doubled would arrive now
    finally:
        await stop(task)
        writer.close()
    recorded = record_lines(tmp_path / "rec.json")
    truth = journal_of(h, unit)
    assert cursors(recorded) == cursors(truth), "the record differs from journald's own"
    markers = record_lines(tmp_path / "rec.json", gaps=True)
    assert markers and all(m["_HOSTNAME"] == "gpu1" for m in markers)
    replayed = subprocess.run([sys.executable, "-m", "mtptui", "summary", "--json", str(tmp_path / "rec.json")],
                              capture_output=True, text=True, check=True)
    assert [e["kind"] for e in json.loads(replayed.stdout)["events"]].count("gap") == len(markers)
    assert [e["MESSAGE"] for e in recorded] == [e["MESSAGE"] for e in truth]
    assert seqs(feed.got("gpu1")) == list(range(total))
    gaps = [s for s in feed.statuses if s.state == RECONNECTING]
    assert gaps and all(s.host == "gpu1" for s in gaps)


async def test_wrong_host_key_is_refused(cluster, tmp_path):
    h = cluster.hosts[1]
    import asyncssh

    kh = tmp_path / "known_hosts"
    other = asyncssh.generate_private_key("ssh-ed25519").export_public_key("openssh").decode()
    kh.write_text(f"{h.address} {other}")
    feed = Collect()
    await asyncio.wait_for(SshJournalSource(host_config(h, "x", known_hosts=str(kh))).run(feed), 15)
    last = feed.last("gpu2")
    assert last.state == FAILED and "CHANGED" in last.detail and feed.got("gpu2") == []


async def test_auth_failure_and_unreachable_are_per_host(cluster, tmp_path):
    import asyncssh

    h1, h2 = cluster.hosts[:2]
    stranger = tmp_path / "stranger"
    stranger.write_bytes(asyncssh.generate_private_key("ssh-ed25519").export_private_key())
    unit = unique_unit("per")
    feed = Collect()
    good = SshJournalSource(host_config(h1, unit))
    denied = SshJournalSource(host_config(h2, unit, name="denied", identity=str(stranger)))
    gone = SshJournalSource(host_config(h2, unit, name="gone", address=cluster.unused_address()))
    tasks = [asyncio.ensure_future(s.run(feed)) for s in (good, denied, gone)]
    try:
        await until(lambda: STREAMING in feed.states("gpu1"), 15, "the good host streaming")
        start_writer(h1, unit, rate=100, count=200)
        await until(lambda: len(seqs(feed.got("gpu1"))) >= 200, 20, "the good host's lines")
        await until(lambda: feed.states("gone").count(RECONNECTING) >= 2, 15, "retries of the gone host")
    finally:
        for t in tasks:
            await stop(t)
    assert seqs(feed.got("gpu1")) == list(range(200))
    assert feed.last("denied").state == FAILED and "authentication failed" in feed.last("denied").detail
    assert tasks[1].done()
    gone_st = [s for s in feed.statuses if s.host == "gone" and s.state == RECONNECTING]
    assert "unreachable" in gone_st[0].detail or "No route" in gone_st[0].detail, gone_st[0].detail


async def test_user_without_journal_rights_gets_a_clear_error(cluster):
    h = cluster.hosts[2]
    feed = Collect()
    await asyncio.wait_for(SshJournalSource(host_config(h, "mtptui-sim", user="viewer")).run(feed), 15)
    last = feed.last("gpu3")
    assert last.state == FAILED and "no rights" in last.detail and "systemd-journal" in last.detail
    feed = Collect()
    await asyncio.wait_for(
        SshJournalSource(host_config(h, "mtptui-sim", user="pwuser", sudo=True)).run(feed), 15)
    last = feed.last("gpu3")
    assert last.state == FAILED and "password" in last.detail and "NOPASSWD" in last.detail


async def test_sudo_user_streams_and_journalctl_dies_with_the_channel(cluster):
    h = cluster.hosts[2]
    unit = unique_unit("sudo")
    feed = Collect()
    source = SshJournalSource(host_config(h, unit, user="ops", sudo=True))
    task = asyncio.ensure_future(source.run(feed))
    try:
        await until(lambda: STREAMING in feed.states("gpu3"), 15, "streaming")
        start_writer(h, unit, rate=100, count=50)
        await until(lambda: len(seqs(feed.got("gpu3"))) >= 50, 20, "50 lines via sudo")
        assert h.ssh(["pgrep", "-f", f"journalctl --unit={unit}"], check=False).stdout.strip()
    finally:
        await stop(task)
    for _ in range(50):
        if not h.ssh(["pgrep", "-f", f"journalctl --unit={unit}"], check=False).stdout.strip():
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError("journalctl outlived the closed channel")


async def test_hostile_unit_and_args_are_passed_as_data(cluster):
    h = cluster.hosts[2]
    feed = Collect()
    bad = "x;touch /tmp/pwned-unit"
    args = ("--grep=$(touch /tmp/pwned-arg)",)
    source = SshJournalSource(host_config(h, bad, journalctl_args=args))
    task = asyncio.ensure_future(source.run(feed))
    try:
        await until(lambda: source.connects > 0 or FAILED in feed.states("gpu3"), 15, "a start")
        await asyncio.sleep(0.5)
        assert h.ssh(["pgrep", "-f", "journalctl --unit=x;touch"], check=False).stdout.strip()
    finally:
        await stop(task)
    assert h.ssh("ls /tmp/pwned-unit /tmp/pwned-arg", check=False).returncode != 0


async def test_ten_megabyte_and_binary_messages_pass_through(cluster, tmp_path):
    h = cluster.hosts[1]
    unit = unique_unit("big")
    feed = Collect()
    writer = RecordWriter(str(tmp_path / "rec.json"))
    task = asyncio.ensure_future(SshJournalSource(host_config(h, unit)).run(RecordingFeed(feed, writer)))
    try:
        await until(lambda: STREAMING in feed.states("gpu2"), 15, "streaming")
        h.ssh(["systemd-run", "--quiet", "--wait", f"--unit={unit}", "python3",
               "/opt/mtptui/tests/integration/hosts/jsend.py", "--size", "10000000"])
        h.ssh(["systemd-run", "--quiet", "--wait", f"--unit={unit}", "python3",
               "/opt/mtptui/tests/integration/hosts/jsend.py", "--binary"])
        await until(lambda: sum('"MTPTUI_SIZE"' in x for x in feed.got("gpu2")) >= 2, 30,
                    "the big and the binary entry")
    finally:
        await stop(task)
        writer.close()
    entries = [e for e in record_lines(tmp_path / "rec.json") if "MTPTUI_SIZE" in e]
    assert len(entries) == 2
    big, binary = entries
    assert len(big["MESSAGE"]) == 10_000_000 and big["MESSAGE"].startswith("BIG 0123")
    expected = b"binary \xff\xfe\x00 line\nsecond \x1b[31m" + bytes(range(256))
    assert bytes(binary["MESSAGE"]) == expected
    truth = [e for e in journal_of(h, unit) if "MTPTUI_SIZE" in e]
    assert [e["__CURSOR"] for e in truth] == [big["__CURSOR"], binary["__CURSOR"]]
