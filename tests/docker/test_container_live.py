"""Following containers of the tests' own dockerd: a `docker run` container's log through link
cuts and a restart, compared line by line with `docker logs` (nothing lost, nothing twice, the
restart a new run); a compose service's replicas as engines of their own, recorded by `mtptui
record` and read back by `mtptui summary`."""

from __future__ import annotations

import asyncio
import gc
import json
import subprocess
import sys

from containers import compose_project, free_port, inspect, mtptui, run_sim
from dockerd import Dockerd

from mtptui.sources.container import ContainerLogSource
from mtptui.sources.record import STAMP
from mtptui.sources.runtime import Selector, stamp_key
from mtptui.transport.errors import TransportError
from mtptui.transport.local import LocalRunner


class CutRunner(LocalRunner):
    """This machine's runner, whose streams the test cuts (the `docker logs` process killed), and
    that refuses new ones while a cut lasts, as a lost link does."""

    def __init__(self) -> None:
        self.procs: list = []
        self.down = False

    async def stream(self, argv):
        if self.down:
            raise TransportError("link down (the test's cut)", permanent=False)
        p = await super().stream(argv)
        self.procs.append(p)
        return p

    def cut(self) -> None:
        for p in self.procs:
            if p.proc.returncode is None:
                p.proc.kill()


class Lines:
    def __init__(self) -> None:
        self.got: list[tuple[str | None, str]] = []
        self.states: list[str] = []

    def lines(self, raw, host):
        self.got += [(host, x) for x in raw]

    def status(self, st):
        self.states.append(st.state)

    def dropped(self, n, reason, host):
        raise AssertionError(f"dropped {n}: {reason}")


def order(line: str) -> tuple:
    """A `docker logs --timestamps` line's place: its stamp, as time (stdout's and stderr's lines
    at one stamp have no order between them)."""
    return stamp_key(line.split()[0]), line


def docker_logs(d: Dockerd, name: str) -> list[str]:
    r = subprocess.run(["docker", "logs", "--timestamps", name], env=d.env, capture_output=True, timeout=60)
    out = r.stdout.decode()
    err = r.stderr.decode()
    # the container's stdout and stderr, each in order: merged by their stamps, as times (the
    # runtime drops a stamp's trailing zeros: as text, `…:29.06Z` would sort after `…:29.0601Z`)
    return sorted([x for x in out.splitlines() + err.splitlines() if x], key=lambda x: stamp_key(x.split(" ", 1)[0]))


def test_cuts_and_a_restart_lose_and_double_nothing(dockerd, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", dockerd.host)  # the docker client this process runs talks to it
    name = "sim-live"
    run_sim(dockerd, name, free_port())
    started = inspect(dockerd, name)["State"]["StartedAt"]

    async def follow() -> Lines:
        runner, feed = CutRunner(), Lines()
        src = ContainerLogSource(runner, Selector("docker", container=name), host="sim", since="1", poll_s=0.2)
        task = asyncio.ensure_future(src.run(feed))
        for i in range(3):
            await asyncio.sleep(2)
            runner.cut()
            if i == 1:  # a 60 s cut: no stream at all, the container writing on
                runner.down = True
                await asyncio.sleep(60)
                runner.down = False
        await asyncio.to_thread(dockerd.docker, "restart", "--time", "2", name)
        await asyncio.sleep(4)
        runner.cut()
        await asyncio.sleep(2)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        gc.collect()  # a command cut by the cancel is finalised while its loop still runs
        await asyncio.sleep(0.1)
        assert src.connects >= 5
        return feed

    feed = asyncio.run(follow())
    restarted = inspect(dockerd, name)["State"]["StartedAt"]
    assert restarted != started
    ours = [x for _, x in feed.got if " Started container " in x]
    assert ours == [f"{restarted} Started container {name} (id {inspect(dockerd, name)['Id'][:12]})"]
    got = [x for _, x in feed.got if " Started container " not in x]
    want = docker_logs(dockerd, name)
    last = max(stamp_key(x.split(" ", 1)[0]) for x in got)
    want = [x for x in want if stamp_key(x.split(" ", 1)[0]) <= last]
    assert len(got) == len(set(got))  # nothing twice
    assert sorted(got, key=order) == sorted(want, key=order)  # nothing lost, up to the last line seen
    assert {h for h, _ in feed.got} == {"sim"}
    dockerd.docker("rm", "--force", name)


def test_compose_replicas_are_engines_of_their_own_in_a_record(dockerd, tmp_path, audit):
    root = compose_project(dockerd, tmp_path / "rec", replicas=2)
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[[hosts]]\nname = "rec"\ncompose = "{root}"\nservice = "sim"\nlocal = true\n')
    out = tmp_path / "rec.jsonl"
    r = mtptui(dockerd, "record", "rec", "--out", str(out), "--duration", "8", audit=audit, config=cfg)
    assert r.returncode == 0, r.stdout + r.stderr
    hosts = {json.loads(x)["_HOSTNAME"] for x in out.read_text().splitlines()}
    assert hosts == {"rec-1", "rec-2"}
    s = subprocess.run([sys.executable, "-m", "mtptui", "summary", str(out), "--json"], capture_output=True,
                       text=True, timeout=120)
    assert s.returncode == 0, s.stderr
    doc = json.loads(s.stdout)
    seen = {x["host"] for x in doc["series"] if x.get("decode")}
    assert seen == {"rec-1", "rec-2"}
    # resumed: each replica after its own last line in the record, nothing twice, nothing lost
    r = mtptui(dockerd, "record", "rec", "--out", str(out), "--append", "--duration", "5", audit=audit, config=cfg)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "rec-1: resuming" in r.stderr and "rec-2: resuming" in r.stderr, r.stderr
    entries = [json.loads(x) for x in out.read_text().splitlines()]
    for n in (1, 2):
        got = [f"{e[STAMP]} {e['MESSAGE']}" for e in entries if e["_HOSTNAME"] == f"rec-{n}" and STAMP in e]
        assert len(got) == len(set(got))
        ref = dockerd.docker("ps", "--all", "--quiet", "--filter", f"label=com.docker.compose.project.working_dir={root}",
                             "--filter", f"label=com.docker.compose.container-number={n}").stdout.split()
        last = max(stamp_key(x.split()[0]) for x in got)
        first = min(stamp_key(x.split()[0]) for x in got)
        want = [x for x in docker_logs(dockerd, ref[0]) if first <= stamp_key(x.split()[0]) <= last]
        assert sorted(got, key=order) == sorted(want, key=order)
