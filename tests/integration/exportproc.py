"""`mtptui export` as a child process, for the integration tests: its stderr read line by line,
its /metrics scraped; and what a log's lines say it must serve."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from mtptui.core.parse import BATCH, DROPPED, OTHER, LineParser
from mtptui.core.records import DECODE
from simproc import ROOT


class Exporter:
    def __init__(self, args: list[str], tmp_path) -> None:
        conf = tmp_path / "empty.toml"
        conf.write_text("")
        self.proc = subprocess.Popen([sys.executable, "-m", "mtptui", "export", "--config", str(conf), *args],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=str(ROOT))
        self.err: list[str] = []
        self.url = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.err.append(line.rstrip("\n"))

    def wait_serving(self, timeout: float = 20.0) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for line in self.err:
                m = re.search(r"serving (http://\S+/metrics)", line)
                if m:
                    self.url = m.group(1)
                    return line
            assert self.proc.poll() is None, self.err
            time.sleep(0.02)
        raise AssertionError(f"not serving: {self.err}")

    def scrape(self) -> dict[tuple, float]:
        with urllib.request.urlopen(self.url, timeout=5) as r:
            text = r.read().decode()
        return {(s.name, tuple(sorted(s.labels.items()))): s.value
                for f in text_string_to_metric_families(text) for s in f.samples}

    def scrape_when(self, cond, what: str, timeout: float = 30.0) -> dict:
        end = time.monotonic() + timeout
        while True:
            m = self.scrape()
            if cond(m):
                return m
            assert time.monotonic() < end, f"timed out waiting for {what}"
            time.sleep(0.05)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._reader.join(5)


def expected(lines: list[str]) -> dict:
    """What the lines say: per rank its last figures and its counts; the host's line counts."""
    parser = LineParser()
    ranks: dict[str, dict] = {}
    counts = {"read": 0, "unparsed": 0, "dropped": 0}
    for line in lines:
        p = parser.parse(line)
        counts["read"] += 1
        counts["unparsed"] += p.outcome == OTHER
        counts["dropped"] += p.outcome == DROPPED
        if p.outcome != BATCH:
            continue
        r = ranks.setdefault(p.record.rank, {"decode": 0, "graph_off": 0})
        f = p.record.fields
        r.update(running=f["running_req"], queue=f["queue_req"], usage=f["token_usage"])
        if p.record.kind == DECODE:
            r["decode"] += 1
            r["graph_off"] += f["graph"] is False
            r.update(accept_len=f["accept_len"], accept_rate=f["accept_rate"], gen=f["gen_throughput"])
    return {"ranks": ranks, "counts": counts}
