"""sources/gpus on this machine (LocalRunner, real children): the simulator's nvidia-smi stand-in
streamed into samples; a missing tool is one note and the end, never a loop; one that fails to reach
the driver the same. Where nvidia-smi is missing, amd-smi (the simulator's stand-in), then rocm-smi."""

from __future__ import annotations

import asyncio
import dataclasses
import sys

from mtptui.core.gpus import AMD_SMI_ARGV, ARGV, AmdStream, GpuSample
from mtptui.sources.backoff import Backoff
from mtptui.sources.gpus import TOOLS, GpuSource, Tool
from mtptui.transport.local import LocalRunner


class Sink:
    def __init__(self) -> None:
        self.samples: list[GpuSample] = []
        self.notes: list[str] = []

    def gpu_samples(self, host: str, samples: list[GpuSample]) -> None:
        self.samples += samples

    def gpu_note(self, host: str, text: str) -> None:
        self.notes.append(text)


async def test_the_stand_in_streams_samples():
    # port 9 answers nothing: the stand-in reads its GPUs idle, memory freed, as with a server down
    argv = (sys.executable, "-m", "mtptui.sim.nvidia_smi", *ARGV[1:3], "-lms", "200",
            "--sim-gpus", "2", "--sim-port", "9")
    src, sink = GpuSource("gpu1", LocalRunner(), argv=argv), Sink()
    task = asyncio.create_task(src.run(sink))
    for _ in range(100):
        if len(sink.samples) >= 6:
            break
        await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert len(sink.samples) >= 6 and {s.index for s in sink.samples} == {0, 1}
    s = sink.samples[-1]
    assert s.name == "NVIDIA H100 80GB HBM3" and s.util == 0 and s.power is not None and s.mem_total == 81559
    assert sink.notes == [] and src.stream.bad == 0


async def test_a_host_without_the_tool_gets_one_line():
    src, sink = GpuSource("gpu1", LocalRunner(), argv=("nvidia-smi-not-here-xyz",),
                          backoff=Backoff(0.01, 0.01)), Sink()
    await asyncio.wait_for(src.run(sink), 5)  # it ends: no retry loop
    assert sink.notes == ["no nvidia-smi on gpu1: GPU panel off"]


async def test_a_driver_that_does_not_answer_gets_one_line(tmp_path):
    fake = tmp_path / "nvidia-smi"
    # what the real tool prints when the driver is not loaded, and its exit status then
    fake.write_text("#!/bin/sh\necho \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
                    "driver. Make sure that the latest NVIDIA driver is installed and running.\"\nexit 9\n")
    fake.chmod(0o755)
    src, sink = GpuSource("gpu1", LocalRunner(), argv=(str(fake),), backoff=Backoff(0.01, 0.01)), Sink()
    await asyncio.wait_for(src.run(sink), 5)
    assert sink.notes == ["nvidia-smi on gpu1 cannot reach the driver: GPU panel off"]


def gone(tool: Tool) -> Tool:
    return dataclasses.replace(tool, argv=(tool.name + "-not-here-xyz",))


async def collect(src: GpuSource, sink: Sink, n: int) -> None:
    task = asyncio.create_task(src.run(sink))
    for _ in range(200):
        if len(sink.samples) >= n or task.done():
            break
        await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def test_without_nvidia_smi_amd_smi_is_read():
    nvidia, amd, rocm = TOOLS
    # the real command, the stand-in in amd-smi's place: PYTHONUNBUFFERED is what makes its rows come
    # each second (it does not flush, as the real tool does not)
    argv = (*AMD_SMI_ARGV[:2], sys.executable, "-m", "mtptui.sim.amd_smi", *AMD_SMI_ARGV[3:],
            "--sim-gpus", "2", "--sim-port", "9")
    src, sink = GpuSource("gpu1", LocalRunner(), tools=(gone(nvidia), dataclasses.replace(amd, argv=argv), rocm)), Sink()
    await collect(src, sink, 4)
    assert src.tool.name == "amd-smi" and len(sink.samples) >= 4 and {s.index for s in sink.samples} == {0, 1}
    s = sink.samples[-1]
    assert s.name == "AMD GPU" and s.util == 0 and s.mem_total == 196300 and s.power is not None
    assert sink.notes == [] and src.stream.bad == 1  # the watch's first line


async def test_rocm_smi_is_run_again_each_interval(tmp_path):
    fake = tmp_path / "rocm-smi"
    fake.write_text("#!/bin/sh\nprintf 'device,GPU use (%%),Card Series\\ncard0,37,AMD Instinct MI210\\n'\n")
    fake.chmod(0o755)
    nvidia, amd, _ = TOOLS
    rocm = Tool("rocm-smi", (str(fake),), AmdStream, every=0.01)
    src, sink = GpuSource("gpu1", LocalRunner(), tools=(gone(nvidia), gone(amd), rocm)), Sink()
    await collect(src, sink, 3)
    assert len(sink.samples) >= 3 and len({s.t for s in sink.samples}) >= 2  # runs apart, not one output
    assert sink.samples[0].name == "AMD Instinct MI210" and sink.samples[0].util == 37
    assert sink.notes == []


async def test_a_host_without_any_tool_gets_one_line():
    src, sink = GpuSource("gpu1", LocalRunner(), tools=tuple(gone(t) for t in TOOLS),
                          backoff=Backoff(0.01, 0.01)), Sink()
    await asyncio.wait_for(src.run(sink), 5)
    assert sink.notes == ["no nvidia-smi, amd-smi or rocm-smi on gpu1: GPU panel off"]


async def test_an_amd_smi_without_monitor_gives_way_to_rocm_smi(tmp_path):
    old = tmp_path / "amd-smi"
    # ROCm 6.0's amd-smi has no `monitor` (ROCm/amdsmi's parser before f91fc97): argparse's usage
    # error, status 2
    old.write_text("#!/bin/sh\necho \"amd-smi: error: argument command: invalid choice: 'monitor' (choose from "
                   "'version', 'list', 'static', 'firmware', 'ucode', 'bad-pages', 'metric', 'process', "
                   "'profile', 'event', 'topology', 'set', 'reset', 'rocm-smi')\" >&2\nexit 2\n")
    old.chmod(0o755)
    rocm = tmp_path / "rocm-smi"
    rocm.write_text("#!/bin/sh\nprintf 'device,GPU use (%%)\\ncard0,5\\n'\n")
    rocm.chmod(0o755)
    nvidia, amd, _ = TOOLS
    tools = (gone(nvidia), dataclasses.replace(amd, argv=(str(old), "monitor")),
             Tool("rocm-smi", (str(rocm),), AmdStream, every=0.01))
    src, sink = GpuSource("gpu1", LocalRunner(), tools=tools), Sink()
    await collect(src, sink, 1)
    assert src.tool.name == "rocm-smi" and sink.samples[0].util == 5 and sink.notes == []
