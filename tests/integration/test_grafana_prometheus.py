"""The Grafana dashboard (grafana/mtptui-speculation.json) and `mtptui export`'s metrics against a
real Prometheus (Debian's package, scrape interval 1 s) scraping three simulators with SGLang's own
metrics (one without CUDA graphs) and `mtptui export` following a log that grows while Prometheus
watches: a server with NEXTN 3 steps, then, once Prometheus has seen it, a restart with 1 step,
CUDA graphs off and an NCCL timeout (a restart, a settings change and trouble to annotate).

Every panel query and annotation query is run as Grafana would run it, with each value of the
`source` variable: the chosen source's query must return series, the other's none. Waits are for
data to appear, never timed. Last, `mtptui export` following two container hosts' journals (real
systemd and journald, over SSH) into Prometheus."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass

import pytest
from exportproc import Exporter, expected
from hosts.helpers import two_writer_hosts
from hosts.linewriter import line
from promproc import PrometheusServer, available
from simproc import ROOT, Sim

from mtptui.core.parse import LineParser
from mtptui.sim import scenario

DASHBOARD = json.loads((ROOT / "grafana" / "mtptui-speculation.json").read_text())
MODEL = "Qwen/Qwen3-8B"
COMMON = ["--model-path", MODEL, "--tp", "2", "--enable-metrics", "--enable-metrics-for-all-schedulers",
          "--sim-load", "steady", "--sim-startup-seconds", "1"] + scenario.nextn(3)
SIMS = {"a": [], "b": [], "nograph": ["--sim-fault", "no-cuda-graph"]}
LOG = ["--model-path", MODEL, "--tp", "2", "--sim-version", "0.5.8", "--sim-startup-seconds", "5"]
RUN1 = LOG + scenario.nextn(3)
RUN2 = LOG + scenario.nextn(1) + ["--sim-fault", "no-cuda-graph", "--sim-fault", "nccl@8"]
# What Grafana puts in for its own variables; `$host` is the textbox's default.
BUILTINS = {"$__rate_interval": "1m", "$__interval": "15s", "$host": ".*"}
SOURCES = [o["value"] for o in DASHBOARD["templating"]["list"][1]["options"]]


@dataclass
class Rig:
    prom: PrometheusServer
    exporter: Exporter
    sims: dict[str, str]  # role -> instance
    lines: list[str]  # box2's log, both runs
    start: float


def rendered(argv: list[str], **kw) -> list[str]:
    return [x.text for x in scenario.render_argv(argv, duration=30, envelope="cat", systemd=False, **kw)]


def wait_for(what: str, cond, timeout: float = 90.0):
    end = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.5)


@pytest.fixture(scope="module")
def rig(tmp_path_factory, need):
    need(available(), "prometheus is missing (run .ci/system-deps as root, or apt-get install prometheus)")
    tmp = tmp_path_factory.mktemp("grafana")
    children: list = []
    try:
        sims = {role: Sim(COMMON + args, tmp) for role, args in SIMS.items()}
        children += sims.values()
        log = tmp / "box2.log"
        run1, run2 = rendered(RUN1), rendered(RUN2, t0=scenario.T0 + 300)
        log.write_text("".join(x + "\n" for x in run1))
        exporter = Exporter(["--file", str(log), "--host", "box2", "--listen", "127.0.0.1:0",
                             "--stale-after", "3600"], tmp)
        children.append(exporter)
        exporter.wait_serving()
        for s in sims.values():
            s.wait_line("The server is fired up and ready to roll!", timeout=30)
        start = time.time()
        prom = PrometheusServer({"sglang": [f"127.0.0.1:{s.port}" for s in sims.values()],
                                 "mtptui": [exporter.url.split("/")[2]]}, tmp / "prometheus")
        children.append(prom)
        prom.wait_ready()
        prom.wait_targets_up(len(sims) + 1)
        rig = Rig(prom, exporter, {role: f"127.0.0.1:{s.port}" for role, s in sims.items()}, run1 + run2, start)
        # Prometheus sees the first run before the second is written: the counters move under its eyes.
        wait_for("the first run in Prometheus", lambda: lines_read(rig) == len(run1))
        with log.open("a") as f:
            f.write("".join(x + "\n" for x in run2))
        wait_for("the second run in Prometheus", lambda: lines_read(rig) == len(rig.lines))
        yield rig
    finally:
        for c in reversed(children):
            c.stop()


def lines_read(rig: Rig) -> float | None:
    got = rig.prom.api("/api/v1/query", query='mtptui_lines_read_total{host="box2"}')["result"]
    return float(got[0]["value"][1]) if got else None


def expand(expr: str, source: str) -> str:
    for var, value in {"$source": source, **BUILTINS}.items():
        expr = expr.replace(var, value)
    assert not re.search(r"\$(?!1\b)\w", expr), f"a variable left in {expr}"  # "$1" is label_replace's
    return expr


def query_range(rig: Rig, expr: str) -> list[dict]:
    return rig.prom.api("/api/v1/query_range", query=expr, start=f"{rig.start:.3f}", end=f"{time.time():.3f}",
                        step="1")["result"]


def series(rig: Rig, expr: str) -> dict[tuple, list[float]]:
    return {tuple(sorted(s["metric"].items())): [float(v) for _, v in s["values"]] for s in has_data(rig, expr)}


def instant(rig: Rig, expr: str) -> dict[tuple, float]:
    return {tuple(sorted(s["metric"].items())): float(s["value"][1])
            for s in rig.prom.api("/api/v1/query", query=expr)["result"]}


def panel(title_start: str) -> dict:
    return next(p for p in DASHBOARD["panels"] if p["title"].startswith(title_start))


def target(p: dict, source: str) -> str:
    return p["targets"][SOURCES.index(source)]["expr"]


def sglang_decoding(rig: Rig) -> None:
    """Every simulator has decoded (its accept length is set) and counted decode steps a minute long."""
    q = ('count(sglang:spec_accept_length > 0) == 6 and on () '
         'count(sum without (mode) (rate(sglang:cuda_graph_passes_total[1m])) > 0) == 6')
    wait_for("the simulators to decode", lambda: rig.prom.api("/api/v1/query", query=q)["result"])


def has_data(rig: Rig, expr: str) -> list[dict]:
    """The series of a range query once some has values (a range query's last step may fall
    before the second sample a rate needs)."""
    return wait_for(f"data from {expr}", lambda: [s for s in query_range(rig, expr) if s["values"]])


@pytest.mark.parametrize("source", SOURCES)
def test_every_panel_query_returns_data_for_its_source_only(rig, source):
    for p in DASHBOARD["panels"]:
        mine = p["targets"][SOURCES.index(source)]["expr"]
        assert has_data(rig, expand(mine, source)), p["title"]
        for t in p["targets"]:
            if t["expr"] != mine:
                assert query_range(rig, expand(t["expr"], source)) == [], \
                    f"{p['title']}: the other source's query answers with source={source}"


@pytest.mark.parametrize("source", SOURCES)
def test_every_annotation_query_returns_data(rig, source):
    names = []
    for a in DASHBOARD["annotations"]["list"]:
        if a.get("builtIn"):
            continue
        got = {tuple(sorted(s["metric"].items())): s["values"] for s in has_data(rig, expand(a["expr"], source))}
        names.append(a["name"])
        hosts = {dict(k)["host"] for k in got}
        assert hosts == {"box2"}, (a["name"], got)
        if a["name"] == "Settings":  # the first run's settings, then the second's
            assert {dict(k)["settings"] for k in got} == {"EAGLE steps=3 topk=1 draft=4", "EAGLE steps=1 topk=1 draft=2"}
        if a["name"] == "Trouble":
            # the NCCL timeout, then the scheduler that dies of it: a crash, not a logged error
            assert {dict(k)["kind"] for k in got} == {"nccl", "crash"}
    assert names == ["Restarts", "Settings", "Trouble"]


def test_panels_show_what_the_hosts_did(rig):
    sglang_decoding(rig)
    want = expected(rig.lines)["ranks"]
    # mtptui: the log's last figures, per rank; box2 alone with its settings is its own median.
    got = instant(rig, expand(target(panel("Accept length"), "mtptui"), "mtptui"))
    assert {dict(k)["rank"]: v for k, v in got.items()} == pytest.approx(
        {r: w["accept_len"] for r, w in want.items() if "accept_len" in w})
    got = instant(rig, expand(target(panel("Fleet outliers"), "mtptui"), "mtptui"))
    assert got == {(("host", "box2"), ("settings", "EAGLE steps=1 topk=1 draft=2")): 1.0}
    got = series(rig, expand(target(panel("Decode batches without"), "mtptui"), "mtptui"))
    assert {dict(k)["rank"] for k in got} == {"TP0"} and max(max(v) for v in got.values()) > 0

    # SGLang: the middle of three hosts is the median; only the simulator without graphs decodes without.
    got = instant(rig, expand(target(panel("Fleet outliers"), "sglang"), "sglang"))
    assert sorted(dict(k)["instance"] for k in got) == sorted(rig.sims.values())
    assert 1.0 in got.values()
    got = instant(rig, expand(target(panel("Decode batches without"), "sglang"), "sglang"))
    last = {(dict(k)["instance"], dict(k)["tp_rank"]): v for k, v in got.items()}
    assert len(last) == 6
    for (instance, _), v in last.items():
        assert (v > 0) == (instance == rig.sims["nograph"]), last


def test_prometheus_answers_every_exported_metric_with_the_exporters_values(rig):
    served = {k: v for k, v in rig.exporter.scrape().items() if k[0].startswith("mtptui_")}
    families = {name for name, _ in served}
    assert families == {
        "mtptui_spec_accept_length", "mtptui_spec_accept_ratio", "mtptui_gen_throughput_tokens_per_second",
        "mtptui_running_requests", "mtptui_queued_requests", "mtptui_token_usage_ratio",
        "mtptui_decode_batches_total", "mtptui_decode_batches_without_cuda_graph_total", "mtptui_spec_info",
        "mtptui_epoch_start_time_seconds", "mtptui_events_total", "mtptui_source_connected",
        "mtptui_last_batch_time_seconds", "mtptui_lines_read_total", "mtptui_lines_unparsed_total",
        "mtptui_lines_dropped_total"}
    answered = {}
    for name in families:
        for s in rig.prom.api("/api/v1/query", query=f'{name}{{job="mtptui"}}')["result"]:
            labels = {k: v for k, v in s["metric"].items() if k not in ("__name__", "job", "instance")}
            answered[(name, tuple(sorted(labels.items())))] = float(s["value"][1])
    assert answered == served

    # ... and those are what the log says.
    want = expected(rig.lines)
    for rank, w in want["ranks"].items():
        key = (("host", "box2"), ("rank", rank))
        assert answered[("mtptui_decode_batches_total", key)] == w["decode"]
        assert answered[("mtptui_decode_batches_without_cuda_graph_total", key)] == w["graph_off"]
        assert answered[("mtptui_running_requests", key)] == w["running"]
        assert answered[("mtptui_token_usage_ratio", key)] == pytest.approx(w["usage"])
    box2 = (("host", "box2"),)
    for kind, n in want["counts"].items():
        assert answered[(f"mtptui_lines_{kind}_total", box2)] == n
    assert answered[("mtptui_events_total", box2 + (("kind", "restart"),))] == 2
    assert answered[("mtptui_epoch_start_time_seconds", box2)] == scenario.T0 + 300
    assert answered[("mtptui_source_connected", box2)] == 1


@pytest.mark.systemd
def test_prometheus_reads_container_hosts_journals_through_export(cluster, tmp_path, need):
    """Real systemd + journald hosts over SSH, `mtptui export` following them, Prometheus scraping it."""
    need(available(), "prometheus is missing")
    conf = two_writer_hosts(cluster, tmp_path, "prom", rate=50, count=100)
    exporter = Exporter(["--config", str(conf), "--listen", "127.0.0.1:0"], tmp_path)
    prom = None
    try:
        exporter.wait_serving()
        prom = PrometheusServer({"mtptui": [exporter.url.split("/")[2]]}, tmp_path / "prometheus")
        prom.wait_ready()
        q = 'mtptui_decode_batches_total{job="mtptui", rank="TP0"} == 100'

        def both() -> list[dict] | None:
            got = prom.api("/api/v1/query", query=q)["result"]
            return got if len(got) == 2 else None

        got = wait_for("both hosts' 100 lines in Prometheus", both)
        assert sorted(s["metric"]["host"] for s in got) == ["gpu-a", "gpu-b"]
        last = LineParser().parse(line(99, time.time(), "TP0")).record.fields
        for name, value in (("mtptui_spec_accept_length", last["accept_len"]),
                            ("mtptui_running_requests", last["running_req"])):
            answer = prom.api("/api/v1/query", query=f'{name}{{rank="TP0"}}')["result"]
            assert {s["metric"]["host"]: float(s["value"][1]) for s in answer} == {"gpu-a": value, "gpu-b": value}
        answer = prom.api("/api/v1/query", query='mtptui_events_total{kind="restart"}')["result"]
        assert {s["metric"]["host"]: float(s["value"][1]) for s in answer} == {"gpu-a": 1, "gpu-b": 1}  # Started
    finally:
        if prom is not None:
            prom.stop()
        exporter.stop()
