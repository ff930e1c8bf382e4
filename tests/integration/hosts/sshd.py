"""A real OpenSSH sshd on 127.0.0.1 (any free port) for the current user and a fresh key: the
loopback host of the integration tier (`sshd` fixture) and of the container tier (a container
host over SSH, its sshd given the tests' own DOCKER_HOST with `extra`)."""

from __future__ import annotations

import getpass
import os
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

BINARY = "/usr/sbin/sshd"


@dataclass
class Sshd:
    dir: Path
    port: int
    proc: subprocess.Popen
    identity: str
    known_hosts: str
    host_key: str
    user: str
    log: IO[str]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(5)
        self.log.close()


def start(d: Path, extra: str = "") -> Sshd:
    """Starts sshd in directory d (made here); `extra`: more sshd_config lines."""
    d.mkdir()
    os.chmod(d, 0o755)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "host_ed25519")],
                   check=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "client")],
                   check=True)
    (d / "authorized_keys").write_text((d / "client.pub").read_text())
    os.chmod(d / "authorized_keys", 0o644)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (d / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_ed25519\nPidFile {d}/sshd.pid\n"
        f"AuthorizedKeysFile {d}/authorized_keys\nStrictModes no\nUsePAM no\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        f"PermitRootLogin prohibit-password\nAllowTcpForwarding yes\n{extra}")
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", exist_ok=True)
    log = open(d / "sshd.log", "w")  # noqa: SIM115
    proc = subprocess.Popen([BINARY, "-f", str(d / "sshd_config"), "-D", "-e"],
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"sshd did not start: {(d / 'sshd.log').read_text()}")
            time.sleep(0.02)
    host_pub = (d / "host_ed25519.pub").read_text().split()
    (d / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n")
    return Sshd(dir=d, port=port, proc=proc, identity=str(d / "client"), known_hosts=str(d / "known_hosts"),
                host_key=f"{host_pub[0]} {host_pub[1]}", user=getpass.getuser(), log=log)
