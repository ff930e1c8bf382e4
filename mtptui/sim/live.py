"""The live simulator: a process that behaves like `python -m sglang.launch_server` in real time.

The main thread runs the session on the wall clock (sleeping until the next step, an HTTP request
or a signal) and writes each line as it falls due, flushed, to stderr (uvicorn's access lines to
stdout, as SGLang's do), so journald sees it live. HTTP runs in a thread. SIGTERM (and SIGINT)
log SGLang's shutdown lines, let HTTP requests in flight finish, and exit 0; a fatal fault exits 1.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import signal
import sys
import threading
import time
from typing import TextIO

from mtptui.sim import formats
from mtptui.sim import metrics as sim_metrics
from mtptui.sim.engine import RealRequest
from mtptui.sim.flags import Config
from mtptui.sim.msg import Msg, other
from mtptui.sim.session import Session

MIN_SLEEP = 0.004  # coalesce wake-ups: steps due within this are run together
STOP_GRACE_S = 15.0  # after a SIGTERM, the most the process lives (its drain takes at most 2 s)


class Writer:
    """Prints lines with SGLang's prefix and keeps the optional truth file in step."""

    def __init__(self, err: TextIO, out: TextIO, truth: TextIO | None) -> None:
        self.err, self.out, self.truth = err, out, truth
        self.lock = threading.Lock()

    def write(self, msgs: list[Msg]) -> None:
        if not msgs:
            return
        with self.lock:
            for m in msgs:
                text = m.text if m.who is None else formats.prefix(m.t, m.who, utc=False) + m.text
                stream = self.out if m.stream == "stdout" else self.err
                try:
                    stream.write(text + "\n")
                    stream.flush()
                except (BrokenPipeError, ValueError):
                    pass  # nobody reads us any more; keep serving until told to stop
                if self.truth is not None:
                    rec = dict(m.truth, ts=m.t if m.who is not None else None, host=None, message=text,
                               text=text, stream=m.stream)
                    self.truth.write(json.dumps(rec, ensure_ascii=False) + "\n")
                    self.truth.flush()


class LiveServer:
    def __init__(self, cfg: Config, writer: Writer) -> None:
        self.cfg = cfg
        self.writer = writer
        self.t0 = time.time()
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.session = Session(cfg, self.t0, os.getpid(), mode="live")
        self.context_len = cfg.args["context_length"] or cfg.preset.context_len
        self._term = False

    # -- used by the HTTP threads -----------------------------------------------------------
    @property
    def state(self) -> str:
        return self.session.state

    def submit(self, req: RealRequest) -> bool:
        with self.lock:
            ok = self.session.submit(req, time.time())
        self.wake.set()
        return ok

    def access(self, host: str, port: int, method: str, path: str, status: int) -> None:
        from mtptui.sim.lifecycle import access_line
        self.writer.write([Msg(time.time(), "", access_line(host, port, method, path, status), other(),
                               stream="stdout")])

    def server_info(self) -> dict:
        with self.lock:
            eng = self.session.engine
            states = eng.internal_states() if eng is not None else []
            total = eng.total_tokens if eng is not None else 0
        info = dict(self.cfg.args)
        info.update({
            "simulator": True,
            "simulator_note": "mtptui SGLang simulator: not a real server, it serves no model",
            "status": self.state,
            "max_total_num_tokens": total,
            "max_req_input_len": self.context_len - 1,
            "internal_states": states,
            "version": self.cfg.version,
        })
        return info

    def load(self) -> list[dict]:
        with self.lock:
            eng = self.session.engine
            if eng is None:
                return []
            return [{"dp_rank": g.idx, "num_reqs": g.running, "num_waiting_reqs": len(g.waiting),
                     "num_tokens": int(g.used)} for g in eng.groups]

    def metrics(self) -> str:
        """SGLang's scheduler metrics as they stand now (see sim/metrics.py)."""
        now = time.time()
        with self.lock:
            eng = self.session.engine
            if eng is None:
                return ""
            groups = []  # each has its metrics under --enable-metrics (the only time they are asked)
            for g in eng.groups:
                if g.metrics is not None:
                    g.metrics.catch_up(now, idle=not g.running and not eng.stalled, queue=len(g.waiting),
                                       pool=g.pool())
                    groups.append(g.metrics)
            text = sim_metrics.exposition(self.cfg, groups, eng.layout.ranks)
            if eng.latency is not None:
                eng.latency.catch_up(now)
                text += sim_metrics.latency_exposition(eng.latency)
            return text

    # -- the main thread --------------------------------------------------------------------
    def _on_signal(self, signum, frame) -> None:
        if not self._term:
            # A stop must end in a stop: under a loaded CI two container hosts' units outlived
            # systemd's 90 s stop timeout after a SIGTERM (2 CI runs of 5; the cause is not known:
            # one that does it is a write to a log stream nobody reads, which blocks the main
            # thread). The stacks go to a file, not to that stream, and the process exits as a
            # drained one would.
            threading.Thread(target=self._exit_if_stuck, daemon=True).start()
        self._term = True
        self.wake.set()

    @staticmethod
    def _exit_if_stuck() -> None:
        time.sleep(STOP_GRACE_S)
        with contextlib.suppress(OSError):
            with open(f"/tmp/mtptui-sim-stuck-{os.getpid()}.txt", "w") as f:
                faulthandler.dump_traceback(file=f, all_threads=True)
        os._exit(0)

    def run(self) -> int:
        from mtptui.sim.httpd import SimHTTPServer

        a = self.cfg.args
        try:
            httpd = SimHTTPServer((a["host"], a["port"]), self)
        except OSError as e:
            # Uvicorn's words for it; SGLang would get here only after loading the model.
            self.writer.write([Msg(time.time(), "", f"ERROR:    [Errno {e.errno}] error while attempting to bind on "
                                   f"address ('{a['host']}', {a['port']}): {(e.strerror or str(e)).lower()}", other())])
            return 1
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        # SIGUSR1: every thread's stack to stderr (a test harness asks when a stop takes too long).
        with contextlib.suppress(AttributeError, ValueError, OSError):  # no stderr to write them to
            faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
        thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
        thread.start()
        code = 1
        try:
            while True:
                now = time.time()
                with self.lock:
                    if self._term:
                        self.session.terminate(now)
                    msgs = self.session.advance(now)
                    nxt = self.session.next_time()
                    done = self.session.exit_code
                self.writer.write(msgs)
                if done is not None:
                    code = done
                    break
                wait = min(max(nxt - time.time(), MIN_SLEEP), 0.5)
                self.wake.wait(wait)
                self.wake.clear()
        finally:
            httpd.shutdown()
            httpd.server_close()
        return code


def run(cfg: Config, truth_path: str | None) -> int:
    with open(truth_path, "w", encoding="utf-8") if truth_path else contextlib.nullcontext() as truth:
        return LiveServer(cfg, Writer(sys.stderr, sys.stdout, truth)).run()
