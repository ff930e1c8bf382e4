"""A small HTTP/1.1 client on asyncio streams, enough for an OpenAI-compatible server: a JSON
POST answered with a JSON body, or with a server-sent event stream, and a GET whose status is
all that counts (/health). One connection a request (SGLang's uvicorn and vLLM keep none open for
us anyway). The smoke test and the benchmark send their requests with it; the restart watch asks
the server's /health and /server_info with it.

Every way a request can fail is an HttpError with a kind the caller can tell apart:
DOWN (nothing listens, or the connection closed before any reply: through an SSH tunnel a
refused connection looks like that), TIMEOUT, STATUS (the server answered 4xx/5xx), MALFORMED
(not HTTP, not JSON, not the shape asked for).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass

from mtptui.transport.aio import wait_for

DOWN, TIMEOUT, STATUS, MALFORMED = "down", "timeout", "status", "malformed"
MAX_HEADER = 64 * 1024
MAX_BODY = 16 << 20  # a body, a chunk, a streamed event
MAX_HEADERS = 100


class HttpError(Exception):
    def __init__(self, kind: str, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    async def close(self) -> None:
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except (OSError, ConnectionError):
            pass


async def _open(host: str, port: int, path: str, body: dict | None, accept: str) -> Reply:
    """Sends the request (POST with a JSON body, or GET without one); the status and headers."""
    try:
        reader, writer = await asyncio.open_connection(host, port, limit=MAX_HEADER)
    except OSError as e:
        raise HttpError(DOWN, f"cannot connect to {host}:{port}: {e.strerror or e}") from None
    data = b"" if body is None else json.dumps(body).encode()
    head = (f"{'GET' if body is None else 'POST'} {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            + ("" if body is None else f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n")
            + f"Accept: {accept}\r\nConnection: close\r\nUser-Agent: mtptui\r\n\r\n").encode()
    try:
        writer.write(head + data)
        await writer.drain()
        status_line = await reader.readline()
        if not status_line:
            raise HttpError(DOWN, "the connection closed before any reply (no server on that port?)")
        parts = status_line.decode("latin-1").split(None, 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise HttpError(MALFORMED, f"not an HTTP reply: {status_line[:60]!r}")
        headers: dict[str, str] = {}
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b"\n"):
                break
            if not line:
                raise HttpError(MALFORMED, "the reply ended inside its headers")
            k, _, v = line.decode("latin-1").partition(":")
            headers[k.strip().lower()] = v.strip()
            if len(headers) > MAX_HEADERS:
                raise HttpError(MALFORMED, f"a reply with over {MAX_HEADERS} headers")
    except HttpError:
        writer.close()
        raise
    except (OSError, ConnectionError, asyncio.LimitOverrunError, ValueError) as e:
        writer.close()
        raise HttpError(DOWN, f"the connection failed: {e}") from None
    return Reply(int(parts[1]), headers, reader, writer)


async def _chunks(reply: Reply) -> AsyncIterator[bytes]:
    """The body as it arrives, chunked transfer coding undone."""
    r = reply.reader
    try:
        if "chunked" in reply.headers.get("transfer-encoding", "").lower():
            while True:
                size_line = await r.readline()
                if not size_line:
                    raise HttpError(MALFORMED, "the reply ended inside a chunk")
                try:
                    size = int(size_line.split(b";", 1)[0].strip() or b"x", 16)
                except ValueError:
                    raise HttpError(MALFORMED, f"bad chunk size {size_line[:20]!r}") from None
                if size == 0:
                    return
                if size > MAX_BODY:
                    raise HttpError(MALFORMED, f"a chunk of {size} bytes")
                data = await r.readexactly(size)
                await r.readexactly(2)
                yield data
        elif "content-length" in reply.headers:
            n = int(reply.headers["content-length"])
            if n > MAX_BODY:
                raise HttpError(MALFORMED, f"a body of {n} bytes")
            yield await r.readexactly(n)
        else:
            while data := await r.read(1 << 16):
                yield data
    except asyncio.IncompleteReadError:
        raise HttpError(MALFORMED, "the reply ended early (the server closed the connection)") from None
    except (OSError, ConnectionError, ValueError) as e:
        raise HttpError(DOWN, f"the connection failed mid-reply: {e}") from None


def _error_text(status: int, body: bytes) -> str:
    try:
        obj = json.loads(body)
        msg = obj.get("message") or obj.get("detail") or (obj.get("error") or {}).get("message")
    except (ValueError, AttributeError):
        msg = None
    text = str(msg) if msg else body.decode("utf-8", "replace").strip()[:200]
    return f"HTTP {status}" + (f": {text}" if text else "")


async def _failed(reply: Reply) -> HttpError:
    body = b""
    try:
        async for data in _chunks(reply):
            body += data
            if len(body) > 4096:
                break
    except HttpError:
        pass
    return HttpError(STATUS, _error_text(reply.status, body), reply.status)


async def _body(host: str, port: int, path: str, body: dict | None, accept: str, timeout: float) -> bytes:
    """POST body (GET when None); the whole body of a reply below 400, within timeout. Raises HttpError."""
    async def go() -> bytes:
        reply = await _open(host, port, path, body, accept)
        try:
            if reply.status >= 400:
                raise await _failed(reply)
            data = b""
            async for chunk in _chunks(reply):
                data += chunk
                if len(data) > MAX_BODY:
                    raise HttpError(MALFORMED, f"a body over {MAX_BODY} bytes")
            return data
        finally:
            await reply.close()

    try:
        return await wait_for(go(), timeout)
    except asyncio.TimeoutError:
        raise HttpError(TIMEOUT, f"no complete reply within {timeout:g} s") from None


async def json_request(host: str, port: int, path: str, body: dict | None, timeout: float) -> dict:
    """POST body (GET when None); the JSON object that comes back. Raises HttpError."""
    data = await _body(host, port, path, body, "application/json", timeout)
    try:
        obj = json.loads(data)
    except ValueError:
        raise HttpError(MALFORMED, f"the body is not JSON: {data[:80]!r}") from None
    if not isinstance(obj, dict):
        raise HttpError(MALFORMED, "the body is not a JSON object")
    return obj


async def text_request(host: str, port: int, path: str, timeout: float) -> str:
    """GET path; the text that comes back (Prometheus' exposition, say). Raises HttpError."""
    return (await _body(host, port, path, None, "text/plain", timeout)).decode("utf-8", "replace")


async def status_of(host: str, port: int, path: str, timeout: float) -> int:
    """GET path; the status the server answers with (the body is not read). Raises HttpError
    (DOWN when nothing answers)."""
    async def go() -> int:
        reply = await _open(host, port, path, None, "*/*")
        await reply.close()
        return reply.status

    try:
        return await wait_for(go(), timeout)
    except asyncio.TimeoutError:
        raise HttpError(TIMEOUT, f"no reply within {timeout:g} s") from None


async def sse(host: str, port: int, path: str, body: dict) -> AsyncIterator[dict]:
    """POST body asking for a stream; yields each `data:` event's JSON object as it arrives,
    until `data: [DONE]`. Time limits are the caller's. Raises HttpError."""
    reply = await _open(host, port, path, body, "text/event-stream")
    try:
        if reply.status >= 400:
            raise await _failed(reply)
        buf = b""
        async for data in _chunks(reply):
            buf += data
            if len(buf) > MAX_BODY:
                raise HttpError(MALFORMED, f"an event over {MAX_BODY} bytes")
            while True:
                cut = _event_end(buf)
                if cut is None:
                    break
                event, buf = buf[:cut[0]], buf[cut[1]:]
                payload = _data_of(event)
                if payload is None:
                    continue
                if payload == "[DONE]":
                    return
                try:
                    obj = json.loads(payload)
                except ValueError:
                    raise HttpError(MALFORMED, f"an event that is not JSON: {payload[:80]!r}") from None
                if not isinstance(obj, dict):
                    raise HttpError(MALFORMED, "an event that is not a JSON object")
                yield obj
        raise HttpError(MALFORMED, "the stream ended without data: [DONE]")
    finally:
        await reply.close()


def _event_end(buf: bytes) -> tuple[int, int] | None:
    """Where the first event ends and the next begins (a blank line, LF or CRLF)."""
    best = None
    for sep in (b"\n\n", b"\r\n\r\n"):
        i = buf.find(sep)
        if i >= 0 and (best is None or i < best[0]):
            best = (i, i + len(sep))
    return best


def _data_of(event: bytes) -> str | None:
    lines = [x[5:].lstrip() if x.startswith("data:") else None
             for x in event.decode("utf-8", "replace").replace("\r\n", "\n").split("\n")]
    data = [x for x in lines if x is not None]
    return "\n".join(data) if data else None
