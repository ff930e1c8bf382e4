"""This machine's unit journal, followed through an asyncio subprocess: `mtptui local`."""

from __future__ import annotations

import getpass

from mtptui.sources.backoff import Backoff
from mtptui.sources.journal import JournalSource
from mtptui.transport import local
from mtptui.transport.process import StreamedProcess


class LocalJournalSource(JournalSource):
    def __init__(self, unit: str, *, host: str | None = None, sudo: bool = False,
                 since: str | None = None, lines: int = 200, extra: tuple[str, ...] = (),
                 backoff: Backoff | None = None) -> None:
        super().__init__(host or "local", unit, sudo=sudo, since=since, lines=lines, extra=extra,
                         backoff=backoff)
        self.label = f"local {unit}"

    @property
    def where(self) -> str:
        return "this machine"

    @property
    def who(self) -> str:
        try:
            return getpass.getuser()
        except (KeyError, OSError):
            return "this user"

    async def open(self, argv: list[str]) -> StreamedProcess:
        return await local.start(argv)
