"""sources/gpus on this machine (LocalRunner, real children): the simulator's nvidia-smi stand-in
streamed into samples; a missing tool is one note and the end, never a loop; one that fails to reach
the driver the same."""

from __future__ import annotations

import asyncio
import sys

from mtptui.core.gpus import ARGV, GpuSample
from mtptui.sources.backoff import Backoff
from mtptui.sources.gpus import GpuSource
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
