"""Commands on a remote host over asyncssh, as the operator already logs in.

Honours ~/.ssh/config (Host aliases, HostName, User, Port, IdentityFile, ProxyJump,
UserKnownHostsFile), the agent (SSH_AUTH_SOCK) and keepalives. Host keys are checked against
known_hosts: an unknown or changed key is refused, an unknown one is learned only under
`host_key_policy = "accept-new"`, and `"off"` (never the default) skips the check.

Streamed commands run without a PTY (so stderr stays apart and a 10 MB line passes untouched),
under a small POSIX sh wrapper: sshd closes a no-PTY command's stdin when the channel closes but
does not signal it, so the wrapper waits for that EOF and then stops the command. Without it a
quiet `journalctl -f` lingers on the host until its next write.
"""

from __future__ import annotations

import asyncio
import errno
import os
import shlex
import socket
import warnings
from collections.abc import Sequence
from typing import Any

from cryptography.utils import CryptographyDeprecationWarning

with warnings.catch_warnings():
    # cryptography 51 deprecates DSA, whose key types asyncssh names as it loads: a warning on
    # stderr of every command that loads SSH, about no key the operator chose (and a second line
    # where a command's error is one line)
    warnings.simplefilter("ignore", CryptographyDeprecationWarning)
    import asyncssh

from mtptui.config import HostConfig
from mtptui.files import MIB, size_text
from mtptui.transport.aio import wait_for
from mtptui.transport.errors import TransportError
from mtptui.transport.process import CompletedCommand, StreamedProcess
from mtptui.transport.tunnel import LOOPBACK, Forward

KEY_LIMIT = 1 * MIB  # an identity file (--identity, identity =): asyncssh reads it whole

# "$@" is the real command. It runs in its own session (setsid) so that a `sudo` in front relays
# our TERM (sudo ignores signals sent from its own process group); its stdin is /dev/null. The
# watcher holds the channel's stdin (fd 3) and stops the command at EOF, i.e. when the channel
# closes. Every fd of the watcher points away from the channel's stdout/stderr, so the channel
# still closes as soon as the command ends by itself.
FOLLOW_WRAPPER = (
    'exec 3<&0 </dev/null; '
    'setsid "$@" & p=$!; '
    '{ cat <&3; kill -TERM "$p"; } >/dev/null 2>&1 & w=$!; '
    'exec 3<&-; '
    'wait "$p"; rc=$?; '
    'kill "$w" 2>/dev/null; '
    'exit "$rc"'
)


def wrapped_command(argv: list[str]) -> str:
    """The command line sshd hands to the login shell: every value quoted by shlex.join."""
    return shlex.join(["sh", "-c", FOLLOW_WRAPPER, "mtptui-follow", *argv])


class SshProcess(StreamedProcess):
    def __init__(self, proc: asyncssh.SSHClientProcess[bytes]) -> None:
        super().__init__()
        self.proc = proc
        self._stderr_task = asyncio.ensure_future(self._pump_stderr())

    async def _pump_stderr(self) -> None:
        try:
            while data := await self.proc.stderr.read(1 << 14):
                self._add_stderr(data)
        except (asyncssh.Error, OSError):
            pass

    async def read(self, n: int = 1 << 16) -> bytes:
        try:
            return await self.proc.stdout.read(n)
        except asyncssh.Error as e:
            raise TransportError(f"connection lost: {e.reason or type(e).__name__}",
                                 permanent=False) from None
        except OSError as e:
            raise TransportError(f"connection lost: {e.strerror or e}", permanent=False) from None

    async def wait(self) -> int | None:
        try:
            await asyncio.wait_for(self.proc.wait_closed(), 5.0)
        except (asyncio.TimeoutError, asyncssh.Error, OSError):
            return None
        try:
            await asyncio.wait_for(asyncio.shield(self._stderr_task), 1.0)
        except asyncio.TimeoutError:
            pass
        # exit_status is None when the channel closed without one (connection lost, signal)
        return self.proc.exit_status if self.proc.exit_signal is None else None

    async def close(self) -> None:
        self.proc.close()
        try:
            await asyncio.wait_for(self.proc.wait_closed(), 3.0)
        except (asyncio.TimeoutError, asyncssh.Error, OSError):
            pass
        self._stderr_task.cancel()


class SshTransport:
    """One SSH connection to one configured host. Once connected, a use after the link was lost
    (keepalives gave up on an idle connection) connects again first: one try a use, so a key
    pressed after a link blip acts instead of failing until the console is restarted."""

    def __init__(self, host: HostConfig) -> None:
        self.host = host
        self.conn: asyncssh.SSHClientConnection | None = None
        self._wanted = False  # connect() was called and close() not since
        self._reconnecting = asyncio.Lock()

    # --- connecting ----------------------------------------------------------------------------

    def _config_paths(self) -> Sequence[str]:
        return [self.host.ssh_config] if self.host.ssh_config else ()

    def _options(self, known_hosts: asyncssh.known_hosts.KnownHostsArg) -> dict[str, Any]:
        h = self.host
        opts: dict[str, Any] = dict(
            config=self._config_paths(),
            known_hosts=known_hosts,
            connect_timeout=h.connect_timeout,
            keepalive_interval=h.keepalive_interval or 0,
            keepalive_count_max=h.keepalive_count_max,
        )
        if h.port:
            opts["port"] = h.port
        if h.user:
            opts["username"] = h.user
        if h.identity:
            opts["client_keys"] = [h.identity]
        return opts

    def _known_hosts_arg(self) -> asyncssh.known_hosts.KnownHostsArg:
        if self.host.host_key_policy == "off":
            return None
        path = self.host.known_hosts
        if not path:
            return ()
        # a configured file that does not exist yet knows no host (asyncssh would fail to open it)
        return path if os.path.exists(path) else asyncssh.import_known_hosts("")

    def _resolved(self) -> tuple[str, int]:
        """Host name and port after ~/.ssh/config (HostName, Port), as asyncssh will use them."""
        o = asyncssh.SSHClientConnectionOptions(config=self._config_paths(), host=self.host.target,
                                                port=self.host.port or ())
        return o.host, o.port

    def _known_hosts_files(self) -> list[str]:
        if self.host.known_hosts:
            return [self.host.known_hosts]
        default = os.path.expanduser("~/.ssh/known_hosts")
        return [default] if os.path.exists(default) else []

    def _host_is_known(self, host: str, port: int) -> bool:
        """Whether known_hosts holds any key (or CA) for this host: then a refusal means CHANGED."""
        files = self._known_hosts_files()
        if not files:
            return False
        try:
            addr = str(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][4][0])
        except OSError:
            addr = host
        try:
            result = asyncssh.read_known_hosts(files).match(host, addr, port)
        except (OSError, ValueError):
            return False
        return bool(result[0] or result[1])

    async def _learn_host_key(self, host: str, port: int) -> None:
        """accept-new: fetch the key once, append it to known_hosts, then connect as usual."""
        key = await asyncssh.get_server_host_key(self.host.target, self.host.port or (),
                                                 config=self._config_paths())
        if key is None:
            raise TransportError(f"{self.where}: the server sent no host key", permanent=True)
        path = (self.host.known_hosts or os.path.expanduser("~/.ssh/known_hosts"))
        pattern = host if port == 22 else f"[{host}]:{port}"
        os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
        with open(path, "a", encoding="ascii") as f:
            f.write(f"{pattern} {key.export_public_key('openssh').decode('ascii').strip()}\n")

    @property
    def where(self) -> str:
        return self.host.describe()

    async def connect(self) -> None:
        self._wanted = True
        h = self.host
        if h.identity and not os.path.exists(h.identity):
            raise TransportError(f"identity file {h.identity} does not exist", permanent=True)
        if h.identity and (not os.path.isfile(h.identity) or os.path.getsize(h.identity) > KEY_LIMIT):
            # asyncssh reads a key whole: /dev/zero would never end
            raise TransportError(f"identity file {h.identity}: not a key (a regular file of at most "
                                 f"{size_text(KEY_LIMIT)})", permanent=True)
        try:
            try:
                self.conn = await asyncssh.connect(h.target, **self._options(self._known_hosts_arg()))
            except asyncssh.HostKeyNotVerifiable:
                host, port = self._resolved()
                if self._host_is_known(host, port):
                    raise TransportError(
                        f"{self.where}: host key CHANGED for {host} (not the one in known_hosts); "
                        "refusing to connect: if the host was really reinstalled, remove the old "
                        f"key with ssh-keygen -R {shlex.quote(host if port == 22 else f'[{host}]:{port}')}",
                        permanent=True) from None
                if h.host_key_policy != "accept-new":
                    raise TransportError(
                        f"{self.where}: host key of {host} is unknown (not in known_hosts); refusing "
                        "to connect: check it and add it (ssh once by hand), or set "
                        'host_key_policy = "accept-new" for this host', permanent=True) from None
                await self._learn_host_key(host, port)
                self.conn = await asyncssh.connect(h.target, **self._options(self._known_hosts_arg()))
        except TransportError:
            raise
        except BaseException as e:  # noqa: BLE001 - translated, or re-raised below
            err = translate(e, self.where)
            if err is None:
                raise
            raise err from None

    async def _live(self) -> asyncssh.SSHClientConnection:
        """The connection, made again if the link under it was lost since. Raises TransportError."""
        conn = self.conn
        if conn is not None and not conn.is_closed():
            return conn
        assert self._wanted, "connect() first"
        async with self._reconnecting:
            if self.conn is None or self.conn.is_closed():
                self.conn = None
                await self.connect()
        assert self.conn is not None
        return self.conn

    async def close(self) -> None:
        self._wanted = False
        if self.conn is not None:
            self.conn.close()
            try:
                await asyncio.wait_for(self.conn.wait_closed(), 3.0)
            except (asyncio.TimeoutError, asyncssh.Error, OSError):
                pass
            self.conn = None

    # --- running -------------------------------------------------------------------------------

    async def stream(self, argv: list[str]) -> SshProcess:
        """Starts argv on the host; it is stopped when the returned process is closed."""
        conn = await self._live()
        try:
            proc = await conn.create_process(wrapped_command(argv), encoding=None)
        except (asyncssh.Error, OSError) as e:
            raise translate(e, self.where) or TransportError(str(e), permanent=False) from None
        return SshProcess(proc)

    async def run(self, argv: list[str], *, input: str | None = None,
                  timeout: float | None = 60.0) -> CompletedCommand:
        """Runs argv to its end (for short commands: systemctl, cat)."""
        conn = await self._live()
        try:
            # the timeout ours, not asyncssh's (asyncio.wait_for: a cancel could be lost, transport/aio)
            r = await wait_for(conn.run(shlex.join(argv), input=input, check=False), timeout)
        except asyncio.TimeoutError:
            raise TransportError(f"{self.where}: {shlex.join(argv)} took over {timeout:g}s",
                                 permanent=False) from None
        except (asyncssh.Error, OSError) as e:
            raise translate(e, self.where) or TransportError(str(e), permanent=False) from None
        return CompletedCommand(r.exit_status, str(r.stdout or ""), str(r.stderr or ""))


    async def forward(self, host: str, port: int) -> Forward:
        """A local port (127.0.0.1, picked by the system) forwarded over this connection to
        host:port as the remote host sees it. It lives as long as this connection."""
        conn = await self._live()
        try:
            listener = await conn.forward_local_port(LOOPBACK, 0, host, port)
        except (asyncssh.Error, OSError) as e:
            raise translate(e, self.where) or TransportError(str(e), permanent=False) from None

        async def close() -> None:
            listener.close()
            try:
                await asyncio.wait_for(listener.wait_closed(), 3.0)
            except (asyncio.TimeoutError, asyncssh.Error, OSError):
                pass

        return Forward(port=listener.get_port(), where=f"{host}:{port} on {self.host.name}, through SSH",
                       close=close, alive=lambda: self.conn is conn and not conn.is_closed())


def translate(e: BaseException, where: str) -> TransportError | None:
    """One line for an exception of asyncssh or the network; None for one that is not ours."""
    if isinstance(e, asyncssh.PermissionDenied):
        return TransportError(f"{where}: authentication failed (the server refused every key "
                              "offered: agent, identity, default keys)", permanent=True)
    if isinstance(e, asyncssh.HostKeyNotVerifiable):
        return TransportError(f"{where}: host key not verifiable: {e.reason}", permanent=True)
    if isinstance(e, asyncssh.KeyImportError):
        return TransportError(f"{where}: cannot read the identity key: {e}", permanent=True)
    if isinstance(e, asyncssh.ConnectionLost):
        return TransportError(f"{where}: connection lost ({e.reason})", permanent=False)
    if isinstance(e, asyncssh.Error):
        return TransportError(f"{where}: {e.reason or type(e).__name__}", permanent=False)
    if isinstance(e, (asyncio.TimeoutError, TimeoutError)):
        return TransportError(f"{where}: no answer (host down or unreachable; connect timed out)",
                              permanent=False)
    if isinstance(e, socket.gaierror):
        return TransportError(f"{where}: cannot resolve the host name ({e.strerror})", permanent=False)
    if isinstance(e, ConnectionRefusedError):
        return TransportError(f"{where}: connection refused (no sshd listening?)", permanent=False)
    if isinstance(e, OSError):
        if e.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EHOSTDOWN):
            return TransportError(f"{where}: unreachable ({e.strerror})", permanent=False)
        return TransportError(f"{where}: {e.strerror or e}", permanent=False)
    if isinstance(e, ValueError):
        # asyncssh raises ValueError for unusable options (an unreadable key, a bad config line)
        return TransportError(f"{where}: {e}", permanent=True)
    return None
