"""Every read has a bound (issue 42, item 3): each reader of a file a user names or of an answer a
server gives stops at its documented limit (docs/limits.md) and says so in one line, in bounded
memory. Limits are set small here (the module's own constant, read as each read runs) so that a
test sends kilobytes, not the limit."""

from __future__ import annotations

import asyncio
import http.server
import json
import threading

import pytest

from mtptui.errors import UserError


def test_a_config_past_its_limit_is_one_line():
    from mtptui.config import ConfigError, load_config

    with pytest.raises(ConfigError, match="/dev/zero: a config larger than 1 MiB: refused"):
        load_config("/dev/zero")


def test_a_prompts_file_past_its_limit_is_one_line(tmp_path, monkeypatch):
    from mtptui.prove import prompts

    monkeypatch.setattr(prompts, "PROMPTS_LIMIT", 1000)
    p = tmp_path / "prompts.txt"
    p.write_text("what is 2+2?\n" * 100)
    with pytest.raises(UserError, match=r"--prompts .*prompts.txt: a prompts file larger than 1000 bytes: refused"):
        prompts.read_file(p)


def test_the_audit_log_is_read_from_its_newest_part(tmp_path, monkeypatch):
    from mtptui.control import audit

    log = tmp_path / "audit.jsonl"
    log.write_text("".join(json.dumps({"id": f"a{i}", "time": 1_700_000_000 + i, "host": "gpu1"}) + "\n"
                           for i in range(200)))
    monkeypatch.setattr(audit, "AUDIT_LIMIT", 1000)
    got = audit.read_audit(log)
    assert got.older and got[-1]["id"] == "a199" and 10 < len(got) < 30 and got.bad == 0
    assert got.bad_note() == "only its newest 1000 bytes read"


class _Answer(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def answering():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def test_a_prometheus_answer_past_its_limit_is_one_error(answering, monkeypatch):
    from mtptui.fleet import prom

    _Answer.body = json.dumps({"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"instance": f"h{i}"}, "value": [0, "1"]} for i in range(200)]}}).encode()
    p = prom.Prometheus(f"http://127.0.0.1:{answering.server_port}")
    assert len(p.query("up")) == 200
    monkeypatch.setattr(prom, "ANSWER_LIMIT", 1000)
    with pytest.raises(prom.PromError, match="an answer over 1000 bytes"):
        p.query("up")


@pytest.mark.parametrize("url", ["http://[::1", "http://[::1]:99999", "ftp://x", "http://"])
def test_a_bad_prometheus_url_is_one_error(url):
    from mtptui.fleet.prom import Prometheus, PromError

    with pytest.raises(PromError):
        Prometheus(url)


async def _serve_once(reply: bytes) -> tuple[asyncio.Server, int]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(reply)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


@pytest.mark.parametrize("reply, said", [
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffff\r\n", "a chunk of"),
    (b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(200)) + b"\r\n{}", "over 100 headers"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n{}", "a body of"),
])
def test_an_http_answer_past_its_limits_is_malformed(reply, said):
    from mtptui.transport.http import MALFORMED, HttpError, json_request

    async def go() -> None:
        server, port = await _serve_once(reply)
        async with server:
            with pytest.raises(HttpError, match=said) as e:
                await json_request("127.0.0.1", port, "/health", None, 10)
            assert e.value.kind == MALFORMED

    asyncio.run(go())


def test_a_prometheus_value_near_infinity_is_no_figure():
    """Issue 42: an infinite fleet mean (1.7e308 twice)."""
    from mtptui.fleet.prom import Prometheus

    body = json.dumps({"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"instance": "a"}, "value": [0, "1.7e308"]}, {"metric": {"instance": "b"}, "value": [0, "NaN"]},
        {"metric": {"instance": "c"}, "value": [0, "-Inf"]}, {"metric": {"instance": "d"}, "value": [0, "2.5"]}]}})
    got = Prometheus("http://127.0.0.1:9").read("up", body.encode())
    assert [(s.labels["instance"], s.value) for s in got] == [("d", 2.5)]
