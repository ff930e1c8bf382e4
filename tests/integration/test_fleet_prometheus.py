"""`mtptui fleet` against a real Prometheus (Debian's package) scraping real simulators with
SGLang's own metrics (two healthy, one without speculation, one whose acceptance collapses) and
`mtptui export` following a simulator's log (whose acceptance collapsed too), scrape interval 1 s.

The figures of the exported host come from its log's lines; the simulators' move with their load,
so their figures are checked for what they must be (speculation or none, collapsed or not), and
the flags exactly. The fleet is waited for until the collapse has happened, never timed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from functools import partial

import pytest
from exportproc import Exporter, expected
from promproc import PrometheusServer, available
from simproc import ROOT, Sim
from textual.widgets import Input

from mtptui.core.epochs import rank_key
from mtptui.fleet.reader import ReaderProcess, load
from mtptui.config import load_config
from mtptui.fleet.outliers import Limits
from mtptui.fleet.prom import Prometheus
from mtptui.sim import scenario
from mtptui.tui.fleet_app import FleetApp
from mtptui.tui.widgets.fleet_table import FleetTable

MODEL = "Qwen/Qwen3-8B"
COMMON = ["--model-path", MODEL, "--tp", "2", "--enable-metrics", "--enable-metrics-for-all-schedulers",
          "--sim-load", "steady", "--sim-startup-seconds", "1"]
SIMS = {"healthy-a": scenario.nextn(3), "healthy-b": scenario.nextn(3), "spec-off": [],
        "collapse": scenario.nextn(3) + ["--sim-fault", "accept-collapse@5"]}
LOG_ARGV = ["--model-path", MODEL, "--tp", "2", "--enable-metrics-for-all-schedulers", "--sim-version", "0.5.8",
            "--sim-startup-seconds", "5", "--sim-fault", "accept-collapse@5"] + scenario.nextn(3)
HALF_CENT = 0.005 + 1e-9


@dataclass
class Rig:
    prom: PrometheusServer
    hosts: dict[str, str]  # role -> the host's name in the fleet
    sims: dict[str, Sim]
    log_lines: list[str]
    tmp: object


@pytest.fixture(scope="module")
def rig(tmp_path_factory, need):
    need(available(), "prometheus is missing (run .ci/system-deps as root, or apt-get install prometheus)")
    tmp = tmp_path_factory.mktemp("fleet")
    children: list = []
    try:
        sims = {}
        for role, args in SIMS.items():
            sims[role] = Sim(COMMON + args, tmp)
            children.append(sims[role])
        log = tmp / "box1.log"
        lines = [x.text for x in scenario.render_argv(LOG_ARGV, duration=40, envelope="cat", systemd=False)]
        log.write_text("".join(x + "\n" for x in lines))
        exporter = Exporter(["--file", str(log), "--host", "box1", "--listen", "127.0.0.1:0",
                             "--stale-after", "3600"], tmp)
        children.append(exporter)
        exporter.wait_serving()
        # All of the log is read before the first scrape: its counters never move in Prometheus.
        exporter.scrape_when(lambda m: m.get(("mtptui_lines_read_total", (("host", "box1"),))) == len(lines),
                             "the log to be read")
        for s in sims.values():
            s.wait_line("The server is fired up and ready to roll!", timeout=30)
        hosts = {role: f"127.0.0.1:{s.port}" for role, s in sims.items()}
        prom = PrometheusServer({"sglang": list(hosts.values()), "mtptui": [exporter.url.split("/")[2]]},
                                tmp / "prometheus")
        children.append(prom)
        prom.wait_ready()
        prom.wait_targets_up(len(hosts) + 1)
        yield Rig(prom, dict(hosts, exported="box1"), sims, lines, tmp)
    finally:
        for c in reversed(children):
            c.stop()


def fleet(*args: str, config=None) -> subprocess.CompletedProcess:
    conf = ["--config", str(config)] if config else ["--config", "/dev/null"]
    return subprocess.run([sys.executable, "-m", "mtptui", "fleet", *conf, *args], capture_output=True, text=True,
                          cwd=str(ROOT), timeout=60)


def fleet_json(rig: Rig) -> dict[str, dict]:
    p = fleet("--prometheus", rig.prom.url, "--once", "--json")
    assert p.returncode == 0, p.stderr
    return {h["host"]: h for h in json.loads(p.stdout)["hosts"]}


def settled(rig: Rig, timeout: float = 120.0) -> dict[str, dict]:
    """The fleet once the collapse has happened and every simulator's decode steps are counted."""
    end = time.monotonic() + timeout
    while True:
        hosts = fleet_json(rig)
        collapse = hosts.get(rig.hosts["collapse"])
        sims = [hosts.get(rig.hosts[r]) for r in SIMS]
        if (all(sims) and all(r["graph"] is not None for h in sims for r in h["ranks"])
                and all(r["accept_len"] is not None and r["accept_len"] <= 1.10 for r in collapse["ranks"])):
            return hosts
        assert time.monotonic() < end, f"the fleet did not settle: {json.dumps(hosts, indent=1)}"
        time.sleep(1)


def kinds(host: dict) -> list[str]:
    return [f["kind"] for f in host["flags"]]


def test_fleet_json_flags_the_silent_off_and_the_collapsed_hosts(rig):
    hosts = settled(rig)
    assert set(hosts) == set(rig.hosts.values())
    name = rig.hosts

    for role in SIMS:
        h = hosts[name[role]]
        assert h["source"] == "sglang"
        assert h["spec"] == {"model_name": MODEL}
        assert [r["rank"] for r in h["ranks"]] == ["TP0", "TP1"]
        for r in h["ranks"]:
            assert r["gen_throughput"] > 0 and isinstance(r["running"], int) and isinstance(r["queue"], int)
            assert r["graph"] is True  # decode steps, all with CUDA graphs, in the last 2 minutes
            if role == "spec-off":  # SGLang's 0 without speculation is no figure, not a zero
                assert r["accept_len"] is None and r["accept_rate"] is None
            elif role == "collapse":
                assert r["accept_len"] <= 1.10
            else:
                assert 1.5 < r["accept_len"] <= 4 and 0 < r["accept_rate"] <= 1

    assert kinds(hosts[name["healthy-a"]]) == [] and kinds(hosts[name["healthy-b"]]) == []
    assert kinds(hosts[name["spec-off"]]) == ["spec_off"]
    assert hosts[name["spec-off"]]["flags"][0]["text"] == "decodes without speculation while 3 of 4 peers speculate"
    assert kinds(hosts[name["collapse"]]) == ["accept_collapsed", "accept_outlier"]
    outlier = hosts[name["collapse"]]["flags"][1]
    healthy = sorted(hosts[name[r]]["ranks"][0]["accept_len"] for r in ("healthy-a", "healthy-b"))
    assert healthy[0] <= outlier["median"] <= healthy[1] and outlier["value"] <= 1.10

    box = hosts["box1"]
    assert box["source"] == "mtptui"
    assert box["spec"] == {"algorithm": "EAGLE", "steps": 3, "topk": 1, "draft_tokens": 4,
                           "settings": "EAGLE steps=3 topk=1 draft=4"}
    want = expected(rig.log_lines)["ranks"]
    assert [r["rank"] for r in box["ranks"]] == sorted(want) == ["TP0", "TP1"]
    for r in box["ranks"]:
        w = want[r["rank"]]
        assert r["accept_len"] == pytest.approx(w["accept_len"], abs=HALF_CENT)
        assert r["accept_rate"] == pytest.approx(w["accept_rate"], abs=HALF_CENT)
        assert r["gen_throughput"] == pytest.approx(w["gen"], abs=HALF_CENT)
        assert (r["running"], r["queue"]) == (w["running"], w["queue"])
        assert r["graph"] is None  # the log was read before Prometheus came: no decode in the window
    # Alone with its settings, it has no peers; its acceptance collapsed by its own measure.
    assert kinds(box) == ["accept_collapsed"]


def test_match_narrows_every_query(rig):
    p = fleet("--prometheus", rig.prom.url, "--match", '{job="mtptui"}', "--json")
    assert p.returncode == 0, p.stderr
    assert [h["host"] for h in json.loads(p.stdout)["hosts"]] == ["box1"]
    p = fleet("--prometheus", rig.prom.url, "--match", f'instance="{rig.hosts["spec-off"]}"', "--once")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 2 and lines[0].split()[:2] == ["host", "source"]
    # Alone, it has no peers to be the odd one out of: no flag (the last column is the graph's).
    assert lines[1].split() == [rig.hosts["spec-off"], "sglang", "model", MODEL, "2", "-", "-", *lines[1].split()[7:10],
                                "on"]


def test_errors_are_one_line(rig):
    # A selector Prometheus refuses: exit 2.
    p = fleet("--prometheus", rig.prom.url, "--match", '{job=~"("}', "--json")
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr.startswith("mtptui fleet: Prometheus refused the query: ") and p.stderr.count("\n") == 1
    # Not Prometheus (a simulator's HTTP server), nothing listening, not a URL: exit 1.
    sim_url = f"http://{rig.hosts['healthy-a']}"
    p = fleet("--prometheus", sim_url, "--json")
    assert (p.returncode, p.stdout) == (1, "")
    assert p.stderr == f"mtptui fleet: {sim_url}: HTTP 404 Not Found (is it Prometheus?)\n"
    from simproc import free_port

    port = free_port()
    p = fleet("--prometheus", f"http://127.0.0.1:{port}", "--once")
    assert (p.returncode, p.stderr) == (1, f"mtptui fleet: cannot reach Prometheus at http://127.0.0.1:{port}: "
                                           "Connection refused\n")
    p = fleet("--prometheus", "prom:9090", "--once")
    assert (p.returncode, p.stderr) == (1, "mtptui fleet: 'prom:9090': not a Prometheus URL (give http://HOST:9090)\n")


# --- the view, driven with Textual's Pilot ---------------------------------------------------------

async def wait_loaded(pilot, app) -> None:
    end = time.monotonic() + 30
    while app.fleet.refreshed is None:
        assert time.monotonic() < end, app.fleet.error
        await pilot.pause(0.1)


async def test_table_sorts_filters_finds_and_opens(rig, tmp_path):
    settled(rig)
    conf = tmp_path / "config.toml"
    conf.write_text('[defaults]\nunit = "sglang"\n\n[[hosts]]\nname = "box1"\naddress = "10.0.0.9"\n')
    # As `mtptui fleet` runs it: its refreshes read in a process of their own.
    reader = ReaderProcess(partial(load, Prometheus(rig.prom.url), None, Limits()))
    app = FleetApp(reader, config=load_config(str(conf)), interval=3600, title=rig.prom.url)
    async with app.run_test(size=(170, 40)) as pilot:
        await wait_loaded(pilot, app)
        table = app.query_one(FleetTable)
        assert table.column("host") == sorted(rig.hosts.values(), key=rank_key)
        assert reader._proc.pid != os.getpid() and reader._proc.is_alive()
        await pilot.press("r")  # again, by the same child
        await pilot.pause(0.5)
        assert app.fleet.error == "" and table.column("host") == sorted(rig.hosts.values(), key=rank_key)

        # s: the next column each time; accept len is the fifth. Absent figures go last either way.
        await pilot.press(*"ssss")
        assert table.header("accept_len") == "accept len ▲"
        values = table.column("accept_len")
        assert values[-1] == "-" and values[:-1] == sorted(values[:-1], key=float)
        assert table.column("host")[-1] == rig.hosts["spec-off"]
        await pilot.press("S")
        values = table.column("accept_len")
        assert values[-1] == "-" and values[:-1] == sorted(values[:-1], key=float, reverse=True)

        # /: rows filtered as you type; Escape clears the filter.
        await pilot.press("slash", *"spec_off")
        assert app.query_one(Input).has_focus
        assert table.column("host") == [rig.hosts["spec-off"]]
        await pilot.press("escape")
        assert table.row_count == len(rig.hosts) and table.has_focus

        # !: flagged hosts only; space: the ranks of the host under the cursor.
        await pilot.press("exclamation_mark")
        assert sorted(table.column("host")) == sorted([rig.hosts["spec-off"], rig.hosts["collapse"], "box1"])
        await pilot.press("exclamation_mark", "f", *"box1", "enter")
        assert table.column("host")[table.cursor_row] == "box1"
        await pilot.press("space")
        hosts = table.column("host")
        i = hosts.index("box1")
        assert [h.strip() for h in hosts[i + 1:i + 3]] == ["TP0", "TP1"]
        assert table.column("flags")[i:i + 3] == ["accept_collapsed", "", ""]

        # Enter: the app ends with the live dashboard's HOST: the config's box1.
        table.move_cursor(i)
        await pilot.press("enter")
    reader.close()
    assert app.return_value == "box1"


async def test_enter_on_an_address_without_a_unit_says_why(rig):
    app = FleetApp(partial(load, Prometheus(rig.prom.url), None, Limits()), config=load_config("/dev/null"),
                   interval=3600, title=rig.prom.url)
    async with app.run_test(size=(170, 40)) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("enter")  # the first host: a simulator at 127.0.0.1
        await pilot.pause()
        first = sorted(rig.hosts.values(), key=rank_key)[0]  # a simulator: 127.0.0.1 sorts before box1
        assert [m for m, _ in app.told] == [
            f"cannot open {first}: 127.0.0.1: which unit? give --unit, --container, or --compose and --service "
            "(or unit = ... in the config)"]
        assert app.is_running
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running
    assert app.return_value is None


def test_a_server_that_stops_is_down_and_no_longer_a_peer(rig):
    """Last in this module: it stops a simulator."""
    settled(rig)
    rig.sims["healthy-b"].stop()
    end = time.monotonic() + 60
    while True:
        hosts = fleet_json(rig)
        if kinds(hosts[rig.hosts["healthy-b"]]) == ["down"]:
            break
        assert time.monotonic() < end, hosts[rig.hosts["healthy-b"]]
        time.sleep(0.5)
    gone = hosts[rig.hosts["healthy-b"]]
    assert gone["ranks"] == [] and gone["spec"] == {"model_name": MODEL}
    # Two speculating hosts are left: no median to be an outlier from; the collapse is still one.
    assert kinds(hosts[rig.hosts["collapse"]]) == ["accept_collapsed"]
    assert kinds(hosts[rig.hosts["spec-off"]]) == ["spec_off"]  # 2 of the 3 decoding hosts speculate
