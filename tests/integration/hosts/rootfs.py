"""The container hosts' root filesystem: Debian bookworm minbase with systemd, journald, sshd, sudo
and python3 (and libnuma1, which the real vLLM of tests/engine needs), built once per machine with debootstrap and cached outside the repo.

The cache key is a hash of this file, so a change to the provisioning below rebuilds it. The
project itself is not in the image: containers bind-mount it read-only at /opt/mtptui, and the
units run scripts from there, so code changes need no rebuild.

    python3 tests/integration/hosts/rootfs.py     # build (as root) and print the path
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

CACHE = Path(os.environ.get("MTPTUI_TEST_CACHE", "/var/cache/mtptui-test"))
MIRROR = "http://deb.debian.org/debian"
PACKAGES = "systemd,systemd-sysv,dbus,openssh-server,sudo,python3,procps,iproute2,libnuma1"

# Users: root and `ops` (sudo without password) log in with the session's test key; `viewer` has
# no journal rights and no sudo; `pwuser` may sudo only with a password (which `sudo -n` refuses).
PROVISION = r"""
set -e
for u in ops viewer pwuser; do id "$u" >/dev/null 2>&1 || useradd -m -s /bin/bash "$u"; usermod -p '*' "$u"; done
echo 'ops ALL=(root) NOPASSWD: ALL' > /etc/sudoers.d/ops
echo 'pwuser ALL=(root) ALL' > /etc/sudoers.d/pwuser
chmod 440 /etc/sudoers.d/ops /etc/sudoers.d/pwuser
mkdir -p /mtptui-test /opt/mtptui /etc/ssh/sshd_config.d /etc/systemd/journald.conf.d
cat > /etc/ssh/sshd_config.d/mtptui.conf <<'CONF'
AuthorizedKeysFile /mtptui-test/authorized_keys
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UseDNS no
MaxStartups 200
MaxSessions 100
CONF
# No rate limit (the benchmark writes 5,000 lines/s) and room for 10 MB entries.
cat > /etc/systemd/journald.conf.d/mtptui.conf <<'CONF'
[Journal]
Storage=volatile
RateLimitIntervalSec=0
RateLimitBurst=0
RuntimeMaxUse=1G
RuntimeMaxFileSize=256M
CONF
cat > /etc/systemd/system/mtptui-sim.service <<'CONF'
[Unit]
Description=SGLang stand-in (mtptui simulator, from the bind-mounted project)
[Service]
Environment=PYTHONPATH=/opt/mtptui PYTHONUNBUFFERED=1
ExecStart=/bin/sh /opt/mtptui/tests/integration/hosts/sim-unit.sh
Restart=on-failure
LogRateLimitIntervalSec=0
[Install]
WantedBy=multi-user.target
CONF
ln -sf /etc/systemd/system/mtptui-sim.service /etc/systemd/system/multi-user.target.wants/mtptui-sim.service
# Quicker boots: nothing here needs these.
for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer systemd-tmpfiles-clean.timer; do
  systemctl mask "$u" >/dev/null 2>&1 || true
done
echo mtptui-host > /etc/hostname
echo '127.0.1.1 mtptui-host' >> /etc/hosts  # sudo looks its host name up
apt-get clean
rm -rf /var/lib/apt/lists/*
"""


def key() -> str:
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def path() -> Path:
    return CACHE / f"rootfs-{key()}"


def build(log=sys.stderr) -> Path:
    """Builds the rootfs unless cached; safe against concurrent builders (a lock file)."""
    target = path()
    if (target / ".complete").exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / ".complete").exists():
            return target
        tmp = CACHE / f"building-{key()}"
        shutil.rmtree(tmp, ignore_errors=True)
        print(f"building the test hosts' rootfs in {target} (debootstrap, about a minute)",
              file=log, flush=True)
        subprocess.run(["debootstrap", "--variant=minbase", f"--include={PACKAGES}", "bookworm",
                        str(tmp), MIRROR], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
        subprocess.run(["chroot", str(tmp), "/bin/sh", "-c", PROVISION], check=True,
                       stdout=subprocess.DEVNULL)
        (tmp / ".complete").write_text(key() + "\n")
        for old in CACHE.glob("rootfs-*"):
            if old != target:
                shutil.rmtree(old, ignore_errors=True)
        os.rename(tmp, target)
    return target


if __name__ == "__main__":
    print(build())
