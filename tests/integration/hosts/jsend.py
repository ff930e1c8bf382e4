"""Sends one journal entry through journald's native protocol, with fields of any size or bytes.

Used for what a unit's stdout cannot carry: a 10 MB MESSAGE (stdout lines are split at LineMax)
and a binary MESSAGE (non-UTF-8 bytes, newlines). Large entries go as a sealed memfd, as
sd_journal_send does. Stdlib only: it runs inside the containers, under `systemd-run --unit=...`
so that journald files it under that unit.

    python3 jsend.py --size 10000000 [--binary] [--tag T]
"""

import argparse
import fcntl
import os
import socket
import struct

SOCKET = "/run/systemd/journal/socket"


def field(name: str, value: bytes) -> bytes:
    return name.encode() + b"\n" + struct.pack("<Q", len(value)) + value + b"\n"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=100)
    p.add_argument("--binary", action="store_true")
    p.add_argument("--tag", default="jsend")
    a = p.parse_args()
    if a.binary:
        msg = b"binary \xff\xfe\x00 line\nsecond \x1b[31m" + bytes(range(256))
    else:
        unit = b"0123456789abcdef"
        msg = (b"BIG " + unit * (a.size // 16 + 1))[: a.size]
    data = field("MESSAGE", msg) + field("SYSLOG_IDENTIFIER", a.tag.encode()) + \
        field("PRIORITY", b"6") + field("MTPTUI_SIZE", str(len(msg)).encode())
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        s.sendto(data, SOCKET)
    except OSError:
        # too big for a datagram: hand journald a sealed memfd instead
        fd = os.memfd_create("journal-entry", os.MFD_ALLOW_SEALING)
        os.write(fd, data)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW |
                    fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL)
        s.sendmsg([], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", fd))], 0, SOCKET)
    print(f"sent {len(msg)} bytes")


if __name__ == "__main__":
    main()
