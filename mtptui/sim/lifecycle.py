"""Startup, shutdown and failure lines, in SGLang's order and wording (reference §4).

The startup keeps the real order (server_args, torch distributed, weights, KV cache, CUDA graphs,
the draft model's weights and graphs, max_total_num_tokens, uvicorn, the warm-up, "fired up"),
squeezed into `--sim-startup-seconds`. Per-rank lines come from every GPU rank in a slightly
shuffled order, as separate processes do; tqdm bars come only from each replica's TP0.
Failures print what SGLang, torch and NCCL print: a scheduler traceback per failing rank, then the
main process's "Received sigquit".
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from mtptui.sim import flags, models
from mtptui.sim.engine import Layout
from mtptui.sim.flags import Config
from mtptui.sim.msg import Msg, event, other

SITE = "/usr/local/lib/python3.12/dist-packages"


def banner(cfg: Config, t: float, mode: str) -> Msg:
    load = cfg.load or "none"
    faults = ", faults " + " ".join(f.name + (f"@{f.at:g}" if f.at is not None else "") for f in cfg.faults) if cfg.faults else ""
    text = (f"mtptui SGLang simulator (not a real server): {mode}, SGLang {cfg.version} log format, "
            f"{cfg.spec_summary()}, load {load}, seed {cfg.seed}{faults}")
    return Msg(t, "", text, other())


@dataclass
class RankMemory:
    avail_begin: float
    weights: float
    after_load: float
    kv_gb: float = 0.0
    mamba_gb: float = 0.0
    after_pool: float = 0.0


@dataclass
class Startup:
    msgs: list[Msg] = field(default_factory=list)
    total_tokens: int = 0
    oom: bool = False
    t_uvicorn: float = 0.0  # when the HTTP side is up (uvicorn's lines)
    t_warmup: float = 0.0  # when the warm-up request is sent
    t_scheduler: float = 0.0  # when the scheduler starts its stats clocks (pools and graphs done)


def _stages(cfg: Config) -> list[tuple[str, float]]:
    spec = cfg.spec is not None and cfg.spec != "NGRAM"
    graphs = not (cfg.args["disable_cuda_graph"] or cfg.fault("no-cuda-graph"))
    st = [("dist", 0.06), ("load", 0.32), ("kv", 0.04)]
    if graphs:
        st.append(("graph", 0.22))
    if spec:
        st += [("draft_load", 0.08), ("draft_kv", 0.02)]
        if graphs:
            st += [("draft_graph", 0.09), ("draft_extend_graph", 0.06)]
    st.append(("tail", 0.05))
    total = sum(w for _, w in st)
    return [(name, w / total) for name, w in st]


def _tqdm_rate(n: int, secs: float) -> str:
    if secs <= 0 or n == 0:
        return "?it/s"
    rate = n / secs
    return f"{rate:5.2f}it/s" if rate >= 1 else f"{1 / rate:5.2f}s/it"


def _mmss(secs: float) -> str:
    s = int(secs)
    return f"{s // 60:02d}:{s % 60:02d}"


@dataclass
class _Boot:
    """What every stage of one startup shares: the lines so far, the random draws in their order,
    when each stage starts and for how long, and the scale of the whole (`S` seconds)."""
    cfg: Config
    lay: Layout
    rng: random.Random
    out: list[Msg]
    S: float
    starts: dict[str, tuple[float, float]]

    def per_rank(self, at: float, text_of, spread: float = 0.03) -> None:
        """One line from every GPU rank, each a little after `at`, in a shuffled order once sorted."""
        for r in self.lay.ranks:
            self.out.append(Msg(at + self.rng.uniform(0, spread * max(self.S, 0.05)), r.label, text_of(r), other()))


def startup(cfg: Config, lay: Layout, t0: float, rng: random.Random, pid: int) -> Startup:
    """Every line from the banner's successor to just before the warm-up request."""
    S = cfg.startup_seconds * 0.92  # the warm-up and the ready line take the rest
    st = Startup()
    _preamble(cfg, t0, st.msgs)
    starts, t_tail = _stage_starts(cfg, t0 + 0.01, S)
    b = _Boot(cfg, lay, rng, st.msgs, S, starts)
    mem = _rank_memory(b)
    _torch_distributed(b, mem)
    if not _load_weights(b, mem):
        st.oom = True
        ts, dur = starts["load"]
        st.msgs.extend(oom_loading(cfg, lay, ts + dur * 0.6))
        st.msgs.sort(key=lambda m: m.t)
        return st
    pool = _kv_pool(b, mem)
    if pool is None:
        st.oom = True
        ts, dur = starts["kv"]
        st.msgs.extend(oom_at_start(cfg, lay, ts + dur * 0.3, rng))
        st.msgs.sort(key=lambda m: m.t)
        return st
    tokens, per_tok = pool
    st.total_tokens = tokens
    avail = {k: m.after_pool for k, m in mem.items()}
    if "graph" in starts:
        _capture(b, avail, "graph", "cuda graph", True)
    if "draft_load" in starts:
        _draft_model(b, avail, tokens, per_tok)
    st.t_scheduler = t_tail
    _serving(b, st, avail, tokens, t_tail, pid)
    st.msgs.sort(key=lambda m: m.t)
    return st


def _preamble(cfg: Config, t0: float, out: list[Msg]) -> None:
    """Flag warnings, server_args, and the DP launcher's lines (when DP runs without DP attention)."""
    a = cfg.args
    for warning in cfg.warnings:
        out.append(Msg(t0, None, warning, other()))
    out.append(Msg(t0, "", "server_args=" + flags.server_args_text(cfg.v, a), event("spec_config", flags.spec_truth(a))))
    if a["dp_size"] > 1 and not a["enable_dp_attention"]:
        for d in range(a["dp_size"]):
            out.append(Msg(t0 + 0.001 * (d + 1), "", f"Launch DP{d} starting at GPU #{d * a['tp_size']}.", other()))


def _stage_starts(cfg: Config, t: float, S: float) -> tuple[dict[str, tuple[float, float]], float]:
    """When each stage starts and how long it takes, and when the last one ends."""
    starts: dict[str, tuple[float, float]] = {}
    for name, frac in _stages(cfg):
        starts[name] = (t, frac * S)
        t += frac * S
    return starts, t


def _rank_memory(b: _Boot) -> dict[str, RankMemory]:
    """Each rank's free memory at the start, and what its share of the weights takes."""
    p, tp = b.cfg.preset, b.cfg.args["tp_size"]
    mem: dict[str, RankMemory] = {}
    for r in b.lay.ranks:
        begin = round(p.gpu_mem_gb - 0.53 - b.rng.uniform(0, 0.08), 2)
        w = models.weights_gb_per_rank(p, tp) * (1 + b.rng.uniform(-0.002, 0.002))
        mem[r.label] = RankMemory(begin, w, begin - w)
    return mem


def _torch_distributed(b: _Boot, mem: dict[str, RankMemory]) -> None:
    p = b.cfg.preset
    ts, dur = b.starts["dist"]
    b.per_rank(ts, lambda r: "Init torch distributed begin.")
    b.per_rank(ts + dur * 0.8, lambda r: f"Init torch distributed ends. mem usage={p.gpu_mem_gb - mem[r.label].avail_begin:.2f} GB")


def _load_weights(b: _Boot, mem: dict[str, RankMemory]) -> bool:
    """The weights' lines and each replica's shard bar; False when the weights do not fit at all
    (torch runs out of memory part way through the shards: the caller writes that)."""
    p = b.cfg.preset
    ts, dur = b.starts["load"]
    b.per_rank(ts, lambda r: f"Load weight begin. avail mem={mem[r.label].avail_begin:.2f} GB")
    bar = "Loading safetensors checkpoint shards:"
    n = p.shards
    fits = min(m.after_load for m in mem.values()) > 0.5
    for r in b.lay.ranks:
        if not r.tp0_of_replica:
            continue
        real_secs = max(dur, 1.0)  # what the bar reports, as if it took that long
        b.out.append(Msg(ts + 0.001, None, f"{bar}   0% Completed | 0/{n} [00:00<?, ?it/s]", other()))
        half = n // 2
        b.out.append(Msg(ts + dur * 0.45, None,
                         f"{bar} {int(100 * half / n):3d}% Completed | {half}/{n} "
                         f"[{_mmss(real_secs * 0.5)}<{_mmss(real_secs * 0.5)}, {_tqdm_rate(half, real_secs * 0.5)}]", other()))
        if fits:
            done = f"{bar} 100% Completed | {n}/{n} [{_mmss(real_secs)}<00:00, {_tqdm_rate(n, real_secs)}]"
            b.out.append(Msg(ts + dur * 0.9, None, done, other()))
            b.out.append(Msg(ts + dur * 0.9, None, done, other()))
    if not fits:
        return False
    b.per_rank(ts + dur * 0.93, lambda r: (
        f"Load weight end. type={p.arch}, dtype={p.dtype}, avail mem={mem[r.label].after_load:.2f} GB, "
        f"mem usage={mem[r.label].weights:.2f} GB."), spread=0.02)
    return True


def _kv_pool(b: _Boot, mem: dict[str, RankMemory]) -> tuple[int, float] | None:
    """The KV cache: what is left of the static fraction after the weights (SGLang's rest_memory).
    Its lines, each rank's memory after the pools, and (tokens, bytes per token); None when it does
    not fit (or an `oom` fault asks for that at the start): the caller writes the failure."""
    cfg, a, p = b.cfg, b.cfg.args, b.cfg.preset
    ts, dur = b.starts["kv"]
    attn_tp = a["tp_size"] // a["dp_size"] if a["enable_dp_attention"] else a["tp_size"]
    per_tok = p.kv_bytes_per_token / (1 if p.mla else max(1, attn_tp))
    rest = mem[b.lay.ranks[0].label].after_load - p.gpu_mem_gb * (1 - a["mem_fraction_static"])
    oom = cfg.fault("oom")
    if rest <= 0.5 or (oom is not None and oom.at is None):
        return None
    mamba_gb = rest * 0.12 if cfg.hybrid == "mamba" else 0.0
    kv_gb = rest - mamba_gb
    tokens = int(kv_gb * 1e9 / per_tok)
    if a["max_total_tokens"]:
        tokens = min(tokens, a["max_total_tokens"])
        kv_gb = tokens * per_tok / 1e9
    tokens -= tokens % max(1, a["page_size"])
    for m in mem.values():
        m.kv_gb, m.mamba_gb = kv_gb, mamba_gb
        m.after_pool = m.after_load - kv_gb - mamba_gb
    if cfg.hybrid == "mamba":
        mamba_slots = min(2048, max(64, 3 * a["max_running_requests"]))
        b.per_rank(ts, lambda r: (f"Mamba Cache is allocated. max_mamba_cache_size: {mamba_slots}, "
                                  f"conv_state size: {mamba_gb * 0.07:.2f}GB, ssm_state size: {mamba_gb * 0.93:.2f}GB "))
    kv = _kv_sizes(p.mla, kv_gb)
    b.per_rank(ts + dur * 0.2, lambda r: f"KV Cache is allocated. #tokens: {tokens}, {kv}")
    b.per_rank(ts + dur * 0.6, lambda r: f"Memory pool end. avail mem={mem[r.label].after_pool:.2f} GB")
    return tokens, per_tok


def _kv_sizes(mla: bool, gb: float) -> str:
    """The sizes in SGLang's KV line: one for MLA's latent cache, else K and V halves."""
    if mla:
        return f"KV size: {gb:.2f} GB"
    return f"K size: {gb / 2:.2f} GB, V size: {gb / 2:.2f} GB"


def _capture(b: _Boot, avail: dict[str, float], stage: str, what: str, bars: bool) -> None:
    """One CUDA graph capture: its lines (with tqdm's bar from each replica's TP0 when `bars`), and
    the memory it takes from every rank."""
    a = b.cfg.args
    ts, dur = b.starts[stage]
    used = 0.35 + 0.004 * a["cuda_graph_max_bs"] if what == "cuda graph" else 0.12
    b.per_rank(ts, lambda r: f"Capture {what} begin. This can take up to several minutes. avail mem={avail[r.label]:.2f} GB")
    if bars:
        bss = [x for x in (1, 2, 4, 8, 12, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256)
               if x <= a["cuda_graph_max_bs"]]
        nb = len(bss)
        real = max(dur, 1.0)
        for r in b.lay.ranks:
            if not r.tp0_of_replica:
                continue
            b.out.append(Msg(ts + 0.002, None, f"Capturing batches (bs={bss[-1]} avail_mem={avail[r.label]:.2f} GB):   0%|          | 0/{nb} [00:00<?, ?it/s]", other()))
            b.out.append(Msg(ts + dur * 0.9, None, f"Capturing batches (bs=1 avail_mem={avail[r.label] - used:.2f} GB): 100%|██████████| {nb}/{nb} [{_mmss(real)}<00:00, {_tqdm_rate(nb, real)}]", other()))
    elapsed = max(dur, 0.5) * (1 + b.rng.uniform(-0.05, 0.05))
    for r in b.lay.ranks:
        avail[r.label] -= used
    b.per_rank(ts + dur * 0.92, lambda r: (f"Capture {what} end. Time elapsed: {elapsed:.2f} s. mem usage={used:.2f} GB. "
                                           f"avail mem={avail[r.label]:.2f} GB."), spread=0.02)


def _draft_model(b: _Boot, avail: dict[str, float], tokens: int, per_tok: float) -> None:
    """The draft model's weights, its KV cache and (with graphs) its two captures."""
    cfg, a, p = b.cfg, b.cfg.args, b.cfg.preset
    ts, dur = b.starts["draft_load"]
    dw = models.draft_weights_gb(p, a["tp_size"], cfg.spec, a["speculative_draft_model_path"])
    draft_arch = p.draft_arch if (p.draft_arch and (cfg.requested_algorithm == "NEXTN" or a["speculative_draft_model_path"] in (None, a["model_path"]))) else _draft_class(cfg)
    before = dict(avail)
    for k in avail:
        avail[k] -= dw
    b.per_rank(ts, lambda r: f"Load weight begin. avail mem={before[r.label]:.2f} GB")
    b.per_rank(ts + dur * 0.85, lambda r: (f"Load weight end. type={draft_arch}, dtype={p.dtype}, "
                                           f"avail mem={avail[r.label]:.2f} GB, mem usage={dw:.2f} GB."), spread=0.02)
    ts, dur = b.starts["draft_kv"]
    dkv = tokens * per_tok * 0.025 / 1e9
    kv = _kv_sizes(p.mla, dkv)
    b.per_rank(ts, lambda r: f"KV Cache is allocated. #tokens: {tokens}, {kv}")
    for k in avail:
        avail[k] -= dkv
    b.per_rank(ts + dur * 0.5, lambda r: f"Memory pool end. avail mem={avail[r.label]:.2f} GB")
    if "draft_graph" in b.starts:
        _capture(b, avail, "draft_graph", "draft cuda graph", False)
        _capture(b, avail, "draft_extend_graph", "draft extend cuda graph", False)


def _serving(b: _Boot, st: Startup, avail: dict[str, float], tokens: int, t_tail: float, pid: int) -> None:
    """The scheduler's summary line per replica, uvicorn's lines, and the model-info request that
    comes just before the warm-up; sets when uvicorn is up and when the warm-up is sent."""
    cfg, a, p = b.cfg, b.cfg.args, b.cfg.preset
    ctx = a["context_length"] or p.context_len
    for r in b.lay.ranks:
        if r.tp0_of_replica:
            text = (f"max_total_num_tokens={tokens}, chunked_prefill_size={a['chunked_prefill_size']}, "
                    f"max_prefill_tokens={a['max_prefill_tokens']}, max_running_requests={a['max_running_requests']}, "
                    f"context_len={ctx}")
            if cfg.v >= (0, 5, 0):
                text += f", available_gpu_mem={avail[r.label]:.2f} GB"
            b.out.append(Msg(t_tail, r.label, text, other()))
    tu = t_tail + 0.3 * b.S * 0.05
    st.t_uvicorn = tu
    for i, text in enumerate((f"INFO:     Started server process [{pid}]", "INFO:     Waiting for application startup.",
                              "INFO:     Application startup complete.",
                              f"INFO:     Uvicorn running on http://{a['host']}:{a['port']} (Press CTRL+C to quit)")):
        b.out.append(Msg(tu + 0.0005 * i, "", text, other()))
    st.t_warmup = tu + b.S * 0.02
    info_path = "/model_info" if cfg.v >= (0, 5, 8) else "/get_model_info"
    b.out.append(Msg(st.t_warmup - 0.001, "", access_line("127.0.0.1", b.rng.randint(40000, 60000), "GET", info_path, 200),
                     other(), stream="stdout"))


def _draft_class(cfg: Config) -> str:
    path = (cfg.args["speculative_draft_model_path"] or "").lower()
    if cfg.spec == "STANDALONE":
        return cfg.preset.arch
    if cfg.spec == "EAGLE3" or "eagle3" in path:
        return "LlamaForCausalLMEagle3"
    return "LlamaForCausalLMEagle"


def access_line(client: str, port: int, method: str, path: str, status: int) -> str:
    phrase = {200: "OK", 400: "Bad Request", 404: "Not Found", 503: "Service Unavailable"}.get(status, "")
    return f'INFO:     {client}:{port} - "{method} {path} HTTP/1.1" {status} {phrase}'.rstrip()


def ready_lines(cfg: Config, t: float, rng: random.Random) -> list[Msg]:
    """After the warm-up request finished."""
    out = []
    if not cfg.args["skip_server_warmup"]:
        out.append(Msg(t, "", access_line("127.0.0.1", rng.randint(40000, 60000), "POST", "/generate", 200),
                       other(), stream="stdout"))
    out.append(Msg(t + 0.001, "", "The server is fired up and ready to roll!", event("ready")))
    return out


# ---------------------------------------------------------------------------------------------
# Failures


def _traceback(cfg: Config, frames: list[tuple[str, int, str, str]]) -> list[str]:
    lines = []
    for path, line, func, code in frames:
        lines.append(f'  File "{SITE}/{path}", line {line}, in {func}')
        lines.append(f"    {code}")
    return lines


def scheduler_exception(cfg: Config, t: float, who: str, frames: list, final: list[tuple[str, dict]]) -> list[Msg]:
    out = [Msg(t, who, "Scheduler hit an exception: Traceback (most recent call last):", event("error"))]
    for line in _traceback(cfg, frames):
        out.append(Msg(t, None, line, other()))
    for text, truth in final:
        out.append(Msg(t, None, text, truth))
    return out


def sigquit(t: float) -> Msg:
    return Msg(t, "", "Received sigquit from a child process. It usually means the child failed.", event("crash"))


_INIT_FRAMES = [
    ("sglang/srt/managers/scheduler.py", 2946, "run_scheduler_process", "scheduler = Scheduler("),
    ("sglang/srt/managers/scheduler.py", 344, "__init__", "self.tp_worker = TpModelWorker("),
    ("sglang/srt/managers/tp_worker.py", 96, "__init__", "self.model_runner = ModelRunner("),
    ("sglang/srt/model_executor/model_runner.py", 255, "__init__", "self.initialize(min_per_gpu_memory)"),
    ("sglang/srt/model_executor/model_runner.py", 338, "initialize", "self.init_memory_pool("),
    ("sglang/srt/model_executor/model_runner.py", 1402, "init_memory_pool", "raise RuntimeError("),
]


def oom_at_start(cfg: Config, lay: Layout, t: float, rng: random.Random) -> list[Msg]:
    out: list[Msg] = []
    for i, r in enumerate(lay.ranks):
        out.extend(scheduler_exception(cfg, t + 0.002 * i, r.label, _INIT_FRAMES, [
            ("RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.", event("oom"))]))
    out.append(sigquit(t + 0.002 * len(lay.ranks) + 0.01))
    return out


_LOAD_FRAMES = _INIT_FRAMES[:4] + [
    ("sglang/srt/model_executor/model_runner.py", 311, "initialize", "self.load_model()"),
    ("sglang/srt/model_executor/model_runner.py", 786, "load_model", "self.model = get_model("),
    ("sglang/srt/model_loader/loader.py", 1602, "load_model", "self.load_weights_and_postprocess("),
    ("torch/nn/modules/module.py", 1355, "to", "return self._apply(convert)"),
]


def oom_loading(cfg: Config, lay: Layout, t: float) -> list[Msg]:
    """The weights alone are larger than a GPU: torch's OOM while loading the shards."""
    cap = cfg.preset.gpu_mem_gb + 0.6
    out: list[Msg] = []
    for i, r in enumerate(lay.ranks):
        text = (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.75 GiB. GPU {r.gpu} has a total "
                f"capacity of {cap:.2f} GiB of which 512.00 MiB is free. Including non-PyTorch memory, this process "
                f"has {cap - 0.5:.2f} GiB memory in use. Of the allocated memory {cap - 1.9:.2f} GiB is allocated by "
                "PyTorch, and 402.12 MiB is reserved by PyTorch but unallocated.")
        out.extend(scheduler_exception(cfg, t + 0.002 * i, r.label, _LOAD_FRAMES, [(text, event("oom"))]))
    out.append(sigquit(t + 0.002 * len(lay.ranks) + 0.01))
    return out


def _run_frames(cfg: Config) -> list:
    worker = ("self.draft_worker.forward_batch_generation(batch)" if cfg.spec
              else "self.tp_worker.forward_batch_generation(model_worker_batch)")
    return [
        ("sglang/srt/managers/scheduler.py", 2950, "run_scheduler_process", "scheduler.event_loop_normal()"),
        ("torch/utils/_contextlib.py", 116, "decorate_context", "return func(*args, **kwargs)"),
        ("sglang/srt/managers/scheduler.py", 992, "event_loop_normal", "result = self.run_batch(batch)"),
        ("sglang/srt/managers/scheduler.py", 2001, "run_batch", worker),
    ]


def runtime_crash(cfg: Config, lay: Layout, t: float, rng: random.Random, oom: bool) -> list[Msg]:
    """One rank's scheduler dies mid-serving (the others are killed with it)."""
    r = lay.ranks[rng.randrange(len(lay.ranks))]
    if oom:
        cap = cfg.preset.gpu_mem_gb + 0.6
        text = (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU {r.gpu} has a "
                f"total capacity of {cap:.2f} GiB of which 1.02 GiB is free. Including non-PyTorch memory, this "
                f"process has {cap - 1.02:.2f} GiB memory in use. Of the allocated memory {cap - 9.7:.2f} GiB is "
                "allocated by PyTorch, and 2.31 GiB is reserved by PyTorch but unallocated. If reserved but "
                "unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to "
                "avoid fragmentation.  See documentation for Memory Management  "
                "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
        final = [(text, event("oom"))]
    else:
        final = [("RuntimeError: CUDA error: an illegal memory access was encountered", other()),
                 (("CUDA kernel errors might be asynchronously reported at some other API call, so the "
                   "stacktrace below might be incorrect."), other()),
                 ("For debugging consider passing CUDA_LAUNCH_BLOCKING=1", other()),
                 ("Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", other())]
    out = scheduler_exception(cfg, t, r.label, _run_frames(cfg), final)
    out.append(sigquit(t + 0.05))
    return out


def _glog_time(t: float) -> tuple[str, str]:
    """torch's c10 log stamp: `E0309 16:05:12.345678901` (always UTC here)."""
    import time as _time
    tm = _time.gmtime(t)
    frac = int((t % 1) * 1e9)
    return f"{tm.tm_mon:02d}{tm.tm_mday:02d}", f"{_time.strftime('%H:%M:%S', tm)}.{frac:09d}"


def nccl_timeout(cfg: Config, lay: Layout, t: float, rng: random.Random) -> list[Msg]:
    seq = rng.randint(20000, 90000)
    numel = 1048576
    out: list[Msg] = []
    for i, r in enumerate(lay.ranks):
        ti = t + 0.003 * i
        md, hms = _glog_time(ti)
        g = r.gpu
        work = (f"WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn={numel}, NumelOut={numel}, "
                f"Timeout(ms)=600000) ran for {600000 + rng.randint(5, 40)} milliseconds before timing out.")
        out.append(Msg(ti, None, f"[rank{g}]:[E{md} {hms} ProcessGroupNCCL.cpp:632] [Rank {g}] Watchdog caught "
                                 f"collective operation timeout: {work}", event("nccl")))
        out.append(Msg(ti, None, f"[rank{g}]:[E{md} {hms} ProcessGroupNCCL.cpp:2271] [PG ID 2 PG GUID 3 Rank {g}]  "
                                 f"failure detected by watchdog at work sequence id: {seq} PG status: last enqueued "
                                 f"work: {seq}, last completed work: {seq - 1}", other()))
        # the rest of the rank's teardown: one event with the first line (LineParser's TEARDOWN block)
        out.append(Msg(ti, None, "terminate called after throwing an instance of 'c10::DistBackendError'", other()))
        out.append(Msg(ti, None, f"  what():  [PG ID 2 PG GUID 3 Rank {g}] Process group watchdog thread terminated "
                                 f"with exception: [Rank {g}] Watchdog caught collective operation timeout: {work}",
                       other()))
    out.append(sigquit(t + 0.003 * len(lay.ranks) + 0.05))
    return out


def watchdog(cfg: Config, lay: Layout, t: float) -> list[Msg]:
    wt = cfg.args["watchdog_timeout"]
    out = [Msg(t + 0.001 * i, r.label, f"Scheduler watchdog timeout (self.watchdog_timeout={wt!r}, self.soft=False)",
               event("watchdog")) for i, r in enumerate(lay.ranks)]
    out.append(sigquit(t + 0.001 * len(lay.ranks) + 0.05))
    return out


def shutdown(t: float, remaining: int) -> list[Msg]:
    """SGLang's SIGTERM handling (the handler is installed with loop.add_signal_handler, so it is
    called without signum and frame)."""
    return [Msg(t, "", "SIGTERM received. signum=None frame=None. Draining requests and shutting down...",
                event("stopping")),
            Msg(t + 0.01, "", f"Gracefully exiting... Remaining number of requests {remaining}.", event("stopped"))]
