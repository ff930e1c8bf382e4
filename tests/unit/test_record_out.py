"""A record's file is never lost by accident: `record --out` and `live --record` refuse a file that
exists (one line, exit 2) unless --force (which replaces it only once an entry has come) or
--append (which resumes each host after its last cursor in the file); a session that received
nothing leaves no new file, and an old one byte for byte as it was."""

from __future__ import annotations

import json

import pytest

from mtptui.core.parse import timeparse
from mtptui.errors import UsageError
from mtptui.sources.giveup import GiveUpSource
from mtptui.sources.journal import JournalSource
from mtptui.sources.record import (APPEND, FORCE, NEW, RecordExists, RecordingSource, RecordWriter,
                                   journal_source, last_cursors, last_stamps)

PRECIOUS = b"".join(json.dumps({"__CURSOR": f"s=ab;i={i:x};b=b0;m=1;t=2;x=3", "_HOSTNAME": "gpu1",
                                "__REALTIME_TIMESTAMP": str(1_700_000_000_000_000 + i), "MESSAGE": f"line {i}"},
                               separators=(",", ":")).encode() + b"\n" for i in range(1, 2001))


def entry(host: str, i: int) -> str:
    return json.dumps({"__CURSOR": f"s={host};i={i:x}", "_HOSTNAME": host, "MESSAGE": f"m{i}"},
                      separators=(",", ":"))








@pytest.fixture
def precious(tmp_path):
    p = tmp_path / "precious.json"
    p.write_bytes(PRECIOUS)
    return p


@pytest.fixture
def config(tmp_path):
    p = tmp_path / "config.toml"
    p.write_text("")
    return p


# --- the writer --------------------------------------------------------------------------------

def test_a_new_record_refuses_an_existing_file(precious):
    with pytest.raises(RecordExists):
        RecordWriter(str(precious))
    assert precious.read_bytes() == PRECIOUS


def test_a_session_without_entries_leaves_no_new_file_and_old_ones_as_they_were(tmp_path, precious):
    for mode in (NEW, FORCE, APPEND):
        for path in (precious, tmp_path / f"new-{mode}.json") if mode != NEW else (tmp_path / "new.json",):
            w = RecordWriter(str(path), mode)
            w.gap("gpu1", "stream lost", 1_700_000_000.0)  # the host never came: only a gap marker
            w.close()
            assert w.nothing_written
            if path == precious:
                assert precious.read_bytes() == PRECIOUS, mode
            else:
                assert not path.exists(), mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious.json"]  # no temp file either


def test_force_replaces_the_file_only_when_the_first_entry_comes(tmp_path, precious):
    w = RecordWriter(str(precious), FORCE)
    w.gap("gpu1", "stream lost", 1_700_000_000.0)
    assert precious.read_bytes() == PRECIOUS  # not yet
    w.write([entry("gpu1", 1)], "gpu1")
    lines = precious.read_text().splitlines()
    assert "MTPTUI_GAP" in lines[0] and json.loads(lines[1])["MESSAGE"] == "m1"
    w.write([entry("gpu1", 2)], "gpu1")
    w.close()
    assert len(precious.read_text().splitlines()) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious.json"]


def test_append_adds_after_the_old_entries_even_after_a_line_cut_short(precious):
    precious.write_bytes(PRECIOUS + b'{"__CURSOR":"s=ab;i=ff')  # a run killed mid-write
    w = RecordWriter(str(precious), APPEND)
    w.write([entry("gpu1", 5000)], "gpu1")
    w.close()
    data = precious.read_bytes()
    assert data.startswith(PRECIOUS)
    assert data[len(PRECIOUS):].split(b"\n")[1] == entry("gpu1", 5000).encode()


def test_last_cursors_per_host_from_the_end_across_blocks(tmp_path):
    p = tmp_path / "two.json"
    lines = [entry("gpu1", i) if i % 3 else entry("gpu2", i) for i in range(1, 400)]
    lines.insert(200, json.dumps({"MTPTUI_GAP": "1", "_HOSTNAME": "gpu3", "MESSAGE": "-- gap"}))
    p.write_text("\n".join(lines) + "\nnot json\n")
    want = {"gpu1": "s=gpu1;i=18e", "gpu2": "s=gpu2;i=18f"}  # 398 and 399
    for block in (7, 64, 1000, 1 << 20):
        assert last_cursors(str(p), block=block) == want, block
        assert last_cursors(str(p), {"gpu1", "gpu2", "gpu9"}, block=block) == want
    assert last_cursors(str(p), {"gpu2"}, block=64)["gpu2"] == want["gpu2"]


def test_last_stamps_are_each_engines_latest_stamp_and_the_lines_of_the_window_before(tmp_path):
    """A container host's record (`docker logs --timestamps` lines), its replicas' too: where
    `--append` resumes each stream (WINDOW_S back from its latest stamp, the lines of that window
    known), read from the end back across blocks."""
    p = tmp_path / "boxes.json"
    w = RecordWriter(str(p))
    for i in range(1, 300):
        w.write([f"2026-12-07T02:00:{i // 10:02d}.{i % 10}5Z line {i}"], f"rec-{1 + i % 2}")
    # stderr's line stamped before stdout's came after it: the latest stamp is still stdout's
    w.write(["2026-12-07T02:00:29.95Z again", "2026-12-07T02:00:29.9Z late"], "rec-2")
    w.write(["2026-12-07T02:00:01.5Z box's"], "box")
    w.write(["2026-12-07T02:00:01.5Z box's own"], "boxer-1")  # another host: never box's replica
    w.close()
    for block in (64, 1 << 20):
        got = last_stamps(str(p), {"rec", "box"}, {"rec"}, block=block)
        assert set(got) == {"rec-1", "rec-2", "box"}
        assert got["rec-1"].stamp == "2026-12-07T02:00:29.85Z"
        assert got["rec-1"].recent == {f"2026-12-07T02:00:{i // 10:02d}.{i % 10}5Z line {i}" for i in range(198, 300, 2)}
        assert got["rec-2"].stamp == "2026-12-07T02:00:29.95Z"
        assert "2026-12-07T02:00:29.9Z late" in got["rec-2"].recent
        assert got["box"].stamp == "2026-12-07T02:00:01.5Z"
        again = ["2026-12-07T02:00:29.9Z late", "2026-12-07T02:00:29.93Z came later still", "2026-12-07T02:00:29.96Z next"]
        assert got["rec-2"].new(again) == again[1:]
        assert float(got["rec-2"].since or 0) == pytest.approx(timeparse.rfc3339("2026-12-07T02:00:19.95Z"))
    assert set(last_stamps(str(p), {"box"})) == {"box"}  # a container, not a service: no replicas


class FakeJournal(JournalSource):
    async def open(self, argv):
        raise AssertionError("not run here")

    @property
    def where(self) -> str:
        return self.host

    @property
    def who(self) -> str:
        return "root"


def test_append_resumes_each_host_after_its_cursor_inside_the_wrappers(precious):
    gpu1 = FakeJournal("gpu1", "sglang.service")
    gpu2 = FakeJournal("gpu2", "sglang.service")
    w = RecordWriter(str(precious), APPEND)
    sources = [GiveUpSource(gpu1, 5.0), gpu2]
    said = w.resume(sources)
    assert journal_source(RecordingSource(sources[0], w)) is gpu1
    assert gpu1.cursor == "s=ab;i=7d0;b=b0;m=1;t=2;x=3" and gpu2.cursor is None
    assert "--after-cursor=s=ab;i=7d0;b=b0;m=1;t=2;x=3" in gpu1.argv()
    assert said[0].startswith("gpu1: resuming") and said[1].startswith("gpu2: no entry in")
    w.close()
    assert precious.read_bytes() == PRECIOUS
    assert RecordWriter(str(precious.parent / "new.json")).resume(sources) == []  # only when appending


# --- the commands ------------------------------------------------------------------------------







@pytest.mark.parametrize("cmd", ["live", "local"])
def test_live_and_local_record_refuse_an_existing_file_before_the_screen_opens(precious, config, cmd, monkeypatch):
    from mtptui.commands import live, local

    launched = []
    monkeypatch.setattr(live, "launch", lambda *a, **k: launched.append(a) or 0)
    args = (live if cmd == "live" else local).build_parser().parse_args(
        (["root@127.0.0.1"] if cmd == "live" else []) + ["--unit", "x.service", "--record", str(precious)])
    src = [FakeJournal("gpu1", "x.service")]
    with pytest.raises(UsageError, match="exists: --append to resume it, --force to overwrite"):
        live.record_and_launch(f"mtptui {cmd}", args, src, None, "t")
    assert not launched and precious.read_bytes() == PRECIOUS
    args.append = True
    assert live.record_and_launch(f"mtptui {cmd}", args, src, None, "t") == 0
    assert launched and precious.read_bytes() == PRECIOUS  # nothing came: as it was
    assert src[0].cursor == "s=ab;i=7d0;b=b0;m=1;t=2;x=3"  # resumed after gpu1's last entry


def test_live_append_without_record_is_refused():
    from mtptui.commands import live

    args = live.build_parser().parse_args(["root@127.0.0.1", "--unit", "x.service", "--append"])
    with pytest.raises(UsageError, match="^--append and --force go with --record FILE$"):
        live.record_and_launch("mtptui live", args, [], None, "t")
