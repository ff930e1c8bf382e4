"""wait_for: what asyncio's gives, and a cancel that lands as the awaited thing completes raised."""

from __future__ import annotations

import asyncio

import pytest

from mtptui.transport.aio import wait_for


async def _cancel_as_it_completes(waiting) -> str:
    loop = asyncio.get_running_loop()
    fut = loop.create_future()

    async def reader() -> str:
        await waiting(fut, 10)
        return "went on as if never cancelled"

    task = asyncio.ensure_future(reader())
    await asyncio.sleep(0)  # the reader waits on fut
    fut.set_result(b"a journal line")
    task.cancel()  # in the same turn: ctrl-c as the read completes
    return await task


async def test_a_cancel_that_lands_as_the_awaited_thing_completes_is_raised():
    with pytest.raises(asyncio.CancelledError):
        await _cancel_as_it_completes(wait_for)


async def test_result_timeout_and_the_awaited_things_end():
    assert await wait_for(asyncio.sleep(0, "done"), 1) == "done"
    ended = asyncio.Event()

    async def slow() -> None:
        try:
            await asyncio.sleep(10)
        finally:
            ended.set()

    with pytest.raises(asyncio.TimeoutError):
        await wait_for(slow(), 0.01)
    assert ended.is_set()  # nothing of it runs after wait_for is done
    with pytest.raises(ValueError):
        await wait_for(_raises(), 1)


async def _raises() -> None:
    raise ValueError("its own error")
