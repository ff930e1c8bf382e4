"""The live simulator as a child process, for the integration tests: `python -m mtptui.sim ...`
with its stderr read line by line, each line with its arrival time."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Sim:
    """A running simulator whose stderr is read line by line, each with its arrival time."""

    def __init__(self, args, tmp_path):
        self.port = free_port()
        self.truth = tmp_path / f"truth-{self.port}.jsonl"
        env = dict(os.environ, PYTHONPATH=str(ROOT), TZ="UTC")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mtptui.sim", "--port", str(self.port), "--sim-truth", str(self.truth)] + args,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True, cwd=str(tmp_path))
        self.lines: list[tuple[float, str]] = []
        self.out: list[str] = []
        self._readers = [threading.Thread(target=self._read, args=(self.proc.stderr, True), daemon=True),
                         threading.Thread(target=self._read, args=(self.proc.stdout, False), daemon=True)]
        for t in self._readers:
            t.start()

    def _read(self, stream, is_err):
        for line in stream:
            if is_err:
                self.lines.append((time.monotonic(), line.rstrip("\n")))
            else:
                self.out.append(line.rstrip("\n"))

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def get(self, path, timeout=5.0):
        try:
            with urllib.request.urlopen(self.url(path), timeout=timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def post(self, path, body, timeout=30.0):
        req = urllib.request.Request(self.url(path), data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()

    def wait_line(self, text, timeout=15.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for t, line in list(self.lines):
                if text in line:
                    return t, line
            if self.proc.poll() is not None and not any(text in line for _, line in self.lines):
                time.sleep(0.2)
                if not any(text in line for _, line in self.lines):
                    break
            time.sleep(0.02)
        raise AssertionError(f"no line with {text!r}; last lines: {[x for _, x in self.lines[-5:]]}")

    def exited(self, timeout: float) -> int:
        """Its exit code once it has exited and every line it wrote has been read: the readers
        reach the pipes' end after the process does, so a test that reads `lines` right after
        `proc.wait()` can see none of them (seen in CI: the invalid-flags test read '')."""
        code = self.proc.wait(timeout=timeout)
        for t in self._readers:
            t.join(timeout=timeout)
        return code

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            try:
                return self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # it drains for 2 s at most: say where it is stuck
                seen = len(self.lines)
                self.proc.send_signal(signal.SIGUSR1)
                time.sleep(2)
                raise AssertionError("the simulator did not exit within 10 s of SIGTERM; its threads:\n"
                                     + "\n".join(x for _, x in self.lines[seen:][:80])
                                     + "\nits lines before:\n" + "\n".join(x for _, x in self.lines[max(0, seen - 10):seen])) from None
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            for t in self._readers:
                t.join(timeout=5)
