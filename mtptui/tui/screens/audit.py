"""The audit screen (a): every action mtptui took, newest first: when, where, what, how it ended;
Enter on one shows its phases with their durations and the ExecStart before and after. Bad lines
of the log are skipped and counted; a log that cannot be read is one line, in place of the table."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from mtptui.control.audit import AuditError

COLUMNS = ("time", "host", "unit", "action", "result", "message")
RESULT_STYLES = {"applied": "$text-success", "rolled_back": "$text-warning", "rollback_failed": "bold $text-error",
                 "not_run": "$text-muted"}


def when(t: float | None) -> str:
    return "-" if t is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def action_text(e: dict) -> str:
    return f"{e.get('action', '?')} {e['profile']}" if e.get("profile") else str(e.get("action", "?"))


def phase_rows(phases: list[dict]) -> list[tuple[str, str, float, str]]:
    """(phase, ok|fail, seconds it took, detail) for each phase that ended; the events carry the
    time since the action began, so a phase took from its start (or the event before) to its end."""
    out = []
    began: dict[str, float] = {}
    prev = 0.0
    for p in phases:
        at = float(p.get("elapsed_s") or 0.0)
        state = p.get("state")
        if state == "start":
            began[p["phase"]] = at
        elif state in ("ok", "fail"):
            out.append((p["phase"], state, at - began.pop(p["phase"], prev), p.get("detail") or ""))
        prev = at
    return out


def details(e: dict) -> Content:
    parts: list = [(f"{when(e.get('time'))}  {e.get('user', '?')} on {e.get('host', '?')} · {e.get('unit', '?')}: "
                    f"{action_text(e)}", "bold"), "\n",
                   (f"{e.get('result', '?')} (exit {e.get('exit_code', '?')})", RESULT_STYLES.get(e.get("result"), "")),
                   f": {e.get('message', '')}\n\nphases:\n"]
    rows = phase_rows(e.get("phases") or [])
    for phase, state, took, detail in rows:
        parts += [f"  {phase:<16}", (f"{state:<5}", "$text-success" if state == "ok" else "bold $text-error"),
                  f"{took:8.1f} s  ", (detail, "$text-muted"), "\n"]
    if not rows:
        parts.append(("  (none recorded)\n", "$text-muted"))
    for key, title in (("exec_start_before", "ExecStart before"), ("exec_start_after", "ExecStart after")):
        argv = e.get(key)
        parts += [f"\n{title}:\n  ", (shlex.join(argv) if argv else "(none)", "$text-error" if "before" in key else
                                       "$text-success"), "\n"]
    return Content.assemble(*parts)


class AuditScreen(ModalScreen):
    DEFAULT_CSS = """
    AuditScreen { align: center middle; }
    AuditScreen > Vertical { width: 100%; height: auto; max-height: 100%; border: thick $accent;
                             background: $surface; padding: 0 1; }
    AuditScreen DataTable { height: auto; max-height: 16; }
    AuditScreen #details { height: auto; max-height: 24; margin: 1 0; }
    AuditScreen #hint { color: $text-muted; }
    AuditScreen #bad { color: $text-warning; }
    AuditScreen #error { color: $text-error; }
    """
    BINDINGS = [Binding("escape,q,a", "dismiss", "close", id="audit_close")]

    def __init__(self, read: Callable[[], list[dict]], path: str) -> None:
        super().__init__()
        self.path = path
        self.error: str | None = None
        try:
            got = read()
        except AuditError as e:
            self.error, got = str(e), []
        self.bad = getattr(got, "bad", 0)  # lines of the log skipped as bad
        self.entries = list(reversed(got))  # newest first

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "audit log: what mtptui did"
            box.border_subtitle = self.path
            if self.error:
                yield Static(self.error, id="error")
            elif not self.entries:
                yield Static(f"no actions yet (the audit log is {self.path})", id="empty")
            else:
                table = DataTable(cursor_type="row", zebra_stripes=True)
                for name in COLUMNS:  # a styled cell is not measured: the result column gets its width
                    table.add_column(name, width=len("rollback_failed") if name == "result" else None)
                for e in self.entries:
                    table.add_row(when(e.get("time")), str(e.get("host", "?")), str(e.get("unit", "?")), action_text(e),
                                  Content.styled(str(e.get("result", "?")), RESULT_STYLES.get(e.get("result"), "")),
                                  str(e.get("message", "")))
                yield table
                with VerticalScroll(id="details"):
                    yield Static(id="detail")
            if self.bad:
                yield Static(f"{self.bad} bad line{'s' if self.bad != 1 else ''} skipped (not an action as "
                             "mtptui writes one)", id="bad")
            yield Static("Enter shows an action's phases and ExecStart · Esc closes", id="hint")

    @on(DataTable.RowHighlighted)
    @on(DataTable.RowSelected)
    def _show(self, event) -> None:
        if 0 <= event.cursor_row < len(self.entries):
            self.query_one("#detail", Static).update(details(self.entries[event.cursor_row]))
