"""`bench` on the simulator at concurrency 1, where acceptance is high: more draft steps pay, as
every report of an MTP or EAGLE head at low load has it (issue 46: the simulator's host measured
mtp3 below mtp1, 88 against 98 tokens/s, with accept lens 2.8 and 1.9).

The server is the hosts' (Qwen3-8B on TP 1) with their light background load (4 clients), run as
a child and driven through the benchmark's own path (prove.bench over control.child), with the
shipped code prompts (accept len about 2.8 with mtp3: the issue's). Not timed: the order of the
measured figures is compared. The simulator's model (sim/behaviour.py, Qwen3-8B's dense draft
head a tenth of a step) puts mtp3 25% ahead of mtp1 on those 16 requests at batch 5, and a Monte
Carlo of the model over them (each one's draft chains sampled, time to first token added) has it
less than 17% ahead once in a thousand runs and never behind; the client's own cost per request
takes a few per cent off the faster profile: a margin the machine's noise does not reverse. (On
the shipped mix of five categories the model's lead is 15-19%; measured here, with the suite
running beside it, 8-13%.)"""

from __future__ import annotations

import pytest
from test_prove_child import child, control, started, stopped

from mtptui.control.profiles import BUILTINS
from mtptui.prove import prompts
from mtptui.prove.bench import DONE, Bench

pytestmark = pytest.mark.alone  # measured throughputs compared: run alone (Makefile)


async def test_at_concurrency_1_mtp3_measures_above_mtp1_above_off(tmp_path, monkeypatch):
    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    src = child("--sim-load", "light")
    hc = control(src)
    task = await started(src)
    try:
        code = [p for p in prompts.PROMPTS if p.category == "code"]
        bench = Bench(hc, [BUILTINS[n] for n in ("off", "mtp1", "mtp3")], [1], 16, max_tokens=64, prompt_pool=code)
        report = await bench.run()
    finally:
        await stopped(task)
    assert report.exit_code == DONE and report.restored, bench.summary()
    rows = {r["profile"]: r for r in report.to_json()["results"]}
    assert all(r["requests"] == 16 and not r["errors"] for r in rows.values())
    tok_s = {name: rows[name]["output_tok_s"] for name in ("off", "mtp1", "mtp3")}
    print("measured tok/s at concurrency 1:", tok_s, "accept len (log):",
          {name: rows[name]["accept_len"] for name in ("mtp1", "mtp3")})
    assert tok_s["off"] < tok_s["mtp1"] < tok_s["mtp3"], tok_s
    # the log's accept len as the issue read it: mtp3's well above mtp1's
    assert rows["mtp3"]["accept_len"] > rows["mtp1"]["accept_len"] + 0.5
