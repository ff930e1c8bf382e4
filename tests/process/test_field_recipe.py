"""docs/architecture.md's "Adding a batch field", followed to the letter in a copy of the package: a
new decode field, `draft len`, per series and per run (issue 44: the recipe failed on import where
followed literally). The copy is imported in a child process, and `summary --json` of a log that
carries the field gives its statistics, on the compiled lane (the recipe says it needs no change
for a decimal field) and on the Python path alike; the dashboard's store and view model take it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mtptui.core import compiled

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"

# (file, the text there, what the recipe's step makes of it)
STEPS = [
    # 1. Parse: FIELDS maps the key in the log to the normalised name and its reader
    ("core/parse/sglang.py", '    "accept rate": ("accept_rate", _FLOAT),\n',
     '    "accept rate": ("accept_rate", _FLOAT),\n    "draft len": ("draft_len", _FLOAT),\n'),
    # 3. summary: DECODE_METRICS, and EPOCH_METRICS for per-run statistics, in the same place of both
    ("core/summary.py", 'DECODE_METRICS = ("accept_len", "accept_rate", "gen_throughput", ',
     'DECODE_METRICS = ("accept_len", "accept_rate", "gen_throughput", "draft_len", '),
    ("core/epochs.py", 'EPOCH_METRICS = ("accept_len", "accept_rate", "gen_throughput")',
     'EPOCH_METRICS = ("accept_len", "accept_rate", "gen_throughput", "draft_len")'),
    # 4. the dashboard's store: DECODE_COLUMNS
    ("core/store.py", 'DECODE_COLUMNS = ("accept_len", "accept_rate", "gen_throughput", ',
     'DECODE_COLUMNS = ("accept_len", "accept_rate", "gen_throughput", "draft_len", '),
    # 5. the view model: a MetricInfo in METRICS, its BOUNDS
    ("tui/viewmodel.py", '    MetricInfo("accept_rate", ',
     '    MetricInfo("draft_len", "draft len", "draft length (tokens)", "{:.2f}"),\n    MetricInfo("accept_rate", '),
    ("tui/viewmodel.py", '    "accept_len": (1.0, None), ', '    "accept_len": (1.0, None), "draft_len": (0.0, None), '),
]

LINE = ("Mar 09 16:00:{s:02d} gpu-h1 python3[42]: [2026-03-09 16:00:{s:02d} TP{r}] Decode batch, #running-req: 3, "
        "#token: 900, token usage: 0.10, accept len: 2.50, accept rate: 0.50, draft len: {d:.2f}, cuda graph: True, "
        "gen throughput (token/s): 120.00, #queue-req: 0")

CHECK = """
import json, sys
from mtptui.core.ingest import Ingest
from mtptui.core.store import Store
from mtptui.tui.viewmodel import METRICS
store = Store(capacity=100)
Ingest(store).feed_many(open(sys.argv[1]).read().splitlines())
store.fold()
s = store.series[("gpu-h1", "TP0")]
print(json.dumps({"ring": s.decode.window("draft_len")[1], "label": METRICS["draft_len"].label}))
"""


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "mtptui", tmp_path / "mtptui", ignore=shutil.ignore_patterns("__pycache__"))
    for rel, old, new in STEPS:
        path = tmp_path / "mtptui" / rel
        text = path.read_text()
        assert text.count(old) == 1, f"the recipe's step in {rel} no longer finds {old.strip()!r}: update it and the doc"
        path.write_text(text.replace(old, new))
    return tmp_path


def _run(top: Path, *args: str, pure: bool = False) -> str:
    env = {k: v for k, v in os.environ.items() if k != "MTPTUI_PURE"}
    env["PYTHONPATH"] = str(top)
    if pure:
        env["MTPTUI_PURE"] = "1"
    r = subprocess.run([sys.executable, *args], cwd=top, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_the_doc_names_what_the_test_does():
    text = DOC.read_text()
    for name in ("FIELDS", "DECODE_METRICS", "EPOCH_METRICS", "DECODE_COLUMNS", "MetricInfo", "BOUNDS"):
        assert name in text
    assert "tests/process/test_field_recipe.py" in text


def test_a_field_added_by_the_recipe_is_read_summarised_and_shown(tmp_path):
    top = _copy(tmp_path)
    log = top / "draft.log"
    log.write_text("".join(LINE.format(s=i, r=i % 2, d=3 + (i % 4) / 4) + "\n" for i in range(40)))
    docs = {}
    for pure in (False, True):
        doc = json.loads(_run(top, "-m", "mtptui", "summary", "--json", str(log), pure=pure))
        series = {s["rank"]: s["decode"] for s in doc["series"]}
        # TP0 logged i = 0, 2, ..., 38: draft len 3.00 and 3.50 in turn
        assert series["TP0"]["draft_len"]["n"] == 20 and series["TP0"]["draft_len"]["mean"] == pytest.approx(3.25)
        per_run = doc["epochs"][0]["ranks"]["TP0"]["draft_len"]
        assert (per_run["n"], per_run["mean"], per_run["min"], per_run["max"]) == (20, 3.25, 3.0, 3.5)
        docs[pure] = doc
    if compiled.BUILT:
        assert docs[False] == docs[True]  # the lane reads the new field as the Python path does
    shown = json.loads(_run(top, "-c", CHECK, str(log)))
    assert shown["ring"] == [3.0, 3.5] * 10 and shown["label"] == "draft len"
