"""One server process's life, clock-agnostic: startup, warm-up, serving, faults, shutdown.

Both drivers use it: the live runner asks `next_time()`, sleeps until then (or until an HTTP
request or SIGTERM arrives) and calls `advance(now)`; offline rendering calls `advance()` on a
simulated clock. `advance(now)` returns the lines due by `now`, in time order. State flips
(ready, dead) happen when their line is released, so /health turns 200 exactly at the ready line.
"""

from __future__ import annotations

import heapq
import math
import random

from mtptui.sim import lifecycle
from mtptui.sim.engine import Engine, RealRequest, layout, warmup
from mtptui.sim.flags import Config
from mtptui.sim.msg import Msg

NCCL_ABORT_AFTER = 10.0  # seconds from the stuck collective to NCCL's watchdog abort (real: 600)


class Session:
    def __init__(self, cfg: Config, t0: float, pid: int, mode: str) -> None:
        self.cfg = cfg
        self.rng = random.Random(f"{cfg.seed}:life")
        self.lay = layout(cfg)
        self.t0 = t0
        self.state = "starting"  # starting, ready, stopping, dead
        self.exit_code: int | None = None
        self.exit_at: float | None = None
        self.ready_at: float | None = None
        self._pending: list[tuple[float, int, Msg]] = []
        self._n = 0
        self._actions: list[tuple[float, int, str]] = []
        self.st = lifecycle.startup(cfg, self.lay, t0, self.rng, pid)
        self._push([lifecycle.banner(cfg, t0, mode)] + self.st.msgs)
        self.engine: Engine | None = None
        if self.st.oom:
            self._die_after_pending()
        else:
            self.engine = Engine(cfg, self.lay, self.st.t_scheduler, self.st.total_tokens)
            self._act(self.st.t_warmup, "warmup")

    # -- bookkeeping ------------------------------------------------------------------------
    def _push(self, msgs: list[Msg]) -> None:
        for m in msgs:
            self._n += 1
            heapq.heappush(self._pending, (m.t, self._n, m))

    def _act(self, t: float, what: str) -> None:
        self._n += 1
        heapq.heappush(self._actions, (t, self._n, what))

    def _die_after_pending(self) -> None:
        last = max((m.t for _, _, m in self._pending), default=self.t0)
        self._act(last + 0.2, "exit1")

    @property
    def serving(self) -> bool:
        return self.engine is not None and self.engine.t_ready is not None and self.state in ("ready", "stopping")

    def next_time(self) -> float:
        t = math.inf
        if self._pending:
            t = self._pending[0][0]
        if self._actions:
            t = min(t, self._actions[0][0])
        eng = self.engine
        if eng is not None and self.serving and self.exit_code is None:
            t = min(t, eng.next_time())
        return t

    # -- the clock moves --------------------------------------------------------------------
    def advance(self, now: float) -> list[Msg]:
        eng = self.engine
        while self.exit_code is None:
            ta = self._actions[0][0] if self._actions else math.inf
            if eng is not None and self.serving and eng.next_time() <= min(now, ta):
                eng.run_until(min(now, ta))
                self._push(eng.out)
                eng.out.clear()
                continue
            if ta <= now:
                _, _, what = heapq.heappop(self._actions)
                self._do(ta, what)
                continue
            break
        out = []
        while self._pending and self._pending[0][0] <= now:
            m = heapq.heappop(self._pending)[2]
            out.append(m)
            if m.truth.get("event") == "ready":
                self.state = "ready"
                self.ready_at = m.t
        return out

    def _do(self, t: float, what: str) -> None:
        cfg, eng = self.cfg, self.engine
        if what == "warmup":
            assert eng is not None  # these actions come only once the server has its engine
            done = t if cfg.args["skip_server_warmup"] else warmup(eng, t)
            self._push(eng.out)
            eng.out.clear()
            ready = lifecycle.ready_lines(cfg, done, self.rng)
            self._push(ready)
            t_ready = ready[-1].t
            eng.set_ready(t_ready)
            for f in cfg.faults:
                if f.at is None:
                    continue
                if f.name in ("crash", "oom"):
                    self._act(t_ready + f.at, f.name)
                elif f.name == "nccl":
                    self._act(t_ready + f.at, "stall")
                    self._act(t_ready + f.at + NCCL_ABORT_AFTER, "nccl")
                elif f.name == "hang":
                    self._act(t_ready + f.at, "stall")
                    self._act(t_ready + f.at + float(cfg.args["watchdog_timeout"]), "watchdog")
        elif what == "stall":
            assert eng is not None
            eng.stalled = True
        elif what in ("crash", "oom", "nccl", "watchdog"):
            assert eng is not None
            if what == "nccl":
                msgs = lifecycle.nccl_timeout(cfg, self.lay, t, self.rng)
            elif what == "watchdog":
                msgs = lifecycle.watchdog(cfg, self.lay, t)
            else:
                msgs = lifecycle.runtime_crash(cfg, self.lay, t, self.rng, oom=(what == "oom"))
            self._push(msgs)
            eng.stalled = True
            eng.fail_all("the server's scheduler died", t)
            self._actions.clear()
            self._die_after_pending()
        elif what == "exit1":
            self.state = "dead"
            self.exit_code = 1
            self.exit_at = t
        elif what == "drain":
            if self._in_flight() == 0 or t >= self._drain_deadline:
                if eng is not None:
                    eng.fail_all("the server shut down", t)
                self.state = "dead"
                self.exit_code = 0
                self.exit_at = t
            else:
                self._act(t + 0.1, "drain")

    # -- from outside -----------------------------------------------------------------------
    def submit(self, req: RealRequest, now: float) -> bool:
        if self.state != "ready" or self.engine is None or self.engine.stalled:
            return False
        self.engine.submit(req, now)
        return True

    def terminate(self, now: float) -> None:
        """SIGTERM: log the shutdown, let in-flight HTTP requests finish (at most 2 s), exit 0."""
        if self.state in ("stopping", "dead"):
            return
        self.state = "stopping"
        remaining = self._in_flight()
        # No warm-up and no fault after a SIGTERM; lines computed for the future (the rest of a
        # startup) are dropped: the process stops where it is.
        self._actions = []
        self._pending = [p for p in self._pending if p[0] <= now]
        heapq.heapify(self._pending)
        if self.engine is not None:
            self.engine.draining = True
        self._push(lifecycle.shutdown(now, remaining))
        self._drain_deadline = now + 2.0
        self._act(now + 0.05, "drain")

    def _in_flight(self) -> int:
        if self.engine is None:
            return 0
        return sum(len(g.real) + sum(isinstance(w, RealRequest) for w in g.waiting) for g in self.engine.groups)
