"""Proof that a change helped: a smoke test of the server's answers and an A/B benchmark of
speculation profiles, both through the OpenAI-compatible API that SGLang and vLLM serve.

Headless (never imports Textual):
- ``client``: a small HTTP/1.1 client on asyncio streams: one JSON request, or an SSE stream.
- ``smoke``: one fixed chat request, its answer checked; each way it can fail said in one line.
- ``load``: N streaming requests at a concurrency, measured (tok/s, req/s, TTFT, ITL, errors).
- ``prompts``: the benchmark's prompts (the shipped set in five categories, or the operator's file), drawn by seed.
- ``bench``: profiles applied through control.session, measured, the host restored as found.
- ``results``: the tables, deltas against off with their intervals, the verdict on the leader, plotext bars,
  JSON and CSV.
"""
