"""`sglang.launch_server`'s flags as the simulator accepts them, per log-format version.

The parser mimics SGLang's argparse (same option names, `choices` where SGLang has them, prefix
abbreviations allowed, `error: unrecognized arguments` and exit 2 for the rest). `resolve()` then
does what `ServerArgs.__post_init__` does to the speculation settings (reference §3): NEXTN becomes
EAGLE, steps/topk/draft are all given or all auto-chosen, topk 1 forces draft = steps + 1,
STANDALONE and NGRAM refuse DP attention, and so on. Its failures are `ServerArgsError`s that carry
the exception SGLang raises; the caller prints it and exits 2, so a bad restart can be tested.
`server_args_text()` prints what SGLang logs after `server_args=` at start: the `ServerArgs(...)`
dataclass repr up to 0.5.18, the dict of resolved fields from 0.5.19.

The simulator's own options start with `--sim-`; they never appear in `server_args=`.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

from mtptui.sim import models
from mtptui.sim.formats import DEFAULT_VERSION, VERSIONS, vtuple

LOADS = ("none", "light", "steady", "burst", "ramp", "saturate", "long")
HYBRIDS = ("auto", "none", "mamba", "swa")
# name -> whether it takes @SECONDS (seconds after the ready line)
FAULTS = {
    "oom": "startup: `Not enough memory` while allocating the KV cache (oom@S: CUDA OOM at S s)",
    "crash": "crash@S: the scheduler hits an exception (illegal memory access) S s after ready",
    "accept-collapse": "accept-collapse@S: acceptance falls to about 1.0 from S s (default 30)",
    "no-cuda-graph": "CUDA graphs unusable: no capture, `cuda graph: False`, slower decode",
    "nccl": "nccl@S: a collective hangs at S s; NCCL's watchdog aborts 10 s later",
    "hang": "hang@S: the scheduler stops at S s; SGLang's watchdog fires after --watchdog-timeout",
}
DEFAULT_FAULT_AT = {"oom": None, "crash": 20.0, "accept-collapse": 30.0, "no-cuda-graph": None,
                    "nccl": 20.0, "hang": 20.0}


@dataclass(frozen=True)
class Fault:
    name: str
    at: float | None  # seconds after the ready line; None for startup faults


def parse_fault(text: str) -> Fault:
    name, _, at = text.partition("@")
    if name not in FAULTS:
        raise argparse.ArgumentTypeError(
            f"unknown fault {name!r} (choose from {', '.join(FAULTS)}; add @SECONDS to time it)")
    if at:
        try:
            secs = float(at)
        except ValueError:
            secs = math.nan
        if not 0 <= secs < math.inf:
            raise argparse.ArgumentTypeError(f"fault time must be seconds: {text!r}")
        if name == "no-cuda-graph":
            raise argparse.ArgumentTypeError("no-cuda-graph takes no time")
        return Fault(name, secs)
    return Fault(name, DEFAULT_FAULT_AT[name])


def _algorithms(v: tuple) -> list[str]:
    algos = ["EAGLE", "EAGLE3", "NEXTN"]
    if v >= (0, 5, 2):
        algos.append("STANDALONE")
    if v >= (0, 5, 3):
        algos.append("NGRAM")
    if v >= (0, 5, 12):
        algos.append("DFLASH")
    if v >= (0, 5, 17):
        algos.append("DSPARK")
    if v >= (0, 5, 23):
        algos.append("UNO")
    return algos


def _positive_float(s: str) -> float:
    try:
        x = float(s)
    except ValueError:
        x = math.nan
    if not 0 <= x < math.inf:  # NaN and the infinities too: a duration the simulator can run
        raise argparse.ArgumentTypeError(f"must be a number >= 0: {s}")
    return x


# The simulator's own checks on SGLang's flags that SGLang leaves to a traceback later (uvicorn's
# bind() of port 99999 raises OverflowError): each flag's range, said in one line, exit 2.
RANGES = {"port": (0, 65535), "page_size": (1, 1 << 20), "decode_log_interval": (1, 1 << 20),
          "max_running_requests": (1, 1 << 20), "context_length": (1, 1 << 30), "stream_interval": (1, 1 << 20),
          "max_prefill_tokens": (1, 1 << 30), "max_total_tokens": (1, 1 << 40), "cuda_graph_max_bs": (1, 1 << 20),
          "speculative_num_steps": (1, 1024), "speculative_eagle_topk": (1, 1024),
          "speculative_num_draft_tokens": (1, 1 << 16), "nnodes": (1, 4096)}
# below 1 these are SGLang's own AssertionError (_parallelism); above, a simulator of 10**9 ranks
MOST = {"tp_size": 4096, "dp_size": 4096, "ep_size": 4096}


def out_of_range(ns: argparse.Namespace) -> str | None:
    """The first flag outside its range, as one line; None when all are in theirs."""
    for name, (lo, hi) in RANGES.items():
        v = getattr(ns, name, None)
        if v is not None and not lo <= v <= hi:
            return f"--{name.replace('_', '-')} {v}: give an integer from {lo} to {hi}"
    for name, hi in MOST.items():
        if getattr(ns, name) > hi:
            return f"--{name.replace('_', '-')} {getattr(ns, name)}: give at most {hi}"
    for name in ("mem_fraction_static", "watchdog_timeout"):
        v = getattr(ns, name, None)
        if v is not None and not 0 < v < math.inf:
            return f"--{name.replace('_', '-')} {v}: give a number above 0"
    return None


def build_parser(version: str = DEFAULT_VERSION) -> argparse.ArgumentParser:
    """SGLang's flags that matter here, plus the simulator's `--sim-` options."""
    v = vtuple(version)
    p = argparse.ArgumentParser(
        prog="launch_server.py",
        description="mtptui SGLang simulator: takes sglang.launch_server's flags and behaves like "
                    "the server (logs, HTTP, speculation). Not a real server: it serves no model.",
        epilog="Offline: add --write-log FILE [--duration S] to write one run as a journal at once, or "
               "use --sim-scenario NAME --write-log FILE (--sim-scenario list names them). "
               "Exit codes: 0 ok or stopped by SIGTERM, 1 a simulated fatal fault, 2 bad flags.",
    )
    g = p.add_argument_group("sglang.launch_server flags")
    g.add_argument("--model-path", type=str, required=True, help="the model (only its name is used)")
    g.add_argument("--tokenizer-path", type=str)
    g.add_argument("--host", type=str, default="127.0.0.1")
    g.add_argument("--port", type=int, default=30000)
    g.add_argument("--tp-size", "--tp", dest="tp_size", type=int, default=1)
    g.add_argument("--dp-size", "--dp", dest="dp_size", type=int, default=1)
    g.add_argument("--ep-size", "--ep", dest="ep_size", type=int, default=1)
    g.add_argument("--enable-dp-attention", action="store_true")
    g.add_argument("--mem-fraction-static", type=float)
    g.add_argument("--max-running-requests", type=int)
    g.add_argument("--max-total-tokens", type=int)
    g.add_argument("--chunked-prefill-size", type=int)
    g.add_argument("--max-prefill-tokens", type=int, default=16384)
    g.add_argument("--context-length", type=int)
    g.add_argument("--decode-log-interval", type=int, default=40)
    g.add_argument("--trust-remote-code", action="store_true")
    g.add_argument("--served-model-name", type=str)
    g.add_argument("--dtype", type=str, default="auto")
    g.add_argument("--kv-cache-dtype", type=str, default="auto")
    g.add_argument("--quantization", type=str)
    if v < (0, 5, 0):  # 0.4.x: a fixed list (0.4.9's), no trtllm_mha
        g.add_argument("--attention-backend", type=str, choices=[
            "aiter", "cutlass_mla", "fa3", "flashinfer", "flashmla", "intel_amx", "torch_native",
            "ascend", "triton"])
    else:
        g.add_argument("--attention-backend", type=str)
    g.add_argument("--page-size", type=int, default=1)
    g.add_argument("--random-seed", type=int)
    g.add_argument("--watchdog-timeout", type=float, default=300)
    g.add_argument("--log-level", type=str, default="info")
    g.add_argument("--enable-metrics", action="store_true")
    if v >= (0, 5, 4):
        g.add_argument("--enable-metrics-for-all-schedulers", action="store_true")
    g.add_argument("--disable-cuda-graph", action="store_true")
    g.add_argument("--cuda-graph-max-bs", type=int)
    g.add_argument("--disable-radix-cache", action="store_true")
    g.add_argument("--disable-overlap-schedule", action="store_true")
    g.add_argument("--enable-mixed-chunk", action="store_true")
    g.add_argument("--skip-server-warmup", action="store_true")
    g.add_argument("--stream-interval", type=int, default=1)
    g.add_argument("--schedule-policy", type=str, default="fcfs")
    g.add_argument("--reasoning-parser", type=str)
    g.add_argument("--tool-call-parser", type=str)
    g.add_argument("--nnodes", type=int, default=1)
    g.add_argument("--node-rank", type=int, default=0)
    g.add_argument("--dist-init-addr", type=str)
    if v >= (0, 5, 12):
        # 0.5.12+: a free string, upper-cased (reference §3).
        g.add_argument("--speculative-algorithm", type=str.upper)
    else:
        g.add_argument("--speculative-algorithm", type=str, choices=_algorithms(v))
    draft_names = ["--speculative-draft-model-path"]
    if v >= (0, 5, 2):
        draft_names.append("--speculative-draft-model")
    g.add_argument(*draft_names, dest="speculative_draft_model_path", type=str)
    if v >= (0, 5, 2):
        g.add_argument("--speculative-draft-model-revision", type=str)
    g.add_argument("--speculative-num-steps", type=int)
    g.add_argument("--speculative-eagle-topk", type=int)
    g.add_argument("--speculative-num-draft-tokens", type=int)
    g.add_argument("--speculative-accept-threshold-single", type=float, default=1.0)
    g.add_argument("--speculative-accept-threshold-acc", type=float, default=1.0)
    g.add_argument("--speculative-token-map", type=str)
    if v >= (0, 5, 2):
        g.add_argument("--speculative-attention-mode", type=str, choices=["prefill", "decode"],
                       default="prefill")
    if v >= (0, 5, 3):
        g.add_argument("--speculative-ngram-max-bfs-breadth", type=int, default=10)
        g.add_argument("--speculative-ngram-min-bfs-breadth", type=int, default=1)
        g.add_argument("--speculative-ngram-match-type", type=str, default="BFS")
        g.add_argument("--speculative-ngram-capacity", type=int, default=10 * 1000 * 1000)
    if v >= (0, 5, 11):  # adaptive steps (sglang PR #21599)
        g.add_argument("--speculative-adaptive", action="store_true")
        g.add_argument("--speculative-adaptive-config", type=str)

    s = p.add_argument_group("mtptui simulator options (never passed to or printed as SGLang's)")
    s.add_argument("--sim-version", choices=VERSIONS, default=DEFAULT_VERSION,
                   help=f"SGLang version whose log format to print (default {DEFAULT_VERSION})")
    s.add_argument("--sim-hybrid", choices=HYBRIDS, default="auto",
                   help="memory-pool layout: mamba (Qwen3.5/Qwen3-Next style), swa, none, or auto "
                        "from the model name")
    s.add_argument("--sim-load", choices=LOADS, default=None,
                   help="background load per DP group (live default none, offline default steady)")
    s.add_argument("--sim-seed", type=int, default=0)
    s.add_argument("--sim-fault", type=parse_fault, action="append", default=[],
                   metavar="NAME[@S]", help="; ".join(f"{k}: {d}" for k, d in FAULTS.items()))
    s.add_argument("--sim-startup-seconds", type=_positive_float, default=3.0,
                   help="seconds from start to 'fired up' (default 3; the order of lines is kept)")
    s.add_argument("--sim-truth", metavar="FILE",
                   help="also write one JSON object per printed line: what it means")
    s.add_argument("--sim-hostname", default="gpu-h1", help="journald host name in offline logs")
    s.add_argument("--sim-unit", default="sglang-qwen.service", help="unit name in offline logs")
    s.add_argument("--write-log", "--sim-write-log", dest="write_log", metavar="FILE",
                   help="offline: write a journald-style log to FILE without sleeping")
    s.add_argument("--sim-scenario", metavar="NAME", help="offline: a named scenario")
    s.add_argument("--duration", "--sim-duration", dest="duration", type=_positive_float,
                   metavar="S", help="offline: simulated seconds of serving (scenario: whole log)")
    s.add_argument("--sim-envelope", choices=("short-iso", "json", "cat"), default="short-iso",
                   help="offline: like journalctl -o short-iso (default), -o json, or -o cat")
    return p


class ServerArgsError(Exception):
    """What ServerArgs.__post_init__ raises: printed like Python's last traceback lines."""

    def __init__(self, exc_type: str, message: str = "", source: str = "") -> None:
        super().__init__(message)
        self.exc_type = exc_type
        self.message = message
        self.source = source

    def lines(self) -> list[str]:
        out = ["Traceback (most recent call last):",
               '  File "sglang/srt/server_args.py" (simulated by mtptui), in __post_init__']
        if self.source:
            out.append(f"    {self.source}")
        out.append(f"{self.exc_type}: {self.message}" if self.message else self.exc_type)
        return out


@dataclass
class Config:
    """The resolved server: ServerArgs fields in SGLang's order, plus what the simulator needs."""

    version: str
    args: dict  # ServerArgs field -> value, in repr order
    preset: models.Preset
    hybrid: str  # "none", "mamba", "swa"
    warnings: list[str]  # printed raw (before logging is configured), like SGLang's
    load: str | None
    seed: int
    faults: list[Fault]
    startup_seconds: float
    all_schedulers: bool = False
    requested_algorithm: str | None = None  # as given, before NEXTN -> EAGLE

    @property
    def v(self) -> tuple:
        return vtuple(self.version)

    @property
    def spec(self) -> str | None:
        return self.args["speculative_algorithm"]

    def fault(self, name: str) -> Fault | None:
        for f in self.faults:
            if f.name == name:
                return f
        return None

    def spec_summary(self) -> str:
        a = self.args
        if not a["speculative_algorithm"]:
            return "speculation off"
        return (f"{self.requested_algorithm} steps={a['speculative_num_steps']} "
                f"topk={a['speculative_eagle_topk']} draft={a['speculative_num_draft_tokens']}")


def _auto_spec_triplet(v: tuple, preset: models.Preset, algo: str) -> tuple[int, int, int]:
    if algo == "STANDALONE" or preset.spec_defaults == "deepseek":
        return 3, 1, 4
    if preset.spec_defaults == "llama":
        return 5, 4, 8
    return (3, 1, 4) if v >= (0, 5, 8) else (5, 4, 8)


def _auto_mem_fraction(tp: int, spec: bool) -> float:
    frac = {1: 0.8, 2: 0.85}.get(tp, 0.88)
    return round(frac * 0.95, 3) if spec else frac


@dataclass
class _Spec:
    """The speculation settings as ServerArgs resolves them, and the two settings it changes for
    speculation (overlap scheduling, max running requests): filled in phase by phase."""

    algorithm: str | None
    steps: int | None
    topk: int | None
    draft: int | None
    draft_path: str | None
    max_running: int | None
    disable_overlap: bool
    adaptive: bool = False  # --speculative-adaptive as SGLang leaves it (off where it falls back)


def resolve(ns: argparse.Namespace) -> Config:
    """ServerArgs.__post_init__ for what matters here. Raises ServerArgsError."""
    # The phases run in SGLang's order, so that of two mistakes the one SGLang reports first is
    # the one raised, and the warnings come in its order.
    version = ns.sim_version
    v = vtuple(version)
    preset = models.preset_for(ns.model_path)
    warnings: list[str] = []
    chunked = _parallelism(ns, warnings)
    spec = _speculation(ns, v, preset, warnings)
    hybrid = _hybrid(ns, v, preset)
    a = _server_args(ns, v, spec, chunked)
    all_sched = bool(getattr(ns, "enable_metrics_for_all_schedulers", False)) and (0, 5, 4) <= v < (0, 5, 10)
    return Config(version=version, args=a, preset=preset, hybrid=hybrid, warnings=warnings,
                  load=ns.sim_load, seed=ns.sim_seed, faults=list(ns.sim_fault),
                  startup_seconds=ns.sim_startup_seconds, all_schedulers=all_sched,
                  requested_algorithm=ns.speculative_algorithm)


def _parallelism(ns: argparse.Namespace, warnings: list[str]) -> int:
    """SGLang's asserts on the TP, DP and EP sizes; the chunked prefill size, which DP attention
    divides among the DP ranks."""
    chunked = ns.chunked_prefill_size if ns.chunked_prefill_size is not None else 8192
    if ns.tp_size < 1 or ns.dp_size < 1 or ns.ep_size < 1:
        raise ServerArgsError("AssertionError", "", "assert self.tp_size >= 1 and self.dp_size >= 1")
    if ns.enable_dp_attention:
        if ns.tp_size % ns.dp_size != 0:
            raise ServerArgsError("AssertionError", "", "assert self.tp_size % self.dp_size == 0")
        chunked = chunked // ns.dp_size
        warnings.append(f"DP attention is enabled. The chunked prefill size is adjusted to {chunked} "
                        "to avoid MoE kernel issues. ")
    if ns.tp_size % ns.ep_size != 0:
        raise ServerArgsError("AssertionError", "", "assert self.tp_size % self.ep_size == 0")
    return chunked


def _speculation(ns: argparse.Namespace, v: tuple, preset: models.Preset, warnings: list[str]) -> _Spec:
    """The speculative flags as ServerArgs leaves them: NEXTN is EAGLE, an MTP model is its own
    draft, NGRAM's counts or the EAGLE family's checked or chosen, and speculation's own limit on
    running requests."""
    algo = ns.speculative_algorithm
    if v >= (0, 5, 12) and algo is not None and algo not in _algorithms(v):
        raise ServerArgsError("ValueError", f"Unknown speculative algorithm name: {algo}")
    if algo in ("DFLASH", "DSPARK", "UNO"):
        raise ServerArgsError("ValueError", f"{algo} is not simulated by mtptui")
    sp = _Spec(algo, ns.speculative_num_steps, ns.speculative_eagle_topk, ns.speculative_num_draft_tokens,
               ns.speculative_draft_model_path, ns.max_running_requests, ns.disable_overlap_schedule)
    if algo is None:
        return sp
    if algo == "NEXTN":
        sp.algorithm = algo = "EAGLE"  # "NEXTN shares the same implementation of EAGLE"
    if algo in ("EAGLE", "EAGLE3") and preset.mtp_auto_path and (v >= (0, 5, 0) or preset.arch == "DeepseekV3ForCausalLM"):
        if sp.draft_path is None:
            sp.draft_path = ns.model_path
        elif preset.arch == "DeepseekV3ForCausalLM" and sp.draft_path != ns.model_path:
            warnings.append("DeepSeek MTP does not require setting speculative_draft_model_path.")
    if algo == "STANDALONE" and ns.enable_dp_attention:
        raise ServerArgsError("ValueError", "Currently standalone speculative decoding does not support dp attention.")
    if algo == "NGRAM":
        _ngram(sp, ns)
    else:
        _eagle_counts(sp, algo, ns, v, preset, warnings)
    if sp.max_running is None:
        sp.max_running = 48
        warnings.append("Max running requests is reset to 48 for speculative decoding. You can "
                        "override this by explicitly setting --max-running-requests.")
    if getattr(ns, "speculative_adaptive", False):
        _adaptive(sp, ns, v, warnings)
    return sp


def _adaptive(sp: _Spec, ns: argparse.Namespace, v: tuple, warnings: list[str]) -> None:
    """--speculative-adaptive, kept or dropped as adaptive_unsupported_reason decides (0.5.11-0.5.23
    srt/speculative/adaptive_spec_params.py; the simulator has no two-batch overlap or pdmux)."""
    why = None
    if sp.algorithm not in ("EAGLE", "EAGLE3"):
        why = f"speculative_algorithm={sp.algorithm} (only EAGLE/EAGLE3 are supported)"
    elif sp.topk != 1:
        why = f"speculative_eagle_topk={sp.topk} (only topk=1 is supported)"
    elif ns.enable_dp_attention:
        why = "enable_dp_attention=True is not supported (adaptive tier decisions are not synchronized across DP ranks)"
    elif v < (0, 5, 12) and not sp.disable_overlap:
        why = "the overlap scheduler (spec v2) is enabled (adaptive is only implemented for EAGLEWorker v1)"
    if why:
        warnings.append(f"speculative_adaptive disabled: {why}. Falling back to static speculative params.")
    sp.adaptive = why is None


def _ngram(sp: _Spec, ns: argparse.Namespace) -> None:
    """NGRAM: no DP attention, its topk the BFS breadth, 12 draft tokens unless given, and no
    overlap scheduling."""
    if ns.enable_dp_attention:
        raise ServerArgsError("ValueError", "Currently ngram speculative decoding does not support dp attention.")
    # "self.speculative_eagle_topk = self.speculative_ngram_max_bfs_breadth" (0.5.3+)
    sp.topk = topk = getattr(ns, "speculative_ngram_max_bfs_breadth", None) or 10
    if sp.draft is None:
        sp.draft = 12
    if topk > 1 and ns.page_size > 1 and ns.attention_backend is not None \
            and ns.attention_backend != "flashinfer":
        raise ServerArgsError(
            "ValueError", f"speculative_eagle_topk({topk}) > 1 with page_size({ns.page_size}) > 1 "
            "is unstable and produces incorrect results for paged attention backends. This "
            "combination is only supported for the 'flashinfer' backend.")
    sp.disable_overlap = True


def _eagle_triplet(sp: _Spec, algo: str, v: tuple, preset: models.Preset) -> tuple[int, int, int]:
    """Steps, topk and draft tokens: all three given, or none and SGLang chooses them for the
    model; two ways to give only some fail as SGLang does."""
    steps, topk, draft = sp.steps, sp.topk, sp.draft
    if steps is None:
        if topk is not None or draft is not None:
            raise ServerArgsError(
                "AssertionError", "",
                "assert self.speculative_eagle_topk is None and self.speculative_num_draft_tokens is None")
        return _auto_spec_triplet(v, preset, algo)
    if topk is None or draft is None:
        # Only some of the three given: SGLang compares None with an int later on.
        raise ServerArgsError("TypeError", "'>' not supported between instances of 'NoneType' and 'int'",
                              "if self.speculative_eagle_topk > 1:")
    return steps, topk, draft


def _eagle_counts(sp: _Spec, algo: str, ns: argparse.Namespace, v: tuple, preset: models.Preset,
                  warnings: list[str]) -> None:
    """The EAGLE family's counts (_eagle_triplet), then SGLang's rules on them: topk 1 means
    draft = steps + 1, topk > 1 wants a backend that can run it, and before 0.5.4 speculation
    turns overlap scheduling off."""
    steps, topk, draft = _eagle_triplet(sp, algo, v, preset)
    if steps < 1 or topk < 1 or draft < 1:
        raise ServerArgsError("AssertionError", "", "assert self.speculative_num_steps >= 1")
    if topk == 1 and draft != steps + 1:
        warnings.append("speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 "
                        "when speculative_eagle_topk == 1")
        draft = steps + 1
    sp.steps, sp.topk, sp.draft = steps, topk, draft
    if topk > 1 and ns.attention_backend == "trtllm_mha":
        raise ServerArgsError("ValueError", "trtllm_mha backend only supports topk = 1 for speculative decoding.")
    # The version's list of backends; a backend SGLang picks itself (none given) is not judged.
    # (The simulator imports nothing outside mtptui.sim: control/profiles.py has the same
    # lists, and tests/unit/test_control_profiles.py holds the two to the same answers.)
    paged = (("flashinfer",) if v < (0, 5, 6) else ("flashinfer", "fa3") if v < (0, 5, 13)
             else ("flashinfer", "fa3", "triton"))
    if topk > 1 and ns.page_size > 1 and ns.attention_backend is not None \
            and ns.attention_backend not in paged and v >= (0, 5, 2):
        raise ServerArgsError(
            "ValueError", "speculative_eagle_topk > 1 with page_size > 1 is unstable and produces "
            "incorrect results for paged attention backends. This combination is only supported "
            "for the 'flashinfer' backend.")
    if v < (0, 5, 4):
        sp.disable_overlap = True
        warnings.append("Overlap scheduler is disabled because of using eagle speculative decoding.")


def _hybrid(ns: argparse.Namespace, v: tuple, preset: models.Preset) -> str:
    """The model's hybrid pool (--sim-hybrid, or the preset's where auto), where the version's
    logs have one."""
    hybrid = ns.sim_hybrid
    if hybrid == "auto":
        hybrid = preset.hybrid
        if (hybrid == "mamba" and v < (0, 5, 4)) or (hybrid == "swa" and v < (0, 4, 9)):
            hybrid = "none"
    elif hybrid == "mamba" and v < (0, 5, 4):
        raise ServerArgsError("ValueError", "mtptui simulator: mamba pool fields exist in SGLang 0.5.4+ logs only")
    return hybrid


def _capacity(ns: argparse.Namespace, v: tuple, sp: _Spec) -> tuple[float, int, int]:
    """mem_fraction_static, max_running_requests and cuda_graph_max_bs: as given, else what
    SGLang picks (less memory and smaller graphs with speculation)."""
    mem = ns.mem_fraction_static
    if mem is None:
        mem = _auto_mem_fraction(ns.tp_size, sp.algorithm is not None)
    max_running = sp.max_running
    if max_running is None:
        max_running = 1024 if v >= (0, 5, 0) else 2048
    graph_bs = ns.cuda_graph_max_bs
    if graph_bs is None:
        graph_bs = min(256, max_running) if sp.algorithm is None else min(max_running, 64)
    return mem, max_running, graph_bs


def _server_args(ns: argparse.Namespace, v: tuple, sp: _Spec, chunked: int) -> dict:
    """ServerArgs' fields in its repr's order (what `server_args=` prints), with the values
    resolved above."""
    mem, max_running, graph_bs = _capacity(ns, v, sp)
    algo, draft_path = sp.algorithm, sp.draft_path
    a: dict = {}
    a["model_path"] = ns.model_path
    a["tokenizer_path"] = ns.tokenizer_path or ns.model_path
    a["tokenizer_mode"] = "auto"
    a["skip_tokenizer_init"] = False
    a["load_format"] = "auto"
    a["trust_remote_code"] = ns.trust_remote_code
    a["context_length"] = ns.context_length
    a["is_embedding"] = False
    a["revision"] = None
    a["host"] = ns.host
    a["port"] = ns.port
    a["skip_server_warmup"] = ns.skip_server_warmup
    a["dtype"] = ns.dtype
    a["quantization"] = ns.quantization
    a["kv_cache_dtype"] = ns.kv_cache_dtype
    a["mem_fraction_static"] = mem
    a["max_running_requests"] = max_running
    a["max_total_tokens"] = ns.max_total_tokens
    a["chunked_prefill_size"] = chunked
    a["max_prefill_tokens"] = ns.max_prefill_tokens
    a["schedule_policy"] = ns.schedule_policy
    a["schedule_conservativeness"] = 1.0
    a["page_size"] = ns.page_size
    a["device"] = "cuda"
    a["tp_size"] = ns.tp_size
    a["pp_size"] = 1
    a["stream_interval"] = ns.stream_interval
    a["random_seed"] = ns.random_seed if ns.random_seed is not None else 1234
    a["watchdog_timeout"] = ns.watchdog_timeout
    a["log_level"] = ns.log_level
    a["log_requests"] = False
    a["enable_metrics"] = ns.enable_metrics
    if v >= (0, 5, 4):
        a["enable_metrics_for_all_schedulers"] = ns.enable_metrics_for_all_schedulers
    a["decode_log_interval"] = ns.decode_log_interval
    a["api_key"] = None
    a["served_model_name"] = ns.served_model_name or ns.model_path
    a["chat_template"] = None
    a["reasoning_parser"] = ns.reasoning_parser
    a["tool_call_parser"] = ns.tool_call_parser
    a["dp_size"] = ns.dp_size
    a["load_balance_method"] = "round_robin"
    a["dist_init_addr"] = ns.dist_init_addr
    a["nnodes"] = ns.nnodes
    a["node_rank"] = ns.node_rank
    a["attention_backend"] = ns.attention_backend
    a["speculative_algorithm"] = algo
    a["speculative_draft_model_path"] = draft_path
    a["speculative_draft_model_revision"] = (getattr(ns, "speculative_draft_model_revision", None) or "main") if draft_path else None
    a["speculative_num_steps"] = sp.steps
    a["speculative_eagle_topk"] = sp.topk
    a["speculative_num_draft_tokens"] = sp.draft
    a["speculative_accept_threshold_single"] = ns.speculative_accept_threshold_single
    a["speculative_accept_threshold_acc"] = ns.speculative_accept_threshold_acc
    a["speculative_token_map"] = ns.speculative_token_map
    if v >= (0, 5, 4):
        a["speculative_attention_mode"] = ns.speculative_attention_mode
    # SGLang 0.5.11+ prints these always; the simulator where they were asked for, so that the
    # committed sample logs (sample_logs/, made before it knew them) stay as they were
    if v >= (0, 5, 11) and (ns.speculative_adaptive or ns.speculative_adaptive_config):
        a["speculative_adaptive"] = sp.adaptive
        a["speculative_adaptive_config"] = ns.speculative_adaptive_config
    a["ep_size"] = ns.ep_size
    a["disable_radix_cache"] = ns.disable_radix_cache
    a["cuda_graph_max_bs"] = graph_bs
    a["disable_cuda_graph"] = ns.disable_cuda_graph
    a["enable_mixed_chunk"] = ns.enable_mixed_chunk if algo is None else False
    a["enable_dp_attention"] = ns.enable_dp_attention
    a["disable_overlap_schedule"] = sp.disable_overlap
    a["enable_torch_compile"] = False
    return a


# From 0.5.19 the start line is `logger.info(f"server_args={server_args.resolved_dict()}")`
# (sglang/srt/entrypoints/engine.py, Engine._launch_subprocesses; 0.5.23 passes the dict through
# redact_watermark_secrets first): the repr of a plain dict, not the dataclass repr of 0.5.18.
DICT_FORM_FROM = (0, 5, 19)


def server_args_repr(args: dict) -> str:
    """`ServerArgs(model_path='m', ...)`: `logger.info(f"{server_args=}")` up to 0.5.18."""
    return "ServerArgs(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"


def server_args_dict(args: dict) -> str:
    """`{'model_path': 'm', ...}`: `f"server_args={server_args.resolved_dict()}"` from 0.5.19."""
    return repr(dict(args))


def server_args_text(version: str | tuple, args: dict) -> str:
    """What follows `server_args=` in the start line of this SGLang version."""
    v = vtuple(version) if isinstance(version, str) else version
    return server_args_dict(args) if v >= DICT_FORM_FROM else server_args_repr(args)


def spec_truth(args: dict) -> dict:
    """The settings an operator reads from the `server_args=` line (DESIGN.md: spec_config)."""
    return {
        "algorithm": args["speculative_algorithm"],
        "num_steps": args["speculative_num_steps"],
        "topk": args["speculative_eagle_topk"],
        "num_draft_tokens": args["speculative_num_draft_tokens"],
        "draft_model_path": args["speculative_draft_model_path"],
        "model_path": args["model_path"],
        "tp_size": args["tp_size"],
        "dp_size": args["dp_size"],
        "enable_dp_attention": args["enable_dp_attention"],
        "decode_log_interval": args["decode_log_interval"],
        **({"adaptive": args["speculative_adaptive"]} if "speculative_adaptive" in args else {}),
    }


def pre_version(argv: list[str]) -> str:
    """The --sim-version given (needed before the full parser, whose choices depend on it)."""
    pre = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    pre.add_argument("--sim-version", choices=VERSIONS, default=DEFAULT_VERSION)
    ns, _ = pre.parse_known_args(argv)
    return ns.sim_version
