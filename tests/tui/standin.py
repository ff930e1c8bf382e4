"""The HostControl contract (mtptui.control.session) kept in memory: settings that change when a
plan is executed, and a gate the test opens, so an action can be seen while it runs."""

from __future__ import annotations

import asyncio

from plans import BASE, MTP3

from mtptui.control.plan import APPLY, Plan
from mtptui.control.profiles import BUILTINS, Profile
from mtptui.control.restart import APPLIED, OK, Outcome, PhaseEvent

OFF = {"algorithm": None, "num_steps": None, "topk": None, "num_draft_tokens": None}
MTP3_ON = {"algorithm": "NEXTN", "num_steps": 3, "topk": 1, "num_draft_tokens": 4}


class StandInControl:
    def __init__(self, host: str, *, prod: bool = False, settings: dict | None = None) -> None:
        self.host, self.unit, self.prod = host, "sglang.service", prod
        self.last_on: Profile = BUILTINS["mtp3"]
        self.settings = dict(settings or OFF)
        self.gate = asyncio.Event()
        self.executed: list[Plan] = []
        self.plan_error: Exception | None = None
        self.closed = False

    async def current(self) -> dict:
        return dict(self.settings)

    async def plan(self, action: str, profile: Profile | None = None) -> Plan:
        if self.plan_error is not None:
            raise self.plan_error
        old = BASE + MTP3 if self.settings.get("algorithm") else BASE
        new = (BASE + MTP3 if profile is not None and profile.on else BASE) if action == APPLY else old
        return Plan(host=self.host, unit=self.unit, action=action, profile=profile if action == APPLY else None,
                    engine="sglang", old_argv=old, new_argv=new, old_dropin=None,
                    new_dropin=None, commands=[["systemctl", "restart", self.unit]], prod=self.prod)

    async def toggle_plan(self) -> Plan:
        on = self.settings.get("algorithm") is not None
        return await self.plan(APPLY, BUILTINS["off"] if on else self.last_on)

    async def execute(self, plan: Plan, on_phase) -> Outcome:
        self.executed.append(plan)
        on_phase(PhaseEvent("restart", "ok", elapsed_s=1.0))
        on_phase(PhaseEvent("wait", "start", elapsed_s=1.0))
        await self.gate.wait()
        p = plan.profile
        if p is not None:
            self.settings = {k: getattr(p, k) for k in OFF}
        return Outcome(APPLIED, OK, "verified: accept len 2.41 after 3 batches" if p and p.on else "verified: speculation off")

    async def close(self) -> None:
        self.closed = True
