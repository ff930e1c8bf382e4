"""asyncio's wait_for without the flaw it had before Python 3.12 (gh-86296): a cancel that landed
just as the awaited thing completed was dropped, wait_for returned its result, and the task went
on as if never cancelled. A ctrl-c during a benchmark was lost so when it came as a journal read
or a reply completed: the benchmark ran to its end instead of restoring the host."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def wait_for(aw: Awaitable[T], timeout: float | None) -> T:
    """`asyncio.wait_for(aw, timeout)`: its result, or TimeoutError (aw cancelled); a cancel of the
    caller is always raised (aw cancelled, its result if it had one dropped)."""
    if sys.version_info >= (3, 12):
        return await asyncio.wait_for(aw, timeout)
    task = asyncio.ensure_future(aw)
    try:
        await asyncio.wait({task}, timeout=timeout)  # raises the caller's cancel, never drops it
    except asyncio.CancelledError:
        await _cancelled(task)
        raise
    if not task.done():
        await _cancelled(task)
        raise asyncio.TimeoutError
    return task.result()


async def _cancelled(task: asyncio.Future) -> None:
    """Cancels the task and waits for its end: nothing of it runs after wait_for returns."""
    task.cancel()
    await asyncio.wait({task})
    if not task.cancelled():
        task.exception()  # retrieved: an error it ended with while cancelled is not logged as lost
