"""Shared by all test tiers: how a test says its environment is missing.

Tests that need root, sshd or systemd-nspawn skip with the reason on a developer's machine, but in
CI (CI=true) such a test must run: there a missing prerequisite fails it instead.
"""

from __future__ import annotations

import os

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


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
