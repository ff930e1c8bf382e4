"""After a restart, the server's own words judged against what was asked for.

Fed the unit's journal from just before the restart, a `Watch` follows the new run through stop,
start, model load and ready, then verifies:
- the new run's `server_args=` (SGLang) or `speculative_config=` (vLLM) shows the settings asked
  for (NEXTN is reported as EAGLE: the same thing);
- the next decode batches carry accept len when speculation is on, and none when it is off.
It fails on the unit failing or exiting, systemd scheduling an automatic restart, or a decode
batch that contradicts the settings.

The journal is one witness of three: journald drops lines (a unit's rate limit, PID 1's slow
write), so the caller also feeds systemd's own state (`systemd()`: a new InvocationID is the new
run's start, `failed` or `auto-restart` its failure) and the server's HTTP answers (`http_ready()`
for /health 200, `http_settings()` and `http_accept()` from /server_info). A line that never comes
then costs a note in the summary ("ready by /health"), never a rollback. Pure: the caller feeds
lines and answers; no clock, no I/O.
"""

from __future__ import annotations

import re
from collections import deque

from mtptui.control.profiles import same_algorithm, vllm_algorithm
from mtptui.core.parse import BATCH, EVENT, LineParser
from mtptui.core.records import DECODE, SPEC, BatchStats, Event
from mtptui.sources.journal import Run, cursor_of, run_of

STARTING, LOADING, READY, VERIFIED, FAILED = "starting", "loading", "ready", "verified", "failed"
SPEC_KEYS = ("algorithm", "num_steps", "topk", "num_draft_tokens")
# what verify holds a run to besides: SGLang's --speculative-adaptive (a server that fell back to
# static steps reports it off) and vLLM's per-batch-size schedule
EXPECT_KEYS = SPEC_KEYS + ("adaptive", "schedule")
# Phases of a model load worth showing while the operator waits.
_LOAD_STEPS = [
    ("Init torch distributed begin", "starting workers"),
    ("Load weight begin", "loading weights"),
    ("KV Cache is allocated", "allocating the KV cache"),
    ("Capture cuda graph begin", "capturing CUDA graphs"),
    ("Capture decode CUDA graph begin", "capturing CUDA graphs"),
    ("Uvicorn running on", "warming up"),
    ("Application startup complete", "ready"),
]
# Where a failing start says why: the last lines like these before the unit fails.
_REASON = re.compile(r"(?:^|[\s\]|:])(?:[A-Za-z_]\w*\.)*\w+(?:Error|Exception): |\berror: |unrecognized arguments"
                     r"|^Traceback")
# A line that says what went wrong (an exception, an argparse refusal), not that something did
# ("Received sigquit from a child process", "Scheduler hit an exception: Traceback ..."): the
# first such line of the run is its failure's reason.
_CAUSE = re.compile(r"(?:^|[\s\]|:])(?:[A-Za-z_]\w*\.)*\w+(?:Error|Exception): (?!Traceback)|\berror: "
                    r"|unrecognized arguments")
_CAUSE_KINDS = ("oom", "nccl", "watchdog")
# pydantic's first line names only the model (`1 validation error for VllmConfig`, vLLM 0.9+
# validates its config with it): the lines after it say what is wrong, and join the reason
_PYDANTIC = re.compile(r"\d+ validation errors? for \w+$")
_PYDANTIC_DETAIL = re.compile(r"\s*\[type=.*$")
_VLLM_SPEC = re.compile(r"speculative_config=(None|SpeculativeConfig\((.*?)\))")
# vLLM's method names back to the algorithm names profiles use (the first one wins: mtp is NEXTN)
_VLLM_METHOD = vllm_algorithm  # every *_mtp (deepseek_mtp, qwen3_next_mtp, ...) and mtp are NEXTN


def mismatch(expect: dict, seen: dict) -> str | None:
    """What differs between the settings asked for and those the server reports, or None."""
    if not same_algorithm(expect.get("algorithm"), seen.get("algorithm")):
        return (f"the server runs algorithm {seen.get('algorithm') or 'none'}, "
                f"asked for {expect.get('algorithm') or 'none'}")
    if expect.get("algorithm") is None:
        return None
    for k in EXPECT_KEYS[1:]:
        want, got = _same_form(expect.get(k)), _same_form(seen.get(k))
        if want is not None and got is not None and got != want:
            return f"the server runs {k} {seen.get(k)}, asked for {expect.get(k)}"
    return None


def _same_form(v: object) -> object:
    """A schedule as a tuple of tuples, however it came (a profile's tuples, JSON's lists)."""
    if isinstance(v, (list, tuple)):
        return tuple(_same_form(x) for x in v)
    return v


def _ended_before(raw: str, seen: set[str]) -> bool:
    """PID 1's "Scheduled restart job" about a run the watch never saw a line of: a run that
    ended before the mark (the one that failed, whose RestartSec ran out as a rollback restarted
    the unit), not the new run looping; that one's lines come first. Notes each run seen."""
    run = run_of(raw)
    if run is None:
        return False
    first = run.invocation not in seen
    seen.add(run.invocation)
    return first and run.pid == "1" and "Scheduled restart job" in raw


class Watch:
    def __init__(self, expect: dict, *, batches: int = 3, engine: str = "sglang",
                 replaced: Run | None = None) -> None:
        self.expect = {k: expect.get(k) for k in EXPECT_KEYS}
        self.on = expect.get("algorithm") is not None
        self.batches_needed = batches
        self.engine = engine
        self.parser = LineParser()
        self.state = STARTING
        self.step = "waiting for the stop"  # what the server is doing, for the screen
        self.reason = ""  # why it failed
        self.seen: dict | None = None  # the settings the new run reported
        self.started = False  # systemd's Started (or the child's start, or a line of a new run) seen
        # The run the restart replaces: a line of the unit's own processes from another run is the
        # new run's, so the start is seen even when systemd's own `Started` line is not (PID 1
        # drops a line journald does not take within 10 ms); the replaced run's late lines are
        # never judged as the new run's
        self.replaced = replaced
        self.decode = 0
        self.with_accept = 0
        self.accept_lens: list[float] = []
        self.cursor: str | None = None  # the last journal entry fed (to resume after a break)
        # journald's times of the ready line and of the line that settled the verdict (the
        # benchmark measures what the control path adds after them)
        self.ready_ts: float | None = None
        self.verdict_ts: float | None = None
        self._context: deque[str] = deque(maxlen=8)
        self._cause: str | None = None  # the run's first line that says what went wrong
        self._cause_more = 0  # lines after it that belong to it (pydantic's detail) ...
        self._cause_detail: list[str] = []  # ... and those that came
        self.new_invocation: str | None = None  # the new run's, as systemd said it
        self._nrestarts: str | None = None  # systemd's NRestarts when the new run was first seen
        self.notes: list[str] = []  # which witness stood in for a journal line that did not come
        # ready by /health, and the journal's ready line not (yet) come: a note only if it never does
        # before the verdict (it merely lags /health on a busy journal)
        self._ready_by_health = False
        self._runs_seen: set[str] = set()  # the invocations of the unit's lines fed so far

    @property
    def done(self) -> bool:
        return self.state in (VERIFIED, FAILED)

    def feed(self, raw_lines: list[str]) -> None:
        for raw in raw_lines:
            if self.done:
                return
            replaced = False
            if raw.startswith("{"):
                c = cursor_of(raw)
                if c:
                    self.cursor = c
                if _ended_before(raw, self._runs_seen):
                    continue
                if self.replaced is not None:
                    replaced = self._of_replaced(raw, self.replaced)
                    if replaced and self.started:
                        continue  # a late line of the replaced run is not the new run's
            p = self.parser.parse(raw)
            if p.line is None and p.record is None:
                continue
            state = self.state
            if self._cause_more > 0 and p.line is not None and self._detail(p.line.text.strip()):
                continue
            if p.outcome == EVENT:
                if not (replaced and p.record.kind == "started"):  # it began after the mark
                    self._event(p.record)
            elif p.outcome == BATCH:
                self._batch(p.record)
            elif p.line is not None:
                self._other(p.line.text)
            if self.state != state and p.line is not None:
                if self.state == READY:
                    self.ready_ts = p.line.ts
                elif self.done:
                    self.verdict_ts = p.line.ts

    def _of_replaced(self, raw: str, old: Run) -> bool:
        """Whether the line is the replaced run's (its processes', or PID 1's about it); a line of
        another run of the unit is the new run's, and its start.

        A run is told by its InvocationID, and by its main process: journald reads a process's
        InvocationID by its unit's name (/run/systemd/units/invocation:UNIT), so a line the old
        run wrote and journald took after the new run began carries the new run's. Other writers'
        lines about the unit (systemd-coredump's, journald's own) carry their own runs, of other
        units."""
        run = run_of(raw)
        if run is None or run.unit != old.unit:
            return False
        if run.invocation == old.invocation or run.pid == old.pid:
            return True
        if not self.started:
            self._start()
        return False

    def _start(self) -> None:
        self.started = True
        self._context.clear()
        self._cause = None
        self._cause_more = 0
        self._cause_detail = []
        self.step = "starting"
        if self.state == STARTING:
            self.state = LOADING

    def fail(self, why: str) -> None:
        """A verdict the caller reached (no witness could tell the settings)."""
        self._fail(why)

    def _fail(self, why: str) -> None:
        self.state = FAILED
        self.reason = why

    def _event(self, ev: Event) -> None:
        kind = ev.kind
        if kind == "stopping":
            self.step = "stopping"
        elif kind == "started":
            if not self.started:  # the new run's first lines may reach the journal before it
                self._start()
        elif kind in ("failed", "auto_restart"):
            if not self.started and "Failed to start" not in ev.text:
                return  # the old run ending badly on its stop is not the new run failing
            ctx = self.reason_from_context()
            self._fail(f"the unit failed: {ev.text.strip()}" + (f" ({ctx})" if ctx else ""))
        elif not self.started:
            return  # the old run's last words (a pipe or the journal may deliver them late)
        elif kind == "spec_config":
            self.seen = {k: ev.data.get(k) for k in EXPECT_KEYS}
            self.state = LOADING
            self.step = "reading its arguments"
            why = mismatch(self.expect, self.seen)
            if why:
                self._fail(why + " (from server_args)")
        elif kind == "ready":
            self._ready_by_health = False  # the line came, after /health maybe: no witness stood in
            if self.state == READY:
                return
            self.state = READY  # without server_args, needs_settings asks /server_info
            self.step = "ready; waiting for decode batches"
        elif kind in ("error", "crash", *_CAUSE_KINDS):
            self._note(ev.text.strip(), cause=kind in _CAUSE_KINDS)
        else:
            self._other(ev.text)

    def _other(self, text: str) -> None:
        t = text.strip()
        if not t or not self.started:
            return
        if _REASON.search(t):
            self._note(t)
        for needle, step in _LOAD_STEPS:
            if needle in t:
                self.step = step
                if step == "ready" and self.engine == "vllm":
                    self.state = READY
                break
        if self.engine == "vllm":
            m = _VLLM_SPEC.search(t)
            if m:
                self.seen = _vllm_settings(m)
                why = mismatch(self.expect, self.seen)
                if why:
                    self._fail(why + " (from speculative_config)")

    # --- the other witnesses -------------------------------------------------------------------

    def systemd(self, props: dict[str, str]) -> None:
        """systemd's state of the unit (`systemctl show`: ActiveState, SubState, Result,
        InvocationID, NRestarts). A target without InvocationIDs (the demo's child) is judged by
        ActiveState alone, once its start is seen."""
        if self.done:
            return
        active, sub = props.get("ActiveState", ""), props.get("SubState", "")
        result = props.get("Result") or ""
        inv = props.get("InvocationID") or None
        old = self.replaced.invocation if self.replaced is not None else None
        new = inv is not None and inv != old  # none at the mark (a stopped unit): any is new
        if new:
            if self.new_invocation is None:
                self.new_invocation, self._nrestarts = inv, props.get("NRestarts")
                if not self.started:
                    self._start()
            elif inv != self.new_invocation or props.get("NRestarts") != self._nrestarts:
                self._fail(self._why(f"systemd started the unit again after the new run ended "
                                     f"(NRestarts {props.get('NRestarts') or '?'})"))
                return
        mine = new or (inv is None and self.started)
        if not mine:
            return
        if active == "failed":
            self._fail(self._why(f"the unit failed ({result or 'failed'})"))
        elif sub == "auto-restart":
            self._fail(self._why(f"the new run exited and systemd schedules a restart ({result or 'failed'})"))
        elif active == "inactive" and new:
            status = props.get("ExecMainStatus") or "?"
            self._fail(self._why(f"the new run exited (status {status}, {result or 'success'})"))

    def _why(self, what: str) -> str:
        ctx = self.reason_from_context()
        return what + (f": {ctx}" if ctx else "")

    @property
    def needs_settings(self) -> bool:
        """Ready, but the run's settings line did not come: /server_info must tell them."""
        return self.state == READY and self.seen is None and self.engine == "sglang"

    def http_ready(self) -> None:
        """/health answered 200 on the new run (the caller asks only once systemd said so)."""
        if self.started and self.state in (STARTING, LOADING):
            self._ready_by_health = True
            self.state = READY
            self.step = "ready; waiting for decode batches"

    def http_settings(self, seen: dict) -> None:
        """The settings /server_info reports, where the journal's server_args line did not come."""
        if self.done or self.seen is not None:
            return
        self.seen = {k: seen.get(k) for k in EXPECT_KEYS}
        self.notes.append("settings from /server_info (no server_args line came)")
        why = mismatch(self.expect, self.seen)
        if why:
            self._fail(why + " (from /server_info)")

    def http_accept(self, accept_len: float | None, source: str = "/server_info") -> None:
        """The run's lifetime accept length from the server's HTTP side (`source`: /server_info,
        or /metrics where the info has none), where decode lines did not come (None: the server
        reports none). Speculation on is verified by an accept length, off by settings that say
        off and no accept length."""
        if self.state != READY or self.seen is None:
            return
        if self.on and accept_len is not None:
            self.accept_lens = [accept_len]
            self.notes.append(f"accept len {accept_len:.2f} from {source} (decode lines did not come)")
            self.state = VERIFIED
        elif not self.on and accept_len is not None:
            self._fail(f"speculation is off, yet {source} reports accept len {accept_len:.2f}")
        elif not self.on and self.seen.get("algorithm") is None:
            self.notes.append("off per /server_info, which reports no accept length (decode lines did not come)")
            self.state = VERIFIED

    def _detail(self, t: str) -> bool:
        """Whether t is a line of the cause's detail (pydantic's), now kept with it."""
        if self._cause is None or not t or t.startswith("For further information"):
            self._cause_more = 0
            return False
        t = _PYDANTIC_DETAIL.sub("", t)
        self._cause_detail.append(t)
        self._cause_more = 0 if t.startswith("Value error") else self._cause_more - 1
        return True

    def _note(self, text: str, *, cause: bool = False) -> None:
        self._context.append(text)
        if self._cause is None and (cause or _CAUSE.search(text)):
            self._cause = text
            self._cause_more = 2 if _PYDANTIC.search(text) else 0

    def reason_from_context(self) -> str:
        """The first line of the run that says what went wrong, else its last error line."""
        if self._cause is not None:
            return (self._cause + (f": {'; '.join(self._cause_detail)}" if self._cause_detail else ""))[:300]
        for t in reversed(self._context):
            if not t.startswith("Traceback"):
                return t[:300]
        return ""

    def _batch(self, rec: BatchStats) -> None:
        if self.state != READY:
            return
        if rec.kind == SPEC:
            # vLLM's spec line: accept len comes on its own line
            if "accept_len" in rec.fields:
                self.with_accept += 1
                self.accept_lens.append(rec.fields["accept_len"])
            return
        if rec.kind != DECODE:
            return
        self.decode += 1
        has = "accept_len" in rec.fields
        if has:
            self.with_accept += 1
            self.accept_lens.append(rec.fields["accept_len"])
        if self.on and not has and self.engine == "sglang":
            if self.decode >= self.batches_needed:
                self._fail(f"speculation is configured, yet {self.decode} decode batches carry no accept len")
            return
        if not self.on and has:
            self._fail(f"speculation is off, yet a decode batch carries accept len {rec.fields['accept_len']:.2f}")
            return
        if self.decode >= self.batches_needed and (not self.on or self.with_accept >= self.batches_needed
                                                   or self.engine == "vllm"):
            self.state = VERIFIED

    def http_idle(self, source: str = "/metrics") -> None:
        """The server runs and queues no request (its `source` says so): no decode batch can come
        to judge by, so the settings it reported are the verdict now, not after idle_after_ready."""
        if self.state == READY and self.decode == 0 and self.seen is not None:
            self.notes.append(f"idle: no request running or waiting per {source}; judged by the settings it reported")
            self.state = VERIFIED

    def idle_verdict(self) -> None:
        """No decode batch came in the time allowed after ready (no traffic): the settings the
        server reported are all there is to judge by."""
        if self.state == READY and (self.seen is not None or self.engine != "sglang"):
            self.state = VERIFIED

    def summary(self) -> str:
        if self.state == FAILED:
            return self.reason
        if self.state != VERIFIED:
            return self.step
        said = (["ready by /health (the journal's ready line did not come)"] if self._ready_by_health else []) + self.notes
        notes = f" ({'; '.join(said)})" if said else ""
        if self.decode == 0:
            if said:
                return f"verified{notes}"
            return "verified from server_args; no decode batch yet (no traffic to judge by)"
        if self.on and self.accept_lens:
            mean = sum(self.accept_lens) / len(self.accept_lens)
            return f"verified: accept len {mean:.2f} after {self.decode} batches{notes}"
        return f"verified: speculation off, {self.decode} decode batches without accept len{notes}"


def _vllm_settings(m: re.Match) -> dict:
    if m.group(1) == "None":
        return {k: None for k in SPEC_KEYS}
    body = m.group(2) or ""
    method = re.search(r"method='?(\w+)", body)
    n = re.search(r"num_spec(?:ulative)?_tokens=(\d+)", body)
    algo = _VLLM_METHOD(method.group(1)) if method else "UNKNOWN"
    return {"algorithm": algo, "num_steps": int(n.group(1)) if n else None, "topk": None, "num_draft_tokens": None}
