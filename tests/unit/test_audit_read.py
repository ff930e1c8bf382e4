"""The audit log's readers (`read_audit`, `mtptui audit`) skip a line they cannot use, count it and
say so; a log that cannot be read at all is one line and exit 1, never a traceback."""

from __future__ import annotations

import json
import os

import pytest

from mtptui.control.audit import AuditError, read_audit

GOOD = {"id": "a1", "time": 1_800_000_000, "user": "ops@box", "host": "gpu1", "unit": "sglang.service",
        "action": "apply", "profile": "mtp3", "result": "applied", "exit_code": 0, "message": "verified",
        "exec_start_before": ["python3", "-m", "sglang.launch_server"], "dropin_before": None,
        "phases": [{"phase": "lock", "state": "ok", "detail": "", "elapsed_s": 0.2}]}
BAD_FIELDS = [
    {"time": "yesterday"}, {"time": 1e300}, {"time": float("nan")}, {"time": True}, {"result": ["applied"]},
    {"host": 7}, {"exit_code": "0"}, {"phases": "lock ok"}, {"phases": [{"phase": 1}]}, {"phases": [["lock"]]},
    {"phases": [{"phase": "lock", "elapsed_s": "0.2"}]}, {"phases": [{"phase": "lock", "detail": {"x": 1}}]},
    {"exec_start_before": "python3 -m sglang"}, {"exec_start_after": [1, 2]}, {"id": ["a"]}, {"message": {"m": 1}},
]
BAD_LINES = [json.dumps({**GOOD, "id": f"b{i}", **bad}) for i, bad in enumerate(BAD_FIELDS)] + [
    "not json", "[1, 2]", '"a string"', "{\"id\": \"cut", "null"]


def write(path, lines):
    path.write_text("".join(x + "\n" for x in lines))


def test_bad_lines_are_skipped_and_counted(tmp_path):
    log = tmp_path / "audit.jsonl"
    later = {**GOOD, "id": "a2", "time": 1_800_000_100, "phases": None, "exec_start_after": None}
    write(log, [json.dumps(GOOD), *BAD_LINES, "", json.dumps(later)])
    got = read_audit(log)
    assert [e["id"] for e in got] == ["a1", "a2"]
    assert got.bad == len(BAD_LINES) and got.bad_note() == f"{len(BAD_LINES)} bad lines skipped"
    write(log, [json.dumps(GOOD), "not json"])
    assert read_audit(log).bad_note() == "1 bad line skipped"
    write(log, [json.dumps(GOOD)])
    assert read_audit(log).bad == 0 and read_audit(log).bad_note() is None
    assert read_audit(tmp_path / "none.jsonl") == [] and read_audit(tmp_path / "none.jsonl").bad == 0


def test_a_bad_last_word_leaves_the_action_as_its_start_said(tmp_path):
    log = tmp_path / "audit.jsonl"
    write(log, [json.dumps({**GOOD, "result": "running"}), json.dumps({**GOOD, "time": "later"})])
    got = read_audit(log)
    assert [e["result"] for e in got] == ["running"] and got.bad == 1


def test_a_directory_or_an_unreadable_log_is_an_audit_error(tmp_path):
    with pytest.raises(AuditError, match="is a directory, not an audit log"):
        read_audit(tmp_path)
    if os.geteuid() != 0:  # root reads anything
        log = tmp_path / "audit.jsonl"
        log.write_text("{}\n")
        log.chmod(0)
        with pytest.raises(AuditError, match="cannot read the audit log: Permission denied"):
            read_audit(log)






