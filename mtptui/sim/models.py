"""What the simulator pretends to know about a model, guessed from `--model-path`.

Only what shapes the logs: the architecture class printed by `Load weight end`, the weight and
KV-cache sizes that decide `max_total_num_tokens` (and a startup OOM), the memory-pool kind (plain,
hybrid mamba/GDN, hybrid SWA), the MTP draft class for NEXTN, and the speed knobs of the behaviour
model. Numbers are plausible, not measured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Preset:
    arch: str
    params_b: float  # total parameters, billions
    active_b: float  # parameters read per token (MoE: active experts)
    bytes_per_param: float
    dtype: str
    gpu_mem_gb: float  # what one GPU reports free before loading
    kv_bytes_per_token: int  # the whole model's KV bytes per token, before TP sharding
    mla: bool = False  # DeepSeek MLA prints `KV size:` instead of K and V sizes
    hybrid: str = "none"  # "mamba" (GDN/SSM layers), "swa", or "none"
    draft_arch: str | None = None  # the MTP head's class when the checkpoint carries one
    mtp_auto_path: bool = False  # SGLang sets the draft path to the model path itself
    spec_defaults: str = "other"  # "llama" (5,4,8), "deepseek" (3,1,4), "other": by version
    context_len: int = 32768
    shards: int = 4
    # Per-position conditional acceptance of the model's own MTP head (NEXTN). EAGLE heads,
    # EAGLE3, STANDALONE and NGRAM use their own chains (see behaviour.py).
    mtp_q: tuple[float, ...] = (0.875, 0.64, 0.53, 0.46, 0.4, 0.36, 0.32)
    t0_ms: float = 0.0  # decode step floor; 0 means derived from active_b
    # One draft step's cost as a fraction of the step floor. An MTP or EAGLE head is one decoder
    # layer plus the LM head, run as a step of its own (its launches, its sampling): next to a
    # large MoE a few hundredths (the 397B's), next to a dense model of a few dozen layers about
    # a tenth (DENSE_DRAFT_COST). The presets without a figure of their own keep 0.18, the
    # figure the committed sample logs were made with.
    draft_cost: float = 0.18


# A dense model's head: one of its ~36 layers (3%) plus the LM head (a 150k vocabulary next to
# 8B weights: 7%), read once a draft step. With it more draft steps pay at batch 1 as every
# report of an EAGLE or MTP head on a dense 7-8B model has it (2-3x at 4-6 draft tokens where
# acceptance is high): off < mtp1 < mtp3 by 50% and 20% on the shipped prompts (behaviour.py).
DENSE_DRAFT_COST = 0.08


_QWEN3_5 = Preset(
    arch="Qwen3_5MoeForConditionalGeneration", params_b=122, active_b=10, bytes_per_param=2,
    dtype="torch.bfloat16", gpu_mem_gb=139.2, kv_bytes_per_token=90112, hybrid="mamba",
    draft_arch="Qwen3_5MoeForCausalLMMTP", context_len=262144, shards=39, t0_ms=11.0)

_PRESETS: list[tuple[re.Pattern[str], Preset]] = [
    # The flagship: its MTP head (one decoder layer and the LM head) costs about 6% of a target
    # step, so each extra draft step pays at batch 1 (behaviour.implied_tok_s: off < mtp1 < mtp3
    # by 25% or more each). The integration hosts' benchmark runs it for that reason.
    (re.compile(r"qwen3\.5-397b", re.IGNORECASE), replace(
        _QWEN3_5, params_b=397, active_b=17, kv_bytes_per_token=122880, shards=94, t0_ms=14.0,
        draft_cost=0.06)),
    (re.compile(r"qwen3\.5|qwen3_5", re.IGNORECASE), _QWEN3_5),
    (re.compile(r"qwen3-next", re.IGNORECASE), Preset(
        arch="Qwen3NextForCausalLM", params_b=80, active_b=3, bytes_per_param=2,
        dtype="torch.bfloat16", gpu_mem_gb=78.6, kv_bytes_per_token=24576, hybrid="mamba",
        draft_arch="Qwen3NextForCausalLMMTP", context_len=262144, shards=41)),
    (re.compile(r"deepseek-(v3|r1)", re.IGNORECASE), Preset(
        arch="DeepseekV3ForCausalLM", params_b=671, active_b=37, bytes_per_param=1,
        dtype="torch.bfloat16", gpu_mem_gb=139.2, kv_bytes_per_token=70272, mla=True,
        draft_arch="DeepseekV3ForCausalLMNextN", mtp_auto_path=True, spec_defaults="deepseek",
        context_len=163840, shards=163, mtp_q=(0.86, 0.68, 0.56, 0.47, 0.41, 0.36, 0.32),
        t0_ms=16.0)),
    (re.compile(r"glm-4\.[56]", re.IGNORECASE), Preset(
        arch="Glm4MoeForCausalLM", params_b=355, active_b=32, bytes_per_param=2,
        dtype="torch.bfloat16", gpu_mem_gb=139.2, kv_bytes_per_token=188416,
        draft_arch="Glm4MoeForCausalLMNextN", mtp_auto_path=True, spec_defaults="deepseek",
        context_len=131072, shards=93)),
    (re.compile(r"mimo", re.IGNORECASE), Preset(
        arch="MiMoForCausalLM", params_b=7, active_b=7, bytes_per_param=2, dtype="torch.bfloat16",
        gpu_mem_gb=78.6, kv_bytes_per_token=57344, draft_arch="MiMoMTP", mtp_auto_path=True,
        spec_defaults="deepseek", context_len=32768, shards=4)),
    (re.compile(r"gpt-oss", re.IGNORECASE), Preset(
        arch="GptOssForCausalLM", params_b=117, active_b=5.1, bytes_per_param=0.53,
        dtype="torch.bfloat16", gpu_mem_gb=78.6, kv_bytes_per_token=73728, hybrid="swa",
        spec_defaults="deepseek", context_len=131072, shards=15)),
    (re.compile(r"llama", re.IGNORECASE), Preset(
        arch="LlamaForCausalLM", params_b=8, active_b=8, bytes_per_param=2, dtype="torch.bfloat16",
        gpu_mem_gb=78.6, kv_bytes_per_token=131072, spec_defaults="llama", context_len=131072,
        shards=4)),
]


def _size_b(path: str) -> float | None:
    m = re.search(r"(\d+(?:\.\d+)?)[bB](?![a-zA-Z])", path)
    return float(m.group(1)) if m else None


def preset_for(model_path: str) -> Preset:
    for rx, p in _PRESETS:
        if rx.search(model_path):
            size = _size_b(model_path)
            if p.arch == "LlamaForCausalLM" and size:
                # Llama 8B vs 70B vs 405B: scale weights and KV with the size in the name.
                scale = size / 8
                return replace(p, params_b=size, active_b=size,
                               kv_bytes_per_token=int(131072 * min(scale, 2.5)),
                               shards=max(4, int(4 * scale)))
            return p
    low = model_path.lower()
    if "qwen3" in low:
        arch = "Qwen3ForCausalLM"
    elif "qwen2" in low or "qwen" in low:
        arch = "Qwen2ForCausalLM"
    elif "mistral" in low:
        arch = "MistralForCausalLM"
    else:
        arch = "LlamaForCausalLM"
    size = _size_b(model_path) or 8.0
    return Preset(arch=arch, params_b=size, active_b=size, bytes_per_param=2,
                  dtype="torch.bfloat16", gpu_mem_gb=78.6,
                  kv_bytes_per_token=int(16384 * max(1.0, size / 2)),
                  spec_defaults="llama" if arch == "LlamaForCausalLM" else "other",
                  shards=max(1, int(size / 2)), draft_cost=DENSE_DRAFT_COST)


def step_floor_ms(p: Preset, tp: int) -> float:
    """The decode step time at batch size 1 without speculation (kernel launches, all-reduce,
    reading the active weights once)."""
    if p.t0_ms:
        return p.t0_ms
    return 5.5 + 0.6 * p.active_b * p.bytes_per_param / max(tp, 1)


def weights_gb_per_rank(p: Preset, tp: int) -> float:
    return p.params_b * p.bytes_per_param / max(tp, 1)


def draft_weights_gb(p: Preset, tp: int, algorithm: str | None, draft_path: str | None) -> float:
    """An MTP head is about one layer plus the LM head; an EAGLE head a little more; a STANDALONE
    draft is a small model of its own."""
    if algorithm is None or algorithm == "NGRAM":
        return 0.0
    if algorithm == "STANDALONE":
        size = _size_b(draft_path or "") or 1.5
        return size * 2 / max(tp, 1)
    return max(0.4, p.params_b * p.bytes_per_param * 0.012) / max(tp, 1) + 0.6
