"""N streaming chat requests at a fixed concurrency, measured as SGLang's bench_serving measures:
time to first token (the first chunk with content), inter-token latency (the gaps between the
chunks after it: with speculation a chunk carries the tokens one step accepted), output tokens
from the server's usage (else the chunks counted), output tokens and requests per second over
the wall time from the first request sent to the last one ended."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mtptui.core import stats
from mtptui.prove.prompts import Prompt
from mtptui.transport.aio import wait_for
from mtptui.transport import http as client
from mtptui.transport.http import STATUS, TIMEOUT, HttpError

CHAT = "/v1/chat/completions"


@dataclass
class Sample:
    ok: bool
    tokens: int = 0
    ttft: float | None = None  # seconds
    itls: list[float] = field(default_factory=list)
    error: str = ""
    seconds: float = 0.0  # from sent to the stream's end


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

    def first_error(self) -> str:
        return next((s.error for s in self.samples if not s.ok), "")


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


async def one(fwd, body: dict, timeout: float) -> Sample:
    s = Sample(ok=False)
    t0 = time.monotonic()
    last = None
    chunks = 0
    usage = None

    async def consume() -> None:
        nonlocal last, chunks, usage
        async for ev in client.sse(fwd.host, fwd.port, CHAT, body):
            err = ev.get("error") if isinstance(ev.get("error"), dict) else ev if ev.get("object") == "error" else None
            if err is not None:
                raise HttpError(STATUS, f"an error in the stream: {err.get('message') or err}")
            if isinstance(ev.get("usage"), dict):
                usage = ev["usage"]
            for ch in ev.get("choices") or ():
                if isinstance(ch, dict) and (ch.get("delta") or {}).get("content"):
                    now = time.monotonic()
                    if last is None:
                        s.ttft = now - t0
                    else:
                        s.itls.append(now - last)
                    last = now
                    chunks += 1

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
    s.ok = s.tokens > 0
    if not s.ok:
        s.error = "no tokens came back"
    return s


async def run_load(fwd, model: str, prompts: list[Prompt], concurrency: int, max_tokens: int, *,
                   timeout: float = 300.0, on_done: Callable[[int], None] | None = None) -> Load:
    """len(prompts) requests, at most `concurrency` in flight; on_done(n) after each one ends."""
    queue = list(reversed(prompts))
    samples: list[Sample] = []

    async def worker() -> None:
        while queue:
            prompt = queue.pop()
            samples.append(await one(fwd, chat_body(model, prompt, max_tokens), timeout))
            if on_done is not None:
                on_done(len(samples))

    t0 = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(prompts))))))
    return Load(concurrency, len(prompts), samples, time.monotonic() - t0)
