"""The advisor's rules, each on a simulator log that makes it hold and on one that does not: a real
Store fed the simulator's lines, judged at the log's end as the dashboard judges at its playhead.
Each piece of advice carries its numbers and window, and names a key of the key table (or a
command)."""

from __future__ import annotations

import dataclasses
import math
import re
import time
from pathlib import Path

import pytest

from mtptui.config.keys import BY_ID
from mtptui.control.profiles import step
from mtptui.core.advisor import RULES, Limits, advise, launch_settings
from mtptui.core.ingest import Ingest
from mtptui.core.store import Store
from mtptui.sim import scenario


def store_of(lines: list[str]) -> Store:
    store = Store(capacity=100_000)
    ing = Ingest(store)
    for raw in lines:
        ing.feed(raw)
    store.fold()
    return store


def judged(lines: list[str], at: float | None = None, gpus=None) -> dict:
    """rule -> its advice at log time `at` (default: the log's end) for the log's one host;
    `gpus`: a function of the store giving the host's GPU samples."""
    store = store_of(lines)
    (host,) = store.hosts()
    now = store.last_ts if at is None else at
    found = advise(store, host, now, step_name=lambda spec, d: step(launch_settings(spec), d).name,
                   gpus=gpus(store) if gpus else ())
    for a in found:
        assert a.key is None or a.key in BY_ID, a  # never a key the table does not have
        assert a.evidence and re.search(r"\d", a.evidence), a  # numbers on screen with it
    return {a.rule: a for a in found}


def named(name: str) -> list[str]:
    return [ln.text for ln in scenario.render(name)]


def argv(extra: list[str], seconds: float = 300.0) -> list[str]:
    return [ln.text for ln in scenario.render_argv(scenario.QWEN + extra, duration=seconds)]


@pytest.fixture(scope="module")
def healthy() -> dict:
    return judged(named("mtp-on-tp4"))


def test_a_healthy_mtp_run_gets_no_advice(healthy):
    assert healthy == {}


def test_every_rule_is_tested_here():
    names = {r.name for r in RULES}
    src = open(__file__).read()
    assert all(f'"{n}"' in src for n in names)


# -- accept_short ------------------------------------------------------------------------------

def test_accept_short_holds_when_seven_steps_accept_under_three():
    a = judged(argv(scenario.nextn(7)))["accept_short"]
    m = re.match(r"mtp7 accepts (\d\.\d\d) of 8: each step past the first", a.title)
    assert m and float(m.group(1)) <= 4.0
    assert a.key == "spec_step_down" and a.tries == "mtp6"
    assert "over the last 2m" in a.evidence


def test_accept_short_holds_not_at_mtp3s_usual_acceptance(healthy):
    assert "accept_short" not in healthy  # about 2.7 of 4


def test_accept_short_says_off_when_nothing_is_accepted():
    a = judged(argv(scenario.nextn(3) + ["--sim-fault", "accept-collapse@5"]))["accept_short"]
    assert a.key == "spec_toggle" and a.tries == "speculation off"
    assert "nothing past the first token is accepted" in a.title


def test_accept_short_waits_for_its_hold():
    """Acceptance collapses 80 s after ready, the log ends 90 s later: not yet two minutes of it."""
    assert "accept_short" not in judged(named("incident-acceptance-collapse"))


# -- spec_slower -------------------------------------------------------------------------------

def test_spec_slower_holds_past_32k_tokens_per_request():
    a = judged(named("long-context-toggle"))["spec_slower"]
    assert a.title == "speculation slower than spec off past 32-64k tokens/request"
    assert "-11% at 32-64k, -19% at 64k+" in a.evidence
    assert a.key == "spec_toggle"


def test_spec_slower_holds_not_where_speculation_pays():
    assert "spec_slower" not in judged(named("mtp-toggle-restarts"))


# -- graph_off ---------------------------------------------------------------------------------

def test_graph_off_holds_when_no_graph_is_captured():
    a = judged(named("incident-cuda-graph-off"))["graph_off"]
    assert a.key is None and "--disable-cuda-graph" in a.tries and "cuda graph: False" in a.evidence


def test_graph_off_holds_not_with_graphs(healthy):
    assert "graph_off" not in healthy


# -- kv_full -----------------------------------------------------------------------------------

def test_kv_full_holds_on_a_saturated_small_pool():
    a = judged(argv(["--max-total-tokens", "150000", "--sim-load", "saturate"]))["kv_full"]
    m = re.search(r"token usage up to (0\.\d\d) on TP0 and (\d+) `KV cache pool is full", a.evidence)
    assert m and float(m.group(1)) >= Limits().kv_usage_min and int(m.group(2)) >= 1


def test_kv_full_holds_not_on_the_same_pool_at_steady_load():
    assert "kv_full" not in judged(argv(["--max-total-tokens", "150000", "--sim-load", "steady"]))


# -- rank_diverging ----------------------------------------------------------------------------

DP8 = ["--model-path", "deepseek-ai/DeepSeek-V3-0324", "--tp", "8", "--dp", "8", "--enable-dp-attention",
       "--ep", "8", *scenario.nextn(3), "--sim-load", "burst"]


@pytest.fixture(scope="module")
def burst() -> list[str]:
    return [ln.text for ln in scenario.render_argv(DP8, duration=400.0)]


def test_rank_diverging_holds_for_a_rank_made_slower(burst):
    """DP3's throughput cut by 60% from 200 s on: the alerts' divergence, over the advisor's hold."""
    out, start = [], None
    for raw in burst:
        m = re.search(r"\[(\S+ \S+) DP3 TP3 EP3\] Decode batch.*gen throughput \(token/s\): ([\d.]+)", raw)
        if m:
            t = time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S"))
            start = start if start is not None else t
            if t - start >= 200:
                raw = raw.replace(f"(token/s): {m.group(2)}", f"(token/s): {float(m.group(2)) * 0.4:.2f}")
        out.append(raw)
    a = judged(out)["rank_diverging"]
    assert a.ranks == ("DP3 TP3 EP3",) and a.key == "focus_rank_4"
    assert a.title.startswith("tok/s per request on DP3: ") and "in each 30s of the last 2m" in a.evidence


def test_rank_diverging_holds_not_under_burst_load_alone(burst):
    assert "rank_diverging" not in judged(burst)


# -- gpus_idle ---------------------------------------------------------------------------------

def stand_in_gpus(store: Store, running: float | None = None, n: int = 4) -> list:
    """The host's GPUs as the simulator's nvidia-smi stand-in prints them each second of the log
    (read back by core/gpus' parser), serving the #running-req of the log's latest line there, or
    `running` throughout."""
    from mtptui.core.gpus import FIELDS, parse_text
    from mtptui.sim import nvidia_smi

    ts, vs = store.ranks(store.hosts()[0])[0].decode.window("running_req", -math.inf, math.inf)
    out, i = [], 0
    for t in range(math.ceil(ts[0]), math.floor(ts[-1]) + 1):
        while i + 1 < len(ts) and ts[i + 1] <= t:
            i += 1
        text = nvidia_smi.render(nvidia_smi.model(n, vs[i] if running is None else running, t), list(FIELDS),
                                 header=False, units=False)
        out += parse_text(text, float(t))
    return out


CAPPED = ["--max-running-requests", "4", "--sim-load", "steady"]  # 4 admitted, some 20 waiting


@pytest.fixture(scope="module")
def capped() -> list[str]:
    return argv(CAPPED)


def test_gpus_idle_holds_when_requests_wait_on_a_low_running_cap(capped):
    store = store_of(capped)
    (host,) = store.hosts()
    now = store.last_ts
    gpus = stand_in_gpus(store)
    a = judged(capped, gpus=lambda _: gpus)["gpus_idle"]
    m = re.fullmatch(r"queue (\d+) → (\d+) requests \(mean ([\d.]+)\) with 4 running over the last 2m while GPU "
                     r"util (\d+)% mean \(4 GPUs\)", a.evidence)
    assert m, a.evidence
    ts, qs = store.ranks(host)[0].decode.window("queue_req", now - 120, now)
    assert (int(m.group(1)), int(m.group(2))) == (qs[0], qs[-1])
    assert float(m.group(3)) == round(sum(qs) / len(qs), 1) >= Limits().queue_min
    utils = [s.util for s in gpus if now - 120 <= s.t <= now]
    assert int(m.group(4)) == round(sum(utils) / len(utils)) <= Limits().gpu_util_max
    assert a.key is None and "--max-running-requests" in a.tries and "stalled" in a.tries


def test_gpus_idle_holds_not_with_the_gpus_busy(capped):
    """The same queue with the GPUs at full load (the stand-in serving 24 each): they are the limit."""
    assert "gpus_idle" not in judged(capped, gpus=lambda store: stand_in_gpus(store, running=24))


def test_gpus_idle_reads_only_the_gpus_that_hold_the_server(capped):
    """Four GPUs busy serving and four of the box empty (the stand-in's GPUs with no server: 512 MiB
    used, 0%): the mean of all eight would read half busy; the server's four are the limit."""
    from mtptui.sim import nvidia_smi

    def eight(store):
        busy = stand_in_gpus(store, running=24)
        spare = [dataclasses.replace(g, index=g.index + 4, util=0.0, mem_used=512.0, power=nvidia_smi.POWER_IDLE)
                 for g in busy]
        assert sum(g.util for g in busy + spare) / len(busy + spare) <= Limits().gpu_util_max
        return busy + spare

    assert "gpus_idle" not in judged(capped, gpus=eight)


def test_gpus_idle_holds_not_without_gpu_samples(capped):
    assert "gpus_idle" not in judged(capped)


def test_gpus_idle_holds_not_with_idle_gpus_and_no_queue():
    """Steady load under the cap: nothing waits, however idle the GPUs read."""
    assert "gpus_idle" not in judged(argv(["--sim-load", "steady"]), gpus=lambda store: stand_in_gpus(store, 0))


def test_the_dashboard_judges_gpus_idle_on_its_gpu_history(capped):
    """The dashboard (tui/controller.Dashboard, headless) hands each host's GpuHistory to the
    advisor: the same advice as above once the GPUs are in it, none before."""
    from mtptui.core.gpus import GpuHistory
    from mtptui.tui.controller import Dashboard

    dash = Dashboard([], wall=lambda: 1773072303.0)  # the playhead still, as the log's end
    dash.feed.lines(capped, None)
    dash.feed.drain()
    dash.store.fold()
    (host,) = dash.store.hosts()
    assert dash.host == host
    dash._judge_alerts()
    assert "gpus_idle" not in {a.rule for a in dash.advice[host]}
    h = GpuHistory()
    h.add(stand_in_gpus(dash.store))
    dash.gpus[host] = h
    dash._judge_alerts()
    (a,) = [a for a in dash.advice[host] if a.rule == "gpus_idle"]
    assert a.evidence == judged(capped, at=dash.timeline.playhead(), gpus=stand_in_gpus)["gpus_idle"].evidence


# -- summary's advice: each host's last epoch whole -------------------------------------------

def summary_advice(path: str) -> dict:
    from mtptui.core.advisor import advise_epochs
    from mtptui.sources.parallel import summarise

    summary, counts = summarise([path], None, None, 1)
    doc = summary.document(counts.to_json())
    seen = {s["host"]: s["last"] for s in doc["series"]}
    return {a.rule: a for a in advise_epochs(doc["epochs"], seen, step_name=lambda spec, d: step(launch_settings(spec), d).name,
                                             series=doc["series"])}


SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def test_summary_says_what_the_dashboard_says_of_long_contexts():
    a = summary_advice(str(SAMPLES / "long-context-toggle.log"))["spec_slower"]
    assert a.evidence == judged(named("long-context-toggle"))["spec_slower"].evidence


def test_summary_advises_nothing_where_speculation_pays():
    assert summary_advice(str(SAMPLES / "mtp-toggle-restarts.log")) == {}


def test_summary_holds_accept_short_over_a_whole_epoch_and_not_over_a_short_one(tmp_path):
    log = tmp_path / "n7.log"
    log.write_text("\n".join(argv(scenario.nextn(7))) + "\n")
    a = summary_advice(str(log))["accept_short"]
    assert a.tries == "mtp6" and "over epoch 1 (" in a.evidence
    short = tmp_path / "n7-short.log"
    short.write_text("\n".join(argv(scenario.nextn(7), seconds=60.0)) + "\n")
    assert summary_advice(str(short)) == {}  # a minute of it: not yet the hold


def summary_json(paths: list[str]) -> dict:
    import io
    import json
    from contextlib import redirect_stdout

    from mtptui.commands import summary as summary_cmd

    out = io.StringIO()
    with redirect_stdout(out):
        assert summary_cmd.main(["--json", *paths]) == 0
    return json.loads(out.getvalue())


def gpu_record(path: Path, host: str, samples: list) -> str:
    """A record holding only GPU samples (MTPTUI_GPUS entries), beside the log given apart."""
    from mtptui.sources.record import RecordWriter

    w = RecordWriter(str(path))
    # the record's first entry (samples come after one): another host's, so it opens no epoch here
    w.write(['{"MESSAGE":"hello","__REALTIME_TIMESTAMP":"1000000"}'], "elsewhere")
    by_t: dict = {}
    for g in samples:
        by_t.setdefault(g.t, []).append(g)
    for t, got in sorted(by_t.items()):
        w.gpus(host, got, t)
    w.close()
    return str(path)


def test_summary_holds_gpus_idle_over_the_epoch_and_not_with_the_gpus_busy(tmp_path, capped):
    log = tmp_path / "capped.log"
    log.write_text("\n".join(capped) + "\n")
    store = store_of(capped)
    (host,) = store.hosts()
    idle = stand_in_gpus(store)
    doc = summary_json([str(log), gpu_record(tmp_path / "idle.jsonl", host, idle)])
    (a,) = [a for a in doc["advice"] if a["rule"] == "gpus_idle"]
    m = re.fullmatch(r"queue (\d+)-(\d+) requests \(median (\d+)\) with 4 running over epoch 1 \((\S+)\) while "
                     r"GPU util (\d+)% mean \(4 GPUs\)", a["evidence"])
    assert m, a["evidence"]
    _, qs = store.ranks(host)[0].decode.window("queue_req", -math.inf, math.inf)
    assert (int(m.group(1)), int(m.group(2))) == (min(qs), max(qs)) and int(m.group(3)) >= Limits().queue_min
    utils = [s.util for s in idle]
    assert int(m.group(5)) == round(sum(utils) / len(utils))
    busy = summary_json([str(log), gpu_record(tmp_path / "busy.jsonl", host, stand_in_gpus(store, running=24))])
    assert "gpus_idle" not in {a["rule"] for a in busy["advice"]}
    assert "gpus_idle" not in summary_advice(str(log))  # no GPU samples


def second_scaled(runs: list, k) -> list[str]:
    """The runs' lines, the second run's gen throughput scaled by k(its line's #running-req)."""
    from mtptui.sim.scenario import render_runs

    lines, second = [], 0
    for ln in render_runs(runs, t0=scenario.T0, salt="advisor"):
        second += "server_args=" in ln.text
        text = ln.text
        m = re.search(r"gen throughput \(token/s\): ([\d.]+)", text)
        r = re.search(r"#running-req: (\d+)", text)
        if second >= 2 and m and r:
            text = text.replace(m.group(0), f"gen throughput (token/s): {float(m.group(1)) * k(int(r.group(1))):.2f}")
        lines.append(text)
    return lines


def test_spec_slower_holds_at_the_load_being_served_when_speculation_costs_throughput():
    """Off, then MTP 3 steps at the same steady load, the MTP run's gen throughput halved in its
    lines (a draft that costs more than it gains): slower than spec off at the load it serves."""
    from mtptui.sim.scenario import Run, render_runs

    runs = [Run(scenario.QWEN + ["--sim-load", "steady"], serve=200),
            Run(scenario.QWEN + scenario.nextn(3) + ["--sim-load", "steady"], serve=200, end="keep")]
    a = judged(second_scaled(runs, lambda running: 0.5))["spec_slower"]
    m = re.match(r"speculation (\d+)% slower than spec off at (\S+) running requests", a.title)
    assert m and int(m.group(1)) >= 5, a.title
    assert f"the last 2m served at {m.group(2)} running requests" in a.evidence and a.key == "spec_toggle"
    # the same run unhalved: speculation pays there
    plain = [ln.text for ln in render_runs(runs, t0=scenario.T0, salt="advisor")]
    assert "spec_slower" not in judged(plain)


def test_advice_waits_for_the_hold_and_goes_with_the_data():
    """CUDA graphs off from the start: nothing a minute after the first decode line, advice once
    two minutes have held."""
    lines = named("incident-cuda-graph-off")
    store = store_of(lines)
    (host,) = store.hosts()
    first = min(store.ranks(host)[0].decode.times())
    assert advise(store, host, first + 60) == []
    assert [a.rule for a in advise(store, host, first + 130)] == ["graph_off"]


# -- spec_graph_bs: speculation pushing the bigger batches off CUDA graphs --------------------
# SGLang replays a decode (verify) graph only for a batch of at most the largest size captured,
# --cuda-graph-max-bs requests (CudaGraphRunner.can_run, sglang 0.5.10
# srt/model_executor/cuda_graph_runner.py: `cuda_graph_bs <= self.max_bs`), and logs each batch's
# answer as `cuda graph: {can_run_cuda_graph}` (0.5.23 srt/managers/scheduler_components/
# metrics_reporter.py). The simulator does the same (sim/behaviour.py Timing.graph_on).

def graph_capped(load: str, spec: bool = True) -> list[str]:
    return argv((scenario.nextn(3) if spec else [])
                + ["--max-running-requests", "64", "--cuda-graph-max-bs", "16", "--sim-load", load])


def test_spec_graph_bs_holds_when_batches_past_the_capture_run_eager():
    a = judged(graph_capped("burst"))["spec_graph_bs"]
    m = re.fullmatch(r"(\d+) of (\d+) decode lines over the last 2m log `cuda graph: False`, each at (\d+)-(\d+) "
                     r"running requests; every line at (\d+) or fewer ran on a graph", a.evidence)
    assert m, a.evidence
    assert int(m.group(3)) > 16 >= int(m.group(5)) and int(m.group(4)) == 64
    assert a.tries.startswith("raise --cuda-graph-max-bs to 64 (64 × 4 = 256 tokens per verify batch)")
    assert a.key is None and "graph_off" not in judged(graph_capped("burst"))


def test_spec_graph_bs_speaks_for_graph_off_when_the_load_stays_past_the_capture():
    """A ramp: its first minutes on graphs, its last two all eager. The graphs ran: the size to
    raise is said, not `drop --disable-cuda-graph`."""
    found = judged(graph_capped("ramp"))
    assert "spec_graph_bs" in found and "graph_off" not in found
    m = re.match(r"(\d+) of (\d+) decode lines", found["spec_graph_bs"].evidence)
    assert m and m.group(1) == m.group(2), found["spec_graph_bs"].evidence


def test_spec_graph_bs_holds_not_within_the_capture(healthy):
    assert "spec_graph_bs" not in healthy
    assert "spec_graph_bs" not in judged(argv(scenario.nextn(3) + ["--cuda-graph-max-bs", "64", "--sim-load", "burst"]))


def test_spec_graph_bs_holds_not_without_speculation():
    assert "spec_graph_bs" not in judged(graph_capped("burst", spec=False))


def test_spec_graph_bs_holds_not_where_no_graph_ran():
    found = judged(named("incident-cuda-graph-off"))
    assert "spec_graph_bs" not in found and "graph_off" in found


# -- accept_drift: acceptance falling over hours within one run (vllm #41838) --------------------

ACCEPT = re.compile(r"accept len: ([\d.]+)")
STAMP = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)")


@pytest.fixture(scope="module")
def three_hours() -> list[str]:
    return argv(scenario.nextn(3) + ["--sim-load", "steady"], seconds=3 * 3600)


def drifted(lines: list[str], fall: float) -> list[str]:
    """The run's accept len falling linearly by `fall` (a share) from its first line to its last."""
    import datetime as dt

    def t(line: str) -> float:
        return dt.datetime.strptime(STAMP.search(line).group(1), "%Y-%m-%d %H:%M:%S").timestamp()

    stamped = [ln for ln in lines if "Decode batch" in ln and STAMP.search(ln)]
    t0, t1 = t(stamped[0]), t(stamped[-1])
    out = []
    for ln in lines:
        m = ACCEPT.search(ln)
        if m and "Decode batch" in ln:
            k = 1 - fall * (t(ln) - t0) / (t1 - t0)
            ln = ln.replace(m.group(0), f"accept len: {max(1.0, float(m.group(1)) * k):.2f}")
        out.append(ln)
    return out


def test_accept_drift_holds_when_acceptance_falls_over_three_hours(three_hours):
    a = judged(drifted(three_hours, 0.2))["accept_drift"]
    m = re.fullmatch(r"accept len ([\d.]+) in the first 4\dm\S* of this run \(\S+ without a restart\), then "
                     r"([\d.]+), ([\d.]+), ([\d.]+) in each \S+ after; mean #running-req (\d+) then (\d+)", a.evidence)
    assert m, a.evidence
    first, *rest = (float(m.group(i)) for i in range(1, 5))
    assert first > rest[0] > rest[1] > rest[2] and rest[2] <= first * 0.9
    assert a.key == "restart" and re.match(r"accept len fell 1\d% over this run", a.title)


def test_accept_drift_holds_not_on_a_steady_run_of_three_hours(three_hours):
    assert "accept_drift" not in judged(three_hours)


def test_accept_drift_holds_not_on_a_small_fall_or_a_short_run(three_hours):
    assert "accept_drift" not in judged(drifted(three_hours, 0.03))
    hour = argv(scenario.nextn(3) + ["--sim-load", "steady"], seconds=3600)
    assert "accept_drift" not in judged(drifted(hour, 0.3))  # an hour: not the hours the rule waits for


# -- spec_stops_paying: the concurrency above which speculation stops paying -------------------

def ramped(factor_from_17: float, below: float = 1.0) -> list[str]:
    """Off, then MTP 3 steps, each up the same ramp of load; the MTP run's gen throughput scaled
    by `factor_from_17` in its lines at 17 running requests or more (a draft that costs more than
    it gains past some batch, as vllm #12755 and llm-d #2074 measured), by `below` under 17."""
    from mtptui.sim.scenario import Run

    runs = [Run(scenario.QWEN + ["--sim-load", "ramp"], serve=300),
            Run(scenario.QWEN + scenario.nextn(3) + ["--sim-load", "ramp"], serve=300, end="keep")]
    return second_scaled(runs, lambda running: factor_from_17 if running >= 17 else below)


def test_spec_stops_paying_holds_where_speculation_falls_behind_from_a_load_up():
    a = judged(ramped(0.4))["spec_stops_paying"]
    assert a.title == "speculation stops paying above 5-16 running requests", a.title
    m = re.match(r"gen tok/s of this epoch against the last run without speculation, by #running-req: (.*) "
                 r"\((\d+) decode lines\)", a.evidence)
    assert m, a.evidence
    changes = dict((label, int(pct)) for pct, label in re.findall(r"([+-]\d+)% at (\S+?)(?:,|$)", m.group(1)))
    assert changes["5-16"] > 5 and changes["17-64"] < -5, changes
    assert a.key == "profiles" and "from 17-64 running requests" in a.tries and a.tries.endswith("--max-running-requests 16")
    assert "SGLang: adaptive = true; vLLM: schedule = [[1, 16, 3], [17, 17, 0]])" in a.tries
    # a schedule vLLM takes as it is (the profile check holds it to vLLM 0.32's own rules)
    from mtptui.config.profile import Profile
    from mtptui.control.launch import Context
    from mtptui.control.profiles import check_profile
    check_profile(Profile("s", algorithm="NEXTN", num_steps=3, schedule=((1, 16, 3), (17, 17, 0))),
                  Context(version=(0, 32, 0)), "vllm")


def test_spec_stops_paying_holds_not_where_speculation_pays_at_every_load():
    assert "spec_stops_paying" not in judged(ramped(1.0))


def test_spec_stops_paying_holds_not_where_it_is_behind_at_every_load():
    """Slower at every load: no threshold to name (spec_slower's fact, at the load served)."""
    found = judged(ramped(0.4, below=0.4))
    assert "spec_stops_paying" not in found and "spec_slower" in found


def test_summary_says_where_speculation_stops_paying_as_the_dashboard_does(tmp_path):
    log = tmp_path / "ramped.log"
    lines = ramped(0.4)
    log.write_text("\n".join(lines) + "\n")
    a = summary_advice(str(log))["spec_stops_paying"]
    assert a.evidence == judged(lines)["spec_stops_paying"].evidence
    plain = tmp_path / "plain.log"
    plain.write_text("\n".join(ramped(1.0)) + "\n")
    assert "spec_stops_paying" not in summary_advice(str(plain))
