"""`mtptui spec` against real systemd + journald + sshd hosts (systemd-nspawn containers).

Each test installs its own unit running the project's SGLang simulator (mounted at /opt/mtptui),
drives the real command line (`python -m mtptui spec ...`) at it over SSH, and checks the host with
the plain OpenSSH client: the drop-in, `systemctl show`, the new run's `server_args=` in journald,
and the audit log. Nothing here is mocked: systemd restarts the unit, the simulator refuses bad
flags as SGLang's argparse would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest
from hosts.helpers import unique_unit

pytestmark = pytest.mark.systemd

SIM = ["/usr/bin/python3", "-m", "mtptui.sim", "--model-path", "Qwen/Qwen3-8B", "--tp", "1",
       "--sim-load", "steady", "--sim-startup-seconds", "1", "--decode-log-interval", "10"]


def unit_text(port: int, extra: str = "", sim: list[str] = SIM) -> str:
    return ("[Unit]\nDescription=SGLang stand-in (mtptui simulator) for control tests\n[Service]\n"
            "Environment=PYTHONPATH=/opt/mtptui PYTHONUNBUFFERED=1\n"
            f"ExecStart={' '.join(sim)} --port {port}\nLogRateLimitIntervalSec=0\n{extra}")


def install_unit(h, unit: str, extra: str = "", sim: list[str] = SIM) -> int:
    """Installs and starts the unit; the port its simulator serves HTTP on."""
    port = 31000 + uuid.uuid4().int % 20000
    subprocess.run(h.ssh_argv(f"cat > /etc/systemd/system/{unit}.service"), input=unit_text(port, extra, sim),
                   text=True, check=True, capture_output=True)
    h.ssh(f"systemctl daemon-reload && systemctl start {unit}")
    return port


def write_config(tmp_path, h, unit: str, *, user: str = "root", sudo: bool = False, tags=(),
                 profiles: str = "", control: str = "", http_port: int | None = None) -> str:
    keys = h.cluster.keys
    text = (f'[[hosts]]\nname = "gpu{h.index}"\naddress = "{h.address}"\nuser = "{user}"\n'
            f'identity = "{keys.identity}"\nknown_hosts = "{keys.known_hosts}"\nssh_config = "/dev/null"\n'
            f'unit = "{unit}"\nsudo = {str(sudo).lower()}\nconnect_timeout = 3\nkeepalive_interval = 0.5\n'
            f'keepalive_count_max = 2\ntags = {json.dumps(list(tags))}\n'
            + (f"http_port = {http_port}\n" if http_port else ""))
    text += profiles
    text += control or "[control]\nwait_timeout = 60\n"
    p = tmp_path / f"config-{uuid.uuid4().hex[:6]}.toml"
    p.write_text(text)
    return str(p)


def spec(config: str, *args: str, audit, timeout: float = 180) -> subprocess.CompletedProcess:
    env = dict(os.environ, MTPTUI_AUDIT_LOG=str(audit))
    return subprocess.run([sys.executable, "-m", "mtptui", "spec", "--config", config, *args],
                          capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)


def spec_started(config: str, *args: str, audit, hold: str | None = None) -> subprocess.Popen:
    """`mtptui spec` running in the background, its progress readable line by line on stderr;
    hold: the phase it holds still in until interrupted (MTPTUI_TEST_HOLD)."""
    env = dict(os.environ, MTPTUI_AUDIT_LOG=str(audit), **({"MTPTUI_TEST_HOLD": hold} if hold else {}))
    return subprocess.Popen([sys.executable, "-m", "mtptui", "spec", "--config", config, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            stdin=subprocess.DEVNULL)


def server_args_after(h, unit: str, since: float) -> list[str]:
    out = h.ssh(["journalctl", f"--unit={unit}", "--output=cat", "--no-pager", f"--since=@{int(since) - 1}"]).stdout
    return [x for x in out.splitlines() if x.startswith("[") and "server_args=" in x]


def exec_start(h, unit: str) -> str:
    """The argv systemd has loaded for the unit (`argv[]=` of `systemctl show`)."""
    out = h.ssh(["systemctl", "show", "--property=ExecStart", "--value", unit]).stdout
    return out.split("argv[]=", 1)[1].split(" ; ", 1)[0]


def etc_digest(h) -> str:
    return h.ssh("find /etc/systemd/system -type f -print0 | sort -z | xargs -0 sha256sum").stdout


def audit_entries(path) -> list[dict]:
    from mtptui.control.audit import read_audit

    return read_audit(path)


def test_off_to_mtp3_to_mtp1_then_revert(cluster, tmp_path, audit):
    h = cluster.hosts[0]
    unit = unique_unit("ctl")
    install_unit(h, unit)
    cfg = write_config(tmp_path, h, unit)
    name = f"gpu{h.index}"

    shown = spec(cfg, name, "--json", audit=audit)
    assert shown.returncode == 0, shown.stderr
    info = json.loads(shown.stdout)["hosts"][0]
    assert info["exec_start"].get("algorithm") is None and info["mtptui_dropin"] is False

    for profile, steps in (("mtp3", 3), ("mtp1", 1)):
        t0 = time.time()
        r = spec(cfg, name, profile, "--yes", audit=audit)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "verified: accept len" in r.stdout
        assert f"--speculative-num-steps {steps}" in exec_start(h, unit)
        args = server_args_after(h, unit, t0)
        assert args and f"speculative_num_steps={steps}" in args[-1] and "speculative_algorithm='EAGLE'" in args[-1]

    t0 = time.time()
    r = spec(cfg, name, "off", "--yes", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "speculation off" in r.stdout
    assert "--speculative" not in exec_start(h, unit)
    assert "speculative_algorithm=None" in server_args_after(h, unit, t0)[-1]

    r = spec(cfg, name, "--revert", "--yes", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
    assert h.ssh(f"test -e /etc/systemd/system/{unit}.service.d/50-mtptui-spec.conf", check=False).returncode != 0
    entries = audit_entries(audit)
    assert [e["profile"] or e["action"] for e in entries] == ["mtp3", "mtp1", "off", "revert"]
    assert all(e["result"] == "applied" and e["exit_code"] == 0 for e in entries)
    assert {"lock", "write", "reload", "restart", "wait", "verify", "unlock"} <= {p["phase"] for p in entries[0]["phases"]}


def test_failing_profile_is_rolled_back(cluster, tmp_path, audit):
    h = cluster.hosts[1]
    unit = unique_unit("ctl")
    install_unit(h, unit, "Restart=on-failure\nRestartSec=1\n")
    profiles = ('[profiles.broken]\nalgorithm = "NEXTN"\nnum_steps = 2\ntopk = 1\nnum_draft_tokens = 3\n'
                'extra_args = ["--no-such-flag"]\n')
    cfg = write_config(tmp_path, h, unit, profiles=profiles)
    name = f"gpu{h.index}"
    assert spec(cfg, name, "mtp1", "--yes", audit=audit).returncode == 0
    before = exec_start(h, unit)

    r = spec(cfg, name, "broken", "--yes", audit=audit)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "rolled back" in r.stdout and "unrecognized arguments" in r.stdout
    assert exec_start(h, unit) == before
    assert h.ssh(["systemctl", "is-active", unit], check=False).stdout.strip() == "active"
    last = audit_entries(audit)[-1]
    assert last["result"] == "rolled_back" and last["exit_code"] == 3 and last["profile"] == "broken"
    phases = [(p["phase"], p["state"]) for p in last["phases"]]
    assert ("rollback", "start") in phases and ("rollback_verify", "ok") in phases and ("rollback", "ok") in phases
    assert "--no-such-flag" in " ".join(last["exec_start_after"])


def test_another_writers_line_during_the_stop_is_not_taken_for_the_new_run(cluster, tmp_path, audit):
    # The old run's stop floods the journal past the unit's rate limit and fails: journald's own
    # `Suppressed` line about the unit (stamped with journald's run) comes before systemd's
    # `Failed with result` about the old run, which is not the new run failing.
    h = cluster.hosts[1]
    unit = unique_unit("ctl")
    install_unit(h, unit, "ExecStop=/bin/sh /opt/mtptui/tests/integration/hosts/flood-stop.sh\n"
                          "LogRateLimitIntervalSec=2s\nLogRateLimitBurst=300\n")
    cfg = write_config(tmp_path, h, unit)
    r = spec(cfg, f"gpu{h.index}", "mtp1", "--yes", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verified: accept len" in r.stdout
    said = [json.loads(x) for x in h.ssh(["journalctl", f"--unit={unit}", "--output=json"]).stdout.splitlines()]
    said = [(e.get("_SYSTEMD_UNIT"), e.get("MESSAGE")) for e in said if isinstance(e.get("MESSAGE"), str)]
    suppressed = next(i for i, (by, m) in enumerate(said) if by == "systemd-journald.service" and "Suppressed" in m)
    failed = next(i for i, (_, m) in enumerate(said) if "Failed with result 'exit-code'" in m)
    started = [i for i, (_, m) in enumerate(said) if m.startswith("Started ")]
    assert suppressed < failed < started[-1], said[suppressed:started[-1] + 1]


def test_invalid_profile_refused_before_touching_the_host(cluster, tmp_path, audit):
    h = cluster.hosts[2]
    unit = unique_unit("ctl")
    install_unit(h, unit)
    profiles = '[profiles.bad]\nalgorithm = "NEXTN"\nnum_steps = 3\ntopk = 1\nnum_draft_tokens = 8\n'
    cfg = write_config(tmp_path, h, unit, profiles=profiles)
    before = etc_digest(h)
    r = spec(cfg, f"gpu{h.index}", "bad", "--yes", audit=audit)
    assert r.returncode == 2, r.stdout + r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "steps + 1" in r.stderr
    assert etc_digest(h) == before


def test_dry_run_changes_nothing(cluster, tmp_path, audit):
    h = cluster.hosts[2]
    unit = unique_unit("ctl")
    install_unit(h, unit)
    cfg = write_config(tmp_path, h, unit)
    before = etc_digest(h)
    r = spec(cfg, f"gpu{h.index}", "mtp2", "--dry-run", audit=audit)
    assert r.returncode == 0, r.stderr
    assert "--speculative-num-steps 2" in r.stdout and "systemctl restart --no-block" in r.stdout
    assert etc_digest(h) == before
    assert not audit.exists()


def test_sudo_wanting_a_password_changes_nothing(cluster, tmp_path, audit):
    h = cluster.hosts[2]
    unit = unique_unit("ctl")
    install_unit(h, unit)
    cfg = write_config(tmp_path, h, unit, user="pwuser", sudo=True)
    before = etc_digest(h)
    r = spec(cfg, f"gpu{h.index}", "mtp1", "--yes", audit=audit)
    assert r.returncode == 1, r.stdout + r.stderr
    err = [x for x in r.stderr.splitlines() if x.startswith("mtptui spec:")]
    assert len(err) == 1 and "password" in err[0] and "Traceback" not in r.stderr
    assert etc_digest(h) == before


def test_hostile_values_reach_the_server_as_one_literal_argument(cluster, tmp_path, audit):
    h = cluster.hosts[0]
    unit = unique_unit("ctl")
    install_unit(h, unit)
    hostile = "a; touch /tmp/x1 $(touch /tmp/x2) `touch /tmp/x3` %n $HOME \\ \"q\" 'q' é"
    profiles = ('[profiles.hostile]\nalgorithm = "NEXTN"\nnum_steps = 1\ntopk = 1\nnum_draft_tokens = 2\n'
                f'extra_args = ["--served-model-name", {json.dumps(hostile)}]\n')
    cfg = write_config(tmp_path, h, unit, profiles=profiles)
    t0 = time.time()
    r = spec(cfg, f"gpu{h.index}", "hostile", "--yes", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
    args = server_args_after(h, unit, t0)[-1]
    assert f"served_model_name={hostile!r}" in args
    assert h.ssh("ls /tmp/x1 /tmp/x2 /tmp/x3", check=False).returncode != 0


def test_second_console_is_refused_by_the_lock(cluster, tmp_path, audit):
    h = cluster.hosts[1]
    unit = unique_unit("ctl")
    install_unit(h, unit)
    cfg = write_config(tmp_path, h, unit)
    before = exec_start(h, unit)
    # the first holds the lock (held still after its write) for as long as the second takes to start:
    # a first that finished before the second asked raced the test on a loaded machine
    first = spec_started(cfg, f"gpu{h.index}", "mtp2", "--yes", audit=audit, hold="write")
    try:
        deadline = time.time() + 60
        lock = f"/run/lock/mtptui-{unit}.service"
        while h.ssh(["test", "-e", f"{lock}/owner"], check=False).returncode != 0:
            assert time.time() < deadline and first.poll() is None, "the first console never took the lock"
            time.sleep(0.05)
        second = spec(cfg, f"gpu{h.index}", "mtp1", "--yes", audit=audit)
        assert second.returncode == 1
        assert "is locked by" in second.stderr and "since" in second.stderr
        assert first.poll() is None, "the first console ended while it held the lock"
        first.send_signal(signal.SIGINT)  # the first puts the unit back and frees the lock
        out, err = first.communicate(timeout=120)
        assert first.returncode == 130, out + err
    finally:
        if first.poll() is None:
            first.kill()
    assert exec_start(h, unit) == before and h.ssh(["test", "-e", lock], check=False).returncode != 0

    # a stale lock (a console that died) is refused until --break-lock takes it
    h.ssh(["mkdir", lock])
    subprocess.run(h.ssh_argv(f"cat > {lock}/owner"), input=json.dumps({"who": "ops@gone", "since": time.time() - 7200}),
                   text=True, check=True)
    r = spec(cfg, f"gpu{h.index}", "mtp1", "--yes", audit=audit)
    assert r.returncode == 1 and "ops@gone" in r.stderr and "--break-lock" in r.stderr
    r = spec(cfg, f"gpu{h.index}", "mtp1", "--yes", "--break-lock", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr


def test_link_cut_mid_restart_is_finished_on_reconnect(cluster, tmp_path, audit):
    h = cluster.hosts[2]
    unit = unique_unit("ctl")
    install_unit(h, unit)
    cfg = write_config(tmp_path, h, unit)
    proc = spec_started(cfg, f"gpu{h.index}", "mtp3", "--yes", audit=audit)
    try:
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if "wait start" in line:
                break
        h.link(False)
        time.sleep(3)
        h.link(True)
        out, err = proc.communicate(timeout=120)
    finally:
        h.link(True)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, "".join(seen) + out + err
    assert "reconnecting" in "".join(seen) + err
    lost = [p for p in audit_entries(audit)[-1]["phases"] if p["detail"].startswith("link lost")]
    assert lost and lost[0]["state"] == "progress", audit_entries(audit)[-1]["phases"]  # the audit keeps it
    dropin = h.ssh(["cat", f"/etc/systemd/system/{unit}.service.d/50-mtptui-spec.conf"]).stdout
    assert dropin.count("ExecStart=") == 2 and "--speculative-num-steps 3" in dropin
    assert h.ssh(["ls", "-A", f"/etc/systemd/system/{unit}.service.d"]).stdout.split() == ["50-mtptui-spec.conf"]


def test_sglang_0523_dict_server_args_verifies_a_change(cluster, tmp_path, audit):
    """SGLang 0.5.19+ logs `server_args={...}` (the repr of `server_args.resolved_dict()`,
    sglang/srt/entrypoints/engine.py), not `server_args=ServerArgs(...)`: a change on such a server
    is verified from that line, not rolled back for want of one (issue 18)."""
    h = cluster.hosts[0]
    unit = unique_unit("ctl")
    install_unit(h, unit, sim=SIM + ["--sim-version", "0.5.23"])
    cfg = write_config(tmp_path, h, unit)
    name = f"gpu{h.index}"

    t0 = time.time()
    r = spec(cfg, name, "mtp3", "--yes", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verified" in r.stdout and "rolled back" not in r.stdout + r.stderr
    assert "--sim-version 0.5.23" in exec_start(h, unit) and "--speculative-num-steps 3" in exec_start(h, unit)
    args = server_args_after(h, unit, t0)
    assert args and "server_args={'model_path': 'Qwen/Qwen3-8B', " in args[-1] and "ServerArgs(" not in args[-1]
    assert "'speculative_algorithm': 'EAGLE'" in args[-1] and "'speculative_num_steps': 3" in args[-1]

    t0 = time.time()
    r = spec(cfg, name, "off", "--yes", audit=audit)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "speculation off" in r.stdout
    assert "--speculative" not in exec_start(h, unit)
    args = server_args_after(h, unit, t0)
    assert args and "server_args={'model_path': " in args[-1] and "'speculative_algorithm': None" in args[-1]
    entries = audit_entries(audit)
    assert [e["profile"] for e in entries] == ["mtp3", "off"]
    assert all(e["result"] == "applied" and e["exit_code"] == 0 for e in entries)


def test_a_unit_in_a_restart_loop_is_shown_with_exit_5(cluster, tmp_path):
    # A server that fails at every start under Restart=on-failure: systemd keeps it `activating`
    # (auto-restart) and counts restarts, never `failed`; spec says so and exits 5, not 0 (issue 42).
    h = cluster.hosts[0]
    unit = unique_unit("loop")
    install_unit(h, unit, extra="Restart=on-failure\nRestartSec=1h\n", sim=[*SIM, "--no-such-flag"])
    deadline = time.monotonic() + 60
    show = ["systemctl", "show", "--property=SubState", "--value", unit]
    while h.ssh(show).stdout.strip() != "auto-restart":
        assert time.monotonic() < deadline, h.ssh(show).stdout
        time.sleep(0.2)
    cfg = write_config(tmp_path, h, unit)
    r = spec(cfg, f"gpu{h.index}", audit=tmp_path / "audit.jsonl")
    assert r.returncode == 5, r.stdout + r.stderr
    assert f"{unit}.service is in a restart loop: its server failed and systemd restarts it (" in r.stderr, r.stderr
    r = spec(cfg, f"gpu{h.index}", "--json", audit=tmp_path / "audit.jsonl")
    assert r.returncode == 5 and json.loads(r.stdout)["hosts"][0]["restarts"] >= 0, r.stdout + r.stderr
    h.ssh(["systemctl", "stop", unit])
