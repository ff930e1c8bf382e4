"""N streaming chat requests at a fixed concurrency, measured as SGLang's bench_serving measures:
time to first token (the first chunk with content), inter-token latency (the gaps between the
chunks after it: with speculation a chunk carries the tokens one step accepted), output tokens
from the server's usage (else the chunks counted), output tokens and requests per second over
the wall time from the first request sent to the last one ended.

Per-request acceptance, where the server reports it (read from each request's own response):
  - SGLang's native `/generate` (GENERATE): its `meta_info` carries `spec_verify_ct` (verify steps)
    and `completion_tokens`; accept length = completion_tokens / spec_verify_ct, the formula of
    SGLang's tokenizer_manager and test/send_one.py (read in sglang 0.5.5). Its OpenAI endpoints
    do not carry it (0.5.5's UsageInfo has prompt, completion, total and reasoning tokens only),
    so a measurement of acceptance per request must use /generate. /generate takes raw text: the
    messages are joined without the model's chat template, so the prompt differs from the chat
    path's by the template's few tokens.
  - vLLM's OpenAI endpoints with `--per-request-spec-decode-metrics summary` (0.32.0, read in its
    entrypoints/openai/chat_completion/serving.py and v1/metrics/stats.py, and seen in the engine
    tier): a top-level `metrics.speculative_decoding` object with `mean_acceptance_length` (the
    bonus token included; else num_accepted_draft_tokens / num_spec_steps + 1); a stream carries
    it on its last chunk, the usage one, sent only with `stream_options.include_usage`.
  - SGLang 0.5.19+'s OpenAI endpoints asked with `return_spec_tokens_details`: an `sglext` object
    at the response's level (a stream: a chunk with no choices) whose `spec_tokens_details` has
    `spec_accept_length`, `spec_verify_ct`, `spec_num_correct_drafts` and `spec_num_proposed_drafts`
    (entrypoints/openai/protocol.py SpecTokensDetails, utils.spec_tokens_details_from_meta_info);
    0.5.19+'s /generate meta_info carries the same keys.
The share of proposed drafts accepted (vLLM's `draft_acceptance_rate`; SGLang's correct over
proposed drafts) is kept beside it where the server says it: near 0 or near 1 on a request marks
garbled output or a repetition loop (results.acceptance flags them).
A request without either has no acceptance (None), never a 1.0 that was not reported; nor has a
vLLM request that no verify step drafted for (`num_spec_steps` 0: vLLM then says 1.0 all the same)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mtptui.core import stats
from mtptui.core.loadmatch import CONTEXT
from mtptui.prove.prompts import Prompt
from mtptui.transport.aio import wait_for
from mtptui.transport import http as client
from mtptui.transport.http import STATUS, TIMEOUT, HttpError

CHAT = "/v1/chat/completions"
GENERATE = "/generate"


@dataclass
class Sample:
    ok: bool
    tokens: int = 0
    ttft: float | None = None  # seconds
    itls: list[float] = field(default_factory=list)
    error: str = ""
    seconds: float = 0.0  # from sent to the stream's end
    accept_len: float | None = None  # tokens per verify step, where the server reported it
    accept_rate: float | None = None  # accepted drafts over proposed, where the server reported it
    category: str | None = None  # the prompt's, where it had one
    context: int | None = None  # its prompt and output tokens (the context at its end), where the server said them


@dataclass
class Load:
    """What one concurrency level measured."""

    concurrency: int
    requests: int
    samples: list[Sample]
    wall_s: float

    @property
    def errors(self) -> int:
        return sum(not s.ok for s in self.samples)

    def figures(self) -> dict:
        """The result row's measured keys (None where nothing succeeded)."""
        good = [s for s in self.samples if s.ok]
        ttfts = [s.ttft for s in good if s.ttft is not None]
        itls = [x for s in good for x in s.itls]
        tokens = sum(s.tokens for s in good)
        wall = self.wall_s if self.wall_s > 0 else None
        # each request that succeeded, for the intervals (results.with_intervals): its output
        # tokens and its time from sent to the stream's end
        per_request = {"tokens": [s.tokens for s in good], "seconds": [round(s.seconds, 6) for s in good]}
        return {
            "output_tok_s": round(tokens / wall, 2) if good and wall else None,
            "req_s": round(len(good) / wall, 3) if good and wall else None,
            "ttft_p50_ms": _ms(percentile(ttfts, 50)), "ttft_p99_ms": _ms(percentile(ttfts, 99)),
            "itl_p50_ms": _ms(percentile(itls, 50)), "itl_p99_ms": _ms(percentile(itls, 99)),
            "ttft_max_ms": _ms(max(ttfts, default=None)), "itl_max_ms": _ms(max(itls, default=None)),
            "errors": self.errors, "per_request": per_request,
        }

    def acceptance(self) -> dict:
        """Per-request accept length where the server reported it: its p10/p50/p90 over the
        requests that have one, and by the prompts' category ("-" for none)."""
        return acceptance([s for s in self.samples if s.ok])

    def first_error(self) -> str:
        return next((s.error for s in self.samples if not s.ok), "")


# A request whose drafts were (almost) never or (almost) always accepted: garbled output, or a
# repetition loop the draft predicts (vllm PR #44487's flags)
NEAR_0, NEAR_1 = 0.05, 0.95


def acceptance(samples: list[Sample]) -> dict:
    """{"requests": how many reported acceptance, "p10", "p50", "p90", "by_category": {category:
    {"requests", "p10", "p50", "p90"}}, "by_context": the same by the context a request ended with
    (its prompt and output tokens, in the buckets of the epochs' context scale, loadmatch.CONTEXT:
    acceptance falls as contexts grow), "near_0" and "near_1": the requests whose share of drafts
    accepted is at most NEAR_0 or at least NEAR_1, each {"category", "context", "accept_len",
    "accept_rate"} (where the server gave the share)}; the figures None where none reported it."""
    def dist(xs: list[float]) -> dict:
        return {"requests": len(xs), **{f"p{p}": _round(percentile(xs, p)) for p in (10, 50, 90)}}

    have = [s for s in samples if s.accept_len is not None]
    cats: dict[str, list[float]] = {}
    contexts: dict[str, list[float]] = {label: [] for label, _ in (*CONTEXT.buckets, ("-", 0))}  # in the scale's order
    for s in have:
        cats.setdefault(s.category or "-", []).append(s.accept_len)  # type: ignore[arg-type]
        contexts[context_bucket(s.context)].append(s.accept_len)  # type: ignore[arg-type]

    def flagged(near) -> list[dict]:
        return [{"category": s.category, "context": s.context, "accept_len": _round(s.accept_len),
                 "accept_rate": _round(s.accept_rate)}
                for s in have if s.accept_rate is not None and near(s.accept_rate)]

    return {**dist([s.accept_len for s in have]),  # type: ignore[misc]
            "by_category": {c: dist(xs) for c, xs in sorted(cats.items())},
            "by_context": {c: dist(xs) for c, xs in contexts.items() if xs},
            "near_0": flagged(lambda r: r <= NEAR_0), "near_1": flagged(lambda r: r >= NEAR_1)}


def context_bucket(tokens: int | None) -> str:
    """The label of the context scale's bucket a request's context falls in ("-": not said)."""
    if tokens is None:
        return "-"
    return [label for label, low in CONTEXT.buckets if tokens >= low][-1]


def _round(x: float | None) -> float | None:
    return round(x, 3) if x is not None else None


def percentile(values: list[float], p: float) -> float | None:
    """Linear interpolation between the closest ranks (numpy's default); None for no values."""
    if not values:
        return None
    xs = sorted(values)
    return stats.quantile(xs.__getitem__, len(xs), p / 100)


def _ms(s: float | None) -> float | None:
    """Seconds as milliseconds to 0.01, or to 3 significant digits under 0.1 ms (never a 0.0
    that was not measured)."""
    if s is None:
        return None
    ms = s * 1000
    return round(ms, 2) if abs(ms) >= 0.1 or ms == 0 else float(f"{ms:.3g}")


def chat_body(model: str, prompt: Prompt, max_tokens: int) -> dict:
    """The request for a prompt: its messages, its own max_tokens where it has one."""
    # ignore_eos (SGLang and vLLM both take it): every request generates max_tokens, so profiles
    # compare on the same work
    return {"model": model, "messages": [dict(m) for m in prompt.messages],
            "max_tokens": prompt.max_tokens or max_tokens, "temperature": 0, "stream": True,
            "stream_options": {"include_usage": True}, "ignore_eos": True}


def generate_body(prompt: Prompt, max_tokens: int) -> dict:
    """SGLang's native request for a prompt (raw text: the messages' contents, one a line)."""
    return {"text": "\n".join(m["content"] for m in prompt.messages),
            "sampling_params": {"max_new_tokens": prompt.max_tokens or max_tokens, "temperature": 0,
                                "ignore_eos": True},
            "stream": True}


def accept_of(ev: dict) -> tuple[float, float | None] | None:
    """A response event's per-request (accept length, share of drafts accepted), where the server
    put them (module doc)."""
    meta = ev.get("meta_info")
    if isinstance(meta, dict):
        verify, done = meta.get("spec_verify_ct"), meta.get("completion_tokens")
        if isinstance(verify, int) and verify > 0 and isinstance(done, int):
            return done / verify, _sglang_rate(meta)
    ext = ev.get("sglext")
    details = ext.get("spec_tokens_details") if isinstance(ext, dict) else None
    if isinstance(details, list):  # n > 1: one per choice; mtptui asks for one
        details = details[0] if details else None
    if isinstance(details, dict):
        verify, mean = details.get("spec_verify_ct"), details.get("spec_accept_length")
        if isinstance(verify, int) and verify > 0 and isinstance(mean, (int, float)):
            return float(mean), _sglang_rate(details)
    spec = (ev.get("metrics") or {}).get("speculative_decoding") if isinstance(ev.get("metrics"), dict) else None
    if isinstance(spec, dict):
        if spec.get("num_spec_steps") == 0:
            return None  # nothing drafted: vLLM's mean is its placeholder 1.0, not a measurement
        rate = spec.get("draft_acceptance_rate")
        rate = float(rate) if isinstance(rate, (int, float)) and not isinstance(rate, bool) else None
        mean = spec.get("mean_acceptance_length")
        if isinstance(mean, (int, float)):
            return float(mean), rate
        steps, accepted = spec.get("num_spec_steps"), spec.get("num_accepted_draft_tokens")
        if isinstance(steps, int) and steps > 0 and isinstance(accepted, int):
            return 1 + accepted / steps, rate
    return None


def _sglang_rate(d: dict) -> float | None:
    """SGLang's per-request share of drafts accepted: correct over proposed drafts (0.5.19+)."""
    good, proposed = d.get("spec_num_correct_drafts"), d.get("spec_num_proposed_drafts")
    if isinstance(good, int) and isinstance(proposed, int) and proposed > 0:
        return good / proposed
    return None


async def one(fwd, body: dict, timeout: float, path: str = CHAT) -> Sample:
    s = Sample(ok=False)
    t0 = time.monotonic()
    last = None
    chunks = 0
    usage = None

    seen_text = 0

    def seen(length: int) -> None:
        """A chunk with new content arrived (length: /generate's text so far)."""
        nonlocal last, chunks, seen_text
        now = time.monotonic()
        if last is None:
            s.ttft = now - t0
        else:
            s.itls.append(now - last)
        last = now
        chunks += 1
        seen_text = length

    async def consume() -> None:
        nonlocal usage
        async for ev in client.sse(fwd.host, fwd.port, path, body):
            err = ev.get("error") if isinstance(ev.get("error"), dict) else ev if ev.get("object") == "error" else None
            if err is not None:
                raise HttpError(STATUS, f"an error in the stream: {err.get('message') or err}")
            if isinstance(ev.get("usage"), dict):
                usage = ev["usage"]
            acc = accept_of(ev)
            if acc is not None:
                s.accept_len, s.accept_rate = acc
            if path == GENERATE:
                meta = ev.get("meta_info") if isinstance(ev.get("meta_info"), dict) else {}
                usage = meta  # its completion_tokens, as the chat path's usage gives them
                text = ev.get("text")
                if isinstance(text, str) and len(text) > seen_text:  # /generate sends the text so far
                    seen(len(text))
                continue
            for ch in ev.get("choices") or ():
                if isinstance(ch, dict) and (ch.get("delta") or {}).get("content"):
                    seen(seen_text)

    try:
        await wait_for(consume(), timeout)
    except asyncio.TimeoutError:
        s.error = f"{TIMEOUT}: no end within {timeout:g} s"
        return s
    except HttpError as e:
        s.error = f"{e.kind}: {e}"
        return s
    s.seconds = time.monotonic() - t0
    tokens = usage.get("completion_tokens") if usage else None
    s.tokens = tokens if isinstance(tokens, int) else chunks
    prompt_tokens = usage.get("prompt_tokens") if usage else None
    s.context = prompt_tokens + s.tokens if isinstance(prompt_tokens, int) else None
    s.ok = s.tokens > 0
    if not s.ok:
        s.error = "no tokens came back"
    return s


async def measuring_path(fwd, timeout: float = 30.0) -> str:
    """GENERATE where the server answers SGLang's /generate with meta_info (one 2-token request),
    so that each measured request reports its acceptance; else CHAT (vLLM, whose per-request
    acceptance, where enabled, comes on the chat response itself)."""
    body = {"text": "Hello", "sampling_params": {"max_new_tokens": 2, "temperature": 0}, "stream": True}
    try:
        async def probe() -> bool:
            async for ev in client.sse(fwd.host, fwd.port, GENERATE, body):
                if isinstance(ev.get("meta_info"), dict):
                    return True
            return False
        return GENERATE if await wait_for(probe(), timeout) else CHAT
    except (asyncio.TimeoutError, HttpError):
        return CHAT


async def run_load(fwd, model: str, prompts: list[Prompt], concurrency: int, max_tokens: int, *,
                   timeout: float = 300.0, on_done: Callable[[int], None] | None = None,
                   path: str = CHAT) -> Load:
    """len(prompts) requests, at most `concurrency` in flight; on_done(n) after each one ends.
    path: CHAT (the OpenAI chat endpoint), or GENERATE (SGLang's native one, whose meta_info
    gives each request's acceptance)."""
    queue = list(reversed(prompts))
    samples: list[Sample] = []

    async def worker() -> None:
        while queue:
            prompt = queue.pop()
            body = generate_body(prompt, max_tokens) if path == GENERATE else chat_body(model, prompt, max_tokens)
            sample = await one(fwd, body, timeout, path)
            sample.category = prompt.category
            samples.append(sample)
            if on_done is not None:
                on_done(len(samples))

    t0 = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(prompts))))))
    return Load(concurrency, len(prompts), samples, time.monotonic() - t0)
