"""One clock per stream (issue 19): a journal in `short` whose server stamps are hours off the
envelope (the server's container in UTC, the journal read where it is 8 hours later) reads, opens
and summarises exactly as one where the two agree: the server's stamps go on the envelope's clock,
by the offset learned once per host, in quarter hours. Both the compiled lane and the Python path."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from mtptui.core import compiled
from mtptui.core.parse import LineParser
from mtptui.sources import parallel
from mtptui.sources.opener import open_store

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
_ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d:\d\d:\d\d)\+00:00 ")
_SGLANG = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")
_VLLM = re.compile(r"(INFO|WARNING|ERROR|DEBUG) (\d\d-\d\d \d\d:\d\d:\d\d)")


def short(line: str) -> str:
    """A short-iso journal line in journald's `short` (no zone, no year)."""
    m = _ISO.match(line)
    return f"{MONTHS[int(m.group(2)) - 1]} {m.group(3)} {m.group(4)} {line[m.end():]}"


def skewed(line: str, minutes: int) -> str:
    """The server's own stamp (SGLang's or vLLM's) moved by `minutes`; the envelope kept."""
    def sglang(m):
        t = dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S") + dt.timedelta(minutes=minutes)
        return "[" + t.strftime("%Y-%m-%d %H:%M:%S")

    def vllm(m):
        t = dt.datetime.strptime("2026-" + m.group(2), "%Y-%m-%d %H:%M:%S") + dt.timedelta(minutes=minutes)
        return f"{m.group(1)} {t.strftime('%m-%d %H:%M:%S')}"

    return _VLLM.sub(vllm, _SGLANG.sub(sglang, line, count=1), count=1)


def pair(tmp_path: Path, name: str, minutes: int) -> tuple[Path, Path]:
    lines = [short(x) for x in (SAMPLES / name).read_text().splitlines()]
    agree, off = tmp_path / "agree.log", tmp_path / "skewed.log"
    agree.write_text("\n".join(lines) + "\n")
    off.write_text("\n".join(skewed(x, minutes) for x in lines) + "\n")
    assert agree.read_text() != off.read_text()
    return agree, off


def summary_of(path: Path) -> dict:
    summary, counts = parallel.summarise([str(path)], jobs=1)
    return summary.to_json(counts.to_json())


@pytest.mark.parametrize("pure", [False, True], ids=["lane", "python"])
@pytest.mark.parametrize("name, minutes", [("mtp-toggle-restarts.log", 8 * 60), ("mtp-toggle-restarts.log", -330),
                                           ("incident-oom-crashloop.log", 8 * 60), ("vllm-eagle.log", -7 * 60)])
def test_a_server_hours_off_its_journal_summarises_as_one_that_agrees(tmp_path, monkeypatch, name, minutes, pure):
    if pure:
        monkeypatch.setattr(compiled, "ENABLED", False)
    agree, off = pair(tmp_path, name, minutes)
    want, got = summary_of(agree), summary_of(off)
    # the offset, noted once, is the one difference
    assert want["lines"].pop("clock_offsets") == {}
    host = got["epochs"][0]["host"]
    assert got["lines"].pop("clock_offsets") == {host: round(minutes / 15) * 15 * 60.0}
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
    assert [e["label"] for e in got["epochs"]] == [e["label"] for e in want["epochs"]]


def test_opening_it_gives_the_same_runs_and_times(tmp_path):
    agree, off = pair(tmp_path, "mtp-toggle-restarts.log", 8 * 60)
    stores = [open_store([str(p)], jobs=1).store for p in (agree, off)]
    runs = [[(e.start, e.end, e.label, e.records) for eps in s.epochs.values() for e in eps] for s in stores]
    assert runs[0] == runs[1] and len(runs[0]) >= 3
    assert [(e.kind, e.ts) for e in stores[0].events] == [(e.kind, e.ts) for e in stores[1].events]


def test_each_line_goes_on_the_envelopes_clock_and_the_offset_is_noted_once():
    p = LineParser()
    env = "Mar 09 16:00:00 gpu-h1 python3[5]: "
    body = " Decode batch, #running-req: 1, #token: 10, token usage: 0.01, gen throughput (token/s): 10.00, #queue-req: 0,"
    a = p.parse(env + "[2026-03-10 00:07:00 TP0]" + body, None)
    # 8 hours and 7 minutes ahead: 8 h is the zone, the 7 min are this line's own (it came late)
    assert p.clock_offsets == {"gpu-h1": 8 * 3600.0} and a.record.ts == p.parse(env + "[2026-03-09 16:07:00 TP0]" + body).record.ts
    b = p.parse(env.replace("gpu-h1", "gpu-h2") + "[2026-03-09 16:00:03 TP0]" + body, None)
    assert "gpu-h2" not in p.clock_offsets and a.record.ts - b.record.ts == 7 * 60 - 3
    # a stamp no zone explains (a day off) is the server's own: kept, and no offset noted
    c = p.parse(env.replace("gpu-h1", "gpu-h3") + "[2026-03-11 16:00:00 TP0]" + body, None)
    assert "gpu-h3" not in p.clock_offsets and c.record.ts - b.record.ts == 2 * 86400 - 3


def test_summary_says_the_offset_once(tmp_path, capsys):
    from mtptui import cli

    _, off = pair(tmp_path, "mtp-toggle-restarts.log", 8 * 60)
    assert cli.main(["summary", str(off)]) == 0
    out = capsys.readouterr().out
    assert out.count("gpu-h1: the server's stamps are 8h00 ahead of the journal's; read on the journal's clock") == 1
