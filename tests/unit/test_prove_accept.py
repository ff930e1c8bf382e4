"""The log's acceptance during a benchmark's run (prove/accept.py): SGLang's batch lines are in
once the log is quiet; vLLM's interval lines come after the run, and are waited for."""

from __future__ import annotations

import asyncio

from mtptui.prove.accept import AcceptReader, stats_interval
from mtptui.sim import vllm

VLLM_ARGV = ["/opt/vllm/bin/python", "-m", "vllm.entrypoints.openai.api_server", "--model", "/m"]
SGLANG_ARGV = ["/usr/bin/python3", "-m", "sglang.launch_server", "--model-path", "/m"]


def _vllm_stats() -> list[str]:
    """One interval's throughput and SpecDecoding lines of the simulator's vLLM 0.32.0."""
    lines = list(vllm.render(envelope="cat", host="h", unit="u", unit_description="d", seed=0, t0=1.8e9,
                             serve=0, version="0.32.0", pattern=[2], interval=2.0))
    return [x.text for x in lines if x.truth.get("expect") == "batch"]


class Follower:
    """The journal follower's interface; `later` lines come `delay` seconds after the first read
    that follows the run's end, as a server logging per interval prints them."""

    def __init__(self, reader_stopped, later: list[str], delay: float) -> None:
        self.stopped = reader_stopped
        self.later = later
        self.delay = delay
        self.due: float | None = None

    async def lines(self, timeout: float) -> list[str]:
        loop = asyncio.get_running_loop()
        if self.stopped() and self.due is None:
            self.due = loop.time() + self.delay
        if self.due is not None and self.later and loop.time() >= self.due:
            out, self.later = self.later, []
            return out
        await asyncio.sleep(min(timeout, 0.05))
        return []

    async def close(self) -> None:
        pass


def test_the_interval_a_server_logs_by():
    assert stats_interval(VLLM_ARGV, {}) == 10.0
    assert stats_interval(VLLM_ARGV, {"VLLM_LOG_STATS_INTERVAL": "2"}) == 2.0
    assert stats_interval(VLLM_ARGV, {"VLLM_LOG_STATS_INTERVAL": "nan"}) == 10.0
    assert stats_interval(SGLANG_ARGV, {"VLLM_LOG_STATS_INTERVAL": "2"}) is None
    assert stats_interval(["/bin/true"], {}) is None


async def _read(interval: float | None, delay: float) -> tuple:
    holder: list[AcceptReader] = []
    stats = _vllm_stats()
    reader = AcceptReader(Follower(lambda: holder[0]._stop_at is not None, stats, delay), interval)
    holder.append(reader)
    reader.start()
    await asyncio.sleep(0.2)  # the run, during which the server printed nothing
    return await reader.stop()


async def test_vllms_interval_after_a_short_run_is_waited_for():
    accept_len, rate = await _read(2.0, 1.5)
    want = next(x for x in _vllm_stats() if "SpecDecoding" in x)
    assert accept_len is not None and f"Mean acceptance length: {accept_len:.2f}" in want
    assert rate is not None


async def test_a_line_that_may_have_been_printed_before_the_end_is_not_the_last():
    # an interval line read at once after the end, then the one covering the end
    stats = _vllm_stats()
    holder: list[AcceptReader] = []

    class Two(Follower):
        async def lines(self, timeout: float) -> list[str]:
            if self.stopped() and self.due is None:
                self.due = asyncio.get_running_loop().time() + self.delay
                return [stats[0]]  # a throughput line without drafts, printed before the end
            return await super().lines(timeout)

    f = Two(lambda: holder[0]._stop_at is not None, stats, 1.5)
    reader = AcceptReader(f, 2.0)
    holder.append(reader)
    reader.start()
    await asyncio.sleep(0.2)
    accept_len, _ = await reader.stop()
    assert accept_len is not None  # the covering interval's SpecDecoding line was read


async def test_sglang_stops_once_its_log_is_quiet():
    accept_len, rate = await _read(None, 1.5)
    assert accept_len is None and rate is None  # no interval to wait for: the quiet log ended it
