"""A configured host's unit journal, followed over SSH (see transport/ssh.py for how)."""

from __future__ import annotations

import getpass

from mtptui.config import HostConfig
from mtptui.sources.backoff import Backoff
from mtptui.sources.journal import JournalSource
from mtptui.transport.process import StreamedProcess
from mtptui.transport.ssh import SshTransport


class SshJournalSource(JournalSource):
    def __init__(self, host: HostConfig, *, since: str | None = None,
                 lines: int | None = None) -> None:
        super().__init__(host.name, host.unit, sudo=host.sudo, since=since,
                         lines=host.lines if lines is None else lines,
                         extra=host.journalctl_args,
                         backoff=Backoff(host.reconnect_initial, host.reconnect_max))
        self.config = host
        self.label = f"ssh {host.name}"
        self.transport = SshTransport(host)

    @property
    def via(self) -> str:
        d = self.config.describe()
        return "" if d == self.config.name else d

    @property
    def where(self) -> str:
        return f"{self.config.name} ({self.via})" if self.via else self.config.name

    @property
    def who(self) -> str:
        if self.transport.conn is not None:
            user = self.transport.conn.get_extra_info("username")
            if isinstance(user, str) and user:
                return user
        return self.config.user or getpass.getuser()

    async def open(self, argv: list[str]) -> StreamedProcess:
        if self.transport.conn is None:
            await self.transport.connect()
        return await self.transport.stream(argv)

    async def drop_connection(self) -> None:
        await self.transport.close()
