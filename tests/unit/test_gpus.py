"""core/gpus: nvidia-smi's CSV into samples, on lines shaped as public projects' tests and docs
record the real tool's output, and on hostile input; GPUs to TP ranks; energy per token."""

from __future__ import annotations

import pytest

from mtptui.core.gpus import (
    ARGV,
    GpuSample,
    GpuStream,
    energy_per_token,
    host_power,
    parse_line,
    parse_text,
    rank_gpus,
    visible_devices,
)

# Lines in the shape the real tool writes for this query (", " between fields, no quotes, figures
# without units), modelled on outputs quoted in public repositories found with the search tool:
# an RTX A6000 row with power.limit [Not Supported] (a Go parser's test of index,name,memory.total,
# memory.used,utilization,temperature,power.draw,power.limit,clocks.sm), a T400 row with [N/A] power
# and temperature (a TypeScript test: "0, NVIDIA T400, 4, 128, 2048, [N/A], [Not Supported], [N/A],
# 300"), "NVIDIA H100 80GB HBM3" as H100 hosts name themselves.
REAL = """\
0, NVIDIA H100 80GB HBM3, 97, 74213, 81559, 612.43, 700.00, 66, 1980
1, NVIDIA H100 80GB HBM3, 95, 74213, 81559, 598.10, 700.00, 64, 1980
2, NVIDIA RTX A6000, 97, 28889, 49140, [N/A], [Not Supported], 66, 1710
3, NVIDIA T400, 4, 128, 2048, [N/A], [Not Supported], [N/A], 300
"""


def test_real_lines():
    got = parse_text(REAL, 5.0)
    assert [s.index for s in got] == [0, 1, 2, 3]
    h100 = got[0]
    assert (h100.name, h100.util, h100.mem_used, h100.mem_total) == ("NVIDIA H100 80GB HBM3", 97, 74213, 81559)
    assert (h100.power, h100.power_limit, h100.temp, h100.sm_clock, h100.t) == (612.43, 700.0, 66, 1980, 5.0)
    # absent stays absent: never a 0 W the card did not report
    assert got[2].power is None and got[2].power_limit is None and got[2].temp == 66
    assert got[3].temp is None and got[3].util == 4


def test_units_when_nounits_is_missing():
    s = parse_line("0, Tesla T4, 45 %, 1234 MiB, 15360 MiB, 27.50 W, 70.00 W, 41, 585 MHz", 0)
    assert s is not None and (s.util, s.mem_used, s.power, s.sm_clock) == (45, 1234, 27.5, 585)


def test_a_comma_in_the_name_stays_in_the_name():
    s = parse_line("7, Vendor GPU, rev 2, 10, 1, 2, 3, 4, 5, 6", 0)
    assert s is not None and s.index == 7 and s.name == "Vendor GPU, rev 2" and s.sm_clock == 6


@pytest.mark.parametrize("line", [
    "", "   ", "index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB], power.draw [W], "
    "power.limit [W], temperature.gpu, clocks.sm [MHz]",
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that "
    "the latest NVIDIA driver is installed and running.",
    "0, NVIDIA H100 80GB HBM3, 97, 74213",  # cut by a dropped link
    "0, , 1, 2, 3, 4, 5, 6, 7",
    "x, GPU, 1, 2, 3, 4, 5, 6, 7",
    "0, GPU, [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A]",
    "0, GPU, nan, inf, 1, 2, 3, 4, 5",  # not finite: nan and inf become absent, the rest stays
])
def test_lines_that_are_not_samples(line):
    s = parse_line(line, 0)
    if line.startswith("0, GPU, nan"):
        assert s is not None and s.util is None and s.mem_used is None and s.mem_total == 1
    else:
        assert s is None


def test_stream_joins_lines_cut_between_chunks():
    data = REAL.encode()
    st = GpuStream()
    got = []
    for i in range(0, len(data), 7):
        got += st.feed(data[i:i + 7], 1.0)
    assert [s.index for s in got] == [0, 1, 2, 3] and st.bad == 0 and st.samples == 4


def test_stream_hostile_bytes():
    st = GpuStream()
    junk = bytes(b for b in range(256) if b != 10) * 4 + b"\n" + b"\xff\xfe\x00, \x80\x81, 1, 2, 3, 4, 5, 6, 7\n"
    assert st.feed(junk, 0) == []
    assert st.bad == 2
    # a 10 MB line without a newline is dropped as it comes, not held, and the line after it counts
    big = b"9" * (10 * 1024 * 1024)
    for i in range(0, len(big), 1 << 20):
        assert st.feed(big[i:i + (1 << 20)], 0) == []
        assert len(st._buf) <= 1 << 20
    got = st.feed(b"\n0, NVIDIA H100 80GB HBM3, 1, 2, 3, 4, 5, 6, 7\n", 0)
    assert [s.index for s in got] == [0] and st.bad == 3


def test_stream_reset_drops_a_cut_last_line():
    st = GpuStream()
    assert st.feed(b"0, NVIDIA H100 80GB HBM3, 97, 742", 0) == []
    st.reset()
    assert st.bad == 1
    assert len(st.feed(b"0, NVIDIA H100 80GB HBM3, 97, 74213, 81559, 612.43, 700.00, 66, 1980\n", 1)) == 1


def test_argv_is_the_issue_query():
    assert ARGV == ("nvidia-smi", "--query-gpu=index,name,utilization.gpu,memory.used,memory.total,"
                    "power.draw,power.limit,temperature.gpu,clocks.sm", "--format=csv,noheader,nounits",
                    "-lms", "1000")


def test_json_round_trip_and_damage():
    s = parse_line("3, NVIDIA T400, 4, 128, 2048, [N/A], [Not Supported], [N/A], 300", 2.5)
    assert s is not None and GpuSample.from_json(s.to_json()) == s
    assert GpuSample.from_json({"t": 1, "index": "0", "name": "x"}) is None
    assert GpuSample.from_json({"t": 1, "index": 0, "name": "x", "power": "hot"}) is None
    assert GpuSample.from_json({"index": 0}) is None


def test_visible_devices():
    assert visible_devices(None) is None
    assert visible_devices("") == []
    assert visible_devices("4,5,6,7") == [4, 5, 6, 7]
    assert visible_devices("2, 0,2,3") == [2, 0]  # CUDA stops at a repeat
    assert visible_devices("GPU-10fb0fbd-2696-43f3-467f-d280d906a107") is None


def test_rank_gpus():
    assert rank_gpus(2) == {"TP0": 0, "TP1": 1}
    assert rank_gpus(4, visible=[4, 5, 6, 7]) == {"TP0": 4, "TP1": 5, "TP2": 6, "TP3": 7}
    assert rank_gpus(2, base_gpu_id=2, visible=[4, 5, 6, 7]) == {"TP0": 6, "TP1": 7}
    assert rank_gpus(2, gpu_id_step=2) == {"TP0": 0, "TP1": 2}
    assert rank_gpus(4, visible=[0, 1]) == {"TP0": 0, "TP1": 1}  # not guessed past the list


def _gpu(t, i, p):
    return GpuSample(t, i, "G", power=p)


def test_energy_per_token():
    samples = [_gpu(t, i, 300.0) for t in range(0, 11) for i in (0, 1)]
    power = host_power(samples)
    assert power[0] == (0, 600.0)
    gen = [(float(t), 1200.0) for t in range(0, 11)]
    e = energy_per_token(power, gen, 0, 10)
    assert e is not None and e.seconds == 10 and e.per_token == pytest.approx(0.5)
    # only the shared span counts: gen read from t=5 on
    e2 = energy_per_token(power, gen[5:], 0, 10)
    assert e2 is not None and e2.seconds == 5 and e2.per_token == pytest.approx(0.5)
    assert energy_per_token(power, [(20.0, 1.0), (30.0, 1.0)], 0, 40) is None
    assert energy_per_token(power, [(0.0, 0.0), (10.0, 0.0)], 0, 10).per_token is None  # type: ignore[union-attr]


def test_host_power_leaves_out_a_moment_with_a_gpu_unread():
    power = host_power([_gpu(0, 0, 100.0), _gpu(0, 1, None), _gpu(1, 0, 100.0), _gpu(1, 1, 50.0)])
    assert power == [(1, 150.0)]


def test_epoch_gpus():
    from mtptui.core.gpus import epoch_gpus

    samples = [GpuSample(float(t), i, "G", util=50.0, power=350.0) for t in range(0, 21) for i in (0, 1)]
    got = epoch_gpus(samples, 5.0, 15.0, 1400.0)
    # 700 W over the host at 1400 tok/s: 0.5 J per token
    assert got == {"gpus": 2, "util_mean": 50.0, "power_mean_w": 700.0, "joules_per_token": 0.5}
    assert epoch_gpus(samples, 30.0, None, 1400.0) is None
    assert epoch_gpus(samples, 0.0, None, None)["joules_per_token"] is None  # type: ignore[index]
