"""A real Docker engine of the tests' own: Debian's dockerd (20.10) on its own socket, data root
and exec root under a temp directory (never another's daemon), the `overlay2` storage driver where
the kernel and the file system under the data root allow it (a container costs a mount, where
`vfs` copies the whole image for each container made and deletes it on rm), else `vfs` (no
overlay mounts needed; one warning says so), `--iptables=false --bridge=none` (it leaves this
machine's network alone). Its one image is the container hosts' debootstrap root fs (tests/integration/hosts/
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
import warnings
from pathlib import Path

IMAGE = "mtptui-test:rootfs"
PROJECT = Path(__file__).resolve().parents[2]
START_S = 60.0
DRIVERS = ("overlay2", "vfs")  # the first that starts; vfs needs nothing of the kernel
DATA_TMPFS = "6g"  # a bound on the data root's tmpfs (it takes memory as written: an image, ~150 MB)
# Not in the image: what a container of the simulator never reads. vfs copies the whole image for
# each container made (and deletes it on rm), so a third smaller is each create's and rm's time.
LEFT_OUT = ("proc", "sys", "dev", "usr/share/doc", "usr/share/man", "usr/share/locale", "usr/share/info",
            "var/cache", "var/lib/apt", "usr/lib/x86_64-linux-gnu/perl-base", "usr/lib/x86_64-linux-gnu/gconv")  # a busy 2-core machine: dockerd is ready in about 2 s when idle


class DriverRefused(RuntimeError):
    """dockerd exited at start as it could not have the storage driver asked."""


class Dockerd:
    def __init__(self, root: Path, drivers: tuple[str, ...] = DRIVERS) -> None:
        self.root = root
        self.drivers = drivers
        self.sock = root / "docker.sock"
        self.host = f"unix://{self.sock}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = root / "dockerd.log"
        self.driver = ""  # the storage driver it runs with, once started

    @property
    def env(self) -> dict[str, str]:
        """The environment a docker client (and mtptui, and docker-compose) talks to this daemon with."""
        return {**os.environ, "DOCKER_HOST": self.host}

    def start(self) -> None:
        """The daemon on the first of DRIVERS it starts with: dockerd checks a driver as it starts
        (overlay2 mounts a test overlay under the data root) and exits when it cannot have it."""
        for driver in self.drivers:
            try:
                self._start(driver)
            except DriverRefused as e:
                warnings.warn(f"dockerd: storage driver {driver} refused ({e}); falling back to {self.drivers[-1]}",
                              stacklevel=2)
                continue
            self.driver = driver
            return

    def _start(self, driver: str) -> None:
        data = self.root / "data"
        if data.is_mount():
            subprocess.run(["umount", "-l", str(data)], capture_output=True)  # a refused driver's leftovers
        shutil.rmtree(data, ignore_errors=True)
        data.mkdir(parents=True)
        # The data root on a tmpfs of its own: stop() unmounts it, where removing the image's files
        # from this machine's disk (ext4 mounted `discard`: each delete is a discard) took 5 to 15 s
        # of each session's end; overlay2 runs on a tmpfs. Where it cannot be mounted, the disk.
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DATA_TMPFS},mode=0710", "mtptui-dockerd", str(data)],
                       capture_output=True)
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                ["dockerd", "--host", self.host, "--data-root", str(data),
                 "--exec-root", str(self.root / "exec"), "--pidfile", str(self.root / "docker.pid"),
                 "--storage-driver", driver, "--iptables=false", "--ip-masq=false", "--bridge=none"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + START_S
        while True:
            if self.proc.poll() is not None:
                said = self.log.read_text()
                if driver != self.drivers[-1] and "graphdriver" in said:
                    # `error initializing graphdriver: driver not supported` (20.10's words)
                    self.proc = None
                    raise DriverRefused(said.strip().splitlines()[-1][-200:])
                raise RuntimeError(f"dockerd exited {self.proc.returncode}: {said[-2000:]}")
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
        """The hosts' root fs as an image (about 3 s)."""
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
        """Every container removed, then the daemon stopped by its pid (SIGTERM, then SIGKILL),
        its mounts undone (the data root's tmpfs: the image and its layers gone with it; its netns,
        a killed daemon's overlays) and its directories removed. Safe to call again."""
        if self.proc is not None and self.proc.poll() is None:
            ids = self.docker("ps", "-aq", check=False).stdout.split()
            if ids:
                self.docker("rm", "-f", *ids, check=False)
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        # dockerd's own mounts (its netns) may outlive it: deepest first, the data root's tmpfs last
        mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
        for m in sorted((m for m in mounts if m.startswith(f"{self.root}/")), key=len, reverse=True):
            subprocess.run(["umount", "-l", m], capture_output=True)
        # never across into a file system still mounted under it (a bind mount of the project)
        subprocess.run(["rm", "-rf", "--one-file-system", "--", str(self.root)], capture_output=True)
        self.proc = None
