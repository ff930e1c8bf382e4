"""The restart watch trusts more than the journal: systemd's own state and the server's HTTP API
(/health, /server_info) decide when the journal does not deliver a line (journald rate-limits a
chatty unit, or drops a line PID 1 wrote too slowly). A missing journal line never turns a healthy
restart into a rollback.

Real systemd + journald + sshd hosts (systemd-nspawn), the simulator as the unit, `mtptui spec`
driven as an operator would.
"""

from __future__ import annotations

import pytest
from hosts.helpers import unique_unit
from test_spec_systemd import audit_entries, exec_start, install_unit, spec, write_config

pytestmark = pytest.mark.systemd

# As operators set it on chatty services, only stricter, so that the test does not depend on where a
# window ends: journald keeps the first few lines of the unit's own processes in 10 minutes (10,
# scaled up by its free disk space), so the new runs' ready and decode lines are dropped, and their
# server_args lines too once the burst is spent (systemd's own lines are not limited).
RATE_LIMITED = "LogRateLimitIntervalSec=10min\nLogRateLimitBurst=10\n"


def test_rate_limited_journal_still_changes_profile_and_verifies(cluster, tmp_path, audit):
    h = cluster.hosts[0]
    unit = unique_unit("wit")
    install_unit(h, unit, RATE_LIMITED)
    cfg = write_config(tmp_path, h, unit)
    name = f"gpu{h.index}"
    for profile, steps in (("mtp1", 1), ("off", None)):
        r = spec(cfg, name, profile, "--yes", audit=audit)
        said = r.stdout + r.stderr
        assert r.returncode == 0, said
        assert "rolled back" not in said and "verified" in said, said
        # it says which witness stood in for the lines that did not come
        assert "ready by /health" in said and "from /server_info" in said, said
        if steps:
            assert f"--speculative-num-steps {steps}" in exec_start(h, unit)
        else:
            assert "--speculative" not in exec_start(h, unit)
    said = h.ssh(["journalctl", "--output=cat", "--no-pager", f"--unit={unit}"]).stdout
    # the new runs' lines, from the first restart's Started on: journald dropped them indeed (the
    # first run may log its own ready line after systemd's Stopping: SIGTERM came as it got ready)
    changed = said[said.index("Started ", said.index("Stopping ")):]
    assert "fired up" not in changed and "Decode batch" not in changed, said
    entries = audit_entries(audit)
    assert [e["result"] for e in entries] == ["applied", "applied"], entries


@pytest.mark.parametrize("version", ["0.5.4", "0.5.23"])
def test_the_servers_version_is_known_shown_and_audited(cluster, tmp_path, audit, version):
    # the simulator's interpreter has no sglang package: the version comes from the server itself,
    # /get_server_info before SGLang 0.5.8, /server_info after
    from test_spec_systemd import SIM
    h = cluster.hosts[1]
    unit = unique_unit("ver")
    install_unit(h, unit, sim=[*SIM, "--sim-version", version])
    cfg = write_config(tmp_path, h, unit)
    name = f"gpu{h.index}"
    shown = spec(cfg, name, audit=audit)
    assert shown.returncode == 0, shown.stderr
    path = "/get_server_info" if version == "0.5.4" else "/server_info"
    from mtptui.control.version import SIMULATED

    # the simulator says it is one (its /server_info: simulator = true), and so does every place
    assert f"version:     {version} (from the server's {path}{SIMULATED})" in shown.stdout, shown.stdout
    r = spec(cfg, name, "mtp1", "--yes", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"server:   SGLang {version} (from the server's {path}{SIMULATED})" in r.stdout, r.stdout
    assert audit_entries(audit)[-1]["server_version"] == version
