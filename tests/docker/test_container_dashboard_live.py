"""The dashboard (`mtptui live`, in Textual's pilot) on a container host over SSH, through a link
cut: the loopback sshd's packets dropped both ways (iptables on lo, that port only) while the
container writes on, for longer than the SSH keepalives allow, so the connection is given up and
made again and the stream resumed from its last stamp. Afterwards the screen holds every line
`docker logs --timestamps` gives, each once, and its decode batches are the log's.

The cut: the issue asks 60 s; what makes a cut a loss is the keepalive limit (interval x count),
and this host's is 0.5 s x 2, so CUT_S of 6 s is twelve intervals with no packet through (with the
defaults, 5 s x 3, a 60 s cut is four limits). The test says it saw the link given up (RECONNECTING)
and a second `docker logs` stream started."""

from __future__ import annotations

import shutil
import subprocess

from containers import free_port, run_sim, until
from test_container_live import docker_logs

from mtptui.sources.runtime import stamp_of

CUT_S = 6.0
DECODE = "Decode batch"


def drop(port: int, on: bool) -> None:
    """Every packet to or from the sshd's port on loopback vanishes (on) or passes again."""
    for way in ("--dport", "--sport"):
        rule = ["INPUT", "-i", "lo", "-p", "tcp", way, str(port), "-j", "DROP"]
        subprocess.run(["iptables", "-A" if on else "-D", *rule], check=on, capture_output=True)


def text(line: str) -> str:
    """A line without the runtime's stamp."""
    stamp = stamp_of(line)
    return line[len(stamp) + 1:] if stamp else line


async def test_a_link_cut_loses_and_doubles_nothing_on_the_screen(dockerd, ssh_box, tmp_path, monkeypatch, need):
    need(shutil.which("iptables") is not None, "iptables is missing (the test cuts the link with it)")
    from mtptui.commands.live import container_source
    from mtptui.config import load_config
    from mtptui.sources.base import RECONNECTING, STREAMING
    from mtptui.tui.launch import build_app
    from mtptui.tui.logbuffer import HOST, TEXT
    from mtptui.transport.ssh import SshTransport

    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent")  # only the SSH session reaches the daemon
    name = "sim-cut"
    run_sim(dockerd, name, free_port())
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[[hosts]]\nname = "far"\naddress = "127.0.0.1"\nport = {ssh_box.port}\nuser = "{ssh_box.user}"\n'
                   f'identity = "{ssh_box.identity}"\nknown_hosts = "{ssh_box.known_hosts}"\nssh_config = "/dev/null"\n'
                   f'container = "{name}"\nkeepalive_interval = 0.5\nkeepalive_count_max = 2\nconnect_timeout = 3\n'
                   f'reconnect_initial = 0.5\nreconnect_max = 2\n')
    h = load_config(str(cfg)).hosts[0]
    source = container_source(h, SshTransport(h), since=None, lines=100000)
    app = build_app([source], window="all")
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            dash = app.dash

            def states() -> str:
                return f"states {[s.state for s in dash.feed.status_log][-8:]}"

            await until(pilot, lambda: dash.store.ranks("far"), "the first batches over SSH", said=states)
            drop(ssh_box.port, True)
            await until(pilot, lambda: dash.feed.state_of("far") == RECONNECTING, "the link given up", said=states)
            lost_at = len(dash.feed.status_log)
            for _ in range(int(CUT_S * 10)):  # the container writes on; nothing comes through
                await pilot.pause(0.1)
            drop(ssh_box.port, False)
            await until(pilot, lambda: dash.feed.state_of("far") == STREAMING and source.connects >= 2, "the stream back", said=states)
            assert any(s.state == STREAMING and "resumed at" in s.detail for s in dash.feed.status_log[lost_at:])
            await until(pilot, lambda: dash.feed.counts.read > 0 and not dash.feed.pending, "the lines since the cut", said=states)
            dockerd.docker("kill", name)  # its log is whole now: the screen must come to hold all of it
            want = docker_logs(dockerd, name)
            await until(pilot, lambda: dash.feed.counts.read >= len(want) and not dash.feed.pending, "every line", said=states)
            await pilot.pause(0.5)
            shown = [e[TEXT] for e in dash.feed.log.lines if e[HOST] == "far"]
            batches = sum(r.decode_batches for r in dash.store.ranks("far"))
    finally:
        drop(ssh_box.port, False)
    # the log pane keeps a line as it came until it shows it, then as read (the runtime's stamp taken off)
    assert sorted(map(text, shown)) == sorted(map(text, want))  # nothing lost, nothing twice
    assert dash.feed.counts.read == len(want)
    assert batches == sum(DECODE in x for x in want) > 0
    dockerd.docker("rm", "--force", name)
