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


def test_summary_carries_each_epochs_gpus_and_energy_per_token(tmp_path):
    import io
    import json
    from contextlib import redirect_stdout
    from pathlib import Path

    from mtptui.commands import summary as summary_cmd

    sample = Path(__file__).resolve().parents[2] / "sample_logs" / "long-context-toggle.log"
    start = 1773072000.0  # its first epoch (spec off, 288.05 tok/s over its decode lines)
    path = tmp_path / "gpus.jsonl"
    w = RecordWriter(str(path))
    # the record's first entry (GPU samples come after one): not of this host, so it opens no epoch here
    w.write(['{"MESSAGE":"hello","__REALTIME_TIMESTAMP":"1000000"}'], "elsewhere")
    for k in range(101):
        t = start + k
        w.gpus("gpu-h1", [GpuSample(t, i, "NVIDIA H100 80GB HBM3", util=60.0, power=300.0) for i in (0, 1)], t)
    w.close()
    out = io.StringIO()
    with redirect_stdout(out):
        assert summary_cmd.main(["--json", str(sample), str(path)]) == 0
    doc = json.loads(out.getvalue())
    alone = io.StringIO()
    with redirect_stdout(alone):
        assert summary_cmd.main(["--json", str(sample)]) == 0
    lines = json.loads(alone.getvalue())["lines"]
    # the samples are read back in the parse, counted as the record's own, never as unparsed text
    assert doc["lines"]["recorded"] == 101 and lines["recorded"] == 0
    assert doc["lines"]["unparsed"] == lines["unparsed"] + 1 and doc["lines"]["read"] == lines["read"] + 102
    first = [g for g in doc["gpus"] if g["epoch"] == 0]
    assert len(doc["gpus"]) == 1 and first[0]["gpus"] == 2 and first[0]["power_mean_w"] == 600.0
    assert abs(first[0]["joules_per_token"] - 600.0 / 288.050504587) < 1e-3
    table = io.StringIO()
    with redirect_stdout(table):
        assert summary_cmd.main([str(sample), str(path)]) == 0
    assert "  gpu-h1       #1   2 GPUs  util 60%  power 600 W  2.08 J/token" in table.getvalue()
