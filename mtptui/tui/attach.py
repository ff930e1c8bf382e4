"""What the dashboard learns from a host it can reach, once connected: the server's version for
the status bar, and, when the log read holds no settings line of the current run (it is older
than the history, or journald dropped it), the run's settings as the host says it was started,
so that the first screen answers "is MTP on?". No Textual: the app runs it as a worker."""

from __future__ import annotations

import asyncio
import time

from mtptui.control.errors import ControlError
from mtptui.sources.base import STREAMING
from mtptui.tui.controller import Dashboard

ATTACH_WAIT_S = 120.0  # for the history to be read before the host is asked for the run's settings
QUIET_S = 20.0  # read to the end without a batch or a settings line for this long: ask the host
VERSION_TRIES = 10  # a loading server cannot say its version yet: asked again ...
VERSION_RETRY_S = 30.0  # ... this often


async def learn_run(dash: Dashboard, host: str | None, ctl) -> None:
    try:
        await _settings(dash, host, ctl)
        for _ in range(VERSION_TRIES):
            name = await ctl.server_name()
            if name:
                dash.servers[host] = name
                return
            await asyncio.sleep(VERSION_RETRY_S)
    except ControlError:
        return  # the host cannot be reached: its source says so


async def _settings(dash: Dashboard, host: str | None, ctl) -> None:
    # The log first: its own settings line is the better witness. A run prints it before its
    # first batch, so once batches came (or the stream was quiet a while) without one, the line
    # is not in what was read.
    deadline, streaming = time.monotonic() + ATTACH_WAIT_S, None
    while dash.needs_settings(host):
        now = time.monotonic()
        if dash.feed.state_of(host) != STREAMING or dash.feed.pending:
            streaming = None
        elif streaming is None:
            streaming = now
        cur = dash.store.current_epoch(host)
        if streaming is not None and ((cur is not None and cur.records) or now - streaming >= QUIET_S):
            break
        if now > deadline:
            return  # never read to its end: the source says why
        await asyncio.sleep(0.25)
    else:
        return
    found = await ctl.running_settings()
    if found:
        dash.note_settings(host, *found)
