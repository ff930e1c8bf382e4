"""The host's GPUs (sources/gpus.py) in a line or two under the latency line, each with the rank it
serves where that is known (tui/gpu_view.py); hidden while the host has neither samples nor a note."""

from __future__ import annotations

from textual.widgets import Static

from mtptui.core.gpus import GpuSample
from mtptui.tui.gpu_view import RankMap, gpu_lines


class GpuPanel(Static):
    DEFAULT_CSS = """
    GpuPanel { height: auto; max-height: 2; padding: 0 1; display: none; text-wrap: nowrap; color: $text-muted; }
    GpuPanel.-active { display: block; }
    """

    def __init__(self, **kw) -> None:
        super().__init__("", markup=False, **kw)
        self._last: tuple | None = None
        self._ranks = RankMap()

    def show_host(self, dash, host: str | None, t: float | None) -> None:
        """The host's GPUs at the playhead t, named by rank where its settings and its
        CUDA_VISIBLE_DEVICES say (dash: the Dashboard)."""
        samples = dash.gpus_now(host)
        ranks = self._ranks.ranks(dash.store, host, t, dash.gpu_visible.get(host), samples,
                                  known=host in dash.gpu_visible)
        self.show(samples, dash.gpu_note.get(host), ranks)

    def show(self, samples: list[GpuSample], note: str | None, ranks: dict[int, str] | None = None) -> None:
        width = max(0, (self.size.width or self.app.size.width) - 2)
        lines = gpu_lines(samples, note, width, ranks=ranks, max_lines=1 if self.app.size.height < 30 else 2)
        key = (tuple(lines), width)
        if key == self._last:
            return
        self._last = key
        self.set_class(bool(lines), "-active")
        self.update("\n".join(lines))
