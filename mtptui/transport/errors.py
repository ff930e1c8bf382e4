"""Why a command could not be run or streamed, said in one line, and whether retrying can help."""

from __future__ import annotations

from mtptui.errors import UserError


class TransportError(UserError):
    """`permanent`: retrying cannot help (bad host key, refused login, no journal rights).
    Otherwise the host may come back (down, unreachable, connection lost) and a retry is right."""

    def __init__(self, message: str, *, permanent: bool) -> None:
        super().__init__(message)
        self.permanent = permanent

    @property
    def message(self) -> str:
        return str(self)
