"""vLLM's Dynamic SD schedule (issue 46: `num_speculative_tokens_per_batch_size` in
--speculative-config, vLLM 0.24.0+) as a profile against the real vLLM 0.32.0 CPU build: applied
through mtptui's preview and confirm path, its start verified (the run's own args line carries the
schedule; the engine drafts and accepts), then put back."""

from __future__ import annotations

import json

from engine import mtptui, ngram

SCHEDULE = '[profiles.ngram3-sched]\nalgorithm = "NGRAM"\nnum_steps = 3\nschedule = [[1, 2, 3], [3, 1024, 1]]\n\n'


def test_a_schedule_profile_applies_and_verifies_on_the_real_engine(engine, tmp_path, audit):
    engine.install(ngram(3))
    cfg = engine.config(tmp_path)
    text = open(cfg).read().replace("[control]", SCHEDULE + "[control]")
    open(cfg, "w").write(text)
    r = mtptui("spec", "--config", cfg, "engine", "ngram3-sched", "--yes", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verified" in r.stdout
    args = engine.h.ssh(["journalctl", "--unit=vllm-tiny", "--output=cat", "--no-pager"]).stdout
    line = [x for x in args.splitlines() if "non-default args:" in x][-1]
    assert "'num_speculative_tokens_per_batch_size': [[1, 2, 3], [3, 1024, 1]]" in line, line
    shown = mtptui("spec", "--config", cfg, "engine", "--json", audit=audit)
    ex = json.loads(shown.stdout)["hosts"][0]["exec_start"]
    assert ex["schedule"] == [[1, 2, 3], [3, 1024, 1]], ex
    r = mtptui("spec", "--config", cfg, "engine", "--revert", "--yes", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
