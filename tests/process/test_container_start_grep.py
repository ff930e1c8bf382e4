"""The grep that picks, on a container's host, the lines of its log that can end a start
(control/container_start.py): GNU grep itself keeps each of them, and no /health answered 503."""

from __future__ import annotations

import subprocess

from mtptui.control.container_start import _GREP

FIRED = "[2026-12-07 13:00:04] The server is fired up and ready to roll!"
UVICORN = "INFO:     Application startup complete."
HEALTH = 'INFO:     127.0.0.1:41234 - "GET /health HTTP/1.1" 200 OK'
HEALTH_503 = 'INFO:     127.0.0.1:41234 - "GET /health HTTP/1.1" 503 Service Unavailable'


def test_the_hosts_grep_keeps_every_line_that_can_end_a_start_and_no_503():
    lines = [FIRED, UVICORN, HEALTH, 'INFO:     1.2.3.4:5 - "GET /health?probe=1 HTTP/1.1" 200 OK', HEALTH_503,
             'INFO:     1.2.3.4:5 - "GET /healthy HTTP/1.1" 200 OK', "Decode batch. #running-req: 1"]
    r = subprocess.run(["grep", "-E", _GREP], input="\n".join(lines) + "\n", capture_output=True, text=True)
    assert r.stderr == ""  # GNU grep 3.8+ warns of stray backslashes in a pattern
    assert r.stdout.splitlines() == lines[:4]
