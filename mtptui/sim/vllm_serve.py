"""The simulator playing vLLM 0.32.0's OpenAI API server live, as the engine tier's real one runs
(its CPU build, tests/engine): `python -m mtptui.sim.vllm_serve` takes the flags of
`python -m vllm.entrypoints.openai.api_server` that matter here, plus the simulator's `--sim-`
options, and answers as that server does (what the engine tier's real one printed and answered;
docs/testing.md lists what differs):

- its start, in its order and words (vllm.start_032): the banner, `non-default args: {...}`,
  EngineCore's config, the model's load, the KV cache, `Starting vLLM server on`, uvicorn's
  lines; spread over `--sim-startup-seconds` (the real one's took 23-107 s here). Nothing listens
  before uvicorn is up (the real one binds its port then), so /health is refused until then.
- what it refuses at start, with its words and exit 1: `--per-request-spec-decode-metrics`
  without `--speculative-config`, a speculative method other than those seen running on the CPU
  build (ngram, draft_model; it refused mtp), a `--max-model-len` over the model's, a KV cache
  (VLLM_CPU_KVCACHE_SPACE, GiB) the host cannot hold; a flag it does not know, as argparse does
  (exit 2).
- every VLLM_LOG_STATS_INTERVAL seconds (10) the `Engine 000:` line, unless this interval and the
  one before were idle, and the SpecDecoding line where the interval drafted (vllm.stats_lines).
- HTTP (sim/httpd.py, the SGLang mode's server): /health (200, empty; 503 once the engine died),
  /version `{"version":"0.32.0"}`, /v1/models (owned_by "mtptui-sim": not a real vLLM), /load,
  /ping, /metrics (vLLM's families: vllm.VllmMetrics), /v1/completions and /v1/chat/completions,
  streamed or not, each answer with `metrics.speculative_decoding` under
  `--per-request-spec-decode-metrics` (on a stream: its usage chunk, with include_usage).
- SIGTERM: vLLM's `[shutdown]` lines, the engine stopped at once (a request in flight gets no
  more tokens), then uvicorn waits for every open connection to close before it exits 0: idle it
  stops in a moment, under traffic when its clients give up or systemd's stop timeout kills it,
  as the real one does (1.6 s idle, 59 s under two clients of 60 s timeouts, here).

The speed and acceptance come from the SGLang mode's engine (sim/engine.py: its scheduler and
behaviour model, a request's tokens paced by its steps), run with these settings.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import sys
import threading
import time
from typing import TextIO

from mtptui.sim import engine as sim_engine, vllm
from mtptui.sim.engine import RealRequest
from mtptui.sim.lifecycle import access_line
from mtptui.sim.live import Writer
from mtptui.sim.msg import Msg, other
from mtptui.sim.scenario import config_from_argv

VERSION = "0.32.0"
PROG = "api_server.py"
DEFAULT_MODEL = "Qwen/Qwen3-0.6B"  # EngineArgs.model's default (0.32.0)
MIN_SLEEP = 0.004
# The methods seen running on the CPU build (shared/reference/real-engines.md); it refused mtp at
# start, and the simulator refuses every other method alike (not tried on the real one here)
CPU_METHODS = ("ngram", "draft_model")
KV_BYTES_PER_TOKEN = 512  # the tiny model's (2 layers x K and V x 2 KV heads x 32 x bf16); others alike
CONTEXT = {"tiny": 4096}  # max_position_embeddings of the engine tier's model; others 131072
# vLLM's own fields in `non-default args:` in its parser's order (the api server's, then the engine's)
_ORDER = ("host", "port", "uvicorn_log_level", "disable_uvicorn_access_log", "model", "tokenizer", "dtype", "seed",
          "max_model_len", "served_model_name", "enforce_eager", "load_format", "tensor_parallel_size",
          "data_parallel_size", "gpu_memory_utilization", "enable_prefix_caching", "max_num_batched_tokens",
          "max_num_seqs", "disable_log_stats", "trust_remote_code", "per_request_spec_decode_metrics",
          "speculative_config")


class Refused(Exception):
    """vLLM would not start with these settings: the lines it prints (its traceback's last)."""


def _json_arg(text: str) -> dict:
    # vLLM's words name the function it converts with (its address varies from run to run)
    why = f"Value {text} cannot be converted to <function loads at 0x7f0aca70db20>."
    try:
        value = json.loads(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(why) from e
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(why)
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=(
        "mtptui's vLLM simulator: takes vllm.entrypoints.openai.api_server's flags and answers as vLLM "
        "0.32.0's CPU build does (logs, HTTP, speculation). Not a real server: it serves no model."))
    add = p.add_argument
    add("--host", default=None)
    add("--port", type=int, default=8000)
    add("--uvicorn-log-level", default="info")
    add("--disable-uvicorn-access-log", action="store_true")
    add("--model", default=DEFAULT_MODEL)
    add("--tokenizer", default=None)
    add("--dtype", default="auto")
    add("--seed", type=int, default=0)
    add("--max-model-len", type=int, default=None)
    add("--served-model-name", nargs="+", default=None)
    add("--enforce-eager", action=argparse.BooleanOptionalAction, default=False)
    add("--load-format", default="auto")
    add("--tensor-parallel-size", "-tp", type=int, default=1)
    add("--data-parallel-size", "-dp", type=int, default=1)
    add("--gpu-memory-utilization", type=float, default=0.9)
    add("--enable-prefix-caching", action=argparse.BooleanOptionalAction, default=None)
    add("--max-num-batched-tokens", type=int, default=None)
    add("--max-num-seqs", type=int, default=None)
    add("--disable-log-stats", action="store_true")
    add("--trust-remote-code", action="store_true")
    add("--per-request-spec-decode-metrics", choices=("none", "summary", "detailed"), default="none")
    add("--speculative-config", "-sc", type=_json_arg, default=None)
    sim = p.add_argument_group("the simulator's own")
    sim.add_argument("--sim-load", choices=("none", "light", "steady", "burst", "ramp", "saturate"), default="none",
                     help="background load beside the HTTP requests (default none: only what is sent)")
    sim.add_argument("--sim-seed", type=int, default=0)
    sim.add_argument("--sim-startup-seconds", type=float, default=3.0,
                     help="the start's length (the real CPU build's: 23 s idle, up to 107 s on a loaded machine)")
    return p


def normalise(argv: list[str]) -> list[str]:
    """vLLM's FlexibleArgumentParser takes `--max_model_len` for `--max-model-len`."""
    out = []
    for a in argv:
        if a.startswith("--"):
            name, eq, value = a.partition("=")
            a = "--" + name[2:].replace("_", "-") + eq + value
        out.append(a)
    return out


class Settings:
    """The parsed command line, as vLLM reads it, and what the simulator makes of it."""

    def __init__(self, ns: argparse.Namespace, env: dict[str, str]) -> None:
        self.ns = ns
        self.model = ns.model
        self.served = ns.served_model_name[0] if ns.served_model_name else ns.model
        self.spec = ns.speculative_config
        self.method = str(self.spec.get("method") or "") if self.spec else ""
        self.k = int(self.spec.get("num_speculative_tokens") or 0) if self.spec else 0
        self.per_request = ns.per_request_spec_decode_metrics
        self.model_len = CONTEXT["tiny"] if "tiny" in self.model.lower() or self.model.startswith("/") else 131072
        self.max_len = ns.max_model_len or self.model_len
        self.interval = float(env.get("VLLM_LOG_STATS_INTERVAL") or 10.0)
        self.kv_gib = float(env.get("VLLM_CPU_KVCACHE_SPACE") or 4)  # 0.32's default on the CPU: 4 GiB
        self.kv_tokens = int(self.kv_gib * 2**30 // KV_BYTES_PER_TOKEN)
        self.listen = f"{ns.host or '0.0.0.0'}:{ns.port}"

    def non_default(self) -> dict:
        """`non-default args:`'s dict: the flags given a value other than the default, in vLLM's order."""
        parser = build_parser()
        out = {}
        for key in _ORDER:
            value = getattr(self.ns, key)
            if value != parser.get_default(key):
                out[key] = value
        return out

    def engine_argv(self) -> list[str]:
        """The SGLang mode's flags for the same work (its engine and behaviour model run it)."""
        argv = ["--model-path", self.model, "--tp", "1", "--disable-cuda-graph", "--decode-log-interval", "1000000000",
                "--sim-load", self.ns.sim_load, "--sim-seed", str(self.ns.sim_seed), "--context-length",
                str(self.max_len), "--max-total-tokens", str(max(self.max_len * 2, min(self.kv_tokens, 10_000_000)))]
        if self.ns.max_num_seqs:
            argv += ["--max-running-requests", str(self.ns.max_num_seqs)]
        if self.spec and self.k:
            algo = {"ngram": "NGRAM", "draft_model": "STANDALONE"}.get(self.method, "NGRAM")
            argv += ["--speculative-algorithm", algo, "--speculative-num-steps", str(self.k),
                     "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", str(self.k + 1)]
            if algo == "STANDALONE":
                argv += ["--speculative-draft-model-path", str(self.spec.get("model") or self.model)]
        return argv


def refusal(st: Settings, mem_available_gib: float) -> list[str] | None:
    """What vLLM 0.32.0 prints last when it refuses to start with these settings (None: it starts).
    Read from its config/vllm.py, config/model.py, v1/spec_decode and the CPU worker, and seen in
    the engine tier."""
    if st.per_request != "none" and not st.spec:
        return ["pydantic_core._pydantic_core.ValidationError: 1 validation error for VllmConfig",
                "  Value error, --per-request-spec-decode-metrics requires speculative decoding to be enabled "
                "(via --speculative-config). [type=value_error, input_value=ArgsKwargs((), {'model_co... "
                "'shutdown_timeout': 0}), input_type=ArgsKwargs]"]
    if st.spec and st.method not in CPU_METHODS:
        return [f"NotImplementedError: Unsupported speculative method: {st.method!r}"]
    if st.max_len > st.model_len:
        return ["pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig",
                f"  Value error, User-specified max_model_len ({st.max_len}) is greater than the derived "
                f"max_model_len (max_position_embeddings={float(st.model_len)} or model_max_length=None in model's "
                "config.json). To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. "
                "VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If the model uses relative "
                "position encoding (RoPE), positions exceeding derived_max_model_len lead to nan. If the model "
                "uses absolute position encoding, positions exceeding derived_max_model_len will cause a CUDA "
                "array out-of-bounds error. [type=value_error, input_value=ArgsKwargs((), {'model': ...}), "
                "input_type=ArgsKwargs]"]
    if st.kv_gib > mem_available_gib:
        # the CPU worker's, once the model is loaded (v1/worker/cpu_worker.py), and the API server's
        return [f"RuntimeError: Worker failed with error 'Available memory on node 0 ({mem_available_gib:.2f}/"
                f"{mem_total_gib():.2f} GiB) on kv cache allocation is less than requested memory for kv "
                f"({st.kv_gib:.1f} GiB). Decrease --kv-cache-memory-bytes, VLLM_CPU_KVCACHE_SPACE, or reduce CPU "
                "memory used by other processes.', please check the stack trace above for the root cause",
                "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"]
    return None


def _meminfo(key: str) -> float:
    """/proc/meminfo's figure in GiB (64 where it cannot be read)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 2**20
    return 64.0


def mem_available_gib() -> float:
    return _meminfo("MemAvailable")


def mem_total_gib() -> float:
    return _meminfo("MemTotal")


class VllmLive:
    """The live process: its lines on the wall clock, its engine, and what sim/httpd.py asks of it."""

    engine_name = "vllm"
    version = VERSION
    fingerprint = f"vllm-{VERSION}-mtptui-sim"  # the real one's names its build (vllm-0.32.0-7415c3cf)

    def __init__(self, st: Settings, writer: Writer) -> None:
        self.st = st
        self.writer = writer
        self.cfg = config_from_argv(st.engine_argv())
        self.t0 = time.time()
        self.context_len = st.max_len
        self.lock = threading.RLock()  # the engine's sinks count tokens under it, called with it held
        self.wake = threading.Event()
        self.rng = random.Random(f"{st.ns.sim_seed}:vllm-live")
        self.api = os.getpid()
        self.pids = {"APIServer": self.api, "EngineCore": self.api + 1 + self.rng.randint(100, 900),
                     "Worker": self.api + 1000 + self.rng.randint(100, 900)}
        self.engine = sim_engine.Engine(self.cfg, sim_engine.layout(self.cfg), self.t0, st.kv_tokens)
        self.metrics_model = vllm.VllmMetrics(model=st.served, t_created=self.t0, version=VERSION)
        self._state = "starting"  # starting, ready, stopping, dead
        self._term = False
        self.open_requests = 0  # HTTP requests being answered (a stop waits for them to close)
        self._pending: list[tuple[float, Msg]] = []
        scale = st.ns.sim_startup_seconds / vllm.START_S
        for said in vllm.start_032(version=VERSION, model=st.model, args=st.non_default(), max_len=st.max_len,
                                   kv_tokens=st.kv_tokens, listen=st.listen, api_pid=self.api):
            self._say(self.t0 + said.at * scale, said)
        self.t_ready = self.t0 + vllm.START_S * scale
        self._last = {"prompt": 0.0, "gen": 0.0, "spec_steps": 0.0, "spec_acc": 0.0}
        self._last_tp = (0.0, 0.0)
        self._next_stats = float("inf")
        self._counted: dict[str, float] = {}  # the engine's counts already in /metrics
        self._steps: dict[int, list[int]] = {}  # a request's tokens per decode step (its acceptance histogram)
        self._queried = False  # a prefix cache query made (0.32 shows its hit rate from then on)

    # -- lines -----------------------------------------------------------------------------------
    def _say(self, t: float, said: vllm.Said) -> None:
        text = said.msg if said.proc is None else vllm.prefixed(t, said.proc, self.pids[said.proc], said.where,
                                                                said.msg, said.level, local=True)
        self._pending.append((t, Msg(t, None, text, said.truth)))

    def _due(self, now: float) -> list[Msg]:
        self._pending.sort(key=lambda x: x[0])
        out = [m for t, m in self._pending if t <= now]
        self._pending = [(t, m) for t, m in self._pending if t > now]
        return out

    # -- used by the HTTP threads (sim/httpd.py) ---------------------------------------------------
    @property
    def state(self) -> str:
        return self._state

    def submit(self, req: RealRequest) -> bool:
        with self.lock:
            if self._state != "ready":
                return False
            self._queried = True
            self.engine.submit(req, time.time())
        self.wake.set()
        return True

    def access(self, host: str, port: int, method: str, path: str, status: int) -> None:
        if not self.st.ns.disable_uvicorn_access_log:
            self.writer.write([Msg(time.time(), None, access_line(host, port, method, path, status), other(),
                                   stream="stdout")])

    def log_error(self, where: str, msg: str) -> None:
        t = time.time()
        self.writer.write([Msg(t, None, vllm.prefixed(t, "APIServer", self.api, where, msg, "ERROR", local=True),
                               other())])

    def _count(self) -> None:
        """The engine's tokens and drafts since the last count, into /metrics's counters (vLLM
        counts them each step: a scrape sees them at once, not at the stats interval's end)."""
        g = self.engine.groups[0]
        now = {"prompt": float(g.prompt_total), "gen": float(g.gen_total), "spec_steps": float(g.cum_req_steps),
               "spec_acc": float(g.cum_acc)}
        d = {k: v - self._counted.get(k, 0.0) for k, v in now.items()}
        # whole tokens only: the rest is counted with the next
        whole = {k: float(int(v)) for k, v in d.items()}
        self._counted = {k: self._counted.get(k, 0.0) + whole[k] for k in now}
        m = self.metrics_model
        m.tokens(int(whole["prompt"]), int(whole["gen"]))
        drafts = int(whole["spec_steps"]) if self.k else 0
        if drafts:
            accepted = max(0, int(whole["spec_acc"] - whole["spec_steps"]))
            m.spec(drafts, drafts * self.k, _per_position(accepted, drafts, self.engine.chain))

    def metrics(self) -> str:
        with self.lock:
            self._count()
            g = self.engine.groups[0]
            m = self.metrics_model
            m.gauges["vllm:num_requests_running"] = g.running if self._state == "ready" else 0
            m.gauges["vllm:num_requests_waiting"] = len(g.waiting) if self._state == "ready" else 0
            m.gauges["vllm:kv_cache_usage_perc"] = min(1.0, g.used / self.engine.total_tokens)
            return m.exposition()

    def observe(self, req: RealRequest, sent_at: float):
        """A sink that passes a request's tokens on and counts them as vLLM's /metrics does."""
        first: list[float] = []
        last: list[float] = []

        def wrap(sink):
            def on(chunk: list[str], t: float, fin: bool) -> None:
                m = self.metrics_model
                with self.lock:
                    if chunk and not first:
                        first.append(t)
                        m.observe("vllm:time_to_first_token_seconds", t - sent_at)
                        m.observe("vllm:request_queue_time_seconds", 0.0)
                    elif chunk:
                        m.observe("vllm:inter_token_latency_seconds", (t - last[-1]) / len(chunk), len(chunk))
                        self._steps.setdefault(id(req), []).append(len(chunk))
                    if chunk:
                        last.append(t)
                    if fin and not req.failed:
                        m.observe("vllm:e2e_request_latency_seconds", t - sent_at)
                        m.finished("length" if req.sent >= len(req.tokens) else "stop")
                if sink is not None:
                    sink(chunk, t, fin)
            return on
        return wrap

    def spec_metrics(self, req: RealRequest) -> dict | None:
        """`metrics.speculative_decoding` of a finished request (v1/metrics/stats.py), or None
        without speculation. A step drafts K tokens and accepts a prefix of them."""
        if not self.st.spec or not self.k:
            return None
        steps = max(0, req.steps)
        accepted = max(0, req.accept_sum - steps)
        hist = [0] * (self.k + 1)
        with self.lock:
            per_step = self._steps.pop(id(req), [])
        for n in per_step:
            hist[min(self.k, max(0, n - 1))] += 1
        drafted = steps * self.k
        return {"mean_acceptance_length": 1 + accepted / steps if steps else 1.0,
                "draft_acceptance_rate": accepted / drafted if drafted else 0.0,
                "acceptance_histogram": hist, "num_spec_steps": steps, "num_accepted_draft_tokens": accepted,
                "num_draft_tokens": drafted, "num_spec_tokens": self.k,
                "per_step_accepted": None, "per_step_drafted": None}

    def request_metrics(self, req: RealRequest) -> dict | None:
        """An answer's `metrics`: under --per-request-spec-decode-metrics its speculative_decoding
        (the timing fields are the real one's: null without --enable-per-request-metrics)."""
        spec = self.spec_metrics(req) if self.st.per_request != "none" else None
        if spec is None:
            return None
        return {"time_to_first_token_ms": None, "generation_time_ms": None, "queue_time_ms": None,
                "mean_itl_ms": None, "tokens_per_second": None, "speculative_decoding": spec}

    @property
    def k(self) -> int:
        return self.st.k

    # -- the stats interval ----------------------------------------------------------------------
    def _stats(self, t: float) -> list[Msg]:
        g = self.engine.groups[0]
        step = self.st.interval
        prompt = float(g.prompt_total)
        gen = float(g.gen_total)
        steps, acc = float(g.cum_req_steps), float(g.cum_acc)
        d = {"prompt": prompt - self._last["prompt"], "gen": gen - self._last["gen"],
             "spec_steps": steps - self._last["spec_steps"], "spec_acc": acc - self._last["spec_acc"]}
        self._last = {"prompt": prompt, "gen": gen, "spec_steps": steps, "spec_acc": acc}
        prompt_tp, gen_tp = d["prompt"] / step, d["gen"] / step
        idle = not any((prompt_tp, gen_tp, *self._last_tp))
        self._last_tp = (prompt_tp, gen_tp)
        drafts = int(round(d["spec_steps"])) if self.k else 0
        accepted = max(0, int(round(d["spec_acc"] - d["spec_steps"]))) if self.k else 0
        accepted_pos = _per_position(accepted, drafts, self.engine.chain)
        self._count()
        if idle or self.st.ns.disable_log_stats:
            return []  # loggers.py: an idle interval after an idle one is logged at debug
        usage = min(1.0, g.used / self.engine.total_tokens)
        out = []
        for said in vllm.stats_lines(True, step=step, prompt_tp=prompt_tp, gen_tp=gen_tp, running=g.running,
                                     waiting=len(g.waiting), usage=usage, hit_rate=0.0 if self._queried else None,
                                     drafts=drafts, accepted_pos=accepted_pos, k=self.k):
            text = vllm.prefixed(t, said.proc or "APIServer", self.api, said.where, said.msg, local=True)
            out.append(Msg(t, None, text, said.truth))
        return out

    # -- the main thread -------------------------------------------------------------------------
    def _on_signal(self, signum, frame) -> None:
        self._term = True
        self.wake.set()

    def run(self, bind) -> int:
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        httpd = None
        stopped_at: float | None = None
        try:
            while True:
                now = time.time()
                with self.lock:
                    msgs = self._due(now)
                    if self._state in ("ready", "stopping"):  # its stats go on while uvicorn waits
                        self.engine.run_until(now)
                        if now >= self._next_stats:
                            msgs += self._stats(self._next_stats)
                            self._next_stats += self.st.interval
                self.writer.write(msgs)
                if self._state == "starting" and now >= self.t_ready and not self._term:
                    with self.lock:  # ready before it listens: uvicorn binds after the engine is up,
                        self._state = "ready"  # so its first answer to /health is 200, never 503
                        self.engine.set_ready(now)
                        self._next_stats = now + self.st.interval
                    httpd = bind(self)
                    if httpd is None:
                        return 1
                if self._term and stopped_at is None:
                    stopped_at = now
                    with self.lock:
                        was = self._state
                        self._state = "stopping" if was == "ready" else "dead"
                        self.engine.stalled = True  # mode=abort: no more tokens for anyone
                        self._pending = []
                    if was != "ready":
                        return 0  # killed while loading: nothing was listening yet
                    for proc, where, level, msg in vllm.SHUTDOWN:
                        self._say(now, vllm.Said(0.0, proc, where, msg, other(), level))
                    self.writer.write(self._due(now + 1))
                    if self.open_requests:
                        self.writer.write([Msg(now, None, vllm.SHUTDOWN_WAIT, other())])
                if stopped_at is not None and self.open_requests == 0:
                    self.writer.write([Msg(now, None, text, other()) for text in vllm.SHUTDOWN_END])
                    return 0
                nxt = min([t for t, _ in self._pending] + [self._next_stats, now + 0.5])
                if self._state == "ready":
                    nxt = min(nxt, self.engine.next_time())
                self.wake.wait(min(max(nxt - time.time(), MIN_SLEEP), 0.5))
                self.wake.clear()
        finally:
            if httpd is not None:
                httpd.shutdown()
                httpd.server_close()


def _per_position(accepted: int, drafts: int, chain: list[float]) -> list[int]:
    """An interval's accepted tokens spread over the draft positions as the chain accepts them
    (position i needs every one before it: P(i) = q1...qi), each at most the drafts."""
    if not chain or not drafts:
        return [0] * len(chain)
    p, weights = 1.0, []
    for q in chain:
        p *= q
        weights.append(p)
    total = sum(weights) or 1.0
    out = [min(drafts, int(round(accepted * w / total))) for w in weights]
    out[0] += min(drafts - out[0], accepted - sum(out)) if sum(out) < accepted else 0
    return out


def _bind(live: VllmLive):
    from mtptui.sim.httpd import SimHTTPServer

    ns = live.st.ns
    try:
        return _serve(SimHTTPServer((ns.host or "0.0.0.0", ns.port), live))  # type: ignore[arg-type]
    except OSError as e:
        live.writer.write([Msg(time.time(), None, f"ERROR:    [Errno {e.errno}] error while attempting to bind on "
                               f"address ('{ns.host or '0.0.0.0'}', {ns.port}): {(e.strerror or str(e)).lower()}",
                               other())])
        return None


def _serve(httpd):
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
    return httpd


def main(argv: list[str] | None = None, err: TextIO | None = None, out: TextIO | None = None) -> int:
    argv = normalise(sys.argv[1:] if argv is None else list(argv))
    err, out = err or sys.stderr, out or sys.stdout
    try:
        ns = build_parser().parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    st = Settings(ns, dict(os.environ))
    writer = Writer(err, out, None)
    why = refusal(st, mem_available_gib())
    if why is not None:
        # it says who it is and what it was given, then dies of its config (vllm/engine/arg_utils.py),
        # or, short of memory for the KV cache, once the engine core has loaded the model
        t = time.time()
        api = os.getpid()
        late = why[-1].startswith("RuntimeError: Engine core initialization failed")
        said = vllm.start_032(version=VERSION, model=st.model, args=st.non_default(), max_len=st.max_len,
                              kv_tokens=st.kv_tokens, listen=st.listen, api_pid=api)
        said = [s for s in said if s.proc is not None and s.at < (99.0 if late else 22.0)]
        pids = {"APIServer": api, "EngineCore": api + 401, "Worker": api + 1203}  # its processes' own
        lines = [vllm.prefixed(t, s.proc, pids[s.proc], s.where, s.msg, local=True) for s in said if s.proc]
        writer.write([Msg(t, None, x, other()) for x in lines + ["Traceback (most recent call last):"] + why])
        return 1
    return VllmLive(st, writer).run(_bind)


if __name__ == "__main__":
    sys.exit(main())
