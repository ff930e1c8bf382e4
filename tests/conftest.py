"""Shared by all test tiers: how a test says its environment is missing.

Tests that need root, sshd or systemd-nspawn skip with the reason on a developer's machine, but in
CI (CI=true) such a test must run: there a missing prerequisite fails it instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# a compiled lane that is here but stale or does not load is an error in the tests, theirs and their
# children's (core/compiled.py), never a quiet fall back to the slower Python path
os.environ["MTPTUI_LANE_STRICT"] = "1"


def require(ok: object, reason: str) -> None:
    if ok:
        return
    if IN_CI:
        pytest.fail(f"CI must run this test, but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def need():
    """`need(condition, reason)`: skip (fail in CI) unless condition."""
    return require


@pytest.fixture(autouse=True)
def _every_notification(request, monkeypatch):
    """An app's notifications, every one, in `app.told` as (message, severity): Textual forgets one
    once its timeout has passed, and on a loaded machine a test can look after that. For the
    tiers that run apps only (the unit and process tiers never load Textual here)."""
    if "/tests/unit/" in str(request.node.path) or "/tests/process/" in str(request.node.path):
        return
    from textual.app import App

    notify = App.notify

    def recording(self, message, *args, **kwargs):
        severity = kwargs.get("severity", "information")
        self.__dict__.setdefault("told", []).append((str(message), severity))
        return notify(self, message, *args, **kwargs)

    monkeypatch.setattr(App, "notify", recording)


# The hostile tier's count of inputs tried (tests/hostile/conftest.py), summed over xdist's workers:
# under `make test` each worker runs its own files, and only this process writes the summary.
HOSTILE_TRIED: dict[str, int] = {}


HERE = Path(__file__).resolve().parent
TIERS = ("realcode", "engine", "docker")  # marked by their folder (pytest -m engine); the markers: pyproject.toml


def pytest_collection_modifyitems(items):
    for item in items:
        tier = item.path.relative_to(HERE).parts[0] if item.path.is_relative_to(HERE) else None
        if tier in TIERS:
            item.add_marker(tier)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    import json

    for name, n in json.loads(getattr(node, "workeroutput", {}).get("hostile_tried", "{}")).items():
        HOSTILE_TRIED[name] = HOSTILE_TRIED.get(name, 0) + n


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if HOSTILE_TRIED:
        terminalreporter.write_line(f"hostile tier: {sum(HOSTILE_TRIED.values())} inputs tried, on every worker: "
                                    + ", ".join(f"{k} {v}" for k, v in sorted(HOSTILE_TRIED.items())))
