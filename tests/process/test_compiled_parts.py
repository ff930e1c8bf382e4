"""The lane in forked readers (sources/parallel.py): parts read in parallel join to what one Python reader gives.

The process tier: these start child processes (tests/unit starts none)."""

from __future__ import annotations
import json
from mtptui.sources import parallel
from test_compiled import SAMPLES, python_path  # noqa: F401 (fixtures and builders shared with the unit tier)


def test_parts_read_in_parallel_join_as_the_python_path_reads_the_whole(monkeypatch, python_path, tmp_path):
    """Forked readers of a file's parts, each with its lane, against one Python reader."""
    log = tmp_path / "all.log"
    log.write_bytes(b"".join(p.read_bytes() for p in SAMPLES if p.suffix == ".log"))
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    summary, counts = parallel.summarise([str(log)], jobs=3)
    fast = json.dumps(summary.to_json(counts.to_json()))
    python_path()
    summary, counts = parallel.summarise([str(log)], jobs=1)
    assert fast == json.dumps(summary.to_json(counts.to_json()))
