"""Each host's GPUs, streamed from nvidia-smi over the connection its journal source holds
(sources/gpus.py), into the dashboard (Dashboard.gpus, gpu_note) and, when the session records,
into the record beside the lines (an MTPTUI_GPUS entry); a replay or `open` reads its record's."""

from __future__ import annotations

from mtptui.core.gpus import ARGV, GpuHistory, GpuSample
from mtptui.sources.gpus import GpuSource
from mtptui.sources.local import LocalJournalSource
from mtptui.sources.process import ProcessSource
from mtptui.sources.record import RecordingSource, recorded_gpus
from mtptui.sources.replay import ReplaySource
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
            continue
        else:
            continue
        gs = GpuSource(inner.host, transport)
        app.run_worker(gs.run(_Sink(dash, writer)), group="gpus", exit_on_error=False)
    paths = [s.path for s in dash.sources if isinstance(s, ReplaySource) and s.path != "-"]
    if dash.opening is not None:
        paths += dash.opening.paths
    if paths:
        app.run_worker(lambda: _read_recorded(app, dash, paths), group="gpus", thread=True, exit_on_error=False)


def _read_recorded(app, dash: Dashboard, paths: list[str]) -> None:
    found: dict = {}
    for p in paths:
        for host, got in recorded_gpus(p).items():
            found.setdefault(host, []).extend(got)
    if found:
        app.call_from_thread(dash.adopt_recorded_gpus, found)
