"""Lifecycle and trouble events, from systemd's lines about the unit and the server's own lines."""

from __future__ import annotations

import ast
import functools
import json
import re
from typing import Any, TypeAlias

from mtptui.core.records import EventKind

# What a record file holds where a live stream was lost (mtptui/sources/record.py writes it).
GAP_MARK = "-- mtptui: stream lost, lines may be missing until it resumes --"

# (kind, pattern, words): the first rule that matches wins, so the specific ones come before the
# generic ones. A rule's pattern cannot match without one of its words, so a line is searched for
# the words once and only the rules whose words it has are tried (most lines have none).
_RULES: list[tuple[EventKind, re.Pattern[str], tuple[str, ...]]] = [
    ("gap", re.compile("^" + re.escape(GAP_MARK)), ("-- mtptui: ",)),
    # SGLang <= 0.5.18 logs the dataclass repr, `server_args=ServerArgs(model_path='m', ...)`;
    # 0.5.19+ the dict of resolved fields, `server_args={'model_path': 'm', ...}` (engine.py).
    ("spec_config", re.compile(r"server_args=(?:ServerArgs\(|\{')"), ("server_args=",)),
    # vLLM's settings: `non-default args: {'model': ..., 'speculative_config': {...}}`
    # (0.9.2 entrypoints/openai/cli_args.py, 0.33 entrypoints/common/startup.py).
    ("spec_config", re.compile(r"non-default args: \{"), ("non-default args:",)),
    ("ready", re.compile(r"The server is fired up and ready to roll!"), ("fired up",)),
    # SGLang's adaptive controller moving to another tier (--speculative-adaptive, 0.5.11-0.5.23:
    # speculative/eagle_worker.py, then eagle_worker_v2.py apply_runtime_state, on TP rank 0): `Switch
    # adaptive runtime state: steps 3 -> 1, draft_tokens 4 -> 2`. Its decode lines never say the steps.
    ("spec_steps", re.compile(r"Switch adaptive runtime state: steps (\d+) -> (\d+), draft_tokens (\d+) -> (\d+)"),
     ("adaptive runtime state",)),
    # vLLM's API server process coming up (0.9.2 and 0.33 entrypoints: `vLLM API server version
    # %s`, `Starting vLLM API server %d on %s`, 0.33 `Starting vLLM server on %s`)
    ("starting", re.compile(r"vLLM API server version |Starting vLLM (?:API )?server "), ("API server version ", "Starting vLLM ")),
    # SGLang's `Watchdog timeout (self.watchdog_timeout=300)` (0.4.6 scheduler.py), `Scheduler watchdog
    # timeout (...)` (0.5.x utils/watchdog.py); vLLM V1's collective RPC to its workers that never
    # answered (0.9+ v1/executor/multiproc_executor.py: `RPC call to execute_model timed out.`) and V0's
    # `Engine iteration timed out. This should never happen!` (engine/async_llm_engine.py): a hang
    ("watchdog", re.compile(r"[Ww]atchdog timeout \(|Scheduler watchdog timeout|RPC call to \S+ timed out"
                            r"|Engine iteration timed out"), ("atchdog", "timed out")),
    # Kubernetes' kubelet, as its events and its journal say them (1.2x pkg/kubelet/prober/prober.go
    # `Liveness probe failed: ...`, `"Probe failed" probeType="Liveness"`; kuberuntime_manager.go
    # `Container sglang failed liveness probe, will be restarted`, `Back-off restarting failed container
    # sglang in pod ...`): a server too slow to answer its probe, and the supervisor restarting it
    ("watchdog", re.compile(r"Liveness probe failed|\"Probe failed\" probeType=\"Liveness\""), ("Liveness", "Probe failed")),
    ("auto_restart", re.compile(r"failed liveness probe, will be restarted|Back-off restarting failed container"),
     ("liveness probe", "Back-off restarting")),
    # torch's c10d watchdog (ProcessGroupNCCL.cpp, torch 2.x): its error and fatal lines,
    # `[rank0]:[E709 17:05:38.482326987 ProcessGroupNCCL.cpp:1536] [PG ID 0 ...] ...` (`[E ProcessGroupNCCL
    # .cpp:456] ` before 2.3): work timed out, "Some NCCL operations have failed or timed out", "To
    # avoid data inconsistency, we are taking the entire process down", the heartbeat monitor, the
    # debug dump, "Terminating the process after attempting to dump debug info"; its warnings (`[W...`,
    # the process group not destroyed) are none. The same sentences without the prefix (in an
    # exception's `what():`), and NCCL's own warnings (`host:pid:tid [0] misc/socket.cc:484 NCCL WARN
    # ...`), which come before the hang or crash they explain.
    ("nccl", re.compile(r"\[[EF]\d{0,4}[ \d:.]*ProcessGroupNCCL\.cpp:\d+\]|NCCL error|DistBackendError"
                        r"|Watchdog caught collective operation timeout|NCCL timeout|ncclInternalError|ncclSystemError"
                        r"|ncclUnhandledCudaError|ncclRemoteError|NCCL WARN |Some NCCL operations have failed or timed "
                        r"out|we are taking the entire process down|Heartbeat monitor timed out|watchdog got stuck for"
                        r"|NCCL watchdog thread terminated|Process group watchdog thread terminated|NCCL communicator "
                        r"was aborted|Barrier (?:departure )?timed out after"),
     ("NCCL", "nccl", "DistBackend", "atchdog", "entire process down", "Heartbeat monitor", "timed out")),
    # SGLang's scheduler.py (0.4.6): `Decode out of memory happened. #retracted_reqs: N, ...`;
    # 0.5.x: `KV cache pool is full. Retract requests. #retracted_reqs: ...`
    ("retract", re.compile(r"KV cache pool is full\. Retract requests\.|Decode out of memory happened\."),
     ("Retract", "memory")),
    # Out of device memory, in each component's words: SGLang's pool_configurator / model_runner
    # (`Not enough memory. Please try to increase --mem-fraction-static`, 0.5.2x's `Not enough GPU memory
    # for hybrid (mamba/linear-attention) state cache`), scheduler (`Prefill out of memory. Try to lower
    # your batch size.`, `Decode out of memory. Try to lower ...`, 0.4.3's schedule_batch.py `{phase} out
    # of memory. Try to lower your batch size.`), memory_pool (`alloc_req_slots runs out of memory.`),
    # HiCache's `Not enough host memory`, DFLASH's `draft OOM when allocating`; torch's allocator (`CUDA
    # out of memory. Tried to allocate`, `torch.OutOfMemoryError`; ROCm's `HIP out of memory`, Intel's
    # `XPU out of memory`, Ascend's `NPU out of memory`); the CUDA runtime's and driver's error strings
    # (`CUDA error: out of memory`, `CUDA driver error: out of memory`, cudaErrorMemoryAllocation,
    # CUDA_ERROR_OUT_OF_MEMORY, CUBLAS_STATUS_ALLOC_FAILED); vLLM's kv_cache_utils.py (0.9.2, 0.32: `No
    # available memory for the cache blocks`, the model's max seq len `is larger than the maximum
    # number of tokens that can be stored in KV cache`, `KV cache is needed, which is larger than the
    # available KV cache memory`, `Cannot auto-fit max_model_len: not enough GPU memory`); the kernel's
    # OOM killer (`Out of memory: Killed process N`) and Kubernetes' word for a container it killed
    # (`Reason: OOMKilled`, kubectl's STATUS).
    ("oom", re.compile(r"Not enough memory\. Please try to increase --mem-fraction-static|(?:CUDA|HIP|XPU|NPU|MPS|MUSA) "
                       r"out of memory|OutOfMemoryError|out of memory\. Try to lower your batch size|[Nn]ot enough "
                       r"(?:GPU |host |device )?memory|OOM when allocating|No available memory for the cache blocks"
                       r"|Out of memory: Kill(?:ed)? process|CUDA (?:driver )?error: out of memory"
                       r"|cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY|CUBLAS_STATUS_ALLOC_FAILED"
                       r"|alloc_req_slots runs out of memory|tokens that can be stored in KV cache|larger than the "
                       r"available KV cache memory|Out of memory(?:\. Please set a smaller number| even after retracting)"
                       r"|less than desired GPU memory utilization|insufficient GPU memory|higher than the total "
                       r"available device memory|OOMKilled"),
     ("memory", "OutOfMemory", "cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY", "ALLOC_FAILED", "KV cache",
      "Killed", "OOM when")),
    # A server or engine process that ended without being asked (crash; `error` is a logged
    # failure the server may live through). SGLang engine.py / data_parallel_controller.py (0.4.6,
    # 0.5.7): `Scheduler or DataParallelController 1234 terminated with -9`; the parent's `Received
    # sigquit from a child process.` (before 0.4: `proces`) and, once serving, tokenizer_manager.py's
    # `SIGQUIT received. signum=None, frame=None. It usually means one child failed.` (0.5.x); the
    # Ray launcher's `Ray scheduler actor terminated with error` (0.5.x); 0.1-0.2's `Exception in
    # ModelTpServer`. vLLM V1 engine/core.py (0.9.2, 0.32): `EngineCore failed to start.`,
    # `EngineCore encountered a fatal error.`, `Got fatal signal from worker processes, shutting down.`
    # (0.9+ core_client.py, multiproc_executor.py); engine/utils.py `Engine core initialization failed.`
    # (0.10+), `Engine core proc EngineCore_DP0 died unexpectedly` (core_client.py), `Engine core
    # process X died unexpectedly.` (v1/utils.py, 0.32); the API server's `Engine process failed to
    # start` (0.9.2); async_llm.py's `AsyncLLM output_handler failed.`; EngineDeadError's `EngineCore
    # encountered an issue.` (engine/exceptions.py); multiproc_executor's `WorkerProc failed to
    # start.` and `Worker proc VllmWorker-0 died unexpectedly, shutting down executor.` (0.9.2; 0.32
    # adds the exit code; ray_executor `RayWorkerProc rank=2 died unexpectedly`); V0's
    # multiproc_worker_utils.py `Worker VllmWorkerProcess pid 41820 died, exit code: -6` (and the
    # ChildProcessError('worker died') it raises in the engine); v1/utils.py
    # `Process X (PID: N) died with exit code N`; the API server's launcher.py `AsyncLLMEngine has failed,
    # terminating server process` (`... is already dead, ...`, MQLLMEngine's), grpc_server.py's `Server failed:`; 0.33's `RayWorkerProc failed:`
    # (v1/executor/ray_executor_v2.py) and its fault tolerance giving up (v1/fault_tolerance/
    # engine_core_sentinel.py `[FT] No recovery within 30s timeout.`), `Input socket thread died during
    # startup` (v1/engine/core.py), 0.8's `... died for second time in a row, marking RayTokenizerGroupPool
    # as unhealthy`; SGLang 0.5.2x's `Subprocess N (pid=N) crashed with exit code N. Triggering SIGQUIT`
    # (utils/watchdog.py), `Scheduler PP0 TP1 crashed: ...` (ray/scheduler_actor.py), `Weight cache daemon
    # (pid=N) died while this engine holds its weights` (weight_cache/ipc_loader.py).
    ("crash", re.compile(r"Scheduler or DataParallelController (\d+) terminated with (-?\d+)"), ("DataParallelController ",)),
    ("crash", re.compile(r"Worker \S+ pid (\d+) died, exit code: (-?\d+)"), ("died",)),
    ("crash", re.compile(r"EngineCore failed to start|EngineCore encountered a fatal error|EngineCore encountered an "
                         r"issue|Engine core initialization failed|Engine process failed to start|WorkerProc failed "
                         r"to start|Worker ?[Pp]roc \S+ died unexpectedly|WorkerProc rank=\d+ died unexpectedly"
                         r"|Engine core proc(?:ess)? \S+ died unexpectedly|AsyncLLM output_handler failed"
                         r"|Process \S+ \(PID: \d+\) died with exit code|ChildProcessError: worker died|Received sigquit from a child proces"
                         r"|SIGQUIT received\. signum=|Ray scheduler actor terminated with error|Exception in "
                         r"ModelTpServer|scheduler is dead|Received SIGQUIT from scheduler process|Server process "
                         r"terminated unexpectedly|[Gg]ot fatal signal from worker processes|Engine background task "
                         r"failed|\bWorker(?:Proc)? failed\.?$|RayWorkerProc failed|terminating server process|^Server "
                         r"failed: |\[FT\] No recovery within|crashed with exit code|Scheduler [A-Z\d ]*crashed: "
                         r"|died for second time in a row|died while this engine holds|thread died during startup"),
     ("EngineCore ", "Engine core ", "Engine process ", "WorkerProc ", "died", "output_handler failed", "sigquit",
      "SIGQUIT", "terminated", "ModelTpServer", "is dead", "fatal signal", "background task failed", "Worker failed",
      "terminating server", "Server failed", "No recovery", "crashed")),
    # CPython's fault handler (faulthandler, on in vLLM and SGLang): `Fatal Python error: Segmentation
    # fault`, then its threads' dump (parse/__init__.py gathers it into this event); the shell's word
    # for a child killed by a signal, `Segmentation fault (core dumped)`, `Aborted (core dumped)`; a C++
    # exception nobody caught (`terminate called after throwing an instance of 'c10::Error'`).
    ("crash", re.compile(r"^Fatal Python error: |(?:^|\s)(?:Segmentation fault|Aborted|Bus error) \(core dumped\)"
                         r"|^terminate called after throwing an instance of "),
     ("Fatal Python error", "(core dumped)", "terminate called")),
    # the shell's (or the kernel OOM killer's) word for a SIGKILLed process: alone on its line, or
    # as bash reports a job, `run.sh: line 3: 41820 Killed    python3 -m sglang.launch_server ...`
    ("crash", re.compile(r"(?:^|[\]|:]\s+)(?:Killed\s*$|\d+\s+Killed\s)"), ("Killed",)),
    # SGLang: `Scheduler hit an exception: <traceback>` (scheduler.py; its exception says why, and
    # the parent's sigquit that the server died) and the same words of its other processes
    # (TokenizerManager, DetokenizerManager, DataParallelController, TpModelWorkerClient, ...), vLLM's
    # `EngineCore hit an exception`, `WorkerProc hit an exception` (0.32), `EngineCore output handler
    # hit an error` (0.9.2); `Initialization failed. ...`, `Health check failed. ...` (http_server.py);
    # utils/watchdog.py's `... watchdog thread crashed`; V0's `Exception in worker X while processing
    # method Y.` (executor/multiproc_worker_utils.py); SGLang 0.5.2x's rank consensus check (`Found rank
    # divergence for N events(s)!`, utils/rank_consensus_checker.py); a traceback behind any prefix.
    ("error", re.compile(r"\w+ hit an (?:exception|error)|Traceback \(most recent call last\)|Initialization failed\. "
                         r"|Health check failed[.:] |[Ww]atchdog thread crashed|Exception in worker \S+ while processing"
                         r"|Found rank divergence"),
     ("hit an e", "Traceback", "Initialization failed", "Health check failed", "atchdog", "Exception in worker",
      "rank divergence")),
    ("auto_restart", re.compile(r"^(?:\S+: )?Scheduled restart job, restart counter is at \d+"), ("restart job",)),
    # systemd's job.c: `Failed to start %s.` (its description, or since v250 `unit - description`), one
    # sentence: not SGLang's `Failed to start profile`, `Failed to start HTTP sidecar server: ...`
    ("failed", re.compile(r"^(?:\S+: )?(?:Main process exited, code=(?:exited, status=[1-9]\d*|killed|dumped)"
                          r"|Failed with result '|Failed to start [^:]*\.$)"), ("Main process exited", "Failed ")),
    ("started", re.compile(r"^Started "), ("Started ",)),
    # SGLang's SIGTERM handler (0.4.6+ `SIGTERM received. signum=None frame=None. Draining requests and
    # shutting down...`; 0.5.x tokenizer_manager.py `Signal SIGTERM received while health check failed.
    # Exiting...`, `... while force shutdown flag set. Force exiting.`)
    ("stopping", re.compile(r"^Stopping |^(?:Signal )?SIGTERM received[. ]"), ("Stopping ", "SIGTERM received")),
    ("stopped", re.compile(r"^Stopped |^Gracefully exiting\.\.\. "), ("Stopped ", "Gracefully exiting")),
]
# uvicorn's line when its app is up: vLLM's API server starts it once the engine is loaded (its
# ready line), SGLang's before its warmup (not ready yet). So it is `ready` only on a stream whose
# vLLM start the parser has seen, and only without SGLang's prefix (LineParser._event).
HTTP_UP = "Application startup complete."
# A line without any of these words is no event: classify() returns None for it.
WORDS = tuple(sorted({w for r in _RULES for w in r[2]}, key=len, reverse=True))
_WORDS = re.compile("|".join(re.escape(w) for w in WORDS))

_SPEC_KEYS = {
    "speculative_algorithm": "algorithm",
    "speculative_num_steps": "num_steps",
    "speculative_eagle_topk": "topk",
    "speculative_num_draft_tokens": "num_draft_tokens",
    "speculative_draft_model_path": "draft_model_path",
    "speculative_adaptive": "adaptive",  # 0.5.11+; False where SGLang fell back to static steps
    "enable_two_batch_overlap": "enable_two_batch_overlap",  # adaptive's fallbacks (badge)
    "model_path": "model_path",
    "tp_size": "tp_size",
    "dp_size": "dp_size",
    "enable_dp_attention": "enable_dp_attention",
    "decode_log_interval": "decode_log_interval",
}
# A value as Python's repr prints it: a quoted string (either quote), None, a bool or a number.
_VALUE = r"""('[^'\\]*(?:\\.[^'\\]*)*'|"[^"\\]*(?:\\.[^"\\]*)*"|None|True|False|-?\d{1,30}(?:\.\d{1,30})?(?:e[-+]?\d{1,3})?)(?=[,)}]|$)"""
_KEY = "(" + "|".join(_SPEC_KEYS) + ")"
# `ServerArgs(tp_size=4, ...)` (<= 0.5.18) and `{'tp_size': 4, ...}` (0.5.19+), read field by field:
# the dict form when it cannot be read whole (cut short, or a value whose repr is no literal).
_ARG = re.compile(r"(?:\(|, )" + _KEY + "=" + _VALUE)
_ITEM = re.compile(r"(?:\{|, )'" + _KEY + "': " + _VALUE)
_MARK = "server_args="
# The dict is read whole with ast.literal_eval up to this length (0.5.23's, every field and
# nested dict, is about 18 KB); a longer one is read with _ITEM only, which takes linear time.
DICT_MAX = 256 * 1024
_SCALARS = (str, int, float, bool, type(None))


Scalar: TypeAlias = str | int | float | bool | None  # a setting's value as the log printed it


def _value(v: str) -> Scalar:
    if v == "None":
        return None
    if v in ("True", "False"):
        return v == "True"
    if v[0] in "'\"":
        if "\\" not in v:
            return v[1:-1]
        try:  # a repr's escapes (`\\`, `\'`, `\x00`) say what the string holds
            read = ast.literal_eval(v)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return v[1:-1]
        return read if isinstance(read, str) else v[1:-1]
    try:
        return int(v)
    except ValueError:
        return float(v)


def _dict_settings(text: str) -> dict | None:
    """The settings of a whole `{...}` that ast.literal_eval reads as a dict, else None (too
    long, cut short, unbalanced, a value that is no literal, bytes that are no text)."""
    end = text.rfind("}")
    if end < 0 or end >= DICT_MAX:
        return None
    try:
        d = ast.literal_eval(text[:end + 1])
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(d, dict):
        return None
    # in the line's order, as the field-by-field reading gives them
    return {_SPEC_KEYS[key]: v for key, v in d.items() if key in _SPEC_KEYS and isinstance(v, _SCALARS)}


def server_args(msg: str) -> dict:
    """The speculation settings (and the layout) read from `server_args=ServerArgs(...)` (SGLang
    up to 0.5.18) or `server_args={...}` (0.5.19+): the same keys from either."""
    at = msg.find(_MARK)
    if at >= 0 and msg.startswith("{", at + len(_MARK)):
        text = msg[at + len(_MARK):]
        whole = _dict_settings(text)
        if whole is not None:
            return whole
        rx = _ITEM
    else:
        rx = _ARG
    out = {}
    for key, v in rx.findall(msg):
        out[_SPEC_KEYS[key]] = _value(v)
    return out


# Where the ranks sit on the GPUs: read on demand (core/gpus.rank_devices), never in the event's
# settings, which label an epoch with what an operator compares runs by.
PLACEMENT_KEYS = ("base_gpu_id", "gpu_id_step", "nnodes")
_PLACE = "(" + "|".join(PLACEMENT_KEYS) + ")"
_PLACE_ARG = re.compile(r"(?:\(|, )" + _PLACE + "=" + _VALUE)
_PLACE_ITEM = re.compile(r"(?:\{|, )'" + _PLACE + "': " + _VALUE)


def placement_args(msg: str) -> dict[str, Scalar] | None:
    """base_gpu_id, gpu_id_step and nnodes of a `server_args=` line, those it has; None for a line
    that is no SGLang server_args line, or one cut short (a field missing from it may be past the
    cut, where one missing from a whole line is one its version does not have)."""
    at = msg.find(_MARK)
    if at < 0 or not msg.rstrip().endswith((")", "}")):
        return None
    rx = _PLACE_ITEM if msg.startswith("{", at + len(_MARK)) else _PLACE_ARG
    out: dict[str, Scalar] = {}
    for key, v in rx.findall(msg, at):
        out.setdefault(key, _value(v))  # the top level's comes first; a nested dict's is not it
    return out


# vLLM's names for the same settings (EngineArgs fields), and those of its speculative_config
_VLLM_KEYS = {"model": "model_path", "tensor_parallel_size": "tp_size", "data_parallel_size": "dp_size"}
_VLLM_SPEC_KEYS = {"method": "algorithm", "num_speculative_tokens": "num_steps", "model": "draft_model_path"}
_VLLM_SCHEDULE = "num_speculative_tokens_per_batch_size"  # Dynamic SD's schedule (0.24.0+)
_VLLM_MARK = "non-default args: "
_VLLM_ITEM = re.compile(r"(?:\{|, )'(model|tensor_parallel_size|data_parallel_size)': " + _VALUE)
_VLLM_SPEC = re.compile(r"'speculative_config': (\{[^{}]*\}|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")


def _vllm_spec(value: object) -> dict[str, Scalar]:
    """speculative_config as vLLM holds it: a dict, or the JSON text it was given on the command line."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    if not isinstance(value, dict):
        return {}
    out: dict = {}
    for key, name in _VLLM_SPEC_KEYS.items():
        if key in value and isinstance(value[key], _SCALARS):
            out[name] = value[key]
    schedule = value.get(_VLLM_SCHEDULE)
    if isinstance(schedule, (list, tuple)) and all(
            isinstance(e, (list, tuple)) and len(e) == 3 and all(type(x) is int for x in e) for e in schedule):
        out["schedule"] = [list(e) for e in schedule]  # as JSON holds it (events are written as JSON)
    return out


def vllm_args(msg: str) -> dict:
    """The settings of vLLM's `non-default args: {...}` line under the names server_args() gives
    (model_path, tp_size, dp_size, and from speculative_config: algorithm = its method, num_steps =
    num_speculative_tokens, draft_model_path = its model); a run without speculative_config gets
    algorithm None (spec off), as SGLang's server_args says it."""
    at = msg.find(_VLLM_MARK)
    text = msg[at + len(_VLLM_MARK):] if at >= 0 else msg
    end = text.rfind("}")
    d = None
    if 0 <= end < DICT_MAX:
        try:
            d = ast.literal_eval(text[:end + 1])
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            d = None
    out: dict = {}
    if isinstance(d, dict):
        for key, name in _VLLM_KEYS.items():
            if key in d and isinstance(d[key], _SCALARS):
                out[name] = d[key]
        spec = _vllm_spec(d.get("speculative_config"))
    else:  # a value that is no literal (an enum's repr, a config object): item by item
        for key, v in _VLLM_ITEM.findall(text):
            out[_VLLM_KEYS[key]] = _value(v)
        m = _VLLM_SPEC.search(text)
        spec = {}
        if m is not None:
            raw = m.group(1)
            try:
                spec = _vllm_spec(ast.literal_eval(raw))
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                spec = {}
    out.setdefault("algorithm", None)
    out.update(spec)
    return out


def classify(msg: str, words: set[str] | None = None) -> tuple[EventKind, dict[str, Any]] | None:
    """(kind, data) for an event line, else None. words: the WORDS that msg holds, when the
    caller has found them (the compiled lane does), each wherever it is; else each rule's words
    are looked for in msg as it comes to them (str's search: a pattern over every place of the
    line took 25 us for a server_args line of 260 characters, 1.6 ms for SGLang 0.5.23's 18 KB)."""
    if words is None:
        if not _WORDS.search(msg):
            return None
        for kind, rx, needs in _RULES:
            if any(w in msg for w in needs) and rx.search(msg):
                return kind, _data(kind, rx, msg)
        return None
    for kind, rx, needs in _RULES:
        if not words.isdisjoint(needs) and rx.search(msg):
            return kind, _data(kind, rx, msg)
    return None



def _settings(msg: str) -> dict[str, Any]:
    return vllm_args(msg) if _VLLM_MARK in msg and _MARK not in msg else server_args(msg)


# A unit that restarts prints the same settings line at each start: a crash loop's thousands of
# them, and SGLang 0.5.23's is 18 KB that ast.literal_eval takes a millisecond to read. Lines up to
# 64 KB are kept, 16 of them: a megabyte at most, whatever lines a hostile log holds.
_recent_settings = functools.lru_cache(maxsize=16)(_settings)
SETTINGS_KEPT = 64 * 1024


def _data(kind: EventKind, rx: re.Pattern[str], msg: str) -> dict[str, Any]:
    if kind == "spec_config":
        # a copy: an event's data is its own
        return dict(_recent_settings(msg)) if len(msg) <= SETTINGS_KEPT else _settings(msg)
    if kind == "spec_steps":
        m = rx.search(msg)
        return {"steps": int(m.group(2)), "draft_tokens": int(m.group(4))} if m is not None else {}
    if rx.groups == 2:  # a process's pid and exit code
        m = rx.search(msg)
        if m is not None:
            return {"pid": int(m.group(1)), "exit_code": int(m.group(2))}
    return {}
