"""Each host's GPUs, streamed from nvidia-smi over the connection its journal source holds
(sources/gpus.py), into the dashboard (Dashboard.gpus, gpu_note) and, when the session records,
into the record beside the lines (an MTPTUI_GPUS entry); a replay or `open` reads its record's.
Beside them, each host's CUDA_VISIBLE_DEVICES (Dashboard.gpu_visible), for the GPU line to name
the rank each GPU serves (tui/gpu_view.py)."""

from __future__ import annotations

import asyncio

from mtptui.control.errors import ControlError
from mtptui.core.gpus import ARGV, GpuHistory, GpuSample, visible_devices
from mtptui.sources.gpus import GpuSource
from mtptui.sources.local import LocalJournalSource
from mtptui.sources.process import ProcessSource
from mtptui.sources.record import RecordingSource
from mtptui.sources.ssh import SshJournalSource
from mtptui.transport.local import LocalRunner
from mtptui.transport.ssh import SshTransport
from mtptui.tui.controller import Dashboard


class _Sink:
    def __init__(self, dash: Dashboard, writer) -> None:
        self.dash, self.writer = dash, writer

    def gpu_samples(self, host: str, samples: list[GpuSample]) -> None:
        self.dash.gpus.setdefault(host, GpuHistory()).add(samples)
        self.dash.gpu_note.pop(host, None)
        if self.writer is not None:
            self.writer.gpus(host, samples, samples[-1].t)

    def gpu_note(self, host: str, text: str) -> None:
        self.dash.gpu_note[host] = text


def stand_in_argv(argv: list[str]) -> tuple[str, ...] | None:
    """The demo's GPUs: where the source is the simulator run as a child (`python -m mtptui.sim ...
    --port N`), its nvidia-smi stand-in asking that server, run by the same interpreter."""
    if argv[1:3] != ["-m", "mtptui.sim"] or "--port" not in argv[:-1]:
        return None
    port = argv[argv.index("--port") + 1]
    return (argv[0], "-m", "mtptui.sim.nvidia_smi", *ARGV[1:], "--sim-port", port)


def start(app, dash: Dashboard, *, poll: bool = True) -> None:
    for src in dash.sources if poll else ():
        inner = src.inner if isinstance(src, RecordingSource) else src
        writer = src.writer if isinstance(src, RecordingSource) else None
        transport: SshTransport | LocalRunner
        if isinstance(inner, SshJournalSource):
            transport = inner.transport
        elif isinstance(inner, LocalJournalSource):
            transport = LocalRunner()
        elif isinstance(inner, ProcessSource) and (argv := stand_in_argv(inner.argv)) is not None:
            app.run_worker(GpuSource(inner.host or "local", LocalRunner(), argv=argv).run(_Sink(dash, writer)),
                           group="gpus", exit_on_error=False)
            # the stand-in numbers the simulated server's GPUs as it places its ranks, whatever
            # this process's environment says
            dash.gpu_visible[inner.host] = None
            continue
        else:
            continue
        gs = GpuSource(inner.host, transport)
        app.run_worker(gs.run(_Sink(dash, writer)), group="gpus", exit_on_error=False)
        ctl = dash.reach.get(inner.host)
        if ctl is not None:
            app.run_worker(_learn_visible(dash, inner.host, ctl), group="gpu-ranks", exit_on_error=False)


VISIBLE_CHECK_S = 5.0


async def _learn_visible(dash: Dashboard, host: str | None, ctl) -> None:
    """The unit's CUDA_VISIBLE_DEVICES (its Environment=), read again for each new server process
    (a new settings line: a profile's environment may have changed it), once the host has GPUs to
    show (a host without the tool is not asked). A unit that cannot be read leaves the host
    without one: its GPUs are shown by index only."""
    seen: object = None
    while True:
        spec = dash.store.spec.get(host)
        if spec is not None and spec is not seen and dash.gpus.get(host) is not None:
            seen = spec
            try:
                env = (await ctl.state()).environment
            except ControlError:
                dash.gpu_visible.pop(host, None)
            else:
                value = env.get("CUDA_VISIBLE_DEVICES")
                devices = visible_devices(value)
                if value is not None and devices is None:
                    dash.gpu_visible.pop(host, None)  # UUIDs or MIG ids: no index to match
                else:
                    dash.gpu_visible[host] = devices
        await asyncio.sleep(VISIBLE_CHECK_S)
