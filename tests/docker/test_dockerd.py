"""The fixture itself: its own daemon answers, its image runs the project's simulator."""

from __future__ import annotations

from dockerd import IMAGE


def test_own_daemon_runs_the_image(dockerd):
    assert dockerd.docker("version", "--format", "{{.Server.Version}}").stdout.strip()
    out = dockerd.docker("run", "--rm", "--network", "none", IMAGE, "python3", "-c", "print('in it')").stdout
    assert out.strip() == "in it"
