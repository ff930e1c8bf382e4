"""The main screen's GPU lines (tui/gpu_view.py): whole entries in the width, never one cut
mid-number, in columns of one width, rows by design, the rest counted; each GPU's rank where it is
known, and the GPUs serving none said so; the note where a host has no GPUs; GpuHistory's moment."""

from __future__ import annotations

import re

import pytest

from mtptui.core.gpus import GpuHistory, GpuSample
from mtptui.tui.gpu_view import gpu_lines


def _gpus(n: int, t: float = 0.0) -> list[GpuSample]:
    return [GpuSample(t, i, "NVIDIA H100 80GB HBM3", util=97.0, mem_used=74213, mem_total=81559, power=612.43)
            for i in range(n)]


ENTRY = re.compile(r"(?:(?:DP|TP)\d+ )?GPU\d+(?: no rank)? (\d+%|-) (\d+/\d+G|-) (\d+W|-)")


@pytest.mark.parametrize("ranked", [False, True], ids=["by-index", "by-rank"])
@pytest.mark.parametrize("width", [78, 98, 158])
@pytest.mark.parametrize("n", [1, 2, 8])
def test_whole_entries_only(width, n, ranked):
    ranks = {i: f"TP{i}" for i in range(n - 1)} if ranked else None  # the last GPU serves none
    lines = gpu_lines(_gpus(n), None, width, ranks=ranks)
    assert lines and all(len(ln) <= width for ln in lines) and len(lines) <= 2
    shown = sum(len(ENTRY.findall(ln)) for ln in lines)
    more = re.search(r"\+(\d+) more", lines[-1])
    assert shown + (int(more.group(1)) if more else 0) == n
    # every entry whole: stripped of whole entries and the prefix, nothing but spaces and the count
    for ln in lines:
        rest = re.sub(r"\+\d+ more", "", ENTRY.sub("", ln)).replace("GPUs", "")
        assert rest.strip() == ""


def test_eight_gpus_in_two_rows_of_four_at_160():
    lines = gpu_lines(_gpus(8), None, 158)
    assert lines == ["GPUs  " + "  ".join(f"GPU{i} 97% 72/80G 612W" for i in range(4)),
                     "      " + "  ".join(f"GPU{i} 97% 72/80G 612W" for i in range(4, 8))]
    ranked = gpu_lines(_gpus(8), None, 158, ranks={i: f"DP{i}" for i in range(8)})
    assert [len(ENTRY.findall(ln)) for ln in ranked] == [4, 4]
    assert ranked[1].startswith("      DP4 GPU4 97% ")
    # columns of one width: each row's entries begin where the row above's do
    assert [m.start() for m in ENTRY.finditer(ranked[0])] == [m.start() for m in ENTRY.finditer(ranked[1])]


def test_the_figures():
    assert gpu_lines(_gpus(1), None, 80) == ["GPUs  GPU0 97% 72/80G 612W"]
    assert gpu_lines(_gpus(1), None, 80, ranks={0: "TP0"}) == ["GPUs  TP0 GPU0 97% 72/80G 612W"]
    assert gpu_lines(_gpus(2), None, 80, ranks={1: "TP0"}) == \
        ["GPUs  GPU0 no rank 97% 72/80G 612W  TP0 GPU1 97% 72/80G 612W"]
    bare = [GpuSample(0, 3, "T400")]
    assert gpu_lines(bare, None, 80) == ["GPUs  GPU3 - - -"]


def test_a_note_without_gpus():
    assert gpu_lines([], "no nvidia-smi on gpu1: GPU panel off", 80) == ["no nvidia-smi on gpu1: GPU panel off"]
    assert gpu_lines([], None, 80) == []


def test_history_at_a_moment():
    h = GpuHistory()
    h.add(_gpus(2, 0.0))
    h.add(_gpus(1, 5.0))
    h.add(_gpus(2, 30.0))
    assert [(s.index, s.t) for s in h.at(6.0)] == [(0, 5.0), (1, 0.0)]
    assert [(s.index, s.t) for s in h.at(None)] == [(0, 30.0), (1, 30.0)]
    h.add([GpuSample(50.0, 0, "G")])  # GPU1 silent for 20 s: it drops off
    assert [s.index for s in h.at(None)] == [0]
