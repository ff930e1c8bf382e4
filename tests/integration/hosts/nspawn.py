"""Real systemd + journald + sshd hosts: systemd-nspawn containers, each in its own network namespace.

Container k of a run gets the netns `mtp<S>-h<k>` and a veth pair 10.231.S.(4k+1) (this side) /
10.231.S.(4k+2) (the container), a /30. S is a slot number held with a lock file for the whole
run, so two runs on one machine (a developer's and a helper's) never share names or addresses.
Every container boots the cached rootfs with --volatile=overlay (writes are thrown away), the
project bind-mounted read-only at /opt/mtptui and the run's test keys at /mtptui-test.

Teardown is robust to a failed test and to a crashed earlier run of the same slot: it stops the
containers by pid, deletes their veths and netns, and removes the cgroups nspawn leaves behind.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

RUN_DIR = Path("/run/mtptui-test")
CGROUP_ROOTS = (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup/systemd"))
PROJECT = Path(__file__).resolve().parents[3]


def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(argv, check=check, capture_output=True, text=True)


@dataclass
class Keys:
    """The run's client key, authorized_keys (mounted into every container) and known_hosts."""

    dir: Path
    identity: Path = field(init=False)
    known_hosts: Path = field(init=False)
    host_key_line: str = ""

    def __post_init__(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.dir, 0o755)
        self.identity = self.dir / "id_ed25519"
        self.known_hosts = self.dir / "known_hosts"
        if not self.identity.exists():
            sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "mtptui-test", "-f",
               str(self.identity))
        auth = self.dir / "authorized_keys"
        auth.write_text((self.dir / "id_ed25519.pub").read_text())
        os.chmod(auth, 0o644)  # sshd reads it as the logging-in user

    def trust(self, rootfs: Path, addresses: list[str]) -> None:
        """known_hosts with the rootfs's own host key for each address (all containers share it)."""
        pub = (rootfs / "etc/ssh/ssh_host_ed25519_key.pub").read_text().split()
        self.host_key_line = f"{pub[0]} {pub[1]}"
        self.known_hosts.write_text("".join(f"{a} {self.host_key_line}\n" for a in addresses))


@dataclass
class TestHost:
    cluster: "Cluster"
    index: int
    proc: subprocess.Popen | None = None

    @property
    def machine(self) -> str:
        return f"mtp{self.cluster.slot}-h{self.index}"

    @property
    def netns(self) -> str:
        return self.machine

    @property
    def veth(self) -> str:
        return f"mtp{self.cluster.slot}v{self.index}"

    @property
    def peer(self) -> str:
        return f"mtp{self.cluster.slot}c{self.index}"

    @property
    def address(self) -> str:
        return f"10.231.{self.cluster.slot}.{4 * self.index + 2}"

    @property
    def gateway(self) -> str:
        return f"10.231.{self.cluster.slot}.{4 * self.index + 1}"

    def ssh_argv(self, command: str, user: str = "root") -> list[str]:
        k = self.cluster.keys
        # ConnectTimeout covers the banner: a host whose CPUs a real vLLM under traffic holds sent it after 3 s
        return ["ssh", "-F", "/dev/null", "-i", str(k.identity), "-o", "BatchMode=yes",
                "-o", f"UserKnownHostsFile={k.known_hosts}", "-o", "StrictHostKeyChecking=yes",
                "-o", "ConnectTimeout=15", "-o", "LogLevel=ERROR", f"{user}@{self.address}", command]

    def ssh(self, command: str | list[str], user: str = "root", check: bool = True,
            timeout: float = 60) -> subprocess.CompletedProcess:
        """Runs a command in the container with the plain OpenSSH client (independent of mtptui)."""
        if isinstance(command, list):
            command = shlex.join(command)
        r = subprocess.run(self.ssh_argv(command, user), capture_output=True, text=True,
                           timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"{self.machine}: {command!r} -> {r.returncode}: {r.stderr.strip()}")
        return r

    def link(self, up: bool) -> None:
        """Cuts (or restores) the host's cable: its end of the veth goes down inside its netns.
        Packets then vanish silently, as on a real cut: only keepalives can tell."""
        sh("ip", "-n", self.netns, "link", "set", self.peer, "up" if up else "down")

    # --- lifecycle -------------------------------------------------------------------------------

    def _network(self) -> None:
        sh("ip", "netns", "add", self.netns)
        sh("ip", "link", "add", self.veth, "type", "veth", "peer", "name", self.peer)
        sh("ip", "link", "set", self.peer, "netns", self.netns)
        sh("ip", "addr", "add", f"{self.gateway}/30", "dev", self.veth)
        sh("ip", "link", "set", self.veth, "up")
        sh("ip", "-n", self.netns, "addr", "add", f"{self.address}/30", "dev", self.peer)
        sh("ip", "-n", self.netns, "link", "set", self.peer, "up")
        sh("ip", "-n", self.netns, "link", "set", "lo", "up")

    def _cgroups(self) -> list[Path]:
        return [root / "mtptui-test" / self.machine for root in CGROUP_ROOTS if root.exists()]

    def boot(self) -> None:
        self._network()
        groups = self._cgroups()
        for g in groups:
            g.mkdir(parents=True, exist_ok=True)

        def own_cgroup() -> None:
            # nspawn --keep-unit makes `payload` and `supervisor` below its own cgroup; a cgroup
            # per container keeps two containers from sharing them, and teardown simple.
            pid = str(os.getpid())
            for g in groups:
                (g / "cgroup.procs").write_text(pid)

        log = open(self.cluster.dir / f"{self.machine}.log", "w")  # noqa: SIM115
        self.proc = subprocess.Popen(
            ["systemd-nspawn", "-D", str(self.cluster.rootfs), "--volatile=overlay", "-b",
             "--register=no", "--keep-unit", "--console=pipe",
             f"--network-namespace-path=/run/netns/{self.netns}", f"--machine={self.machine}",
             f"--bind-ro={PROJECT}:/opt/mtptui", f"--bind-ro={self.cluster.keys.dir}:/mtptui-test",
             *(f"--bind-ro={b}" for b in self.cluster.binds)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            preexec_fn=own_cgroup)
        log.close()
        self.cluster.remember_pid(self.proc.pid)

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.time() + timeout
        last = ""
        while time.time() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"{self.machine}: systemd-nspawn exited {self.proc.returncode}: "
                                   f"see {self.cluster.dir / (self.machine + '.log')}")
            try:
                r = self.ssh("systemctl is-system-running --wait", check=False, timeout=30)
            except subprocess.TimeoutExpired:
                continue
            if r.stdout.strip() in ("running", "degraded"):
                return
            last = (r.stdout + r.stderr).strip()
            time.sleep(0.2)
        raise RuntimeError(f"{self.machine}: not up after {timeout:.0f}s ({last})")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # nspawn halts the container's systemd
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        sh("ip", "link", "del", self.veth, check=False)
        sh("ip", "netns", "del", self.netns, check=False)
        for g in self._cgroups():
            remove_cgroup(g)


def remove_cgroup(path: Path) -> None:
    """rmdir a cgroup tree bottom-up (cgroup dirs cannot be removed with their children).

    A container whose nspawn was killed leaves its systemd and services running in the tree,
    reparented to the machine's init: those are ended first, or they would run on unseen."""
    if not path.exists():
        return
    dirs = sorted((p for p in path.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)) + [path]
    for _ in range(50):
        pids = []
        for d in dirs:
            try:
                pids += [int(x) for x in (d / "cgroup.procs").read_text().split()]
            except OSError:
                pass
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.1)
    for d in dirs[:-1]:
        try:
            d.rmdir()
        except OSError:
            pass
    try:
        path.rmdir()
    except OSError:
        pass


class Cluster:
    """A run's slot, keys and containers."""

    SLOTS = 32

    def __init__(self, rootfs: Path, binds: tuple[Path, ...] = ()) -> None:
        self.rootfs = rootfs
        self.binds = binds  # more directories every container sees read-only at the same path
        RUN_DIR.mkdir(parents=True, exist_ok=True)
        self.slot, self._lock = self._take_slot()
        self.dir = RUN_DIR / f"slot{self.slot}"
        self.dir.mkdir(exist_ok=True)
        self._clean_leftovers()
        self.keys = Keys(self.dir / "keys")
        self.hosts: list[TestHost] = []
        # Addresses of the slot that no container has (and veths that are down) fail here, at
        # once, rather than following the default route off the machine.
        sh("ip", "route", "replace", "unreachable", self.subnet)

    @property
    def subnet(self) -> str:
        return f"10.231.{self.slot}.0/24"

    def unused_address(self) -> str:
        """An address of this run's subnet that no host has: connecting to it fails at once."""
        return f"10.231.{self.slot}.254"

    def _take_slot(self):
        for s in range(self.SLOTS):
            f = open(RUN_DIR / f"slot{s}.lock", "w")  # noqa: SIM115
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.close()
                continue
            return s, f
        raise RuntimeError(f"all {self.SLOTS} test-host slots are taken (see {RUN_DIR})")

    def remember_pid(self, pid: int) -> None:
        with open(self.dir / "nspawn.pids", "a") as f:
            f.write(f"{pid}\n")

    def _clean_leftovers(self) -> None:
        """What a crashed earlier run of this slot left: its nspawn pids, netns, veths, cgroups."""
        pids = self.dir / "nspawn.pids"
        if pids.exists():
            for line in pids.read_text().split():
                pid = int(line)
                try:
                    if "systemd-nspawn" in Path(f"/proc/{pid}/cmdline").read_text():
                        os.kill(pid, signal.SIGKILL)
                except (OSError, ValueError):
                    pass
            pids.unlink()
        prefix = f"mtp{self.slot}-"
        for ns in sh("ip", "netns", "list", check=False).stdout.split("\n"):
            name = ns.split(" ")[0]
            if name.startswith(prefix):
                sh("ip", "netns", "del", name, check=False)
        for line in sh("ip", "-o", "link", "show", check=False).stdout.splitlines():
            name = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
            if name.startswith(f"mtp{self.slot}v"):
                sh("ip", "link", "del", name, check=False)
        for root in CGROUP_ROOTS:
            for g in (root / "mtptui-test").glob(f"mtp{self.slot}-h*"):
                remove_cgroup(g)
        sh("ip", "route", "del", "unreachable", self.subnet, check=False)

    def start(self, n: int, first: int = 1) -> list[TestHost]:
        new = [TestHost(self, i) for i in range(first, first + n)]
        self.hosts += new
        self.keys.trust(self.rootfs, [h.address for h in self.hosts])
        for h in new:
            h.boot()
        for h in new:
            h.wait_ready()
        return new

    def stop(self) -> None:
        for h in self.hosts:
            try:
                h.stop()
            except Exception as e:  # noqa: BLE001 - teardown goes on for the other hosts
                print(f"teardown of {h.machine}: {e}")
        self.hosts = []
        pids = self.dir / "nspawn.pids"
        if pids.exists():
            pids.unlink()
        sh("ip", "route", "del", "unreachable", self.subnet, check=False)
        self._lock.close()
