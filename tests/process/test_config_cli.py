"""A bad config file, given to the real command: one line and exit 2.

The process tier: these start child processes (tests/unit starts none)."""

import subprocess
import sys


def test_cli_bad_config_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[hosts]]\nname = "gpu1"\nunit = "u"\n\n[thresholds]\naccept_rate_mn = 0.2\n')
    log = tmp_path / "a.log"
    log.write_text("")
    for args in (["live", "--config", str(bad)], ["local", "--config", str(bad), "--unit", "u"],
                 ["record", "--config", str(bad), "--out", str(tmp_path / "o.json")],
                 ["replay", "--config", str(bad), str(log)], ["demo", "--config", str(bad)]):
        r = subprocess.run([sys.executable, "-m", "mtptui", *args], capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr == (f"mtptui {args[0]}: {bad}:6: thresholds.accept_rate_mn: unknown key; known: "
                            "accept_len_one_hold_s, accept_len_one_max, accept_rate_hold_s, accept_rate_min, "
                            "baseline_min_s, coverage, fallback_hold_s, fallback_min_batches, graph_off_hold_s, "
                            "queue_growth_min, queue_hold_s, rank_diverge_hold_s, rank_diverge_min_accept_len, "
                            "rank_diverge_min_req_tok_s, rank_diverge_parts, rank_diverge_pct, stale_s, "
                            "throughput_drop_pct, throughput_hold_s\n"), args
        assert r.stdout == ""
