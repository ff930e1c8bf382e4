"""Nothing from outside reaches the terminal raw (issue 42, item 5): `printable()` itself, then an
escape sequence fed through each place that prints outside text: the audit listing (text and JSON),
spec's progress and outcome lines, record's status lines, a Prometheus answer's labels, the
dashboard's log pane and event timeline, the audit screen. The summary's table is held in
tests/process/test_hostile_cli.py (it runs the command)."""

from __future__ import annotations

import json

import pytest

from mtptui.printable import printable, printable_json, printable_values

# OSC 0 sets the window title; CSI 2J clears the screen; CSI 8-bit; a carriage return overwrites;
# a right-to-left override reorders what follows
HOSTILE = "a\x1b]0;owned\x07b\x1b[2Jc\x9b31md\re\u202ef"
RAW = ("\x1b", "\x07", "\x9b", "\r", "\u202e")


def clean(text: str) -> bool:
    return not any(c in text for c in RAW)


def test_printable_escapes_what_a_terminal_acts_on_and_keeps_the_rest():
    assert printable(HOSTILE) == "a\\x1b]0;owned\\x07b\\x1b[2Jc\\x9b31md\\re\\u202ef"
    assert printable("café 中文 [bold] \\ ok") == "café 中文 [bold] \\ ok"
    assert printable("two\nlines") == "two\\nlines"
    assert printable("two\nlines\x1b", newlines=True) == "two\nlines\\x1b"
    assert printable("tab\there\x00\x7f") == "tab\\there\\x00\\x7f"
    # a byte that was not UTF-8, kept by surrogateescape, is shown as the byte; a lone surrogate as itself
    assert printable(b"\xff".decode("utf-8", "surrogateescape")) == "\\xff"
    assert printable("\ud800") == "\\ud800"
    assert printable(3) == "3"


def test_printable_json_is_the_same_document_and_can_be_printed():
    doc = {"message": HOSTILE, "odd": "\ud800", "fine": "café"}
    text = printable_json(json.dumps(doc, ensure_ascii=False))
    assert clean(text) and "café" in text
    text.encode("utf-8")  # no lone surrogate left: it prints
    assert json.loads(text) == doc


def test_printable_values_reaches_every_string_of_an_entry():
    got = printable_values({"message": HOSTILE, "phases": [{"detail": "\x1b[2J", "elapsed_s": 1.0}], "n": 3})
    assert clean(json.dumps(got, ensure_ascii=False)) and got["n"] == 3
    assert got["phases"][0] == {"detail": "\\x1b[2J", "elapsed_s": 1.0}


def _audit_log(tmp_path, monkeypatch, *lines: str):
    log = tmp_path / "audit.jsonl"
    log.write_text("".join(line + "\n" for line in lines), encoding="utf-8", errors="surrogatepass")
    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(log))
    return log


ENTRY = {"id": "a1", "time": 1_700_000_000.0, "user": "root", "host": "gpu1", "unit": "sglang", "action": "apply",
         "profile": "mtp2", "result": "rolled_back", "message": "rolled back: the journal said " + HOSTILE,
         "phases": [{"phase": "wait", "state": "fail", "detail": HOSTILE, "elapsed_s": 3.0}]}


@pytest.mark.parametrize("args", [[], ["--phases"], ["--json"]])
def test_the_audit_listing_quotes_a_journal_line_escaped(tmp_path, monkeypatch, capsys, args):
    from mtptui.commands import audit

    _audit_log(tmp_path, monkeypatch, json.dumps(ENTRY))
    assert audit.main(args) == 0
    out = capsys.readouterr().out
    assert clean(out) and "owned" in out, out
    if "--json" in args:
        assert json.loads(out)["message"] == ENTRY["message"]  # the same document


def test_a_400_digit_time_and_a_lone_surrogate_do_not_crash_the_audit(tmp_path, monkeypatch, capsys):
    """Issue 42: one audit line whose time is a 400-digit integer crashed every `spec`, `a` and `audit`;
    a lone surrogate crashed `audit` as it printed."""
    from mtptui.commands import audit

    huge = json.dumps({**ENTRY, "id": "a2"})[:-1] + ', "time": ' + "9" * 400 + "}"
    lone = json.dumps({**ENTRY, "id": "a3", "message": "\ud800 bad"})  # "\ud800" written as JSON's escape
    _audit_log(tmp_path, monkeypatch, huge, lone, json.dumps({**ENTRY, "id": "a4", "phases": [
        {"phase": "wait", "state": "ok", "elapsed_s": int("9" * 400)}]}))
    for args in ([], ["--phases"], ["--json"]):
        assert audit.main(args) == 0
        got = capsys.readouterr()
        got.out.encode("utf-8")
        assert "\\ud800 bad" in got.out and "2 bad lines skipped" in got.err, got


def test_the_audit_screen_keeps_no_raw_text(tmp_path):
    from mtptui.tui.screens.audit import AuditScreen, details, table_layout

    screen = AuditScreen(lambda: [ENTRY], str(tmp_path / "audit.jsonl"))
    _, rows = table_layout(screen.entries, 200)
    assert all(clean(cell) for row in rows for cell in row)
    assert clean(details(screen.entries[0]).plain)


def test_spec_progress_and_outcome_lines_are_escaped(capsys):
    from mtptui.commands.spec import progress
    from mtptui.control.restart import PhaseEvent

    progress(PhaseEvent("wait", "fail", "the journal said " + HOSTILE, 1.0))
    err = capsys.readouterr().err
    assert clean(err) and "owned" in err


def test_record_status_lines_are_escaped():
    import io

    from mtptui.commands.record import StatusPrinter

    out = io.StringIO()
    printer = StatusPrinter(out)
    printer.dropped(2, "a line of " + HOSTILE, "gpu\x1b[2J1")
    assert clean(out.getvalue()) and "dropped 2" in out.getvalue()


def test_a_prometheus_label_is_escaped_and_a_wrong_shape_is_one_error():
    from mtptui.fleet.prom import Prometheus, PromError

    prom = Prometheus("http://127.0.0.1:9")

    def answer(result) -> bytes:
        return json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}}).encode()

    got = prom.read("up", answer([{"metric": {"instance": HOSTILE}, "value": [0, "1"]}]))
    assert got[0].labels["instance"] == printable(HOSTILE)
    for wrong in ({"a": 1}, [{"metric": ["x"], "value": [0, "1"]}], [{"metric": {"a": 1}, "value": [0, "1"]}],
                  [{"metric": {}, "value": {"x": 1}}], "text", [None]):
        with pytest.raises(PromError, match="not Prometheus' query API"):
            prom.read("up", answer(wrong))


def test_the_event_timeline_shows_an_event_text_escaped():
    from mtptui.tui.widgets.events import EventTimeline, TimelineEntry

    parts = EventTimeline._line(None, TimelineEntry(1.0, "error", HOSTILE))  # type: ignore[arg-type]
    assert clean("".join(p if isinstance(p, str) else p[0] for p in parts))


def test_a_hosts_name_from_its_journal_is_shown_escaped():
    from mtptui.tui.viewmodel import host_label

    assert host_label("gpu\x1b[2J1") == "gpu\\x1b[2J1" and host_label(None) == "server log"
