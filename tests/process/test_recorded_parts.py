"""A record's own entries (core/recorded.py: /metrics scrapes and GPU samples) are read back in the
parse that reads its lines, whichever reader's part of the file they fall in: the same entries, in
the same order, as the scan a replay uses (sources/record.recorded), counted as `recorded`."""

from __future__ import annotations

import json
import time

from mtptui.core import latency
from mtptui.core.gpus import GpuSample
from mtptui.sources import parallel
from mtptui.sources.record import RecordWriter, recorded

START = 1764662400.0  # 2025-12-02 08:00:00 UTC


def _decode(t: float, rank: int, k: int) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))
    return json.dumps({"MESSAGE": f"[{stamp} TP{rank}] Decode batch, #running-req: {k % 9 + 1}, #token: {100 + k}, "
                                  f"token usage: 0.10, accept len: 1.{k % 10}0, accept rate: 0.90, cuda graph: True, "
                                  f"gen throughput (token/s): {100 + k % 50}.00, #queue-req: 0, ",
                       "__REALTIME_TIMESTAMP": str(int(t * 1e6)), "_HOSTNAME": f"gpu{rank % 2}"})


def _record(path) -> tuple[int, int]:
    w = RecordWriter(str(path))
    scrapes = gpus = 0
    for k in range(3000):
        t = START + k * 0.1
        w.write([_decode(t, k % 4, k)], f"gpu{k % 2}")
        if k % 37 == 0:
            w.metrics(f"gpu{k % 2}", dict(latency.to_json(latency.Scrape(t, {}, {"c": float(k)}, {}, 1.5)), epoch=START), t)
            scrapes += 1
        if k % 53 == 0:
            w.gpus(f"gpu{k % 2}", [GpuSample(t, i, "NVIDIA H100 80GB HBM3", util=float(k % 100)) for i in range(2)], t)
            gpus += 1
    w.close()
    return scrapes, gpus


def test_every_part_gives_the_records_entries_in_file_order(tmp_path, monkeypatch):
    path = tmp_path / "r.jsonl"
    scrapes, gpus = _record(path)
    scanned = recorded(str(path))
    assert sum(len(v) for v in scanned.scrapes.values()) == scrapes and sum(len(v) for v in scanned.gpus.values()) == 2 * gpus
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1)
    one = None
    for jobs in (1, 2, 3):
        s, counts = parallel.summarise([str(path)], jobs=jobs)
        assert s.recorded.scrapes == scanned.scrapes and s.recorded.gpus == scanned.gpus, jobs
        assert counts.recorded == scrapes + gpus and counts.unparsed == 0 and counts.batch == 3000, jobs
        doc = s.to_json(counts.to_json())
        assert one is None or doc == one
        one = doc
