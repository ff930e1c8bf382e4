"""The one type of error a user can put right: a config, a name, a file, a host that cannot be
reached. Raised anywhere, as a subclass that says what went wrong; `mtptui.cli.main` prints it
once, as one line (`mtptui COMMAND: message`), and exits with its code. Nothing else of mtptui is
imported here: every layer may raise one."""

from __future__ import annotations

RUNTIME = 1  # the host, the file or the server said no
USAGE = 2  # the command line or the config is wrong


class UserError(Exception):
    """str(e) is one line for the user; `exit_code` the command's exit status."""

    exit_code = RUNTIME

    def __init__(self, message: str = "", *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(UserError):
    """A bad value on the command line or in the config."""

    exit_code = USAGE
