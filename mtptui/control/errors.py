"""Why an action cannot go on, in one line for the operator."""

from __future__ import annotations

from mtptui.errors import USAGE, UserError


class ControlError(UserError):
    """Nothing was changed, or the change cannot be judged: str(e) is one user-facing line."""


class LockedError(ControlError):
    """Another console holds the host's lock for this unit."""


class BadProfile(ControlError):
    """The profile cannot apply to this unit (SGLang would refuse it): a usage error, exit 2."""

    exit_code = USAGE
