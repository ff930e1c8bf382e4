"""`mtptui tune` interrupted on a real systemd host (the simulator as its unit): ctrl-c while a
candidate is applied and measuring restores the host as found, as `bench` does. Apart from
test_tune_systemd.py so that the two long tune runs go to two workers (`--dist loadfile`)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest
from hosts.helpers import unique_unit
from test_prove_systemd import _env, dropin_of, journal_tail, ready, unit_files
from test_spec_systemd import audit_entries, exec_start, install_unit, write_config
from test_tune_systemd import PROFILES, SERVER

pytestmark = pytest.mark.systemd


def test_tune_interrupted_restores_the_host(cluster, tmp_path):
    h = cluster.hosts[2]
    unit = unique_unit("tune")
    install_unit(h, unit, sim=SERVER)
    cfg = write_config(tmp_path, h, unit)
    ready(h, unit)
    assert dropin_of(h, unit) is None
    loaded = exec_start(h, unit)
    audit = tmp_path / "audit.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "mtptui", "tune", "--config", cfg, f"gpu{h.index}", "--profiles",
                             PROFILES, "--concurrency", "1", "--budget", "5m", "--requests", "24", "--max-tokens",
                             "64", "--yes"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, env=_env(audit, tmp_path))
    seen = []
    try:
        for line in proc.stderr:  # a candidate after off (already running) is applied and measuring
            seen.append(line)
            if ": measure" in line and not line.split("] ", 1)[-1].startswith("off"):
                break
        # the candidate's progress line may come as its apply begins: the drop-in, once written
        deadline = time.monotonic() + 120
        while dropin_of(h, unit) is None and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert dropin_of(h, unit) is not None, "".join(seen)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    said = "".join(seen) + out + err
    assert proc.returncode == 130, said + journal_tail(h, unit)
    assert "restoring" in err and "restored" in err, said
    assert dropin_of(h, unit) is None and exec_start(h, unit) == loaded, said + unit_files(h, unit)
    assert h.ssh(["systemctl", "is-active", unit]).stdout.strip() == "active"
    entries = audit_entries(audit)
    t = next(e for e in entries if e["action"] == "tune")
    assert t["result"] == "interrupted" and t["restored"] is True and t["exit_code"] == 130, t
    assert entries[-1]["action"] == "restore" and entries[-1]["result"] == "applied", entries[-1]
