"""Other prefixes read by forked readers of a file's parts, as one reader reads them.

The process tier: these start child processes (tests/unit starts none)."""

from __future__ import annotations
from logsynth import utc
from test_formats_prefixes import D, D_OLD, P  # noqa: F401 (fixtures and builders shared with the unit tier)


def test_parallel_parts_read_other_prefixes_as_one_reader_does(tmp_path, monkeypatch):
    """A big file is read in parts: a part that starts among time-only stamps takes the date of
    the last full stamp before it, so every figure equals a sequential read's."""
    from mtptui.sources import parallel

    lines = [f"2026-03-09 16:00:{s:02d},500 [INFO] sglang: {D.text}" for s in range(5)]
    lines += [f"(SGLangEngine pid={i % 3}) [2026-03-09 16:00:{5 + i // 60:02d} TP0] {P.text}" for i in range(300)]
    for i in range(6000):  # 16:00:10 to 16:10:09, with no full stamp
        t = 16 * 3600 + 10 + i // 10
        lines.append(f"[{t // 3600:02d}:{t // 60 % 60:02d}:{t % 60:02d} TP{i % 2}] {D_OLD.text}")
    path = tmp_path / "mixed.log"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1)

    def run(jobs):
        s, counts = parallel.summarise([str(path)], jobs=jobs)
        return s.to_json(counts.to_json())

    one = run(1)
    assert one["lines"]["batch"] == len(lines)
    ranks = {s["rank"]: s for s in one["series"]}
    assert set(ranks) == {"", "TP0", "TP1", "pid=0 TP0", "pid=1 TP0", "pid=2 TP0"}
    assert ranks["TP1"]["last"] == utc(2026, 3, 9, 16, 10, 9)  # the time-only stamps are dated
    for jobs in (2, 3):
        assert run(jobs) == one
