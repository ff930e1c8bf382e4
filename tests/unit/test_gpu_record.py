"""GPU samples in a record (sources/record.py: MTPTUI_GPUS entries): written beside the lines once
the record has begun, read back per host as they were, a damaged entry skipped."""

from __future__ import annotations

from mtptui.core.gpus import GpuSample, parse_text
from mtptui.sources.record import RecordWriter, recorded_gpus

ROWS = "0, NVIDIA H100 80GB HBM3, 97, 74213, 81559, 612.43, 700.00, 66, 1980\n" \
       "1, NVIDIA H100 80GB HBM3, 4, 74213, 81559, [N/A], 700.00, 40, 1980\n"


def test_gpu_samples_round_trip_through_a_record(tmp_path):
    path = tmp_path / "r.jsonl"
    w = RecordWriter(str(path))
    w.gpus("gpu1", parse_text(ROWS, 0.5), 0.5)  # before any entry: not written
    w.write(['{"MESSAGE":"hello","__REALTIME_TIMESTAMP":"1000000"}'], "gpu1")
    first, second = parse_text(ROWS, 2.0), parse_text(ROWS, 3.0)
    w.gpus("gpu1", first, 2.0)
    w.gpus("gpu2", second, 3.0)
    w.close()
    with open(path, "a") as f:
        f.write('{"MTPTUI_GPUS":"[{\\"t\\": 1}]","_HOSTNAME":"gpu1","MESSAGE":"-- mtptui: gpus --"}\n')
        f.write('{"MTPTUI_GPUS":"not json","_HOSTNAME":"gpu1"}\n')
    got = recorded_gpus(str(path))
    assert got == {"gpu1": first, "gpu2": second}
    assert got["gpu1"][1].power is None and isinstance(got["gpu1"][0], GpuSample)


def test_no_file_no_gpus(tmp_path):
    assert recorded_gpus(str(tmp_path / "absent")) == {}
