"""What an action will do, shown before anything changes: host, unit, the exact commands, the old
and new flags as a diff, and how long the last start took (the downtime to expect)."""

from __future__ import annotations

import difflib
import shlex
import statistics
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

from mtptui.control.launch import ENGINE_NAMES
from mtptui.control.profiles import Profile

APPLY: Final = "apply"  # a profile
REVERT: Final = "revert"  # remove our drop-in
RESTART: Final = "restart"  # as is
RESTORE: Final = "restore"  # the unit as a state read before had it
PlanAction: TypeAlias = Literal["apply", "revert", "restart", "restore"]


@dataclass
class Plan:
    host: str
    unit: str
    action: PlanAction  # APPLY a profile, REVERT (remove our drop-in), RESTART as is, RESTORE a state read before
    profile: Profile | None  # the profile asked for (APPLY only)
    engine: str  # "sglang" or "vllm"
    old_argv: list[str]
    new_argv: list[str]
    old_dropin: str | None  # our drop-in's text before (None: there was none)
    new_dropin: str | None  # after (None: none, i.e. removed or never written)
    commands: list[list[str]]  # every command that will run on the host, in order
    current: dict[str, Any] = field(default_factory=dict)  # speculation settings as ExecStart has them now
    last_start_s: float | None = None  # the last start, `Started` to the ready line
    starts_s: list[float] = field(default_factory=list)  # the last few starts, oldest first
    starts_from: str = "the journal"  # where they were read (UnitState.starts_from)
    prod: bool = False  # the host is tagged prod: its name must be typed to confirm
    where: str = ""  # how the host is reached (user@address:port, "this machine", "simulator")
    warnings: list[str] = field(default_factory=list)
    server_version: str | None = None  # the engine's version (control/version.py), None: unknown
    version_from: str = ""  # where it was read, or why it is unknown

    @property
    def changes(self) -> bool:
        return self.old_argv != self.new_argv or self.old_dropin != self.new_dropin

    def title(self) -> str:
        what = {APPLY: f"→ {self.profile.name}" if self.profile else "", REVERT: "revert to the unit's own ExecStart",
                RESTART: "restart as is", RESTORE: "restore the unit as it was"}[self.action]
        return f"{self.host} · {self.unit}: {what}"

    def diff_lines(self) -> list[tuple[str, str]]:
        """The server's arguments, old against new: ("-" | "+" | " ", one argument or flag with
        its value)."""
        old, new = _flag_lines(self.old_argv), _flag_lines(self.new_argv)
        out = []
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
            if tag == "equal":
                out += [(" ", x) for x in old[i1:i2]]
                continue
            out += [("-", x) for x in old[i1:i2]]
            out += [("+", x) for x in new[j1:j2]]
        return out

    def downtime(self) -> str:
        """The downtime to expect: the last start, and the median of the last few when there
        are several (`last start 3.8 s (Started → ready), median of 5: 3.9 s`)."""
        if self.last_start_s is None:
            return f"unknown (no start to ready seen in {self.starts_from})"
        text = f"last start {duration_text(self.last_start_s)} (Started → ready)"
        if len(self.starts_s) > 1:
            text += f", median of {len(self.starts_s)}: {duration_text(statistics.median(self.starts_s))}"
        return text

    def server_text(self) -> str:
        """`SGLang 0.5.12 (from the unit's interpreter)`, or that the version is unknown."""
        name = ENGINE_NAMES.get(self.engine, self.engine)
        if self.server_version is None:
            return f"{name}, version unknown ({self.version_from or 'not asked'})"
        return f"{name} {self.server_version} (from {self.version_from})"

    def rules_lines(self) -> list[str]:
        """Whose rules the profile was checked against when the version is unknown, and what the
        server will actually run where that version changes the counts itself."""
        if self.action != APPLY or self.profile is None or not self.profile.on:
            return []
        from mtptui.control import launch
        from mtptui.control.profiles import NEWEST_SGLANG, NEWEST_VLLM, version_text

        out = []
        if self.server_version is None:
            name, newest = (("vLLM", NEWEST_VLLM) if self.engine == "vllm" else ("SGLang", NEWEST_SGLANG))
            out.append(f"rules:    version unknown: checked against {name} {version_text(newest)}'s rules")
        try:
            asked = launch.spec_flags(self.new_argv, self.server_version)
            runs = launch.effective_flags(self.new_argv, self.server_version)
        except (launch.LaunchError, ValueError):
            return out
        changed = [f"{k} {runs[k]} (asked {asked[k] if asked[k] is not None else 'none'})"
                   for k in ("num_steps", "topk", "num_draft_tokens") if runs.get(k) != asked.get(k)]
        if changed:
            out.append(f"runs:     {', '.join(changed)}: the server sets these itself; verify expects them")
        return out

    def preview_lines(self) -> list[str]:
        """The whole preview as plain text (the headless command prints it; the modal shows it)."""
        lines = [f"host:     {self.host}" + (f" ({self.where})" if self.where else "") + ("  [prod]" if self.prod else ""),
                 f"unit:     {self.unit}",
                 f"action:   {self.title().split(': ', 1)[1]}"]
        lines.append(f"server:   {self.server_text()}")
        lines += self.rules_lines()
        lines.append(f"downtime: {self.downtime()}")
        lines += [f"warning:  {w}" for w in self.warnings]
        lines.append("commands:")
        lines += [f"  {shlex.join(c)}" for c in self.commands]
        lines.append("server arguments (- old, + new):")
        changed = [d for d in self.diff_lines() if d[0] != " "]
        lines += [f"  {tag} {text}" for tag, text in changed] or ["  (no change)"]
        return lines


def _flag_lines(argv: list[str]) -> list[str]:
    """argv as one line per flag with its value (`--tp 4`), so a diff reads flag by flag."""
    out: list[str] = []
    for a in argv:
        if out and out[-1].startswith("--") and " " not in out[-1] and "=" not in out[-1] and not a.startswith("--"):
            out[-1] = f"{out[-1]} {shlex.quote(a)}"
        else:
            out.append(shlex.quote(a) if not a.startswith("--") else a)
    return out


def duration_text(s: float) -> str:
    if s < 90:
        return f"{s:.1f} s"
    m, sec = divmod(int(round(s)), 60)
    return f"{m} min {sec:02d} s"
