"""Every TUI test writes its audit log (MTPTUI_AUDIT_LOG) under its own tmp_path, never into the
user's state directory; a test that reads it asks for `audit`."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def audit(tmp_path, monkeypatch):
    path = tmp_path / "audit.jsonl"
    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(path))
    return path
