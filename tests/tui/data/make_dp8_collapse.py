"""Writes dp8-collapse.log: DeepSeek-V3 on 8 DP-attention ranks, MTP on, light load, whose
acceptance collapses on every rank 20 s after ready (the simulator's accept-collapse fault): a
host-wide condition, for the grouped-alert tests and snapshots. Deterministic (a fixed seed, a
simulated clock). Run from the repository root: python tests/tui/data/make_dp8_collapse.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(HERE))))

from mtptui.sim import scenario  # noqa: E402

ARGV = ["--model-path", "deepseek-ai/DeepSeek-V3-0324", "--tp", "8", "--dp", "8", "--enable-dp-attention",
        "--ep", "8", "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
        "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4", "--sim-version", "0.5.8",
        "--sim-load", "light", "--sim-fault", "accept-collapse@20"]

if __name__ == "__main__":
    n = scenario.write_log(os.path.join(HERE, "dp8-collapse.log"),
                           scenario.render_argv(ARGV, duration=80.0, host="gpu-h2", unit="sglang-dsv3.service"))
    print(f"wrote {n} lines")
