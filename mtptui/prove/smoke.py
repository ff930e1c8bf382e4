"""The smoke test: one fixed chat request through the OpenAI-compatible endpoint, its answer
checked for the expected text. Whether the model still answers right after a change, in a second.

Outcomes: PASS, WRONG (it answered, without the expected text), and the ways it could not be
asked: down, timeout, an error status, a malformed body; each said in one line.

Where the reply says how its speculation went (vLLM's `metrics.speculative_decoding` under
--per-request-spec-decode-metrics, SGLang's `sglext.spec_tokens_details`: prove/load.py reads
both), the answer's accept length is kept, and drafts nearly never or nearly always accepted are
said (garbled output, a repetition loop); they change no outcome.

Without an expected text (`smoke --any-answer`) it checks the server, not the model: any answer of
at least one token passes, with how many tokens and how fast. That is the check for a model that
cannot answer arithmetic (a dummy-weight model, a base model, a model mid-training).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import asdict, dataclass

from mtptui.prove.load import NEAR_0, NEAR_1, accept_of
from mtptui.transport.aio import wait_for
from mtptui.transport import http as client
from mtptui.transport.http import MALFORMED, TIMEOUT, HttpError

PASS, WRONG, UNREACHABLE = "pass", "wrong", "unreachable"
EXIT = {PASS: 0, WRONG: 3, UNREACHABLE: 1}
CHAT = "/v1/chat/completions"


@dataclass
class SmokeResult:
    host: str
    result: str  # PASS, WRONG, UNREACHABLE
    message: str  # one line
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    answer: str | None = None
    kind: str | None = None  # UNREACHABLE: client.DOWN, TIMEOUT, STATUS or MALFORMED
    accept_len: float | None = None  # the answer's, where the reply said it
    accept_rate: float | None = None  # its share of drafts accepted, where the reply said it

    @property
    def exit_code(self) -> int:
        return EXIT[self.result]

    def to_json(self) -> dict:
        return asdict(self)

    def line(self) -> str:
        if self.result == UNREACHABLE:
            return f"{self.host}: FAIL: {self.message}"
        latency = "?" if self.latency_s is None else f"{self.latency_s * 1000:.0f}"  # a reply has one
        figures = f"{latency} ms" + (f", {self.completion_tokens} token{'' if self.completion_tokens == 1 else 's'}"
                                                       if self.completion_tokens is not None else "")
        if self.accept_len is not None:
            figures += f", accept len {self.accept_len:.2f}"
        return f"{self.host}: {'pass' if self.result == PASS else 'FAIL'} ({figures}): {self.message}{self._flag()}"

    def _flag(self) -> str:
        if self.accept_rate is None:
            return ""
        if self.accept_rate <= NEAR_0:
            return f" (drafts nearly never accepted: {self.accept_rate:.0%}; garbled output?)"
        if self.accept_rate >= NEAR_1:
            return f" (drafts nearly always accepted: {self.accept_rate:.0%}; a repetition loop?)"
        return ""


async def model_name(host: str, port: int, timeout: float) -> str:
    """The served model's name (vLLM refuses a request for another; SGLang takes any)."""
    models = await client.json_request(host, port, "/v1/models", None, timeout)
    data = models.get("data")
    if not isinstance(data, list) or not data or not isinstance(data[0], dict) or not data[0].get("id"):
        raise HttpError(MALFORMED, "/v1/models names no model")
    return str(data[0]["id"])


async def smoke(name: str, fwd, prompt: str, expect: str | None, timeout: float = 60.0) -> SmokeResult:
    """Asks the server behind `fwd` (a transport.tunnel.Forward) `prompt`; PASS when the answer
    contains `expect`, or (expect None or empty: the config's smoke_expect = "") when it has at
    least one token."""
    expect = expect or None
    t0 = time.monotonic()

    async def ask() -> dict:
        model = await model_name(fwd.host, fwd.port, timeout)
        body = {"model": model, "messages": [{"role": "user", "content": prompt}], "temperature": 0,
                "max_tokens": 64, "stream": False}
        return await client.json_request(fwd.host, fwd.port, CHAT, body, timeout)

    try:
        try:
            reply = await wait_for(ask(), timeout)
        except asyncio.TimeoutError:
            raise HttpError(TIMEOUT, f"no answer within {timeout:g} s") from None
        latency = time.monotonic() - t0
        answer, usage = _answer_of(reply)
    except HttpError as e:
        return SmokeResult(name, UNREACHABLE, f"{_what(e.kind)} ({fwd.where}): {e}", kind=e.kind)
    tokens = usage.get("completion_tokens")
    tokens = tokens if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0 else None
    shown = " ".join(answer.split())
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    spec = accept_of(reply) or (None, None)
    if expect is None:
        answered = bool(tokens) or (tokens is None and bool(answer))
        rate = f", {tokens / latency:.1f} tokens/s" if tokens and latency > 0 else ""
        message = (f"answered{rate}: {shown!r}" if answered
                   else "answered with no token")
        return SmokeResult(name, PASS if answered else WRONG, message, latency,
                           usage.get("prompt_tokens"), tokens, answer, accept_len=spec[0], accept_rate=spec[1])
    out = SmokeResult(name, PASS if expect in answer else WRONG, "", latency,
                      usage.get("prompt_tokens"), tokens, answer, accept_len=spec[0], accept_rate=spec[1])
    out.message = (f"answered {shown!r}" if out.result == PASS
                   else f"answered {shown!r}, which does not contain {expect!r}")
    return out


async def smoke_host(hc, prompt: str, expect: str | None, timeout: float = 60.0) -> SmokeResult:
    """The smoke test of a host's server, reached through its control (control.session)."""
    from mtptui.control.errors import ControlError

    try:
        fwd = await hc.endpoint()
    except ControlError as e:
        return SmokeResult(hc.host, UNREACHABLE, str(e).removeprefix(f"{hc.host}: "))
    return await smoke(hc.host, fwd, prompt, expect, timeout)


def _answer_of(reply: dict) -> tuple[str, dict]:
    try:
        content = reply["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise HttpError(MALFORMED, "the reply has no choices[0].message.content") from None
    if not isinstance(content, str):
        raise HttpError(MALFORMED, "choices[0].message.content is not text")
    usage = reply.get("usage")
    return content, usage if isinstance(usage, dict) else {}


def _what(kind: str) -> str:
    return {client.DOWN: "the server is down", client.TIMEOUT: "the server did not answer in time",
            client.STATUS: "the server answered with an error",
            client.MALFORMED: "the server's reply is malformed"}[kind]
