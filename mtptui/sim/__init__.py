"""mtptui's SGLang simulator: a stand-in server for the demo, the tests, the benchmarks and
sample_logs/. It is not SGLang and serves no model; it says so in its first log line, in
/server_info ("simulator": true) and in /v1/models (owned_by "mtptui-sim").

Standard library only, and no other mtptui package is imported (never mtptui.core: the tests
check the simulator *against* the core parser), so the integration hosts run it with a bare
`python3 -m mtptui.sim` and PYTHONPATH pointing at a read-only checkout.

Command line (`mtptui sim ...` is the same as `python -m mtptui.sim ...`)
    Live, MTP on, with background load (HTTP on --port, default 30000; ready in about 3 s):
        mtptui sim --model-path Qwen/Qwen3.5-122B-A10B --tp 4 --speculative-algorithm NEXTN \\
            --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 \\
            --sim-load steady
    It takes sglang.launch_server's flags (--model-path, --tp/--tp-size, --dp/--dp-size, --ep,
    --enable-dp-attention, --host, --port, --speculative-*, --mem-fraction-static,
    --decode-log-interval, --max-running-requests, --watchdog-timeout, ...) and refuses bad ones as
    SGLang does (exit 2). Its own options start with --sim-:
        --sim-version 0.4.9|0.5.3|0.5.4|0.5.8|0.5.10|0.5.12 (default)|0.5.19|0.5.23   log format to
                                           print (0.5.19+: the server_args line is a dict; the
                                           other lines are 0.5.12's)
        --sim-hybrid auto|none|mamba|swa   memory-pool fields (auto: from the model name)
        --sim-load none|light|steady|burst|ramp|saturate|long   background load per DP group
                                           (long: prompts doubling every 40 s, up to the context)
        --sim-fault NAME[@S] (repeatable)  oom, oom@S, crash@S, accept-collapse@S, no-cuda-graph,
                                           nccl@S, hang@S (S: seconds after the ready line)
        --sim-seed N, --sim-startup-seconds S (default 3), --sim-truth FILE (JSONL: what each line
        printed means)
    Offline (a journal, written at once from a simulated clock starting 2026-03-09 16:00:00 UTC):
        mtptui sim --sim-scenario mtp-on-tp4 --write-log out.log [--duration 120] [--sim-envelope json]
        mtptui sim --sim-scenario list
        mtptui sim SGLANG-FLAGS --write-log out.log --duration 60      one run of those flags
    Output is stderr (uvicorn's access lines: stdout), one flushed line at a time; SIGTERM logs
    SGLang's shutdown lines and exits 0; a fatal fault exits 1.

Python API (for the dashboard's demo and benchmarks, and for tests)
    from mtptui.sim import scenario
    scenario.render(name, duration=None, envelope="short-iso"|"json"|"cat", seed=0)
        -> Iterator[Line]: a named scenario (scenario.SCENARIOS) as log lines. Line.text is the line
        as written; Line.truth is what it means, computed by the simulator:
          {"expect": "batch", "kind": "decode"|"prefill"|"spec", "rank": "TP0", "fields": {...},
           "tol": {...}, "ts": ..., "host": ..., "message": ...}
          {"expect": "event", "event": "ready"|"spec_config"|"oom"|..., "data": {...}, ...}
          {"expect": "other", ...}
        Field names are DESIGN.md's normalised ones (accept_len, accept_rate, gen_throughput,
        running_req, queue_req, num_token, token_usage, full_token, mamba_usage, graph, ...);
        `tol` is the rounding the printed precision allows.
    scenario.render_argv(argv, duration=60.0, envelope=..., seed=0) -> Iterator[Line]
        one run of a server started with argv (SGLang flags plus --sim- options).
    scenario.generate_lines(n, argv=None, envelope="short-iso", seed=0) -> list[str]
        n lines of a busy MTP server (about 20k lines/s on one core): for benchmarks.
    scenario.write_log(path, lines, truth_path=None) -> int
    For a live process from Python, start `sys.executable -m mtptui.sim ...` with subprocess and
    poll GET /health until it answers 200.

vLLM mode (live): `python -m mtptui.sim.vllm_serve --model M [vLLM's flags] [--sim-load L]
[--sim-startup-seconds S]` answers as vLLM 0.32.0's CPU build does: its lines, its refusals,
its HTTP side on port 8000 (/health, /version, /metrics, completions and chat with per-request
acceptance); see vllm_serve.py. `mtptui spec`, `smoke`, `bench` and `tune` read it as vLLM.

Modules: flags (SGLang's flags and checks), formats (lines per version), behaviour (the model of
speed and acceptance), engine (schedulers, requests), lifecycle (startup, failures, shutdown),
session (one process's life), live and httpd (the real-time server), journal (journald envelopes
and systemd's lines), scenario (offline rendering, named scenarios), vllm (vLLM's lines and
/metrics), vllm_serve (vLLM's live server, on httpd and engine), answers (what the "model" says).
"""
