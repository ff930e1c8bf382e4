"""What the server's own log says about acceptance while a benchmark runs: the decode batches
(SGLang) or spec lines (vLLM) of the unit's journal, followed from just before the run, read with
the pipeline's parser. Means of the lines' accept len and accept rate; None when no line had
them (speculation off, or no batch logged in the run)."""

from __future__ import annotations

import asyncio
import contextlib

from mtptui.core.parse import BATCH, LineParser
from mtptui.core.records import DECODE, SPEC
from mtptui.transport.errors import TransportError

SETTLE_S = 0.5  # after the run, a quiet log this long: its last lines are in
SETTLE_MAX_S = 3.0  # a log that keeps talking (background load) is cut after this


class AcceptReader:
    def __init__(self, follower) -> None:
        self.follower = follower  # control.target.JournalFollower, or the child's TapFollower
        self.parser = LineParser()
        self.lens: list[float] = []
        self.rates: list[float] = []
        self.lost = ""  # why the log stopped being read, if it did
        self._task: asyncio.Task | None = None
        self._stop_at: float | None = None  # the loop's time by which to stop after the run

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._read())

    def _feed(self, raw_lines: list[str]) -> None:
        for raw in raw_lines:
            p = self.parser.parse(raw)
            if p.outcome != BATCH or p.record.kind not in (DECODE, SPEC):
                continue
            f = p.record.fields
            if f.get("accept_len") is not None:
                self.lens.append(f["accept_len"])
            if f.get("accept_rate") is not None:
                self.rates.append(f["accept_rate"])

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                got = await self.follower.lines(SETTLE_S)
                if got is None:
                    self.lost = "the log follower ended"
                    return
                self._feed(got)
                # once the run ended: until the log is quiet for a moment (its last lines in)
                if self._stop_at is not None and (not got or loop.time() > self._stop_at):
                    return
        except TransportError as e:
            self.lost = str(e)

    async def stop(self) -> tuple[float | None, float | None]:
        """Reads what is still on its way, stops; (mean accept len, mean accept rate)."""
        self._stop_at = asyncio.get_running_loop().time() + SETTLE_MAX_S
        if self._task is not None:
            await self._task
        with contextlib.suppress(Exception):
            await self.follower.close()
        return _mean(self.lens, 3), _mean(self.rates, 3)

    async def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        with contextlib.suppress(Exception):
            await self.follower.close()


def _mean(xs: list[float], digits: int) -> float | None:
    return round(sum(xs) / len(xs), digits) if xs else None
