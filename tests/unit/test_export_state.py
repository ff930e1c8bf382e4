"""`mtptui export`'s families, from lines fed to its state and read back through prometheus_client's
own exposition and parser, with a clock the test moves (staleness)."""

from __future__ import annotations

from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from mtptui.export.collector import ExportCollector
from mtptui.export.state import ExportState
from mtptui.sources.base import FAILED, STREAMING, SourceStatus

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
SERVER_ARGS = ("[2026-03-09 16:00:00] server_args=ServerArgs(model_path='deepseek-ai/DeepSeek-V3', "
               "tp_size=8, speculative_algorithm='EAGLE', speculative_draft_model_path='deepseek-ai/DeepSeek-V3', "
               "speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4)")


def decode(t: str, rank: str, running: int, accept: str = "accept len: 2.87, accept rate: 0.62, ",
           graph: bool = True, gen: float = 1234.5, queue: int = 0, usage: float = 0.23) -> str:
    return (f"[2026-03-09 16:00:{t} {rank}] Decode batch, #running-req: {running}, #token: 45678, "
            f"token usage: {usage:.2f}, {accept}cuda graph: {graph}, gen throughput (token/s): {gen:.2f}, "
            f"#queue-req: {queue}")


def prefill(t: str, rank: str, running: int, queue: int) -> str:
    return (f"[2026-03-09 16:00:{t} {rank}] Prefill batch, #new-seq: 1, #new-token: 512, #cached-token: 0, "
            f"token usage: 0.31, #running-req: {running}, #queue-req: {queue}, #pending-token: 0, "
            "cuda graph: False, input throughput (token/s): 4321.00")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def setup(hosts=("gpu1",), stale_after=30.0):
    clock = Clock()
    state = ExportState(list(hosts), clock=clock)
    registry = CollectorRegistry()
    registry.register(ExportCollector(state, stale_after, clock=clock))
    return state, registry, clock


def scrape(registry) -> dict[tuple, float]:
    """(sample name, sorted labels) -> value."""
    text = generate_latest(registry).decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(text) for s in f.samples}


def rank(host: str, r: str) -> tuple:
    return (("host", host), ("rank", r))


def test_gauges_are_the_last_lines_and_counters_count_them():
    state, registry, _ = setup()
    state.lines([SERVER_ARGS, decode("01", "TP0", 10, graph=False), decode("02", "TP0", 12, gen=2000.0),
                 decode("02", "TP1", 11, accept="accept len: 1.95, accept rate: 0.32, "),
                 "[2026-03-09 16:00:03] INFO:     127.0.0.1:5000 - \"GET /health HTTP/1.1\" 200 OK"], "gpu1")
    m = scrape(registry)
    tp0, tp1 = rank("gpu1", "TP0"), rank("gpu1", "TP1")
    assert m[("mtptui_spec_accept_length", tp0)] == 2.87 and m[("mtptui_spec_accept_length", tp1)] == 1.95
    assert m[("mtptui_spec_accept_ratio", tp1)] == 0.32
    assert m[("mtptui_gen_throughput_tokens_per_second", tp0)] == 2000.0
    assert m[("mtptui_running_requests", tp0)] == 12 and m[("mtptui_running_requests", tp1)] == 11
    assert m[("mtptui_queued_requests", tp0)] == 0 and m[("mtptui_token_usage_ratio", tp0)] == 0.23
    assert m[("mtptui_decode_batches_total", tp0)] == 2 and m[("mtptui_decode_batches_total", tp1)] == 1
    assert m[("mtptui_decode_batches_without_cuda_graph_total", tp0)] == 1
    host = (("host", "gpu1"),)
    assert m[("mtptui_lines_read_total", host)] == 5
    assert m[("mtptui_lines_unparsed_total", host)] == 1 and m[("mtptui_lines_dropped_total", host)] == 0
    info = [k for k in m if k[0] == "mtptui_spec_info"]
    assert info == [("mtptui_spec_info", (("algorithm", "EAGLE"), ("draft_tokens", "4"), ("host", "gpu1"),
                                          ("settings", "EAGLE (MTP) steps=3 topk=1 draft=4"), ("steps", "3"),
                                          ("topk", "1")))]
    assert m[("mtptui_epoch_start_time_seconds", host)] == state.epochs.current("gpu1").start
    assert m[("mtptui_last_batch_time_seconds", host)] == state.ranks[("gpu1", "TP0")].last_ts


def test_a_prefill_moves_the_counts_and_a_decode_without_acceptance_drops_it():
    state, registry, _ = setup()
    state.lines([decode("01", "TP0", 10), prefill("02", "TP0", 10, 3)], "gpu1")
    m = scrape(registry)
    tp0 = rank("gpu1", "TP0")
    assert (m[("mtptui_running_requests", tp0)], m[("mtptui_queued_requests", tp0)]) == (10, 3)
    assert m[("mtptui_token_usage_ratio", tp0)] == 0.31 and m[("mtptui_spec_accept_length", tp0)] == 2.87
    assert m[("mtptui_decode_batches_total", tp0)] == 1  # a prefill is not a decode batch
    state.lines([decode("03", "TP0", 9, accept="")], "gpu1")  # speculation off now: absent, not 2.87
    m = scrape(registry)
    assert ("mtptui_spec_accept_length", tp0) not in m and ("mtptui_spec_accept_ratio", tp0) not in m
    assert m[("mtptui_gen_throughput_tokens_per_second", tp0)] == 1234.5


def test_a_silent_rank_goes_stale_but_keeps_its_counters():
    state, registry, clock = setup(stale_after=30.0)
    state.lines([decode("01", "TP0", 10), decode("01", "TP1", 10)], "gpu1")
    clock.now += 20
    state.lines([decode("21", "TP1", 10)], "gpu1")
    clock.now += 15  # TP0 silent for 35 s, TP1 for 15 s
    m = scrape(registry)
    assert ("mtptui_spec_accept_length", rank("gpu1", "TP0")) not in m
    assert ("mtptui_running_requests", rank("gpu1", "TP0")) not in m
    assert m[("mtptui_spec_accept_length", rank("gpu1", "TP1"))] == 2.87
    assert m[("mtptui_decode_batches_total", rank("gpu1", "TP0"))] == 1
    state.lines([decode("40", "TP0", 7)], "gpu1")  # it logs again: fresh again
    assert scrape(registry)[("mtptui_running_requests", rank("gpu1", "TP0"))] == 7


def test_events_restarts_and_connection_per_host():
    state, registry, _ = setup(hosts=("gpu1", "gpu2"))
    state.status(SourceStatus("gpu1", STREAMING))
    state.status(SourceStatus("gpu2", FAILED, "auth refused"))
    state.lines([
        "2026-03-09T16:00:00+00:00 gpu-h1 systemd[1]: Started sglang.service - SGLang.",
        "2026-03-09T16:00:01+00:00 gpu-h1 python3[1]: " + SERVER_ARGS,
        "2026-03-09T16:00:09+00:00 gpu-h1 python3[1]: [2026-03-09 16:00:09] The server is fired up and ready to roll!",
        "2026-03-09T16:00:10+00:00 gpu-h1 python3[1]: " + decode("10", "TP0", 4),
        "2026-03-09T16:00:11+00:00 gpu-h1 python3[1]: [2026-03-09 16:00:11 TP0] KV cache pool is full. Retract "
        "requests. #retracted_reqs: 2, #new_tokens_gained: 900, #new_token_ratio: 0.4000 -> 0.5000",
        "2026-03-09T16:00:12+00:00 gpu-h1 python3[1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB",
        "2026-03-09T16:00:13+00:00 gpu-h1 systemd[1]: sglang.service: Main process exited, code=exited, status=1/FAILURE",
        "2026-03-09T16:00:20+00:00 gpu-h1 systemd[1]: Started sglang.service - SGLang.",
    ], "gpu1")
    m = scrape(registry)

    def ev(host, kind):
        return m[("mtptui_events_total", (("host", host), ("kind", kind)))]

    assert [ev("gpu1", k) for k in ("restart", "ready", "retract", "oom", "crash", "nccl", "watchdog")] == \
        [2, 1, 1, 1, 1, 0, 0]
    assert ev("gpu2", "restart") == 0  # every host has every kind, from 0
    assert m[("mtptui_source_connected", (("host", "gpu1"),))] == 1
    assert m[("mtptui_source_connected", (("host", "gpu2"),))] == 0
    assert m[("mtptui_epoch_start_time_seconds", (("host", "gpu1"),))] == 1773072020.0  # the second start
    assert ("mtptui_epoch_start_time_seconds", (("host", "gpu2"),)) not in m


def test_vllm_acceptance_comes_from_its_own_line():
    state, registry, _ = setup(hosts=("v1",))
    lines = (SAMPLES / "vllm-eagle.log").read_text(encoding="utf-8").splitlines()
    cut = next(i for i, x in enumerate(lines) if "SpecDecoding metrics" in x) + 1
    state.lines(lines[:cut], "v1")
    [r] = state.ranks
    m = scrape(registry)
    key = rank("v1", r[1])
    assert m[("mtptui_spec_accept_length", key)] == 2.83 and m[("mtptui_spec_accept_ratio", key)] == 0.61
    assert m[("mtptui_running_requests", key)] == 23 and m[("mtptui_token_usage_ratio", key)] == 0.078


def test_a_crash_loop_is_counted_while_only_the_current_epoch_is_kept():
    """Memory stays flat: however many restarts and batches, one epoch per host, holding no values."""
    state, registry, _ = setup()
    for i in range(40):
        t = f"16:{i:02d}"
        state.lines([f"2026-03-09T{t}:00+00:00 gpu-h1 systemd[1]: Started sglang.service - SGLang.",
                     f"2026-03-09T{t}:01+00:00 gpu-h1 python3[1]: " + SERVER_ARGS,
                     *(f"2026-03-09T{t}:{s:02d}+00:00 gpu-h1 python3[1]: " + decode(f"{s:02d}", "TP0", 4)
                       for s in range(10, 40))], "gpu1")
    m = scrape(registry)
    assert m[("mtptui_events_total", (("host", "gpu1"), ("kind", "restart")))] == 40
    assert m[("mtptui_epoch_start_time_seconds", (("host", "gpu1"),))] == 1773074340.0  # 16:39:00, the last start
    assert m[("mtptui_decode_batches_total", rank("gpu1", "TP0"))] == 40 * 30
    [epoch] = state.epochs.epochs["gpu1"]
    assert epoch.records == 30 and epoch.per_rank == {} and epoch.spec["algorithm"] == "EAGLE"


def test_vllm_per_position_acceptance_from_its_line_and_gone_after_an_interval_without_drafts():
    from mtptui.sim import vllm

    state, registry, _ = setup(hosts=("v1",))
    lines = list(vllm.render(envelope="cat", host="v1", unit="vllm.service", unit_description="vLLM", seed=0,
                             t0=1.8e9, serve=0, version="0.32.0", pattern=[2, 0], interval=2.0))
    spec = next(x for x in lines if x.truth.get("kind") == "spec")
    state.lines([x.text for x in lines[:lines.index(spec) + 1]], "v1")
    key = rank("v1", "Engine 000")
    m = scrape(registry)
    rates = spec.truth["fields"]["per_position_accept_rate"]
    assert len(rates) == vllm.K
    for i, r in enumerate(rates):
        assert m[("mtptui_spec_position_accept_ratio", tuple(sorted(key + (("position", str(i)),))))] == round(r, 3)
    state.lines([x.text for x in lines[lines.index(spec) + 1:]], "v1")  # the idle interval's line, no spec line
    assert not [k for k in scrape(registry) if k[0] == "mtptui_spec_position_accept_ratio"]


def test_the_servers_own_counters_served_per_host_from_its_scrape():
    from mtptui.core import latency
    from mtptui.sim import vllm

    state, registry, _ = setup(hosts=("v1", "v2"))
    m = vllm.VllmMetrics(t_created=1.0, version="0.32.0")
    m.interval(step_s=0.02, drafts=100, drafted=300, accepted_pos=[90, 70, 40], running=2, prefill_s=0.01,
               queue_s=0.0)
    state.server_scrape("v1", latency.parse(m.exposition(), 10.0))
    got = scrape(registry)
    v1 = (("host", "v1"),)
    assert got[("mtptui_server_spec_drafts_total", v1)] == 100
    assert got[("mtptui_server_spec_draft_tokens_total", v1)] == 300
    assert got[("mtptui_server_spec_accepted_tokens_total", v1)] == 200
    assert [got[("mtptui_server_spec_accepted_tokens_per_position_total", v1 + (("position", str(i)),))]
            for i in range(3)] == [90, 70, 40]
    assert not [k for k in got if k[0].startswith("mtptui_server_") and ("host", "v2") in k[1]]  # no scrape
    state.server_scrape("v1", None)  # it stopped answering
    assert not [k for k in scrape(registry) if k[0].startswith("mtptui_server_")]
