"""The A/B benchmark of speculation profiles on one host, through its control path.

For each profile: plan it, check it is what the preview showed, apply it (lock, write, reload,
restart, wait, verify, roll back on failure: control.restart), warm up, then for each concurrency
send N streaming requests and read the accept len the log shows meanwhile. While the new run is
verified, warm-up requests give it the decode batches verification waits for.

Whatever happens (done, a profile failed, ctrl-c, the link lost), the host is left as it was
found: the unit's drop-in is written back byte for byte (or ours removed when there was none)
through the same path, restarted and verified; a lost link is reconnected first. The audit log
has each apply and the restore (control.session) and one `bench` entry with every step.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from mtptui.control import audit
from mtptui.control.errors import ControlError
from mtptui.control.plan import APPLY, RESTORE, Plan
from mtptui.control.probe import ServerProbe
from mtptui.control.profiles import Profile
from mtptui.control.restart import NOT_RUN, OK, ROLLBACK_FAILED, ROLLED_BACK, PhaseEvent, PhaseState
from mtptui.control.target import UnitState
from mtptui.prove import load, prompts, results
from mtptui.prove.accept import AcceptReader, stats_interval
from mtptui.prove.prompts import Prompt
from mtptui.transport.http import HttpError
from mtptui.prove.smoke import model_name

# Exit codes: done and restored; a profile failed (rolled back, the others measured); the host
# could not be restored; the benchmark could not run; interrupted (ctrl-c), the host restored.
DONE, PROFILE_FAILED, NOT_RESTORED, COULD_NOT_RUN, INTERRUPTED = 0, 3, 4, 1, 130
WARMUP_REQUESTS = 4
NUDGE_TOKENS = 16
RECONNECT_EVERY_S = 2.0
READY_EVERY_S = 1.0  # how often /health is asked while waiting for a server not restarted


@dataclass
class Progress:
    """What the benchmark is doing, for a progress bar."""

    profile: str
    step: str  # "apply", "warm up", "measure", "restore", and the control path's phases
    concurrency: int | None = None
    done: int = 0  # requests ended at this concurrency
    total: int = 0
    detail: str = ""
    steps_done: int = 0  # concurrency levels measured so far, of steps_total
    steps_total: int = 0

    def text(self) -> str:
        """`[2/6] mtp1: measure c=8 [##########..........] 4/8`."""
        head = f"[{self.steps_done}/{self.steps_total}] {self.profile + ': ' if self.profile else ''}{self.step}"
        return f"{head} {self.status()}".rstrip()

    def status(self) -> str:
        """The part after the step: the requests done at this concurrency, or the step's detail."""
        if self.concurrency is not None:
            filled = int(20 * self.done / self.total) if self.total else 0
            return f"c={self.concurrency} [{'#' * filled}{'.' * (20 - filled)}] {self.done}/{self.total}"
        return f"({self.detail})" if self.detail else ""


@dataclass
class Report:
    host: str
    unit: str
    started: str  # ISO 8601, UTC
    results: list[dict] = field(default_factory=list)
    restored: bool = False
    failed: dict[str, str] = field(default_factory=dict)  # profile -> why it did not apply
    error: str = ""  # why the benchmark stopped early
    interrupted: bool = False
    restore_message: str = ""
    prompts: dict = field(default_factory=dict)  # where the prompts came from: file (None: shipped), count, categories

    def to_json(self) -> dict:
        """The report, each row with its change against `off` and its interval, and per
        concurrency the verdict on the leader (results.with_intervals, results.verdicts)."""
        data = {"host": self.host, "unit": self.unit, "started": self.started, "prompts": self.prompts,
                "results": results.with_intervals(self.results), "restored": self.restored}
        data["verdicts"] = results.verdicts(data)
        return data

    @property
    def exit_code(self) -> int:
        if not self.restored:
            return NOT_RESTORED
        if self.interrupted:
            return INTERRUPTED
        if self.error:
            return COULD_NOT_RUN
        return PROFILE_FAILED if self.failed else DONE


def empty_row(profile: str, concurrency: int) -> dict:
    return {"profile": profile, "concurrency": concurrency, "requests": 0, "output_tok_s": None, "req_s": None,
            "ttft_p50_ms": None, "ttft_p99_ms": None, "ttft_max_ms": None, "itl_p50_ms": None, "itl_p99_ms": None,
            "itl_max_ms": None, "errors": 0, "accept_len": None, "accept_rate": None,
            "per_request": {"tokens": [], "seconds": []}, results.ACCEPTANCE: None}


class Bench:
    ACTION = "bench"  # the audit entry's action (prove.tune's is "tune")
    REPORT = Report

    def __init__(self, hc, profiles: list[Profile], concurrencies: list[int], requests: int, *,
                 max_tokens: int = 128, seed: int = 0, timeout: float = 300.0,
                 on_progress: Callable[[Progress], None] | None = None,
                 prompt_pool: list[Prompt] | None = None, prompts_file: str | None = None) -> None:
        self.hc = hc
        self.profiles = profiles
        self._given = [p.name for p in profiles]  # the operator's order (preview runs the running one first)
        self.concurrencies = concurrencies
        # fewer requests than a concurrency would never have that many in flight: its figures
        # would be another concurrency's, under its name
        self.requests = max(requests, *concurrencies)
        self.raised = self.requests > requests
        self.max_tokens = max_tokens
        self.seed = seed
        self.timeout = timeout
        self.on_progress = on_progress
        self.pool = tuple(prompt_pool) if prompt_pool else prompts.PROMPTS  # the operator's, else the shipped set
        self.report = self.REPORT(hc.host, hc.unit, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        self.report.prompts = {"file": prompts_file, "count": len(self.pool),
                               "categories": dict(Counter(p.category or "-" for p in self.pool))}
        self.previewed: list[Plan] = []
        self._before: UnitState | None = None  # the unit as preview() found it: what is restored
        self._task: asyncio.Task | None = None
        self._cancelled = False
        self._hands_off = ""  # a rollback failed: mtptui stops touching the host, restore included
        self._t0 = time.monotonic()
        self._steps: list[PhaseEvent] = []
        self._progress = Progress("", "plan", steps_total=len(profiles) * len(concurrencies))

    # --- what it will do ---------------------------------------------------------------------------

    async def preview(self) -> list[Plan]:
        """Each profile's plan against the unit as it is now, for the operator to confirm. Raises
        ControlError (BadProfile for a profile the server would refuse)."""
        self._before = await self.hc.state()
        plans = [await self.hc.plan(APPLY, p) for p in self.profiles]
        # the profile the server runs already goes first: it is measured without a restart
        runs = [i for i, (p, plan) in enumerate(zip(self.profiles, plans))
                if plan.old_argv == plan.new_argv and not p.env][:1]
        order = runs + [i for i in range(len(plans)) if i not in runs]
        self.profiles = [self.profiles[i] for i in order]
        self.previewed = [plans[i] for i in order]
        return self.previewed

    # the preview's shape (control.plan.Plan's), so the dashboard's confirm screen shows it too
    @property
    def host(self) -> str:
        return self.hc.host

    @property
    def prod(self) -> bool:
        return self.hc.prod

    def title(self) -> str:
        return f"{self.hc.host} · {self.hc.unit}: benchmark {', '.join(p.name for p in self.profiles)}"

    def in_order(self) -> list[Plan]:
        """The previewed plans as they will run: each against the profile before it (the first
        against the unit as it is now), so that a diff shows what the server will see."""
        return [plan if i == 0 else replace(plan, old_argv=self.previewed[i - 1].new_argv)
                for i, plan in enumerate(self.previewed)]

    def changes(self) -> list[tuple[str, list[str]]]:
        """Each profile's change to the server's arguments, in the order they run; an empty list
        where that profile restarts nothing."""
        out: list[tuple[str, list[str]]] = []
        for profile, plan in zip(self.profiles, self.in_order()):
            changed = [f"{tag} {text}" for tag, text in plan.diff_lines() if tag != " "]
            out.append((profile.name, changed or (["(its environment)"] if profile.env else [])))
        return out

    def preview_lines(self) -> list[str]:
        changes = self.changes()
        restarts = sum(bool(c) for _, c in changes) + 1
        where = self.report.prompts.get("file")
        lines = [f"benchmark: {', '.join(p.name for p in self.profiles)}; concurrency "
                 f"{', '.join(map(str, self.concurrencies))}; {self.requests} requests of {self.max_tokens} tokens each"
                 + (" (raised to the highest concurrency: fewer would never have that many in flight)"
                    if self.raised else "")
                 + (" (or a prompt's own max_tokens)" if any(p.max_tokens for p in self.pool) else "")
                 + f", drawn from {len(self.pool)} prompts "
                 + (f"of {where}" if where else "shipped with mtptui"),
                 f"restarts: up to {restarts}: each profile the server does not already run, then back to the "
                 f"unit as it was found (its drop-in byte for byte), also after a cancel or a failure ({self.restore_within()})"]
        width = max(len("restore"), *(len(name) for name, _ in changes))
        lines += ["", "each profile's change to the server's arguments, in the order they run (against the one before it):"]
        for name, changed in changes:
            lines.append(f"  {name.ljust(width)}  " + ("; ".join(changed) if changed else "no change: no restart"))
        lines.append(f"  {'restore'.ljust(width)}  back to the unit as it was found")
        for profile, plan in zip(self.profiles, self.in_order()):
            lines += ["", f"── {profile.name} ──", *plan.preview_lines()]
        return lines

    # --- running -----------------------------------------------------------------------------------

    def restore_within(self) -> str:
        """The bound on the restore after a cancel or a failure, for the preview: the host reached
        again, then an action's put-back (control.restart.Settings.put_back_s)."""
        st = self.hc.settings
        return f"verified, within {math.ceil((max(60.0, st.wait_timeout) + st.put_back_s()) / 60)} min at most"

    def leaving(self) -> str:
        """What stopping at once would leave, in words (a second ctrl-c asks about it)."""
        p = self._progress
        at = f"{p.step} of {p.profile}" if p.profile else p.step
        return (f"{self.hc.host} · {self.hc.unit} at {at}, not restored; `mtptui spec {self.hc.host} --recover` "
                "puts back the last verified settings")

    def cancel(self) -> None:
        """Stops the measuring (ctrl-c, the cancel key); the host is still restored."""
        self._cancelled = True
        if self._task is not None:
            self._task.cancel()

    async def run(self) -> Report:
        if self._before is None:
            await self.preview()
        before = self._before
        assert before is not None  # preview() read it
        entry = audit.new_entry(host=self.hc.host, unit=self.hc.unit, action=self.ACTION, profile=None,
                                where=self.hc.where, exec_start_before=before.argv,
                                dropin_before=before.dropin, commands=[], result="running", phases=[],
                                profiles=[p.name for p in self.profiles], concurrency=self.concurrencies,
                                requests=self.requests)
        audit.append(entry)
        self._task = asyncio.ensure_future(self._measure())
        outer_cancelled = False
        try:
            await self._task
        except asyncio.CancelledError:
            self.report.interrupted = True
            outer_cancelled = not self._cancelled
            self._step("bench", "fail", "interrupted")
        except (ControlError, HttpError) as e:
            self.report.error = str(e)
            self._step("bench", "fail", str(e))
        try:
            await self._restore()
        finally:
            r = self.report
            entry.update(result="done" if r.exit_code == DONE else "interrupted" if r.interrupted and r.restored
                         else "restore_failed" if not r.restored else "failed",
                         exit_code=r.exit_code, message=self.summary(), results=r.results, restored=r.restored,
                         phases=[p.to_json() for p in self._steps])
            audit.append(entry)
        if outer_cancelled:
            raise asyncio.CancelledError
        return self.report

    def summary(self) -> str:
        r = self.report
        parts = []
        if r.interrupted:
            parts.append("interrupted")
        if r.error:
            parts.append(f"stopped: {r.error}")
        parts += [f"{name} failed: {why}" for name, why in r.failed.items()]
        parts.append(("restored: " if r.restored else "NOT RESTORED: ") + r.restore_message)
        return "; ".join(parts)

    def _step(self, phase: str, state: PhaseState, detail: str = "") -> None:
        self._steps.append(PhaseEvent(phase, state, detail, time.monotonic() - self._t0))

    def _say(self, **changes) -> None:
        for k, v in changes.items():
            setattr(self._progress, k, v)
        if self.on_progress is not None:
            self.on_progress(self._progress)

    async def _measure(self) -> None:
        prompt_set = prompts.draw(self.requests, self.seed, self.pool)
        for profile, shown in zip(self.profiles, self.previewed):
            await self._measure_profile(profile, shown, self.concurrencies, prompt_set)
        # the rows in the order the operator named the profiles, whichever ran first
        r = self.report
        r.results.sort(key=lambda row: self._given.index(row["profile"]) if row["profile"] in self._given else 0)

    async def _measure_profile(self, profile: Profile, shown: Plan, concurrencies: list[int],
                               prompt_set: list[Prompt]) -> list[dict]:
        """Applies one profile (checked against its preview), warms it up and measures it at
        each concurrency with prompt_set; its rows, added to the report (0 requests where it
        failed and was rolled back)."""
        r = self.report
        self._say(profile=profile.name, step="apply", concurrency=None, done=0, total=0, detail="")
        plan = await self.hc.plan(APPLY, profile)
        if plan.new_argv != shown.new_argv:
            raise ControlError(f"{self.hc.host}: the unit changed since the preview; stopped")
        if not await self._apply(plan):
            rows = [empty_row(profile.name, c) for c in concurrencies]
            r.results += rows
            return rows
        fwd = await self.hc.endpoint()
        model = await model_name(fwd.host, fwd.port, 30.0)
        path = await load.measuring_path(fwd)  # SGLang's /generate reports each request's acceptance
        self._say(step="warm up")
        await load.run_load(fwd, model, prompts.draw(WARMUP_REQUESTS, self.seed + 1, self.pool),
                            min(WARMUP_REQUESTS, max(concurrencies)), self.max_tokens, timeout=self.timeout, path=path)
        before = self._before
        assert before is not None  # preview() read it
        interval = stats_interval(plan.new_argv, {**before.environment, **dict(profile.env)})
        rows = []
        for c in concurrencies:
            sent = self._prompts_at(prompt_set, c)
            self._say(step="measure", concurrency=c, done=0, total=len(sent))
            fwd = await self.hc.endpoint()  # reopened when a reconnect replaced the link
            reader = AcceptReader(await self.hc.follow_log(), interval)
            reader.start()
            try:
                measured = await load.run_load(fwd, model, sent, c, self.max_tokens, timeout=self.timeout,
                                               on_done=lambda n: self._say(done=n), path=path)
            except BaseException:
                await reader.cancel()
                raise
            accept_len, accept_rate = await reader.stop()
            row = {"profile": profile.name, "concurrency": c, "requests": measured.requests,
                   **measured.figures(), "accept_len": accept_len, "accept_rate": accept_rate,
                   results.ACCEPTANCE: measured.acceptance()}
            r.results.append(row)
            rows.append(row)
            detail = (f"{row['output_tok_s']} tok/s, {row['errors']} errors"
                      + (f" (first: {measured.first_error()})" if row["errors"] else ""))
            self._step(f"measure {profile.name} c={c}", "ok" if not row["errors"] else "fail", detail)
            self._say(steps_done=self._progress.steps_done + 1)
        return rows

    def _prompts_at(self, prompt_set: list[Prompt], concurrency: int) -> list[Prompt]:
        """The requests sent at one concurrency: every one (a tune for a schedule sends fewer at its
        lower loads)."""
        return prompt_set

    async def _apply(self, plan: Plan) -> bool:
        """Applies a profile; False when it failed and was rolled back. A server already running
        these settings (the same argv, no environment of the profile) is not restarted."""
        st = await self.hc.state()
        profile = plan.profile
        assert profile is not None  # a plan to apply names its profile
        name = profile.name
        if plan.old_argv == plan.new_argv and not profile.env and st.active == "active":
            # not restarted, so no restart waited for it: a unit just started may still be loading
            await self._ready()
            self._step(f"apply {name}", "ok", "already running these settings: no restart")
            return True
        outcome = await self._execute(plan)
        self._step(f"apply {name}", "ok" if outcome.exit_code == OK else "fail", outcome.message)
        if outcome.exit_code == OK:
            return True
        if outcome.exit_code == ROLLED_BACK:
            self.report.failed[name] = outcome.message
            return False
        if outcome.exit_code == ROLLBACK_FAILED:
            self.report.failed[name] = outcome.message
            self._hands_off = outcome.message
            raise ControlError(outcome.message)
        assert outcome.exit_code == NOT_RUN
        raise ControlError(outcome.message)

    async def _ready(self) -> None:
        """Waits, within the restart's wait_timeout, for the readiness a restart waits for
        (/health 200: control.probe; systemd's active was checked by the caller). Raises
        ControlError when it does not come; a server that cannot be asked is measured as before."""
        probe = ServerProbe(self.hc.endpoint)
        limit = self.hc.settings.wait_timeout
        deadline = time.monotonic() + limit
        while await probe.healthy() is False:
            if time.monotonic() > deadline:
                raise ControlError(f"{self.hc.host}: the server is not ready after {limit:.0f} s "
                                   "(/health does not answer 200); not measured")
            self._say(step="wait", detail="waiting for the server to be ready")
            await asyncio.sleep(READY_EVERY_S)

    async def _execute(self, plan: Plan, step: str = ""):
        """Runs a plan; from the ready line on, warm-up requests give the verification the decode
        batches it waits for (an idle server would be judged only after a minute)."""
        nudge: list[asyncio.Task] = []

        def on_phase(ev: PhaseEvent) -> None:
            self._say(step=step + ev.phase, detail=ev.detail)
            if ev.phase.endswith("wait") and ev.state == "ok":
                nudge.append(asyncio.ensure_future(self._nudge()))

        try:
            return await self.hc.execute(plan, on_phase)
        finally:
            for t in nudge:
                t.cancel()
            await asyncio.gather(*nudge, return_exceptions=True)

    async def _nudge(self) -> None:
        """Warm-up traffic while the new run is verified: the decode batches it waits for."""
        with contextlib.suppress(ControlError, HttpError):
            fwd = await self.hc.endpoint()
            model = await model_name(fwd.host, fwd.port, 10.0)
            while True:
                await load.run_load(fwd, model, prompts.draw(2, self.seed), 2, NUDGE_TOKENS, timeout=30.0)

    # --- leaving the host as found ----------------------------------------------------------------------

    async def _restore(self) -> None:
        before = self._before
        assert before is not None  # run() read it before it changed anything
        r = self.report
        self._say(profile="", step="restore", concurrency=None, detail="")
        if self._hands_off:
            r.restore_message = "a rollback failed, so mtptui stops touching the host; it needs a person"
            self._step("restore", "fail", r.restore_message)
            return
        deadline = time.monotonic() + max(60.0, self.hc.settings.wait_timeout)
        while True:
            try:
                now = await self.hc.state()
                break
            except ControlError as e:
                if time.monotonic() > deadline:
                    r.restore_message = f"could not reach the host to restore it: {e}"
                    self._step("restore", "fail", r.restore_message)
                    return
                await asyncio.sleep(RECONNECT_EVERY_S)
                with contextlib.suppress(ControlError):
                    await self.hc.reconnect()
        if now.dropin == before.dropin:
            r.restored = True
            r.restore_message = "the unit is as it was (its drop-in unchanged)"
            self._step("restore", "ok", r.restore_message)
            return
        try:
            plan = await self.hc.plan(RESTORE, before=before)
            outcome = await self._execute(plan, "restore: ")
            after = await self.hc.state()
        except ControlError as e:
            r.restore_message = str(e)
        else:
            r.restored = outcome.exit_code == OK and after.dropin == before.dropin
            r.restore_message = outcome.message if r.restored else f"{outcome.result}: {outcome.message}"
        self._step("restore", "ok" if r.restored else "fail", r.restore_message)
