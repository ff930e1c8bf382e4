"""The SSH transport against a real OpenSSH sshd on loopback: host keys, auth, ~/.ssh/config with
ProxyJump, argv quoting, and that a streamed remote command dies with its channel."""

from __future__ import annotations

import asyncio
import os
import socket
import time
from pathlib import Path

import asyncssh
import pytest

from mtptui.config import HostConfig
from mtptui.transport.errors import TransportError
from mtptui.transport.ssh import SshTransport


def cfg(sshd, **kw) -> HostConfig:
    v = dict(name="lo", address="127.0.0.1", port=sshd.port, user=sshd.user, identity=sshd.identity,
             known_hosts=sshd.known_hosts, ssh_config="/dev/null", unit="u", connect_timeout=3.0)
    v.update(kw)
    return HostConfig(**v)


async def read_all(proc) -> bytes:
    out = b""
    while data := await proc.read():
        out += data
    return out


def procs_with_args(*args: str) -> list[int]:
    want = "\0".join(args).encode()
    found = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if want in (p / "cmdline").read_bytes():
                    found.append(int(p.name))
            except OSError:
                pass
    return found


HOSTILE = ["plain", "x; touch /tmp/mtptui-pwned", "$(touch /tmp/mtptui-pwned)", "`id`",
           "a'b\"c\\d", "--help", "*", "  spaced  ", "ünï€ode"]


async def test_argv_reaches_the_host_item_for_item(sshd):
    t = SshTransport(cfg(sshd))
    await t.connect()
    try:
        proc = await t.stream(["printf", "%s\\n", *HOSTILE])
        out = (await read_all(proc)).decode()
        assert await proc.wait() == 0
        assert out == "".join(f"{v}\n" for v in HOSTILE)
        r = await t.run(["printf", "[%s]", *HOSTILE])
        assert r.stdout == "".join(f"[{v}]" for v in HOSTILE)
    finally:
        await t.close()
    assert not os.path.exists("/tmp/mtptui-pwned")


async def test_closing_the_stream_stops_the_remote_command(sshd):
    marker = f"{time.time() % 1000 + 1000:.3f}"
    t = SshTransport(cfg(sshd))
    await t.connect()
    try:
        proc = await t.stream(["sleep", marker])
        for _ in range(100):
            if procs_with_args("sleep", marker):
                break
            await asyncio.sleep(0.02)
        assert procs_with_args("sleep", marker), "the remote command did not start"
        await proc.close()
        for _ in range(150):
            if not procs_with_args("sleep", marker):
                break
            await asyncio.sleep(0.02)
        assert not procs_with_args("sleep", marker), "the remote command outlived its channel"

        # Control: the same without the wrapper lingers (what the wrapper is for).
        bare = await t.conn.create_process(f"sleep {marker}9")
        await asyncio.sleep(0.3)
        bare.close()
        await asyncio.sleep(0.5)
        left = procs_with_args("sleep", marker + "9")
        assert left, "expected a bare no-PTY command to outlive its channel"
        for pid in left:
            os.kill(pid, 9)
    finally:
        await t.close()


async def test_the_command_ending_ends_the_stream(sshd):
    t = SshTransport(cfg(sshd))
    await t.connect()
    try:
        proc = await t.stream(["sh", "-c", "echo out; echo err >&2; exit 3"])
        t0 = time.monotonic()
        assert await read_all(proc) == b"out\n"
        assert await proc.wait() == 3
        assert proc.stderr_text == "err"
        assert time.monotonic() - t0 < 3, "the watcher kept the channel open"
    finally:
        await t.close()


async def test_unknown_host_key_is_refused(sshd, tmp_path):
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    with pytest.raises(TransportError) as e:
        await SshTransport(cfg(sshd, known_hosts=str(empty))).connect()
    assert e.value.permanent and "unknown" in str(e.value) and "accept-new" in str(e.value)


async def test_changed_host_key_is_refused_even_with_accept_new(sshd, tmp_path):
    other = asyncssh.generate_private_key("ssh-ed25519").export_public_key("openssh").decode()
    kh = tmp_path / "known_hosts"
    kh.write_text(f"[127.0.0.1]:{sshd.port} {other}")
    for policy in ("strict", "accept-new"):
        with pytest.raises(TransportError) as e:
            await SshTransport(cfg(sshd, known_hosts=str(kh), host_key_policy=policy)).connect()
        assert e.value.permanent and "CHANGED" in str(e.value)
    assert kh.read_text() == f"[127.0.0.1]:{sshd.port} {other}", "a changed key must not be learned"


async def test_accept_new_learns_an_unknown_key_once(sshd, tmp_path):
    kh = tmp_path / "sub" / "known_hosts"
    t = SshTransport(cfg(sshd, known_hosts=str(kh), host_key_policy="accept-new"))
    await t.connect()
    await t.close()
    assert kh.read_text().split() == [f"[127.0.0.1]:{sshd.port}", *sshd.host_key.split()]
    # now known: a strict connect works
    t = SshTransport(cfg(sshd, known_hosts=str(kh)))
    await t.connect()
    await t.close()


async def test_policy_off_skips_the_check(sshd, tmp_path):
    t = SshTransport(cfg(sshd, known_hosts=str(tmp_path / "none"), host_key_policy="off"))
    await t.connect()
    await t.close()


async def test_refused_key_is_a_permanent_auth_failure(sshd, tmp_path):
    key = tmp_path / "stranger"
    key.write_bytes(asyncssh.generate_private_key("ssh-ed25519").export_private_key())
    with pytest.raises(TransportError) as e:
        await SshTransport(cfg(sshd, identity=str(key))).connect()
    assert e.value.permanent and "authentication failed" in str(e.value)


async def test_missing_identity_file(sshd, tmp_path):
    with pytest.raises(TransportError) as e:
        await SshTransport(cfg(sshd, identity=str(tmp_path / "nope"))).connect()
    assert e.value.permanent and "does not exist" in str(e.value)


async def test_nothing_listening_is_retryable(sshd):
    # A port of its own, held bound and not listening from the start: the host's sshd gone. Not the
    # sshd's port once it stops: another worker's server took it once (and reset the connection
    # instead of refusing it), and another's outgoing connection once (so it could not be held).
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        with pytest.raises(TransportError) as e:
            await SshTransport(cfg(sshd, port=held.getsockname()[1])).connect()
    assert not e.value.permanent and "refused" in str(e.value)


async def test_ssh_config_alias_identity_and_proxyjump(sshd, tmp_path):
    conf = tmp_path / "ssh_config"
    conf.write_text(
        f"Host jumpbox\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
        f"  IdentityFile {sshd.identity}\n  UserKnownHostsFile {sshd.known_hosts}\n\n"
        f"Host gpu-behind\n  HostName 127.0.0.1\n  Port {sshd.port}\n  User {sshd.user}\n"
        f"  IdentityFile {sshd.identity}\n  UserKnownHostsFile {sshd.known_hosts}\n"
        f"  ProxyJump jumpbox\n")
    h = HostConfig(name="gpu", address="gpu-behind", unit="u", ssh_config=str(conf),
                   connect_timeout=3.0)
    t = SshTransport(h)
    await t.connect()
    try:
        r = await t.run(["echo", "through"])
        assert r.stdout == "through\n"
    finally:
        await t.close()
    await asyncio.sleep(0.2)
    log = (sshd.dir / "sshd.log").read_text()
    assert log.count("Accepted publickey") == 2, "expected the jump host and the target to log in"
