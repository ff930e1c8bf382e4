"""An adaptive profile (SGLang's --speculative-adaptive, issue 46) on a real systemd + journald
host running the project's SGLang simulator: previewed, applied and verified (the new run's
`server_args=` says speculative_adaptive=True), rolled back where the server falls back to static
steps (SGLang's warning and speculative_adaptive=False), and reverted, like any other profile."""

from __future__ import annotations

import pytest
from hosts.helpers import unique_unit
from test_spec_systemd import audit_entries, exec_start, install_unit, server_args_after, spec, write_config

pytestmark = pytest.mark.systemd

PROFILES = ('[profiles.mtp3a]\nalgorithm = "NEXTN"\nnum_steps = 3\ntopk = 1\nnum_draft_tokens = 4\nadaptive = true\n'
            # DP attention given by the profile's own extra_args: SGLang (and the simulator) run
            # static steps then, and say so only in the run's settings
            '[profiles.mtp3a-dpa]\nalgorithm = "NEXTN"\nnum_steps = 3\ntopk = 1\nnum_draft_tokens = 4\n'
            'adaptive = true\nextra_args = ["--tp", "2", "--dp", "2", "--enable-dp-attention"]\n')


def test_an_adaptive_profile_applies_verifies_rolls_back_and_reverts(cluster, tmp_path, audit):
    import time

    h = cluster.hosts[0]
    unit = unique_unit("adapt")
    install_unit(h, unit, "Restart=on-failure\nRestartSec=1\n")
    cfg = write_config(tmp_path, h, unit, profiles=PROFILES)
    name = f"gpu{h.index}"

    shown = spec(cfg, name, "mtp3a", "--dry-run", audit=audit)
    assert shown.returncode == 0, shown.stderr
    assert "--speculative-adaptive" in shown.stdout  # the preview's ExecStart

    t0 = time.time()
    r = spec(cfg, name, "mtp3a", "--yes", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verified: accept len" in r.stdout
    assert exec_start(h, unit).endswith("--speculative-num-draft-tokens 4 --speculative-adaptive")
    args = server_args_after(h, unit, t0)
    assert args and "speculative_adaptive=True" in args[-1]
    before = exec_start(h, unit)

    r = spec(cfg, name, "mtp3a-dpa", "--yes", audit=audit)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "rolled back" in r.stdout and "the server runs adaptive False, asked for True" in r.stdout
    assert exec_start(h, unit) == before
    last = audit_entries(audit)[-1]
    assert last["result"] == "rolled_back" and last["profile"] == "mtp3a-dpa"

    r = spec(cfg, name, "--revert", "--yes", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "--speculative" not in exec_start(h, unit)
    assert [e["profile"] or e["action"] for e in audit_entries(audit)] == ["mtp3a", "mtp3a-dpa", "revert"]
