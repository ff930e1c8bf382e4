"""Per-request acceptance as each engine reports it (prove/load.py): SGLang 0.5.19+'s
`sglext.spec_tokens_details` on its OpenAI endpoints and in /generate's meta_info, vLLM 0.32's
`metrics.speculative_decoding`; the requests whose drafts were nearly never or nearly always
accepted flagged (vllm PR #44487: garbled output, a repetition loop), in the JSON and the table."""

from __future__ import annotations

from mtptui.prove import results
from mtptui.prove.load import NEAR_0, NEAR_1, Sample, accept_of, acceptance


def sglext_chunk(length: float, correct: int, proposed: int, verify: int) -> dict:
    """The chunk SGLang 0.5.23 streams with `return_spec_tokens_details` (serving_chat.py: choices
    [] and sglext at the response's level; SpecTokensDetails' fields, protocol.py)."""
    return {"id": "r1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [],
            "sglext": {"spec_tokens_details": {
                "spec_accept_rate": correct / proposed, "spec_accept_length": length, "spec_cap_length": 0.0,
                "spec_block_accept_length": 0.0, "spec_num_correct_drafts": correct,
                "spec_num_proposed_drafts": proposed, "spec_verify_ct": verify,
                "spec_correct_drafts_histogram": [], "spec_cap_lens_histogram": []}}}


def test_sglangs_spec_tokens_details_are_read():
    assert accept_of(sglext_chunk(2.75, 35, 60, 20)) == (2.75, 35 / 60)
    assert accept_of({"choices": [], "sglext": {"spec_tokens_details": [sglext_chunk(3.0, 2, 3, 1)["sglext"]
                                                                          ["spec_tokens_details"]]}}) == (3.0, 2 / 3)
    assert accept_of({"choices": [], "sglext": {"spec_tokens_details": {"spec_verify_ct": 0,
                                                                          "spec_accept_length": 0.0}}}) is None
    # 0.5.19+'s /generate: the same keys in meta_info beside the verify count
    meta = {"meta_info": {"completion_tokens": 30, "spec_verify_ct": 10, "spec_num_correct_drafts": 20,
                          "spec_num_proposed_drafts": 30}}
    assert accept_of(meta) == (3.0, 20 / 30)
    assert accept_of({"meta_info": {"completion_tokens": 30, "spec_verify_ct": 10}}) == (3.0, None)  # before 0.5.19


def test_vllms_draft_acceptance_rate_is_read():
    ev = {"choices": [], "usage": {"completion_tokens": 40}, "metrics": {"speculative_decoding": {
        "mean_acceptance_length": 1.02, "draft_acceptance_rate": 0.01, "num_spec_steps": 39,
        "num_draft_tokens": 117, "num_accepted_draft_tokens": 1}}}
    assert accept_of(ev) == (1.02, 0.01)


def test_requests_near_0_and_near_1_are_flagged_by_category():
    samples = [Sample(ok=True, tokens=64, accept_len=2.5, accept_rate=0.5, category="chat"),
               Sample(ok=True, tokens=64, accept_len=1.0, accept_rate=0.0, category="random", context=5000),
               Sample(ok=True, tokens=64, accept_len=3.98, accept_rate=0.99, category="repeat"),
               Sample(ok=True, tokens=64, accept_len=4.0, accept_rate=1.0, category="repeat"),
               Sample(ok=True, tokens=64, accept_len=1.0, category="old")]  # no share said: not judged
    a = acceptance(samples)
    assert a["requests"] == 5
    assert a["near_0"] == [{"category": "random", "context": 5000, "accept_len": 1.0, "accept_rate": 0.0}]
    assert [x["accept_rate"] for x in a["near_1"]] == [0.99, 1.0] and NEAR_0 < 0.5 < NEAR_1
    lines = results.acceptance_lines([{"profile": "ngram3", "accept_len": 2.4, results.ACCEPTANCE: a}])
    flags = [ln.strip() for ln in lines if ln.strip().startswith("!")]
    assert flags == ["! 1 request with drafts nearly never accepted (garbled output?): random",
                     "! 2 requests with drafts nearly always accepted (a repetition loop?): repeat"]
    # by the context a request ended with, in the epochs' context buckets; "-" where not said
    assert {k: v["requests"] for k, v in a["by_context"].items()} == {"4-16k": 1, "-": 4}
    assert a["by_context"]["4-16k"]["p50"] == 1.0
    plain = acceptance(samples[:1])
    assert plain["near_0"] == plain["near_1"] == []
    assert not any("!" in ln for ln in results.acceptance_lines([{"profile": "p", results.ACCEPTANCE: plain}]))


def test_smoke_says_the_answers_acceptance_and_flags_a_loop():
    """smoke against an HTTP server answering as vLLM 0.32 does with
    --per-request-spec-decode-metrics summary (a top-level `metrics.speculative_decoding`)."""
    import asyncio
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from types import SimpleNamespace

    from mtptui.prove.smoke import PASS, smoke

    rates = iter([0.99, 0.5])

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            self._send({"object": "list", "data": [{"id": "tiny", "object": "model"}]})

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            rate = next(rates)
            self._send({"id": "c1", "object": "chat.completion", "model": "tiny",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": "4 4 4 4"},
                                     "finish_reason": "length"}],
                        "usage": {"prompt_tokens": 9, "completion_tokens": 64, "total_tokens": 73},
                        "metrics": {"speculative_decoding": {
                            "mean_acceptance_length": 1 + 3 * rate, "draft_acceptance_rate": rate,
                            "num_spec_steps": 20, "num_draft_tokens": 60, "num_accepted_draft_tokens": round(60 * rate),
                            "num_spec_tokens": 3}}})

        def _send(self, obj):
            body = json.dumps(obj).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        fwd = SimpleNamespace(host="127.0.0.1", port=server.server_address[1], where="127.0.0.1")
        loop = asyncio.run(smoke("gpu1", fwd, "What is 2+2?", "4"))
        fine = asyncio.run(smoke("gpu1", fwd, "What is 2+2?", "4"))
    finally:
        server.shutdown()
    assert loop.result == PASS and loop.accept_len == 1 + 3 * 0.99 and loop.accept_rate == 0.99
    assert loop.line().endswith("(drafts nearly always accepted: 99%; a repetition loop?)"), loop.line()
    assert "accept len 3.97" in loop.line() and loop.to_json()["accept_rate"] == 0.99
    assert fine.result == PASS and "nearly" not in fine.line() and "accept len 2.50" in fine.line()


def test_a_requests_context_is_its_prompt_and_output_tokens_in_the_context_buckets():
    from mtptui.core.loadmatch import CONTEXT
    from mtptui.prove.load import context_bucket

    assert [context_bucket(n) for n in (None, 0, 4095, 4096, 16 * 1024, 70_000)] == \
        ["-", "<4k", "<4k", "4-16k", "16-32k", "64k+"]
    assert [label for label, _ in CONTEXT.buckets][0] == "<4k"
    short = [Sample(ok=True, tokens=32, accept_len=x, accept_rate=(x - 1) / 3, context=50) for x in (3.0, 4.0)]
    long = [Sample(ok=True, tokens=32, accept_len=1.5, accept_rate=1 / 6, context=40_000)]
    by = acceptance(short + long)["by_context"]
    assert list(by) == ["<4k", "32-64k"] and by["<4k"]["requests"] == 2 and by["32-64k"]["p50"] == 1.5
    lines = results.acceptance_lines([{"profile": "ngram3", results.ACCEPTANCE: acceptance(short + long)}])
    assert "context <4k 3.50 (2)  32-64k 1.50 (1)" in lines[1], lines
