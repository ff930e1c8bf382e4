"""The fixture itself: its own daemon answers, on the storage driver it says, and its image runs;
a driver dockerd refuses falls back to vfs, with one warning."""

from __future__ import annotations

import pytest
from dockerd import IMAGE, Dockerd


def test_own_daemon_runs_the_image(dockerd):
    assert dockerd.docker("version", "--format", "{{.Server.Version}}").stdout.strip()
    assert dockerd.docker("info", "--format", "{{.Driver}}").stdout.strip() == dockerd.driver
    out = dockerd.docker("run", "--rm", "--network", "none", IMAGE, "python3", "-c", "print('in it')").stdout
    assert out.strip() == "in it"


def test_a_refused_storage_driver_falls_back_to_vfs(dockerd, tmp_path_factory):
    # dockerd refuses a driver it has not (as overlay2 where the kernel or the data root's file
    # system cannot mount an overlay): `error initializing graphdriver: driver not supported`
    # a short root: containerd's socket under it must fit a socket path's 108 bytes
    root = tmp_path_factory.mktemp("fallback")
    d = Dockerd(root, drivers=("no-such-driver", "vfs"))
    try:
        with pytest.warns(UserWarning, match=r"storage driver no-such-driver refused .*graphdriver.*; falling back to vfs"):
            d.start()
        assert d.driver == "vfs"
        assert d.docker("info", "--format", "{{.Driver}}").stdout.strip() == "vfs"
    finally:
        d.stop()
    assert not root.exists()  # its data root removed
