"""What the server's own log says about acceptance while a benchmark runs: the decode batches
(SGLang) or spec lines (vLLM) of the unit's journal, followed from just before the run, read with
the pipeline's parser. Means of the lines' accept len and accept rate; None when no line had
them (speculation off, or no batch logged in the run).

SGLang logs a line per few decode batches, so the run's last ones are in once the log is quiet.
vLLM logs per interval (VLLM_LOG_STATS_INTERVAL, 10 s by default): the interval the run ends in is
logged up to that long after it, so after the run the reader waits for the first throughput line
to come (the SpecDecoding line follows it); a run shorter than the interval had no line before
(the engine tier's bench of 4 requests lost its acceptance to this). A line that arrives within
LATE_S of the run's end may have been printed before it (the journal's delay): the next is waited for."""

from __future__ import annotations

import asyncio
import contextlib

import math
from collections.abc import Mapping

from mtptui.control.launch import LaunchError, find_launch
from mtptui.core.parse import BATCH, LineParser
from mtptui.core.records import DECODE, SPEC
from mtptui.transport.errors import TransportError

SETTLE_S = 0.5  # after the run, a quiet log this long: its last lines are in
SETTLE_MAX_S = 3.0  # a log that keeps talking (background load) is cut after this
LATE_S = 1.0  # a line read this soon after the run's end may have been printed before it
VLLM_INTERVAL_S = 10.0  # vLLM's stats interval unless VLLM_LOG_STATS_INTERVAL says otherwise (0.32: envs.py)


def stats_interval(argv: list[str], environment: Mapping[str, str]) -> float | None:
    """Seconds between the stats lines of the server these arguments and environment start: vLLM's
    interval, None for SGLang (a line per few decode batches) or a command not known."""
    try:
        engine = find_launch(argv).engine
    except LaunchError:
        return None
    if engine != "vllm":
        return None
    try:
        value = float(environment.get("VLLM_LOG_STATS_INTERVAL", VLLM_INTERVAL_S))
    except ValueError:
        return VLLM_INTERVAL_S
    return value if 0 < value < math.inf else VLLM_INTERVAL_S


class AcceptReader:
    def __init__(self, follower, interval_s: float | None = None) -> None:
        self.follower = follower  # control.target.JournalFollower, or the child's TapFollower
        self.interval_s = interval_s  # a server logging per interval (stats_interval): its last one waited for
        self._ended = False  # (interval) a throughput line printed after the run's end came
        self._early = False  # (interval) one came too soon after the end to be sure of
        self._ended_at = 0.0  # the loop's time when the run ended
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
            if self._stop_at is not None and p.record.kind == DECODE:
                if self._early or asyncio.get_running_loop().time() - self._ended_at >= LATE_S:
                    self._ended = True
                else:
                    self._early = True
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
                # once the run ended: until the log is quiet for a moment (its last lines in), and
                # for a server logging per interval until the interval it ended in is logged
                if self._stop_at is not None and (
                        (not got and (self.interval_s is None or self._ended)) or loop.time() > self._stop_at):
                    return
        except TransportError as e:
            self.lost = str(e)

    async def stop(self) -> tuple[float | None, float | None]:
        """Reads what is still on its way, stops; (mean accept len, mean accept rate)."""
        self._ended_at = asyncio.get_running_loop().time()
        # a server logging per interval: up to two of them (one may have been printed before the end)
        self._stop_at = self._ended_at + SETTLE_MAX_S + 2 * (self.interval_s or 0.0)
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
