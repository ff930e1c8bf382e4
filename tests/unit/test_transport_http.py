"""The smoke test's and the benchmark's HTTP client against servers that go wrong in each way a
real one can: nothing listening, closing without a reply, an error status, a body that is not
JSON, no answer at all, a stream cut short. (The simulator cannot be made to misbehave like this;
these small servers speak raw bytes on a real socket.)"""

from __future__ import annotations

import asyncio
import socket

import pytest

from mtptui.transport import http as client
from mtptui.prove.load import one, percentile
from mtptui.prove.smoke import UNREACHABLE, smoke
from mtptui.transport.tunnel import direct

MODELS = b'{"object": "list", "data": [{"id": "m"}]}'


def http(status: str, body: bytes, ctype: str = "application/json") -> bytes:
    return (f"HTTP/1.1 {status}\r\ncontent-type: {ctype}\r\ncontent-length: {len(body)}\r\n\r\n").encode() + body


def chunked(*events: bytes) -> bytes:
    out = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    for e in events:
        out += f"{len(e):x}\r\n".encode() + e + b"\r\n"
    return out


async def serve(chat: bytes | None):
    """A server answering /v1/models properly and the chat request with `chat` (raw bytes), or
    never (None); returns (server, port)."""

    async def handle(reader, writer):
        head = await reader.readuntil(b"\r\n\r\n")
        n = int(next((x.split(b":")[1] for x in head.split(b"\r\n") if x.lower().startswith(b"content-length")), b"0"))
        await reader.readexactly(n)
        if head.startswith(b"GET /v1/models"):
            writer.write(http("200 OK", MODELS))
        elif chat is None:
            await asyncio.sleep(30)
        else:
            writer.write(chat)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def ask(chat: bytes | None, timeout: float = 5.0):
    server, port = await serve(chat)
    try:
        return await smoke("gpu1", direct("127.0.0.1", port), "What is 15*23?", "345", timeout)
    finally:
        server.close()


async def test_a_right_answer_passes_and_a_wrong_one_fails():
    good = http("200 OK", b'{"choices": [{"message": {"content": "345"}}], "usage": {"prompt_tokens": 20, '
                          b'"completion_tokens": 1}}')
    r = await ask(good)
    assert (r.result, r.exit_code, r.answer, r.completion_tokens) == ("pass", 0, "345", 1)
    r = await ask(http("200 OK", b'{"choices": [{"message": {"content": "It is 346."}}], "usage": {}}'))
    assert (r.result, r.exit_code) == ("wrong", 3)
    assert r.line().startswith("gpu1: FAIL (") and "tokens" not in r.line()  # the usage did not say
    assert r.line().endswith(" ms): answered 'It is 346.', which does not contain '345'")


@pytest.mark.parametrize("chat,kind,words", [
    (http("500 Internal Server Error", b'{"object": "error", "message": "CUDA error: out of memory"}'),
     client.STATUS, "HTTP 500: CUDA error: out of memory"),
    (http("200 OK", b"<html>proxy</html>", "text/html"), client.MALFORMED, "not JSON"),
    (http("200 OK", b'{"choices": []}'), client.MALFORMED, "no choices[0].message.content"),
    (b"", client.DOWN, "closed before any reply"),
    (b"SSH-2.0-OpenSSH_9.2\r\n", client.MALFORMED, "not an HTTP reply"),
    (None, client.TIMEOUT, "within 0.5 s"),
])
async def test_each_way_of_failing_is_one_line(chat, kind, words):
    r = await ask(chat, timeout=0.5)
    assert (r.result, r.kind, r.exit_code) == (UNREACHABLE, kind, 1)
    assert words in r.message and "\n" not in r.line()


async def test_nothing_listening_is_down():
    r = await smoke("gpu1", direct("127.0.0.1", free_port()), "q", "a", 2.0)
    assert r.kind == client.DOWN and r.message.startswith("the server is down (127.0.0.1:")


async def test_a_stream_is_timed_chunk_by_chunk_and_its_errors_counted():
    ok = chunked(b'data: {"choices": [{"delta": {"role": "assistant", "content": ""}}]}\n\n',
                 b'data: {"choices": [{"delta": {"content": "a b"}}]}\n\ndata: {"choices": [{"delta": {"content": " c"}}]}\n\n',
                 b'data: {"choices": [], "usage": {"completion_tokens": 3}}\n\ndata: [DONE]\n\n', b"")
    server, port = await serve(ok)
    try:
        s = await one(direct("127.0.0.1", port), {"stream": True}, 5.0)
    finally:
        server.close()
    assert s.ok and s.tokens == 3 and s.ttft is not None and len(s.itls) == 1

    for body, words in ((chunked(b'data: {"choices": [{"delta": {"content": "a"}}]}\n\n', b""), "without data: [DONE]"),
                        (chunked(b'data: {"object": "error", "message": "boom"}\n\n', b""), "boom"),
                        (chunked(b"data: {not json\n\n", b""), "not JSON")):
        server, port = await serve(body)
        try:
            s = await one(direct("127.0.0.1", port), {"stream": True}, 5.0)
        finally:
            server.close()
        assert not s.ok and words in s.error


def test_percentiles_interpolate_between_ranks():
    assert percentile([], 50) is None
    assert percentile([3.0], 99) == 3.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile(list(map(float, range(101))), 99) == pytest.approx(99.0)


@pytest.mark.parametrize("reply, want", [
    (http("200 OK", b"# TYPE x gauge\nx 1\n", "text/plain"), "# TYPE x gauge\nx 1\n"),
    (chunked(b"# TYPE x", b" gauge\nx 1\n") + b"0\r\n\r\n", "# TYPE x gauge\nx 1\n"),
    (http("404 Not Found", b"no metrics"), client.STATUS),  # served without --enable-metrics
    (b"", client.DOWN),
])
async def test_text_request_reads_the_body_or_says_why_not(reply, want):
    server, port = await serve(reply)  # any path but /v1/models gets the reply
    try:
        try:
            got = await client.text_request("127.0.0.1", port, "/metrics", 5.0)
        except client.HttpError as e:
            got = e.kind
    finally:
        server.close()
    assert got == want
