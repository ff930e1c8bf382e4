"""`mtptui summary` labels the epochs of a 0.5.23 log (the real command).

The process tier: these start child processes (tests/unit starts none)."""

from __future__ import annotations
import json
import subprocess
import sys
from test_server_args_dict import _journal, RUNS  # noqa: F401 (fixtures and builders shared with the unit tier)


LABELS = ["spec off", "EAGLE steps=3 topk=1 draft=4", "spec off", "EAGLE steps=2 topk=1 draft=3"]


def test_summary_labels_the_epochs_of_a_0_5_23_log(tmp_path):
    log = tmp_path / "sglang-0.5.23.log"
    lines = _journal("0.5.23", RUNS)
    assert sum("server_args={'model_path': " in ln for ln in lines) == 4
    log.write_text("\n".join(lines) + "\n")
    r = subprocess.run([sys.executable, "-m", "mtptui", "summary", "--json", str(log)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [e["label"] for e in doc["epochs"]] == LABELS
    # the same log with 0.5.12's repr lines gives the same epochs
    old = tmp_path / "sglang-0.5.12.log"
    old.write_text("\n".join(_journal("0.5.12", RUNS)) + "\n")
    r = subprocess.run([sys.executable, "-m", "mtptui", "summary", "--json", str(old)], capture_output=True, text=True)
    assert [e["label"] for e in json.loads(r.stdout)["epochs"]] == LABELS
