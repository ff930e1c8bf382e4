"""How long a container's last start took, the downtime a plan expects, from the runtime itself:
the container's start (`inspect`'s State.StartedAt) to its server's ready line in the logs of that
run (`logs --timestamps --since StartedAt`), as a systemd unit's is the journal's `Started` to
the ready line (control/target.py). Which line says ready is the systemd target's rule
(target.ready_at: SGLang's, else uvicorn's); where that run's log has neither (an engine that
logs another, a ready line filtered out), its first answered `GET /health` in uvicorn's access
lines, as the restart's witness would have seen it ready.

The runtime keeps one start per container (a restart overwrites StartedAt), so a `docker run`
container gives its last start only; a compose service gives one per replica, oldest first.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import time
from typing import TYPE_CHECKING, Any

from mtptui.control.target import HTTP_READY, READY_LINE, ready_at
from mtptui.core.parse import timeparse
from mtptui.sources.runtime import Container, stamp_key, stamp_of
from mtptui.transport.errors import TransportError

if TYPE_CHECKING:
    from mtptui.control.container import RuntimeTarget

# uvicorn's access line of a /health answered 200 (`INFO:  127.0.0.1:5678 - "GET /health HTTP/1.1" 200 OK`)
_HEALTH_OK = re.compile(r'"GET /health(?:\?[^" ]*)? HTTP/[\d.]+" 200\b')
# The log read from a start: up to LIMIT_S after it (a large model on a GPU loads for many minutes;
# a server not ready in three hours is unknown, not read to the end of a log of days), and the
# first MATCHES of its lines that the grep keeps (a start's ready lines are its first one or two;
# only a server answering /health 200 that many times before its ready line would push it out).
LIMIT_S = 3 * 3600
MATCHES = 40


def _ere(words: str) -> str:
    """Words as a POSIX extended regex of themselves (re.escape would escape the spaces too, and
    GNU grep 3.8+ warns of each escaped space)."""
    return re.sub(r"([.^$*+?()[\]{}|\\])", r"\\\1", words)


_GREP = "|".join([_ere(READY_LINE), _ere(HTTP_READY), r'"GET /health(\?[^" ]*)? HTTP/[0-9.]+" 200'])


def run_logs_argv(runtime: str, c: Container) -> list[str]:
    """`logs` of the container's last run, stamped, bounded in time: from its StartedAt."""
    started = c.started_ts or 0.0
    until = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started + LIMIT_S))
    return [runtime, "logs", "--timestamps", f"--since={c.started_at}", f"--until={until}", "--", c.id]


def start_seconds(started_at: str, lines: list[str]) -> float | None:
    """Seconds from the runtime's StartedAt to the ready, from that run's `logs --timestamps`
    lines (in any order: stdout's and stderr's lines come in turns, not by stamp); None when the
    start is not known or no line of the run says ready."""
    start = timeparse.rfc3339(started_at)
    if start is None:
        return None
    stamped = []
    for line in lines:
        stamp = stamp_of(line)
        ts = timeparse.rfc3339(stamp) if stamp else None
        # a line before the start is an earlier run's (`--since` keeps none; a caller's list may)
        if stamp and ts is not None and ts >= start:
            stamped.append((stamp_key(stamp), ts, line[len(stamp) + 1:]))
    stamped.sort(key=lambda x: x[0])
    ready = ready_at((ts, text) for _, ts, text in stamped)
    if ready is None:
        ready = next((ts for _, ts, text in stamped if _HEALTH_OK.search(text)), None)
    return None if ready is None else ready - start


async def container_starts(target: RuntimeTarget, found: list[Container]) -> dict[str, Any]:
    """UnitState's start fields for the target's containers (last_start_s, starts_s, starts_from): each
    started container's last start, oldest first; unknown where the log cannot be read."""
    runs = sorted((c for c in found if c.started_ts is not None), key=lambda c: c.started_ts or 0.0)
    got = await asyncio.gather(*(_one(target, c) for c in runs))
    # a replica still starting (or never ready) is no start, as a unit's start that never came ready
    starts = [s for s in got if s is not None]
    return {"last_start_s": starts[-1] if starts else None, "starts_s": starts,
            "starts_from": f"`{target.sel.runtime} logs`"}


async def _one(target: RuntimeTarget, c: Container) -> float | None:
    logs = shlex.join(target.priv(run_logs_argv(target.sel.runtime, c)))
    try:
        r = await target.runner.run(["sh", "-c", f"{logs} 2>&1 | grep -m {MATCHES} -E {shlex.quote(_GREP)}"],
                                    timeout=20)
    except TransportError:
        return None  # the downtime is what a plan shows, never a reason to fail reading the target
    # grep's 1 is no line matched: an unknown start, as is a runtime that refused (its words matched none)
    return start_seconds(c.started_at, (r.stdout or "").splitlines())
