"""The behaviour model: how fast a simulated server steps, how much of the draft it accepts, and
what load it sees. Pure functions of the settings and a seeded `random.Random`.

Acceptance
    Each decode step drafts a chain of `speculative_num_steps` tokens (NGRAM: num_draft_tokens-1).
    Position i is accepted with conditional probability q_i, given that the ones before it were:
    tokens emitted per request-step = 1 (bonus) + the accepted prefix, so `accept len` ranges from
    1.0 to steps+1, as in SGLang (reference §1.5). The chains:
      - the model's own MTP head (NEXTN, or EAGLE with the checkpoint as draft): the preset's
        mtp_q, q1 about 0.875; NEXTN with 3 steps gives about 2.7-2.9, 1 step about 1.85-1.9
      - a separate EAGLE head: q1 0.78; EAGLE3: q1 0.85 with a slower decay
      - STANDALONE (a small draft model): q1 0.70; NGRAM: q1 0.40 then 0.6 while a match lasts
      - EAGLE run with an EAGLE3 draft (a draft path naming eagle3): nothing is accepted, 1.00
    topk > 1 widens each position's chance: q' = 1 - (1-q)^(1 + 0.2 (topk-1)).
    A slow AR(1) "content difficulty" factor (mean 1, sd about 0.03) scales every q, so windows
    differ as real traffic does; the window average then adds the sampling noise of its
    request-steps. The `accept-collapse` fault scales q down to 5% over 8 seconds.

Acceptance and context length
    SGLang and vLLM users report acceptance falling as contexts grow, until speculation costs more
    than it gives (past about 32k tokens): draft heads are trained on short sequences. Every q is
    scaled by a factor of the scheduler's mean context per running request (its tokens in use
    over its running requests, what `#token` / `#running-req` of its decode lines gives):
        1 up to 8k tokens, then 1 / (1 + 0.2 x^2) with x = log2(context / 8k)
        16k 0.83 (NEXTN 3 steps: accept len about 2.2), 32k 0.56 (about 1.7), 64k 0.36 (about 1.4)
    With the step times below, the Qwen3.5 preset on TP4 with NEXTN 3 steps at a few running
    requests breaks even near an accept len of 1.66 (factor 0.53), just past 32k: speculation
    pays under 32k tokens per request and runs slower than without it past that. Step times do
    not grow with context here (a run with speculation and one without would slow alike).

Acceptance and content
    Drafts are guessed from what came before, so they are right more often where the text is
    predictable: code and structured output repeat names, keys and syntax; open conversation and
    stories do not. A real server gets no category with a request, so the simulator reads it from
    the prompt's own text (`classify`, the last user message), by the first of these cues that
    appears as a word (case-insensitive):
        structured output  json, yaml, csv, xml, schema, "markdown table"
        code               code, python, function, sql, bash, script, refactor, javascript, regex,
                           a ``` fence or a line starting "def " / "class "
        maths              prove, proof, equation, theorem, derivative, integral, solve, calculate
        summarisation      summarise, summarize, summary, tl;dr
        chat               anything else
    and scales every q of that request by its category's factor (CATEGORY_FACTOR):
        structured output 1.15, code 1.12, maths 1.0, summarisation 0.9, chat 0.85
    The spread is EAGLE's across its benchmarks (accept length on HumanEval about 1.1x MT-bench's,
    CNN/DM's and open questions' lowest); DeepSeek-V3's MTP head accepts 85-90% "across various
    generation topics", so no category makes a head accept half as often. A request's own draft
    chains are sampled with its factor; the background load (--sim-load) stays at 1.0, the mean
    of the five factors (a mix of everything, as the shipped prompts are), so that a benchmark of
    the shipped prompts and the decode lines of the same server rank profiles alike. A decode
    line's accept len is the batch's average and moves with the share of each category in it.
    With Qwen3-8B on TP1 (the hosts' server) at a few running requests, NEXTN 3 steps accepts
    about 2.8 on code (135 tokens/s against 65 without speculation, 106 with mtp1) and about 2.1
    on chat (104, against 94 with mtp1).

Step time (milliseconds, per scheduler, i.e. per DP group)
    target = T0 + a x bs x n_verify        T0 from the model preset and TP (the bs=1 floor),
                                           a = 0.05 ms per token (0.12 under DP attention),
                                           n_verify = 1 without speculation, else num_draft_tokens
    draft  = steps x (c T0 + 0.15 a x bs x topk)
                                           c = the preset's draft_cost: 0.18, 0.06 for
                                           Qwen3.5-397B-A17B (a head next to a large MoE),
                                           0.08 for a dense model no preset names (Qwen3-8B)
    step   = target + draft + 0.8 (+1.0 for tree drafting when topk > 1), x1.7 on T0 without
             CUDA graphs, x(1 +- 3%) jitter.
    So throughput (bs x accept len / step) rises with acceptance, and the gain from speculation
    shrinks as the batch grows: verifying num_draft_tokens per request costs compute that small
    batches have spare and large ones do not. `implied_tok_s` is what one request gets: with
    Qwen3.5-397B-A17B on TP 8 at batch 1, off 71, NEXTN mtp1 119 and mtp3 156 tokens/s (+67%,
    then +31%); with Qwen3-8B, off 66, mtp1 103 and mtp3 126 (+56%, then +22%).

Speculation under load
    So the gain falls as the batch grows, as the reports have it (DeepSeek-R1's MTP 1.63x at 1
    QPS, 1.18x at 2 QPS: vllm #12755; Qwen3-235B's best steps 4 at batch 1, 2 at batch 64: sgl
    #22246; EAGLE-3 13% slower past 4-8 QPS: llm-d #2074). DeepSeek-V3 with DP attention (the
    demo), per DP group: mtp3 over off 1.72x at batch 1, 1.36x at 25 (the demo's steady load,
    where mtp2 leads by a little), 1.20x at 45; with speculation SGLang captures graphs up to 48
    requests and runs no more (the rest queue), so past 48 a group runs eager and speculation
    runs slower than off (0.88x at 49). A benchmark's own requests join the background load
    (--sim-load): they are measured at the batch the server runs then, background included.
    HTTP replies stream each token at the simulated end of the step that made it (the model's
    clock, not a sleep per token), so a client measures these speeds whatever the machine's load,
    less its own per-request overhead.

Prefill
    3 ms + new tokens x 0.04 ms x (active params / 10B) / TP. Prefill batches run between decode
    steps, as SGLang runs them, and admit waiting requests FIFO up to --max-prefill-tokens,
    --max-running-requests and the KV pool.

Load (`--sim-load`, per DP group)
    A closed loop of clients, each sending a request, waiting for it, thinking ~0.4 s (exponential)
    and sending the next. The number of clients follows the shape:
      none 0; light 4; steady 24 +- 20% (slow wave); burst 8, and 96 for 15 s of every 60 s;
      ramp 1 -> 64 over 180 s; saturate 160 with long prompts (queue, high token usage, retracts);
      long 4, with prompts that grow longer: lognormal (sd 0.25) around 2k tokens doubling every
      40 s, up to the model's context length (4k at 40 s, 32k at 160 s, 64k at 200 s).
    Prompts are lognormal around 1200 tokens (saturate 6000), outputs around 350 (saturate 1500,
    long 250); 60% of prompts hit the prefix cache for 20-70% of their tokens. Prompts are capped
    at the chunked prefill size (8192 at most), but long's at the context length less 4k.
"""

from __future__ import annotations

import math
import random
import re

from mtptui.sim import models

EAGLE_Q = (0.78, 0.6, 0.5, 0.43, 0.38, 0.34, 0.31, 0.29)
EAGLE3_Q = (0.85, 0.72, 0.63, 0.56, 0.5, 0.46, 0.42, 0.39)
STANDALONE_Q = (0.7, 0.55, 0.47, 0.41, 0.37, 0.34, 0.31, 0.29)


def acceptance_chain(args: dict, preset: models.Preset, requested: str | None) -> list[float]:
    """Conditional acceptance per draft position for these settings ([] without speculation)."""
    algo = args["speculative_algorithm"]
    if algo is None:
        return []
    steps = args["speculative_num_steps"]
    topk = args["speculative_eagle_topk"] or 1
    draft = args["speculative_num_draft_tokens"]
    draft_path = (args["speculative_draft_model_path"] or "").lower()
    if algo == "NGRAM":
        n = max(1, (draft or 12) - 1)
        return [0.4] + [0.6] * (n - 1)
    own_mtp = preset.draft_arch is not None and (requested == "NEXTN" or draft_path in ("", args["model_path"].lower()))
    if algo == "EAGLE" and "eagle3" in draft_path:
        base: tuple = (0.0,)  # an EAGLE3 head driven as EAGLE accepts nothing (sglang PR #21272)
    elif algo == "EAGLE3":
        base = EAGLE3_Q
    elif algo == "STANDALONE":
        base = STANDALONE_Q
    elif own_mtp:
        base = preset.mtp_q
    else:
        base = EAGLE_Q
    q = [base[min(i, len(base) - 1)] for i in range(steps)]
    if topk > 1:
        q = [1 - (1 - x) ** (1 + 0.2 * (topk - 1)) for x in q]
    return q


def chain_stats(q: list[float], mult: float = 1.0) -> tuple[float, float]:
    """Mean and variance of tokens per request-step (1 + accepted prefix)."""
    p = 1.0
    e1 = e2 = 0.0
    for i, qi in enumerate(q, start=1):
        p *= min(0.995, max(0.0, qi * mult))
        e1 += p
        e2 += (2 * i - 1) * p
    return 1.0 + e1, max(0.0, e2 - e1 * e1)


def sample_chain(rng: random.Random, q: list[float], mult: float = 1.0) -> int:
    n = 1
    for qi in q:
        if rng.random() >= min(0.995, max(0.0, qi * mult)):
            break
        n += 1
    return n


CATEGORY_FACTOR = {"structured output": 1.15, "code": 1.12, "maths": 1.0, "summarisation": 0.9, "chat": 0.85}
_CUES = (
    ("structured output", re.compile(r"\b(json|yaml|csv|xml|schema|markdown table)\b", re.I)),
    ("code", re.compile(r"```|^\s*(def|class) |\b(code|python|function|sql|bash|script|refactor|javascript|regex)\b",
                        re.I | re.M)),
    ("maths", re.compile(r"\b(prove|proof|equation|theorem|derivative|integral|solve|calculate)\b", re.I)),
    ("summarisation", re.compile(r"\b(summari[sz]e|summary|tl;dr)\b", re.I)),
)


def classify(text: str) -> str:
    """The category a prompt's text reads as, by the module doc's cues (chat where none fits)."""
    for category, cue in _CUES:
        if cue.search(text):
            return category
    return "chat"


def content_factor(text: str) -> float:
    """What a prompt's content makes of each q (its category's factor)."""
    return CATEGORY_FACTOR[classify(text)]


class Difficulty:
    """A slow AR(1) factor around 1.0 that scales acceptance: what the traffic is about."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.x = 1.0 + rng.gauss(0, 0.02)

    def step(self, dt: float) -> float:
        # Relaxes over ~20 s; the noise keeps its standard deviation near 0.03.
        k = min(1.0, dt / 20.0)
        self.x += (1.0 - self.x) * k + self.rng.gauss(0, 0.03 * math.sqrt(2 * k))
        self.x = min(1.12, max(0.85, self.x))
        return self.x


CONTEXT_FLAT = 8192  # tokens per running request up to which acceptance does not depend on context


def context_factor(context: float) -> float:
    """What the mean context per running request leaves of each q (see the module's doc)."""
    if context <= CONTEXT_FLAT:
        return 1.0
    x = math.log2(context / CONTEXT_FLAT)
    return 1.0 / (1.0 + 0.2 * x * x)


def collapse_factor(t_ready: float, now: float, at: float | None) -> float:
    if at is None or now < t_ready + at:
        return 1.0
    return max(0.05, 1.0 - (now - t_ready - at) / 8.0 * 0.95)


class Timing:
    """Step and prefill times for one scheduler (one DP group)."""

    def __init__(self, args: dict, preset: models.Preset, graphs_broken: bool) -> None:
        tp = args["tp_size"]
        dp_attn = args["enable_dp_attention"]
        self.t0 = models.step_floor_ms(preset, tp)
        self.a = 0.12 if dp_attn else 0.05
        self.spec = args["speculative_algorithm"] is not None
        self.steps = args["speculative_num_steps"] or (1 if self.spec else 0)
        self.topk = args["speculative_eagle_topk"] or 1
        self.verify = (args["speculative_num_draft_tokens"] or 1) if self.spec else 1
        self.ngram = args["speculative_algorithm"] == "NGRAM"
        self.graph_max_bs = args["cuda_graph_max_bs"]
        self.graphs = not (args["disable_cuda_graph"] or graphs_broken)
        self.prefill_per_token = 0.04 * max(0.3, preset.active_b / 10) / max(1, tp)
        self.draft_cost = preset.draft_cost

    def graph_on(self, bs: int) -> bool:
        return self.graphs and bs <= self.graph_max_bs

    def step_ms(self, bs: int) -> float:
        """The mean decode step at batch size bs."""
        t0 = self.t0 if self.graph_on(bs) else self.t0 * 1.7
        ms = t0 + self.a * bs * self.verify
        if self.spec:
            if self.ngram:
                ms += 0.6  # the n-gram lookup runs on the CPU; no draft model
            else:
                ms += self.steps * (self.draft_cost * t0 + 0.15 * self.a * bs * self.topk)
            ms += 0.8 + (1.0 if self.topk > 1 else 0.0)
        return ms

    def decode_ms(self, bs: int, rng: random.Random) -> float:
        return self.step_ms(bs) * (1 + rng.uniform(-0.03, 0.03))

    def prefill_ms(self, tokens: int) -> float:
        return 3.0 + tokens * self.prefill_per_token


def implied_tok_s(args: dict, preset: models.Preset, requested: str | None, bs: int = 1,
                  context: float = 0.0, content: float = 1.0) -> float:
    """The decode speed one request gets at batch size bs and a mean context per running request,
    in tokens per second: the mean tokens per request-step (acceptance at its mean, no fault) over
    the mean step time; content: its prompt's content_factor. A benchmark's ranking of profiles at
    low concurrency follows this order."""
    accept, _ = chain_stats(acceptance_chain(args, preset, requested), context_factor(context) * content)
    return 1000.0 * accept / Timing(args, preset, graphs_broken=False).step_ms(bs)


# ---------------------------------------------------------------------------------------------
# Load shapes


def clients_target(shape: str | None, since_ready: float, phase: float) -> int:
    """How many clients a DP group has at this moment (phase de-synchronises DP groups)."""
    if not shape or shape == "none":
        return 0
    if shape == "light":
        return 4
    if shape == "steady":
        return round(24 * (1 + 0.2 * math.sin((since_ready + phase) / 23.0)))
    if shape == "burst":
        return 96 if ((since_ready + phase) % 60.0) >= 45.0 else 8
    if shape == "ramp":
        return round(1 + 63 * min(1.0, since_ready / 180.0))
    if shape == "saturate":
        return 160
    if shape == "long":
        return 4
    raise ValueError(shape)


LONG_START = 2048  # long's median prompt at the ready line, doubling every LONG_DOUBLING seconds
LONG_DOUBLING = 40.0


def request_size(shape: str | None, rng: random.Random, max_prompt: int, since_ready: float = 0.0,
                 context_len: int = 0) -> tuple[int, int, int]:
    """(prompt tokens, cached tokens, output tokens) of one background request, since_ready
    seconds after the ready line, on a model of context_len tokens."""
    if shape == "long":
        median = LONG_START * 2 ** (since_ready / LONG_DOUBLING)
        prompt = int(rng.lognormvariate(math.log(median), 0.25))
        out = int(rng.lognormvariate(math.log(250), 0.4))
        max_prompt = max(max_prompt, context_len - 4096)
    elif shape == "saturate":
        prompt = int(rng.lognormvariate(math.log(6000), 0.4))
        out = int(rng.lognormvariate(math.log(1500), 0.4))
    else:
        prompt = int(rng.lognormvariate(math.log(1200), 0.7))
        out = int(rng.lognormvariate(math.log(350), 0.6))
    prompt = max(16, min(prompt, max_prompt))
    out = max(8, min(out, 4096))
    cached = int(prompt * rng.uniform(0.2, 0.7)) if rng.random() < 0.6 else 0
    return prompt, cached, out


def think_time(rng: random.Random) -> float:
    return rng.expovariate(1 / 0.4)
