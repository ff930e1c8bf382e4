"""The audit screen (a): every action mtptui took, newest first: when, where, what, how it ended;
Enter on one shows its phases with their durations and the ExecStart before and after. Bad lines
of the log are skipped and counted; a log that cannot be read is one line, in place of the table."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from rich.text import Text

from mtptui.control.audit import AuditError
from mtptui.printable import printable_values
from mtptui.tui.bindings import bindings_for

COLUMNS = ("time", "host", "unit", "action", "result", "message")
RESULT_STYLES = {"applied": "$text-success", "rolled_back": "$text-warning", "rollback_failed": "bold $text-error",
                 "lock_lost": "bold $text-error", "interrupted": "$text-warning", "not_run": "dim"}
PAD = 2  # a DataTable cell's padding, both sides
SCROLLBAR = 2  # the table's vertical scroll bar, once its rows outgrow it
TABLE_ROWS = 16  # the table's max-height (DEFAULT_CSS)
MIN_MESSAGE = 24  # below this the time is shortened, then the unit left to the details
SHORT_MESSAGE = 12  # below this, long host names give way
MIN_HOST = 8
ELLIPSIS = "…"


def when(t: float | None, short: bool = False) -> str:
    if t is None:
        return "-"
    return time.strftime("%m-%d %H:%M:%S" if short else "%Y-%m-%d %H:%M:%S", time.localtime(t))


def clip(text: str, width: int) -> str:
    """text in `width` cells: whole, or cut with an ellipsis, at a space where one is near."""
    if len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    cut = text[:width - 1]
    space = cut.rfind(" ")
    if space >= 0.6 * (width - 1):
        cut = cut[:space]
    return cut.rstrip(" ,;:·") + ELLIPSIS


def table_layout(entries: list[dict], width: int) -> tuple[list[tuple[str, int]], list[list[str]]]:
    """The audit table in `width` cells: (column, width) and each row's texts, every cell whole
    or cut with an ellipsis, never past the edge. The result is always whole; where the room is
    short the time loses its year, then the unit goes (the details below say it), then long host
    names are cut; the message takes the rest."""
    if len(entries) + 1 > TABLE_ROWS:
        width -= SCROLLBAR
    cells = {"host": [str(e.get("host", "?")) for e in entries], "unit": [str(e.get("unit", "?")) for e in entries],
             "action": [action_text(e) for e in entries], "result": [str(e.get("result", "?")) for e in entries],
             "message": [str(e.get("message", "")) for e in entries]}

    def natural(name: str, texts: list[str]) -> int:
        return max([len(name), *(len(t) for t in texts)])

    layout: list[tuple[str, int]] = []
    for short, unit in ((False, True), (True, True), (True, False)):
        cells["time"] = [when(e.get("time"), short) for e in entries]
        names = [n for n in COLUMNS if n != "message" and (unit or n != "unit")]
        layout = [(n, natural(n, cells[n])) for n in names]
        room = width - sum(w + PAD for _, w in layout) - PAD
        if room >= MIN_MESSAGE or room >= natural("message", cells["message"]):
            break
    room = width - sum(w + PAD for _, w in layout) - PAD
    if room < SHORT_MESSAGE:  # long host names give way, to a point
        layout = [(n, max(MIN_HOST, w - (SHORT_MESSAGE - room)) if n == "host" else w) for n, w in layout]
        room = width - sum(w + PAD for _, w in layout) - PAD
    layout.append(("message", max(len("message"), min(room, natural("message", cells["message"])))))
    rows = [[clip(cells[n][i], w) for n, w in layout] for i in range(len(entries))]
    return layout, rows


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
                   (f"{e.get('result', '?')}" + ("" if e.get("exit_code") is None else f" (exit {e['exit_code']})"),
                    RESULT_STYLES.get(str(e.get("result")), "")),
                   f": {e['message']}\n\nphases:\n" if e.get("message") else "\n\nphases:\n"]  # no dangling colon
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
    /* docked, so that long details give way and never push these past the box's edge (80x24) */
    AuditScreen #hint { color: $text-muted; dock: bottom; }
    AuditScreen #bad { color: $text-warning; dock: bottom; }
    AuditScreen #error { color: $text-error; }
    """
    BINDINGS = bindings_for("audit")

    def __init__(self, read: Callable[[], list[dict]], path: str) -> None:
        super().__init__()
        self.path = path
        self.error: str | None = None
        try:
            got = read()
        except AuditError as e:
            self.error, got = str(e), []
        self.bad = getattr(got, "bad", 0)  # lines of the log skipped as bad
        # newest first; a message quotes a server's journal line: nothing of it reaches the screen raw
        self.entries = [printable_values(e) for e in reversed(got)]

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "audit log: what mtptui did"
            box.border_subtitle = self.path
            if self.error:
                yield Static(self.error, id="error")
            elif not self.entries:
                yield Static(f"no actions yet (the audit log is {self.path})", id="empty")
            else:
                table: DataTable[Content | Text] = DataTable(cursor_type="row", zebra_stripes=True)
                self._fill(table, self.app.size.width)
                yield table
                with VerticalScroll(id="details"):
                    yield Static(id="detail")
            if self.bad:
                yield Static(f"{self.bad} bad line{'s' if self.bad != 1 else ''} skipped (not an action as "
                             "mtptui writes one)", id="bad")
            yield Static("Enter shows an action's phases and ExecStart · Esc closes", id="hint")

    def _fill(self, table: DataTable[Content | Text], screen_width: int) -> None:
        """The table's columns and rows, fitted to the screen's width (less the box's border and
        padding): nothing cut mid-word at the edge, no sideways scrolling."""
        self._width = screen_width
        layout, rows = table_layout(self.entries, max(20, screen_width - 4))
        for name, width in layout:  # fixed widths: a styled cell is not measured
            table.add_column(name, width=width)
        for e, texts in zip(self.entries, rows):
            # Text, not str: a message's [brackets] are not markup
            table.add_row(*(Content.styled(t, RESULT_STYLES.get(e.get("result"), "")) if name == "result" else Text(t)
                            for (name, _), t in zip(layout, texts)))

    def on_resize(self, event) -> None:
        if not self.entries or event.size.width == getattr(self, "_width", None):
            return
        table = self.query_one(DataTable)
        row = table.cursor_row
        table.clear(columns=True)
        self._fill(table, event.size.width)
        table.move_cursor(row=row)

    @on(DataTable.RowHighlighted)
    @on(DataTable.RowSelected)
    def _show(self, event) -> None:
        if 0 <= event.cursor_row < len(self.entries):
            self.query_one("#detail", Static).update(details(self.entries[event.cursor_row]))
