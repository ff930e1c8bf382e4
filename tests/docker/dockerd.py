"""A real Docker engine of the tests' own: Debian's dockerd (20.10) on its own socket, data root
and exec root under a temp directory (never another's daemon), the `vfs` storage driver (no
overlay mounts needed), `--iptables=false --bridge=none` (it leaves this machine's network
alone). Its one image is the container hosts' debootstrap root fs (tests/integration/hosts/
rootfs.py), imported in a few seconds; the project is bind-mounted read-only at /opt/mtptui, as
in the nspawn hosts, so code changes need no new image.

Recipe measured in shared/reference/real-engines.md.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

IMAGE = "mtptui-test:rootfs"
PROJECT = Path(__file__).resolve().parents[2]
START_S = 60.0
# Not in the image: what a container of the simulator never reads. vfs copies the whole image for
# each container made (and deletes it on rm), so a third smaller is each create's and rm's time.
LEFT_OUT = ("proc", "sys", "dev", "usr/share/doc", "usr/share/man", "usr/share/locale", "usr/share/info",
            "var/cache", "var/lib/apt", "usr/lib/x86_64-linux-gnu/perl-base", "usr/lib/x86_64-linux-gnu/gconv")  # a busy 2-core machine: dockerd is ready in about 2 s when idle


class Dockerd:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.sock = root / "docker.sock"
        self.host = f"unix://{self.sock}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = root / "dockerd.log"

    @property
    def env(self) -> dict[str, str]:
        """The environment a docker client (and mtptui, and docker-compose) talks to this daemon with."""
        return {**os.environ, "DOCKER_HOST": self.host}

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                ["dockerd", "--host", self.host, "--data-root", str(self.root / "data"),
                 "--exec-root", str(self.root / "exec"), "--pidfile", str(self.root / "docker.pid"),
                 "--storage-driver", "vfs", "--iptables=false", "--ip-masq=false", "--bridge=none"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + START_S
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"dockerd exited {self.proc.returncode}: {self.log.read_text()[-2000:]}")
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(str(self.sock))
                if self.docker("version", check=False).returncode == 0:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"dockerd not ready in {START_S:.0f} s: {self.log.read_text()[-2000:]}")
            time.sleep(0.1)

    def docker(self, *args: str, check: bool = True, input: bytes | None = None,
               timeout: float = 120) -> subprocess.CompletedProcess[str]:
        r = subprocess.run(["docker", *args], env=self.env, capture_output=True, timeout=timeout,
                           input=input.decode() if input is not None else None, text=True)
        if check and r.returncode != 0:
            raise RuntimeError(f"docker {' '.join(args)}: {r.stderr.strip()}")
        return r

    def import_rootfs(self, rootfs: Path) -> str:
        """The hosts' root fs as an image (about 3 s with vfs)."""
        left_out = [f"--exclude=./{p}" for p in LEFT_OUT]
        tar = subprocess.Popen(["tar", "-C", str(rootfs), *left_out, "-c", "."], stdout=subprocess.PIPE)
        r = subprocess.run(["docker", "import", "-", IMAGE], stdin=tar.stdout, env=self.env,
                           capture_output=True, text=True, timeout=300)
        assert tar.stdout is not None
        tar.stdout.close()
        tar.wait()
        if r.returncode != 0:
            raise RuntimeError(f"docker import: {r.stderr.strip()}")
        return IMAGE

    def stop(self) -> None:
        """Every container removed, then the daemon stopped by its pid (SIGTERM, then SIGKILL)
        and its directories removed; vfs leaves no mounts behind but the exec root's."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            ids = self.docker("ps", "-aq", check=False).stdout.split()
            if ids:
                self.docker("rm", "-f", *ids, check=False)
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        # dockerd's own mounts (its netns) may outlive it: deepest first, then the directories
        mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
        for m in sorted((m for m in mounts if m.startswith(f"{self.root}/")), key=len, reverse=True):
            subprocess.run(["umount", "-l", m], capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)
        self.proc = None
