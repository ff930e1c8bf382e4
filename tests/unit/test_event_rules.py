"""Every event rule, from the message format in SGLang's and vLLM's own sources (file and version
cited per case), recognised behind each prefix a deployment puts before it: raw, journald (short,
short-iso, json), docker compose, vLLM's own and Python logging's (issue 19)."""

import json

import pytest

from mtptui.core.parse import LineParser
from mtptui.core.parse.events import classify, vllm_args

# (message as the server logs it, kind, where the format comes from)
RULES = [
    ("Scheduler or DataParallelController 41820 terminated with -9", "crash",
     "sglang 0.4.6 srt/entrypoints/engine.py:558, 0.5.12 srt/entrypoints/engine.py:667"),
    ("Scheduler or DataParallelController 41820 terminated with 1", "crash",
     "sglang 0.4.6 and 0.5.12 srt/managers/data_parallel_controller.py"),
    ("Decode out of memory happened. #retracted_reqs: 3, #new_token_ratio: 0.4000 -> 0.7000", "retract",
     "sglang 0.4.6 srt/managers/scheduler.py:1336"),
    ("KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_tokens_gained: 512", "retract",
     "sglang 0.5.12 srt/managers/scheduler.py:2956"),
    ("Received sigquit from a child proces. It usually means the child failed.", "crash",
     "sglang before 0.4 (its own misspelling)"),
    ("Received sigquit from a child process. It usually means the child failed.", "crash",
     "sglang 0.4.6 srt/entrypoints/engine.py:472, 0.5.12 engine.py:1286"),
    ("Scheduler hit an exception: Traceback (most recent call last):", "error",
     "sglang 0.4.6 scheduler.py:2040, 0.5.12 scheduler.py:4045"),
    ("Initialization failed. warmup error: Traceback (most recent call last):", "error",
     "sglang 0.4.6 and 0.5.12 srt/entrypoints/http_server.py"),
    ("Not enough memory. Please try to increase --mem-fraction-static.", "oom",
     "sglang 0.4.6 model_runner.py:790, 0.5.12 model_executor/pool_configurator.py:53"),
    ("Watchdog timeout (self.watchdog_timeout=300)", "watchdog", "sglang 0.4.6 scheduler.py:1592"),
    ("The server is fired up and ready to roll!", "ready", "sglang 0.4.6 and 0.5.12 http_server.py"),
    ("Killed", "crash", "the shell's word for a SIGKILLed child (the kernel OOM killer's)"),
    ("gpu1:41820:41901 [0] misc/socket.cc:484 NCCL WARN socket.c:540 Connect to 10.0.0.2<43127> failed : "
     "Connection refused", "nccl", "NCCL 2.2x misc/socket.cc"),
    ("gpu1:41820:41901 [3] NCCL WARN Cuda failure 'out of memory'", "nccl", "NCCL 2.x enqueue.cc"),
    ("Traceback (most recent call last):", "error", "CPython's traceback header"),
    ("non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', 'speculative_config': {'method': 'eagle', "
     "'model': 'yuhuili/EAGLE-LLaMA3.1-Instruct-8B', 'num_speculative_tokens': 3}, 'tensor_parallel_size': 2}",
     "spec_config", "vllm 0.9.2 entrypoints/openai/cli_args.py:325, 0.33 entrypoints/common/startup.py:96"),
    ("vLLM API server version 0.9.2", "starting", "vllm 0.9.2 entrypoints/openai/api_server.py:1395"),
    ("Starting vLLM API server 0 on http://0.0.0.0:8000", "starting", "vllm 0.9.2 api_server.py:1457"),
    ("Starting vLLM server on http://0.0.0.0:8000", "starting", "vllm 0.33 entrypoints/launchers/api_server/entry.py"),
    ("EngineCore failed to start.", "crash", "vllm 0.9.2 v1/engine/core.py:586, 0.33 core.py:1584"),
    ("EngineCore encountered a fatal error.", "crash", "vllm 0.9.2 v1/engine/core.py:588, 0.33 core.py:1586"),
    ("Engine core initialization failed. See root cause above. Failed core proc(s): {}", "crash",
     "vllm 0.33 v1/engine/utils.py:1474"),
    ("Engine process failed to start. See stack trace for the root cause.", "crash",
     "vllm 0.9.2 entrypoints/openai/api_server.py:292"),
    ("WorkerProc failed to start.", "crash", "vllm 0.33 v1/executor/multiproc_executor.py:1057"),
    ("Worker proc VllmWorker-0 died unexpectedly, shutting down executor.", "crash",
     "vllm 0.9.2 v1/executor/multiproc_executor.py:136"),
    ("Worker proc VllmWorker-3 died unexpectedly (exit code: -9), shutting down executor.", "crash",
     "vllm 0.33 v1/executor/multiproc_executor.py:381"),
    ("RayWorkerProc rank=2 died unexpectedly, shutting down executor.", "crash", "vllm 0.33 ray executor"),
    ("vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the "
     "root cause.", "crash", "vllm 0.9.2 and 0.33 v1/engine/exceptions.py"),
    ("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
     "initializing the engine.", "oom", "vllm 0.9.2 and 0.33 v1/core/kv_cache_utils.py"),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.", "oom", "torch 2.x"),
]

STAMP = "2026-03-09 16:03:25"


def _wrappers(msg: str) -> dict[str, str]:
    """The message behind each prefix a deployment gives it."""
    python = f"{STAMP},123 - sglang.srt.managers.scheduler - ERROR - {msg}"
    return {
        "raw": msg,
        "sglang": f"[{STAMP} TP0] {msg}",
        "journald short": f"Mar 09 16:03:25 gpu1 python[41820]: {msg}",
        "journald short-iso": f"2026-03-09T16:03:25+0000 gpu1 python[41820]: [{STAMP}] {msg}",
        "journald json": json.dumps({"__REALTIME_TIMESTAMP": "1773072205000000", "_HOSTNAME": "gpu1",
                                     "SYSLOG_IDENTIFIER": "python", "MESSAGE": msg}),
        "docker compose": f"sglang-1  | [{STAMP}] {msg}",
        "docker compose, vllm": f"vllm-1  | (APIServer pid=66) ERROR 03-09 16:03:25 [core.py:586] {msg}",
        "vllm": f"ERROR 03-09 16:03:25 [core.py:586] {msg}",
        "vllm engine core": f"(EngineCore_0 pid=66) ERROR 03-09 16:03:25 [core.py:586] {msg}",
        "python logging": python,
        "uvicorn": f"ERROR:    {msg}",
    }


CASES = [(label, raw, kind) for msg, kind, _ in RULES for label, raw in _wrappers(msg).items()
         if not (msg == "Killed" and label in ("python logging", "uvicorn", "vllm", "vllm engine core",
                                               "docker compose, vllm"))]  # a shell's line has no logger


@pytest.mark.parametrize("label,raw,kind", CASES, ids=[f"{k}-{lab}-{i}" for i, (lab, _, k) in enumerate(CASES)])
def test_every_rule_behind_every_prefix(label, raw, kind):
    p = LineParser().parse(raw)
    assert p.outcome == "event", (label, raw)
    assert p.record.kind == kind, (label, raw, p.record.kind)
    # and the same through the general path
    assert LineParser().general(raw).record.kind == kind


@pytest.mark.parametrize("msg", [
    "gpu1:41820:41901 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
    "Killed 3 requests that timed out",
    "[2026-03-09 16:03:25] Terminated the idle process",
    "INFO 03-09 16:03:25 [api_server.py:1457] Started the tokenizer pool",
    "Prefix caching is enabled; memory pool is warm",
])
def test_near_misses_are_no_events(msg):
    p = LineParser().parse(msg)
    assert p.outcome == "other", (msg, p.record)


def test_vllm_non_default_args_are_the_runs_settings():
    msg = ("non-default args: {'model': 'deepseek-ai/DeepSeek-V3', 'speculative_config': {'method': 'deepseek_mtp', "
           "'num_speculative_tokens': 1}, 'tensor_parallel_size': 8, 'data_parallel_size': 2}")
    assert vllm_args(msg) == {"model_path": "deepseek-ai/DeepSeek-V3", "tp_size": 8, "dp_size": 2,
                              "algorithm": "deepseek_mtp", "num_steps": 1}
    # without speculation: spec off, as SGLang's server_args with speculative_algorithm=None
    assert vllm_args("non-default args: {'model': 'm'}") == {"model_path": "m", "algorithm": None}
    # a value that is no literal: read item by item, speculative_config given as JSON text
    odd = ("non-default args: {'model': 'm', 'speculative_config': '{\"method\": \"eagle3\", "
           "\"num_speculative_tokens\": 2, \"model\": \"d\"}', 'compilation_config': CompilationConfig(level=3)}")
    assert vllm_args(odd) == {"model_path": "m", "algorithm": "eagle3", "num_steps": 2, "draft_model_path": "d"}


def test_scheduler_termination_says_its_exit_code():
    kind, data = classify("Scheduler or DataParallelController 41820 terminated with -9")
    assert kind == "crash" and data == {"pid": 41820, "exit_code": -9}


def test_bash_reports_a_killed_job():
    kind, _ = classify("/opt/run.sh: line 3: 41820 Killed                  python3 -m sglang.launch_server --tp 4")
    assert kind == "crash"


# vLLM's stats lines (v0 engine/metrics.py, V1 v1/metrics/loggers.py, 0.9.2 and 0.33) where the
# deployment's logging config gives Python's own format, with any text before it.
@pytest.mark.parametrize("before", ["", "vllm-1  | ", "Mar 09 16:03:25 gpu1 vllm[66]: "])
@pytest.mark.parametrize("logger,body,kind,rank", [
    ("vllm.engine.metrics", "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 61.2 tokens/s, "
     "Running: 4 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 1.2%, CPU KV cache usage: 0.0%.",
     "decode", ""),
    ("vllm.v1.metrics.loggers", "Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
     "61.2 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.2%, Prefix cache hit rate: 0.0%",
     "decode", "Engine 000"),
    ("vllm.v1.spec_decode.metrics", "SpecDecoding metrics: Draft acceptance rate: 63.2%, Mean acceptance length: "
     "2.90, Accepted: 100 tokens, Drafted: 158 tokens", "spec", ""),
])
def test_vllm_stats_behind_python_logging(before, logger, body, kind, rank):
    raw = f"{before}2026-03-09 16:03:25,123 - {logger} - INFO - {body}"
    p = LineParser().parse(raw)
    assert p.outcome == "batch", raw
    rec = p.record
    assert rec.kind == kind and rec.engine == "vllm"
    if kind == "spec":
        assert rec.fields["accept_len"] == 2.9 and rec.fields["accept_rate"] == 0.632
    else:
        assert rec.rank == rank and rec.fields["gen_throughput"] == 61.2
    if not before.startswith("Mar"):
        assert rec.ts == pytest.approx(1773072205.123)


@pytest.mark.parametrize("before", ["", "vllm-1  | ", "Mar 09 16:03:25 gpu1 vllm[66]: ", "(APIServer pid=66) "])
def test_uvicorns_startup_complete_is_vllms_ready_line(before):
    """vLLM 0.9.2 and 0.33 start uvicorn once the engine is up: `INFO:     Application startup complete.`
    is the ready line of a vLLM run; SGLang's comes before its warmup, so it is no ready there."""
    parser = LineParser()
    assert parser.parse(f"{before}INFO 03-09 16:03:20 [api_server.py:1395] vLLM API server version 0.9.2").record.kind \
        == "starting"
    p = parser.parse(f"{before}INFO:     Application startup complete.")
    assert p.outcome == "event" and p.record.kind == "ready"
    sglang = LineParser()
    assert sglang.parse("[2026-03-09 16:03:25] INFO:     Application startup complete.").outcome == "other"
    # vLLM's decoration of its API server's lines says whose it is, start seen or not (issue 43)
    vllms = before.startswith("(APIServer pid=")
    assert sglang.parse(f"{before}INFO:     Application startup complete.").outcome == ("event" if vllms else "other")


# A traceback is one event: its first line's, whose text becomes the exception line, the frames
# kept in its data for the detail view. SGLang logs it after its prefix (scheduler.py
# `Scheduler hit an exception: {traceback}`, 0.4.6 and 0.5.12), its lines bare; vLLM's formatter
# repeats its prefix on every line (0.9.2 and 0.33 logging_utils/formatter.py, NewLineFormatter);
# docker compose puts `name-1  | ` before each; journald its envelope.
FRAMES = ['  File "/usr/lib/python3/dist-packages/sglang/srt/managers/scheduler.py", line 2946, in run_scheduler_process',
          "    scheduler = Scheduler(",
          "                ^^^^^^^^^^"]
EXC = "RuntimeError: CUDA error: an illegal memory access was encountered"


@pytest.mark.parametrize("first,each", [
    ("[2026-03-09 16:03:25 TP0] Scheduler hit an exception: ", ""),
    ("Mar 09 16:03:25 gpu1 python3[41820]: [2026-03-09 16:03:25 TP0] Scheduler hit an exception: ",
     "Mar 09 16:03:25 gpu1 python3[41820]: "),
    ("sglang-1  | [2026-03-09 16:03:25 TP0] Scheduler hit an exception: ", "sglang-1  | "),
    ("(EngineCore_0 pid=66) ERROR 03-09 16:03:25 [core.py:586] ", "(EngineCore_0 pid=66) ERROR 03-09 16:03:25 [core.py:586] "),
    ("ERROR:    ", ""),
    ("", ""),
])
def test_a_traceback_is_one_event_with_its_exception_as_text(first, each):
    batch = "[2026-03-09 16:03:25 TP1] Decode batch, #running-req: 3, #token: 100, token usage: 0.01, gen throughput (token/s): 10.0, #queue-req: 0, "
    lines = [first + "Traceback (most recent call last):", *(each + f for f in FRAMES), batch, each + EXC,
             "[2026-03-09 16:03:26] Received sigquit from a child process. It usually means the child failed."]
    parser = LineParser()
    out = [parser.parse(raw) for raw in lines]
    assert [p.outcome for p in out] == ["event", "other", "other", "other", "batch", "other", "event"]
    ev = out[0].record
    assert ev.kind == "error" and ev.text == EXC
    assert ev.data["frames"] == FRAMES and ev.data["opened"].endswith("Traceback (most recent call last):")
    assert out[4].record.fields["gen_throughput"] == 10.0  # never swallowed


def test_a_traceback_ends_at_a_line_that_is_none_of_its_own():
    parser = LineParser()
    ev = parser.parse("Traceback (most recent call last):").record
    parser.parse(FRAMES[0])
    parser.parse("INFO:     127.0.0.1:51234 - \"POST /generate HTTP/1.1\" 200 OK")
    parser.parse(EXC)  # not this traceback's
    assert ev.text == "Traceback (most recent call last):" and ev.data["frames"] == FRAMES[:1]


def test_every_rules_kind_is_a_known_event_kind():
    from mtptui.core.parse.events import _RULES
    from mtptui.core.records import EVENT_KINDS
    assert {kind for kind, _, _ in _RULES} <= set(EVENT_KINDS)


def test_behind_docker_compose_an_sglang_event_has_its_stamp_rank_and_message():
    p = LineParser().parse("sglang-1  | [2026-03-09 16:03:25 TP3] Watchdog timeout (self.watchdog_timeout=300)")
    ev = p.record
    assert (ev.kind, ev.rank, ev.text, ev.ts) == ("watchdog", "TP3", "Watchdog timeout (self.watchdog_timeout=300)",
                                                  1773072205.0)


@pytest.mark.parametrize("before", ["", "vllm-1  | ", "Mar 09 16:03:25 gpu1 vllm[66]: "])
def test_a_vllm_error_block_is_one_event(before):
    """vLLM's logger.exception("EngineCore failed to start.") (0.9.2 and 0.33 v1/engine/core.py): the
    message, then its traceback, every line behind the same prefix (logging_utils NewLineFormatter)."""
    pre = before + "(EngineCore_0 pid=66) ERROR 03-09 16:03:25 [core.py:586] "
    lines = [pre + "EngineCore failed to start.", pre + "Traceback (most recent call last):",
             pre + '  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 577, in run_engine_core',
             pre + "    engine_core = EngineCoreProc(*args, **kwargs)",
             pre + "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` "
                   "when initializing the engine.",
             before + "(APIServer pid=1) INFO 03-09 16:03:26 [loggers.py:118] Engine 000: Avg prompt throughput: 0.0 "
                      "tokens/s, Avg generation throughput: 61.2 tokens/s, Running: 4 reqs, Waiting: 0 reqs"]
    parser = LineParser()
    out = [parser.parse(raw) for raw in lines]
    assert [p.outcome for p in out] == ["event", "other", "other", "other", "event", "batch"]
    ev = out[0].record
    assert ev.kind == "crash" and ev.text.startswith("ValueError: No available memory")
    assert ev.data["opened"] == "EngineCore failed to start." and len(ev.data["frames"]) == 2
    assert out[4].record.kind == "oom"
    # an error without a traceback after it keeps its own text
    lone = LineParser()
    first = lone.parse(pre + "EngineCore encountered a fatal error.").record
    assert lone.parse(pre.replace("ERROR", "INFO") + "Shutting down.").outcome == "other"
    assert first.text == "EngineCore encountered a fatal error."
