"""The simulator's HTTP side, on the standard library's ThreadingHTTPServer (no framework: the
integration hosts run it with a bare python3).

Endpoints, SGLang's names: /health (/health_generate) 503 until the ready line, then 200;
/server_info (0.5.8+) and /get_server_info with the server args, "simulator": true and per-DP
`internal_states` carrying the lifetime `avg_spec_accept_length`; /model_info (/get_model_info);
/get_load; /v1/models (owned_by "mtptui-sim"); /metrics with --enable-metrics (SGLang's scheduler
metrics, see sim/metrics.py); and the generating ones, /generate, /v1/completions and
/v1/chat/completions, streamed (SSE) or not. Tokens go out at the pace of the simulated decode steps.
Every response carries `x-mtptui-simulator: 1`.

The vLLM mode (sim/vllm_serve.py, `live.engine_name == "vllm"`) answers on the same server with vLLM
0.32.0's paths and bodies: /health, /version, /v1/models, /load, /ping, /metrics, /v1/completions
and /v1/chat/completions with `metrics.speculative_decoding`; its errors in vLLM's form.

One deliberate difference: the socket is bound at start, so /health says 503 (rather than
refusing the connection) until the ready line, for every version; SGLang 0.4.x answered 200 as
soon as uvicorn was up, a moment before its ready line.
"""

from __future__ import annotations

import json
import queue
import select
import socket
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, cast

from mtptui.sim import answers, behaviour
from mtptui.sim.engine import RealRequest

if TYPE_CHECKING:
    from mtptui.sim.live import LiveServer
    from mtptui.sim.vllm_serve import VllmLive

STALL_TIMEOUT = 600.0  # a hung scheduler keeps a client waiting this long at most
POLL_S = 0.5  # how often a waiting answer looks whether its client went away
_SEP = {"vllm": (",", ":")}  # FastAPI's JSONResponse writes no spaces; SGLang's bodies are json.dumps'


def _engine(live) -> str:
    return getattr(live, "engine_name", "sglang")


class SimHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # uvicorn's backlog: with socketserver's 5, a burst of connections (a benchmark at concurrency
    # 8 or more) loses SYNs, and the client's retry a second later shows up as time to first token
    request_queue_size = 2048

    def __init__(self, addr, live: LiveServer | VllmLive) -> None:
        # the vLLM mode's (engine_name "vllm") is read through its own methods, which cast it back
        self.live = cast("LiveServer", live)
        super().__init__(addr, Handler)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "uvicorn"  # what SGLang's server says; the bodies say "simulator"
    sys_version = ""
    server: SimHTTPServer

    # -- plumbing ---------------------------------------------------------------------------
    def log_message(self, format: str, *args) -> None:
        pass  # access lines are written in uvicorn's format by _access()

    def _access(self, status: int) -> None:
        host, port = self.client_address[:2]
        self.server.live.access(host, port, self.command, self.path, status)

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("x-mtptui-simulator", "1")
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self._access(status)

    def _json(self, status: int, obj) -> None:
        self._send(status, json.dumps(obj, separators=_SEP.get(_engine(self.server.live))).encode())

    def _error(self, status: int, message: str, etype: str = "BadRequestError") -> None:
        self._json(status, {"object": "error", "message": message, "type": etype, "param": None, "code": status})

    def _body(self) -> dict | None:
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            obj = json.loads(raw or b"{}")
        except ValueError:
            self._error(400, "the request body is not valid JSON")
            return None
        if not isinstance(obj, dict):
            self._error(400, "the request body must be a JSON object")
            return None
        return obj

    # -- GET --------------------------------------------------------------------------------
    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        live = self.server.live
        path = self.path.split("?", 1)[0]
        if _engine(live) == "vllm":
            self._vllm_get(path)
            return
        v = live.cfg.v
        if path in ("/health", "/health_generate"):
            ok = live.state == "ready"
            self._send(200 if ok else 503, b"")
        elif path == "/get_server_info" or (path == "/server_info" and v >= (0, 5, 8)):
            self._json(200, live.server_info())
        elif path in ("/model_info", "/get_model_info"):
            a = live.cfg.args
            self._json(200, {"model_path": a["model_path"], "tokenizer_path": a["tokenizer_path"],
                             "is_generation": True, "simulator": True})
        elif path == "/get_load":
            self._json(200, live.load())
        elif path == "/v1/models":
            a = live.cfg.args
            self._json(200, {"object": "list", "data": [{
                "id": a["served_model_name"], "object": "model", "created": int(live.t0),
                "owned_by": "mtptui-sim", "root": a["model_path"], "max_model_len": live.context_len}]})
        elif path == "/metrics" and live.cfg.args["enable_metrics"]:
            self._send(200, live.metrics().encode(), "text/plain; version=0.0.4; charset=utf-8")
        else:
            self._json(404, {"detail": "Not Found"})

    # -- POST -------------------------------------------------------------------------------
    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        if _engine(self.server.live) == "vllm":
            vl = cast("VllmLive", self.server.live)
            with vl.lock:
                vl.open_requests += 1
            try:
                self._vllm_post(path)
            finally:
                with vl.lock:
                    vl.open_requests -= 1
                vl.wake.set()
            return
        if path not in ("/generate", "/v1/completions", "/v1/chat/completions"):
            self._json(404, {"detail": "Not Found"})
            return
        body = self._body()
        if body is None:
            return
        try:
            prompt, max_tokens, stream = _request_of(path, body)
        except ValueError as e:
            self._error(400, str(e))
            return
        live = self.server.live
        tokens, finish = answers.reply(prompt, max_tokens)
        q: queue.Queue = queue.Queue()
        req = RealRequest(prompt=answers.count_prompt_tokens(prompt), tokens=tokens,
                          sink=lambda chunk, t, fin: q.put((chunk, t, fin)),
                          accept_factor=behaviour.content_factor(prompt))
        if not live.submit(req):
            self._error(503, "the server is not ready (mtptui simulator)", "ServiceUnavailableError")
            return
        rid = uuid.uuid4().hex
        t_start = time.time()
        if stream:
            self._stream(path, body, req, q, rid, finish)
        else:
            text = "".join(self._drain(q))
            if req.failed:
                self._error(500, req.failed, "InternalServerError")
                return
            self._json(200, _response(path, body, live, rid, text, req, finish, time.time() - t_start))

    def _drain(self, q: queue.Queue):
        """Yields token chunks at the simulated times they were produced; ends when none comes
        for STALL_TIMEOUT, or when the client went away from a server that stopped answering."""
        waited = 0.0
        while True:
            try:
                chunk, t, fin = q.get(timeout=POLL_S)
            except queue.Empty:
                waited += POLL_S
                if waited >= STALL_TIMEOUT or (self.server.live.state != "ready" and self._client_gone()):
                    return
                continue
            waited = 0.0
            delay = t - time.time()
            if delay > 0:
                time.sleep(delay)
            if chunk:
                yield "".join(chunk)
            if fin:
                return

    def _client_gone(self) -> bool:
        """The client closed its side (a read would give nothing), or the connection broke."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    # -- vLLM 0.32.0 (sim/vllm_serve.py) ----------------------------------------------------------
    def _vllm_get(self, path: str) -> None:
        live = cast("VllmLive", self.server.live)
        if path in ("/health", "/ping"):
            self._send(200 if live.state == "ready" else 503, b"", "")
        elif path == "/version":
            self._json(200, {"version": live.version})
        elif path == "/v1/models":
            created = int(time.time())
            name = live.st.served
            self._json(200, {"object": "list", "data": [{
                "id": name, "object": "model", "created": created, "owned_by": "mtptui-sim", "root": live.st.model,
                "parent": None, "max_model_len": live.context_len, "permission": [{
                    "id": f"modelperm-{uuid.uuid4().hex[:16]}", "object": "model_permission", "created": created,
                    "allow_create_engine": False, "allow_sampling": True, "allow_logprobs": True,
                    "allow_search_indices": False, "allow_view": True, "allow_fine_tuning": False,
                    "organization": "*", "group": None, "is_blocking": False}]}]})
        elif path == "/load":
            self._json(200, {"server_load": live.open_requests})
        elif path == "/metrics":
            self._send(200, live.metrics().encode(), "text/plain; version=1.0.0; charset=utf-8")
        else:
            self._json(404, {"detail": "Not Found"})

    def _vllm_error(self, status: int, message: str, etype: str, param: str | None = None) -> None:
        self._json(status, {"error": {"message": message, "type": etype, "param": param, "code": status}})

    def _vllm_post(self, path: str) -> None:
        live = cast("VllmLive", self.server.live)
        if path not in ("/v1/completions", "/v1/chat/completions"):
            self._json(404, {"detail": "Not Found"})
            return
        body = self._body()
        if body is None:
            return
        chat = path == "/v1/chat/completions"
        if self._vllm_refused(live, body, chat):
            return
        try:
            prompt, max_tokens, stream = _request_of(path, body)
        except ValueError as e:
            self._vllm_error(400, str(e), "Bad Request")
            return
        tokens, finish = _vllm_tokens(prompt, max_tokens, body)
        q: queue.Queue = queue.Queue()
        t_sent = time.time()
        req = RealRequest(prompt=answers.count_prompt_tokens(prompt), tokens=tokens,
                          accept_factor=behaviour.content_factor(prompt))
        req.sink = live.observe(req, t_sent)(lambda chunk, t, fin: q.put((chunk, t, fin)))
        if not live.submit(req):
            self._vllm_error(503, "The engine is not running (mtptui simulator)", "ServiceUnavailableError")
            return
        rid = ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:16]
        answer = _VllmAnswer(chat, rid, int(t_sent), live.st.served, req, finish)
        if stream:
            self._vllm_stream(live, answer, q, body)
            return
        text = "".join(self._drain(q))
        if not req.done or req.failed:
            return  # stopped mid-request: the connection closes without an answer, as uvicorn's does
        self._json(200, answer.whole(live, text))

    def _vllm_refused(self, live: VllmLive, body: dict, chat: bool) -> bool:
        """Answers vLLM's refusal when the body lacks its prompt (or messages) or names another
        model (that one vLLM also logs); True when it did."""
        need = "messages" if chat else "prompt"
        if need not in body:
            self._vllm_error(400, f"1 validation error:\n  {{'type': 'missing', 'loc': 'body.{need}', 'msg': 'Field "
                             f"required', 'input': '<dict of {len(body)} items>'}}", "Bad Request", f"body.{need}")
            return True
        name = live.st.served
        if body.get("model") not in (None, name):
            shown = "<path>" if name.startswith("/") else name
            message = f"The model `{body.get('model')}` does not exist. Valid aliases: {shown}"
            live.log_error("serving.py:274", f"Error with model error=ErrorInfo(message={message!r}, "
                           "type='NotFoundError', param='model', code=404)")
            self._vllm_error(404, message, "NotFoundError", "model")
            return True
        return False

    def _vllm_stream(self, live: VllmLive, answer: _VllmAnswer, q: queue.Queue, body: dict) -> None:
        """The answer as server-sent events, as they come: vLLM holds each piece back until the
        next, so the last carries the finish reason; then the usage chunk when asked, and [DONE]."""
        self.send_response(200)
        self.send_header("x-mtptui-simulator", "1")
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self._access(200)

        def send(data) -> None:
            raw = ("data: " + (data if isinstance(data, str) else json.dumps(data, separators=(",", ":")))
                   + "\n\n").encode()
            self.wfile.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
            self.wfile.flush()

        try:
            if answer.chat:
                send(answer.role_chunk())
            held = None
            for piece in self._drain(q):
                if held is not None:
                    send(answer.chunk(held, None))
                held = piece
            if not answer.req.done or answer.req.failed:
                self.close_connection = True
                return  # stopped mid-stream: no end, as the real one's client sees it
            send(answer.chunk(held or "", answer.finish))
            if (body.get("stream_options") or {}).get("include_usage"):
                send(answer.usage_chunk(live))
            send("[DONE]")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _stream(self, path: str, body: dict, req: RealRequest, q: queue.Queue, rid: str, finish: str) -> None:
        live = self.server.live
        self.send_response(200)
        self.send_header("x-mtptui-simulator", "1")
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self._access(200)
        model = live.cfg.args["served_model_name"]
        created = int(time.time())
        chat = path == "/v1/chat/completions"
        sofar = ""

        def send(obj) -> None:
            data = ("data: " + (obj if isinstance(obj, str) else json.dumps(obj)) + "\n\n").encode()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        try:
            if chat:
                send(_chat_chunk(rid, created, model, {"role": "assistant", "content": ""}, None))
            for piece in self._drain(q):
                sofar += piece
                if path == "/generate":
                    send({"text": sofar, "meta_info": _meta(req, finish, rid, None, live)})
                elif chat:
                    send(_chat_chunk(rid, created, model, {"content": piece}, None))
                else:
                    send({"id": rid, "object": "text_completion", "created": created, "model": model,
                          "choices": [{"index": 0, "text": piece, "logprobs": None, "finish_reason": None}]})
            if req.failed:
                send({"object": "error", "message": req.failed, "type": "InternalServerError", "code": 500})
            elif chat:
                send(_chat_chunk(rid, created, model, {}, finish))
                if (body.get("stream_options") or {}).get("include_usage"):
                    send({"id": rid, "object": "chat.completion.chunk", "created": created, "model": model,
                          "choices": [], "usage": _usage(req)})
            elif path == "/v1/completions":
                send({"id": rid, "object": "text_completion", "created": created, "model": model,
                      "choices": [{"index": 0, "text": "", "logprobs": None, "finish_reason": finish}]})
            send("[DONE]")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


def _request_of(path: str, body: dict) -> tuple[str, int | None, bool]:
    stream = bool(body.get("stream", False))
    if path == "/generate":
        text = body.get("text")
        if not isinstance(text, str):
            raise ValueError("/generate needs a string 'text' (input_ids are not simulated)")
        sp = body.get("sampling_params") or {}
        mx = sp.get("max_new_tokens", 128)
        return text, (int(mx) if mx is not None else None), stream
    mx = body.get("max_completion_tokens", body.get("max_tokens"))
    if path == "/v1/completions":
        prompt = body.get("prompt")
        if isinstance(prompt, list):
            prompt = " ".join(str(p) for p in prompt)
        if not isinstance(prompt, str):
            raise ValueError("'prompt' is required")
        return prompt, (int(mx) if mx is not None else 16), stream
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        raise ValueError("'messages' must be a non-empty list")
    prompt = ""
    for m in msgs:
        if isinstance(m, dict) and m.get("role") == "user":
            c = m.get("content")
            if isinstance(c, list):
                c = " ".join(p.get("text", "") for p in c if isinstance(p, dict))
            prompt = str(c or "")
    return prompt, (int(mx) if mx is not None else None), stream


def _vllm_tokens(prompt: str, max_tokens: int | None, body: dict) -> tuple[list, str]:
    """The answer's tokens and finish reason (16 tokens at most unless asked; `ignore_eos` repeats
    the answer up to max_tokens, finishing for length)."""
    tokens, finish = answers.reply(prompt, max_tokens if max_tokens is not None else 16)
    if body.get("ignore_eos") and max_tokens:
        tokens, finish = (tokens * (max_tokens // max(1, len(tokens)) + 1))[:max_tokens], "length"
    return tokens, finish


@dataclass
class _VllmAnswer:
    """One vLLM completion (`chat`: a chat completion) as its bodies and chunks say it, in vLLM
    0.32.0's keys and their order."""

    chat: bool
    rid: str
    created: int
    model: str
    req: RealRequest
    finish: str

    @property
    def object(self) -> str:
        return "chat.completion.chunk" if self.chat else "text_completion"

    def usage(self) -> dict:
        req = self.req
        return {"prompt_tokens": req.prompt, "total_tokens": req.prompt + req.sent, "completion_tokens": req.sent}

    def whole(self, live: VllmLive, text: str) -> dict:
        """The answer in one body (not streamed)."""
        out: dict = {"id": self.rid, "object": "chat.completion" if self.chat else "text_completion",
                     "created": self.created, "model": self.model}
        if self.chat:
            out["choices"] = [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None,
                                                       "annotations": None, "audio": None, "function_call": None,
                                                       "reasoning": None},
                               "logprobs": None, "finish_reason": self.finish, "stop_reason": None, "token_ids": None,
                               "routed_experts": None}]
        else:
            out["choices"] = [{"index": 0, "text": text, "logprobs": None, "finish_reason": self.finish,
                               "stop_reason": None, "token_ids": None, "prompt_logprobs": None,
                               "prompt_token_ids": None, "routed_experts": None}]
        out.update(service_tier=None, system_fingerprint=live.fingerprint,
                   usage={**self.usage(), "prompt_tokens_details": None, "completion_tokens_details": None})
        if self.chat:
            out.update(prompt_logprobs=None, prompt_token_ids=None, prompt_text=None)
        out.update(kv_transfer_params=None, ec_transfer_params=None, metrics=live.request_metrics(self.req))
        return out

    def role_chunk(self) -> dict:
        """A chat stream's first chunk: the assistant's role, no content yet."""
        return {"id": self.rid, "object": self.object, "created": self.created, "model": self.model, "choices": [
            {"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None,
             "finish_reason": None}], "prompt_token_ids": None, "prompt_text": None}

    def chunk(self, text: str, fin: str | None) -> dict:
        """A piece of the answer; the last carries the finish reason (and a stop reason)."""
        c: dict = ({"index": 0, "delta": {"content": text}, "logprobs": None, "finish_reason": fin} if self.chat
                   else {"index": 0, "text": text, "logprobs": None, "finish_reason": fin})
        if fin is not None or not self.chat:
            c["stop_reason"] = None
        if not self.chat:
            c["prompt_token_ids"] = None
        c["token_ids"] = None
        return {"id": self.rid, "object": self.object, "created": self.created, "model": self.model, "choices": [c]}

    def usage_chunk(self, live: VllmLive) -> dict:
        """The stream's usage chunk (stream_options.include_usage), exclude_none: it says only what
        it has (vLLM's model_dump_json)."""
        last = {"id": self.rid, "object": self.object, "created": self.created, "model": self.model, "choices": [],
                "usage": self.usage(), "system_fingerprint": live.fingerprint}
        metrics = live.request_metrics(self.req)
        if metrics is not None:
            last["metrics"] = {"speculative_decoding": {k: v for k, v in metrics["speculative_decoding"].items()
                                                        if v is not None}}
        return last


def _usage(req: RealRequest) -> dict:
    return {"prompt_tokens": req.prompt, "completion_tokens": req.sent,
            "total_tokens": req.prompt + req.sent, "prompt_tokens_details": None}


def _meta(req: RealRequest, finish: str, rid: str, latency: float | None, live: LiveServer) -> dict:
    done = req.done and not req.failed
    meta: dict = {"id": rid, "prompt_tokens": req.prompt, "completion_tokens": req.sent, "cached_tokens": 0,
                  "finish_reason": ({"type": "stop", "matched": None} if finish == "stop"
                                    else {"type": "length", "length": req.sent}) if done else None}
    # only a speculating server reports these (SGLang 0.5.5: when speculative_algorithm is set)
    if req.steps and live.cfg.args["speculative_algorithm"] is not None:
        meta["spec_verify_ct"] = req.steps
        # SGLang's formula (0.5.5 tokenizer_manager): completion tokens over verify steps, the
        # prefill's token included
        meta["spec_accept_length"] = round(req.sent / req.steps, 4)
    if latency is not None:
        meta["e2e_latency"] = round(latency, 4)
    return meta


def _chat_chunk(rid: str, created: int, model: str, delta: dict, finish: str | None) -> dict:
    return {"id": rid, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}


def _response(path: str, body: dict, live: LiveServer, rid: str, text: str, req: RealRequest,
              finish: str, latency: float) -> dict:
    model = live.cfg.args["served_model_name"]
    created = int(time.time())
    if path == "/generate":
        return {"text": text, "meta_info": _meta(req, finish, rid, latency, live)}
    if path == "/v1/completions":
        return {"id": rid, "object": "text_completion", "created": created, "model": model,
                "choices": [{"index": 0, "text": text, "logprobs": None, "finish_reason": finish,
                             "matched_stop": None}], "usage": _usage(req)}
    return {"id": rid, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text,
                                                 "reasoning_content": None, "tool_calls": None},
                         "logprobs": None, "finish_reason": finish, "matched_stop": None}],
            "usage": _usage(req)}
