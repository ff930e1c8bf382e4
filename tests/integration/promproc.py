"""A real Prometheus (Debian's `prometheus` package) as a child process for the integration tests:
on a free loopback port, with its own config and storage in a temporary directory."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

from simproc import free_port

BINARY = "prometheus"


def available() -> bool:
    return shutil.which(BINARY) is not None


class PrometheusServer:
    def __init__(self, jobs: dict[str, list[str]], workdir, *, scrape_interval: str = "1s") -> None:
        """`jobs`: job name -> its targets (ADDR:PORT), scraped at /metrics every scrape_interval."""
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        workdir.mkdir(parents=True, exist_ok=True)
        conf = workdir / "prometheus.yml"
        conf.write_text(json.dumps({  # YAML is a superset of JSON
            "global": {"scrape_interval": scrape_interval, "evaluation_interval": scrape_interval},
            "scrape_configs": [{"job_name": job, "static_configs": [{"targets": targets}]}
                               for job, targets in jobs.items()]}))
        self.log = open(workdir / "prometheus.log", "w")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [BINARY, f"--config.file={conf}", f"--storage.tsdb.path={workdir / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
            stdout=self.log, stderr=subprocess.STDOUT)

    def api(self, path: str, **params) -> dict:
        url = f"{self.url}{path}" + (f"?{urllib.parse.urlencode(params)}" if params else "")
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.loads(r.read())["data"]

    def wait_ready(self, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        while True:
            assert self.proc.poll() is None, f"prometheus exited: {self.log_text()}"
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            assert time.monotonic() < end, f"prometheus not ready: {self.log_text()}"
            time.sleep(0.1)

    def wait_targets_up(self, n: int, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        while True:
            active = self.api("/api/v1/targets", state="active")["activeTargets"]
            if len(active) == n and all(t["health"] == "up" for t in active):
                return
            assert time.monotonic() < end, f"targets not up: {[(t['scrapeUrl'], t['health'], t['lastError']) for t in active]}"
            time.sleep(0.2)

    def log_text(self) -> str:
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()[-2000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
