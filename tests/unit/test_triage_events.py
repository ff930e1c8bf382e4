"""Triage's trouble lines from the code that prints them (issue 43): a process that died (`crash`)
apart from a logged `error`, CUDA's OOM in its other words, torch's NCCL watchdog family, a
teardown or a fault handler's dump as one event, uvicorn's start behind vLLM's decoration, and how
a run that crashed ends, alerts and is advised. Each line is the template of the version and file
cited, its placeholders filled as the code fills them."""

from __future__ import annotations

import pytest

from mtptui.core import advisor, alerts
from mtptui.core.epochs import CRASHED, STOPPED, EpochTracker
from mtptui.core.ingest import Ingest
from mtptui.core.parse import LineParser
from mtptui.core.parse.events import classify
from mtptui.core.records import EVENT_KINDS, Event
from mtptui.core.store import Store
from mtptui.core.summary import Summary

# (message, kind, where the code prints it)
LINES = [
    # a process that died: crash, not error
    ("Engine core proc EngineCore_DP0 died unexpectedly, shutting down client.", "crash",
     "vllm 0.10-0.11 v1/engine/core_client.py (MPClient's monitor_engine_cores)"),
    ("Engine core process EngineCore_DP0 died unexpectedly.", "crash", "vllm 0.32 v1/utils.py:592 (RuntimeError)"),
    ("EngineCore encountered a fatal error.", "crash", "vllm 0.9.2 and 0.32 v1/engine/core.py (logger.exception)"),
    ("Worker proc VllmWorker-3 died unexpectedly (exit code: -9), shutting down executor.", "crash",
     "vllm 0.32 v1/executor/multiproc_executor.py:316"),
    ("Worker VllmWorkerProcess pid 41820 died, exit code: -6", "crash",
     "vllm 0.8.1 executor/multiproc_worker_utils.py:120"),
    ("ChildProcessError: worker died", "crash", "vllm 0.8.1 executor/multiproc_worker_utils.py:179"),
    ("AsyncLLM output_handler failed.", "crash", "vllm 0.9.2 v1/engine/async_llm.py:419, 0.32 :906"),
    ("RuntimeError: Process EngineCore_DP0 (PID: 41820) died with exit code -9", "crash", "vllm 0.9.2 v1/utils.py:233"),
    ("Scheduler or DataParallelController 41820 terminated with 255", "crash",
     "sglang 0.5.7 srt/managers/data_parallel_controller.py:611, srt/entrypoints/engine.py:945"),
    ("SIGQUIT received. signum=None, frame=None. It usually means one child failed.", "crash",
     "sglang 0.5.7 srt/managers/tokenizer_manager.py:2274"),
    ("Received sigquit from a child process. It usually means the child failed.", "crash",
     "sglang 0.5.7 srt/entrypoints/engine.py:805"),
    ("Exception in ModelTpServer:", "crash", "sglang 0.1.x-0.2 srt/managers/controller/tp_worker.py"),
    ("Rank 0 scheduler is dead. Please check if there are relevant logs.", "crash",
     "sglang 0.5.x srt/entrypoints/http_server.py (health check)"),
    ("Got fatal signal from worker processes, shutting down. See stack trace above for root cause issue.", "crash",
     "vllm 0.9.2 v1/engine/core_client.py"),
    ("AsyncLLMEngine is already dead, terminating server process", "crash", "vllm 0.8.1 entrypoints/launcher.py"),
    ("Killed", "crash", "the shell's word for a child the kernel (OOM killer) or kill -9 ended"),
    ("Fatal Python error: Segmentation fault", "crash", "CPython 3.10-3.13 Modules/faulthandler.c"),
    ("Segmentation fault (core dumped)", "crash", "bash's report of a child that died of SIGSEGV"),
    ("terminate called after throwing an instance of 'c10::Error'", "crash", "libstdc++'s verbose terminate handler"),
    # CUDA out of memory in its other words
    ("RuntimeError: CUDA error: out of memory", "oom",
     "torch c10/cuda/CUDAException.h (C10_CUDA_CHECK: `CUDA error: ` + cudaGetErrorString(cudaErrorMemoryAllocation))"),
    ("RuntimeError: CUDA driver error: out of memory", "oom",
     "torch aten/src/ATen/cuda/Exceptions.h (AT_CUDA_DRIVER_CHECK: `CUDA driver error: ` + cuGetErrorString)"),
    ("Prefill out of memory. Try to lower your batch size.", "oom", "sglang 0.4.3 srt/managers/schedule_batch.py:666"),
    ("RuntimeError: alloc_req_slots runs out of memory. Please set a smaller number for `--max-running-requests`. "
     "req_to_token_pool.available_size()=0, num_reqs=8, ", "oom", "sglang 0.5.7 srt/mem_cache/common.py:322"),
    ("ValueError: The model's max seq len (131072) is larger than the maximum number of tokens that can be stored "
     "in KV cache (65536). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing "
     "the engine.", "oom", "vllm 0.8.1 worker/hpu_worker.py:454 (and v1/core/kv_cache_utils.py)"),
    ("ValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is "
     "needed, which is larger than the available KV cache memory (8.50 GiB). Based on the available memory, the "
     "estimated maximum model length is 69632. Try increasing `gpu_memory_utilization` or decreasing "
     "`max_model_len` when initializing the engine.", "oom", "vllm 0.9.2 v1/core/kv_cache_utils.py:572"),
    ("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.96 GiB total capacity; 58.10 GiB "
     "already allocated; 58.10 GiB current active; 1.02 GiB free)", "oom",
     "torch_npu (Ascend, SGLang's NPU backend) torch_npu/csrc/core/npu/NPUCachingAllocator.cpp"),
    ("ValueError: Not enough host memory available. Requesting 400 GB but only have 120 GB free. Please reduce the "
     "size of the hierarchical cache.", "oom", "sglang 0.4.10 srt/mem_cache/memory_pool_host.py:75"),
    # torch's NCCL watchdog family (torch 2.4-2.7 torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp)
    ("[rank0]:[E709 17:05:39.081662161 ProcessGroupNCCL.cpp:684] [Rank 0] Some NCCL operations have failed or timed "
     "out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
     "corrupted/incomplete data.", "nccl", "WorkNCCL::handleException"),
    ("[rank0]:[E709 17:05:39.081690629 ProcessGroupNCCL.cpp:698] [Rank 0] To avoid data inconsistency, we are "
     "taking the entire process down.", "nccl", "WorkNCCL::handleException"),
    ("[E ProcessGroupNCCL.cpp:461] To avoid data inconsistency, we are taking the entire process down.", "nccl",
     "torch 1.13-2.2 (before the rank prefix)"),
    ("[rank3]:[E1111 17:10:53.123456789 ProcessGroupNCCL.cpp:1423] [PG ID 0 PG GUID 0(default_pg) Rank 3] "
     "Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=2",
     "nccl", "heartbeatMonitor"),
    ("[rank1]:[F1111 17:10:53.123456789 ProcessGroupNCCL.cpp:1556] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
     "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued "
     "collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog",
     "nccl", "heartbeatMonitor (its fatal line)"),
    ("[rank0]:[E709 17:05:38.482326987 ProcessGroupNCCL.cpp:1536] [PG ID 0 PG GUID 0(default_pg) Rank 0] "
     "ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1", "nccl", "dumpDebuggingInfo"),
    ("RuntimeError: Barrier timed out after 300 seconds", "nccl", "vllm 0.10+ distributed/utils.py (stateless barrier)"),
    # Kubernetes' kubelet (1.2x pkg/kubelet/prober/prober.go, kuberuntime/kuberuntime_manager.go), as
    # `kubectl get events` and its journal say them
    ('Liveness probe failed: Get "http://10.0.0.5:30000/health": context deadline exceeded', "watchdog",
     "prober.go: fmt.Sprintf(\"%s probe failed: %s\", probeType, output)"),
    ('I0309 16:03:25.123456    1234 prober.go:107] "Probe failed" probeType="Liveness" pod="default/sglang-0" '
     'containerName="sglang" probeResult="failure"', "watchdog", "kubelet's journal, prober.go"),
    ("Container sglang failed liveness probe, will be restarted", "auto_restart", "kuberuntime_manager.go"),
    ("Back-off restarting failed container sglang in pod sglang-0_default(8f1c2a)", "auto_restart",
     "kuberuntime_manager.go (CrashLoopBackOff)"),
    ("      Reason:       OOMKilled", "oom", "kubectl describe pod's Last State of a container the kernel killed"),
]


@pytest.mark.parametrize("msg,kind,where", LINES, ids=[f"{k}-{i}" for i, (_, k, _) in enumerate(LINES)])
def test_a_trouble_line_from_the_code_that_prints_it(msg, kind, where):
    hit = classify(msg)
    assert hit is not None and hit[0] == kind, (where, msg, hit)


@pytest.mark.parametrize("msg", [
    # torch's warnings are no trouble: the process group not destroyed at exit (ProcessGroupNCCL.cpp)
    "[rank0]:[W709 17:05:40.1 ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been destroyed "
    "before we destruct ProcessGroupNCCL. On normal program exit, the application should call "
    "destroy_process_group to ensure that any pending NCCL operations have finished in this process.",
    "GPU KV cache size: 1,234,560 tokens",  # vllm v1/core/kv_cache_utils.py: an INFO line with `KV cache`
    "Killed 3 requests",
    # SGLang's own, not systemd's `Failed to start UNIT.` (0.5.2x srt/entrypoints/grpc_server.py)
    "Failed to start profile",
    "Failed to start HTTP sidecar server: [Errno 98] Address in use. Continuing without metrics/profile endpoints.",
])
def test_a_line_like_them_is_none(msg):
    assert classify(msg) is None


def test_crash_is_a_kind_of_its_own():
    assert "crash" in EVENT_KINDS and EVENT_KINDS.index("crash") < EVENT_KINDS.index("error")


def _parse(lines: list[str]):
    parser = LineParser()
    return [parser.parse(raw) for raw in lines]


def test_an_nccl_teardown_is_one_event_per_rank():
    """torch 2.6's teardown of a rank (ProcessGroupNCCL.cpp, c10/util/Exception.cpp, libstdc++): a
    dozen lines, one event whose text is its first line's message; another rank's is its own."""
    r0 = "[rank0]:[E709 17:05:38.482326987 ProcessGroupNCCL.cpp:"
    lines = [r0 + "632] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=20585, "
                  "OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600000 milliseconds before timing out.",
             r0 + "684] [Rank 0] Some NCCL operations have failed or timed out.",
             r0 + "698] [Rank 0] To avoid data inconsistency, we are taking the entire process down.",
             "Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:635 "
             "(most recent call first):",
             "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 (0x7fc7 in libc10.so)",
             "",
             "terminate called after throwing an instance of 'c10::DistBackendError'",
             "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 0] Process group watchdog thread terminated with "
             "exception: [Rank 0] Watchdog caught collective operation timeout",
             "[rank1]:[E709 17:05:38.5 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation "
             "timeout: WorkNCCL(SeqNum=20585)",
             "[2026-07-09 17:05:40] Received sigquit from a child process. It usually means the child failed."]
    out = _parse(lines)
    assert [p.outcome for p in out] == ["event"] + ["other"] * 7 + ["event", "event"]
    first = out[0].record
    assert first.kind == "nccl" and first.text.startswith("[Rank 0] Watchdog caught collective operation timeout")
    assert len(first.data["frames"]) == 6
    assert (out[8].record.kind, out[9].record.kind) == ("nccl", "crash")


def test_a_fault_handlers_dump_is_one_event():
    """CPython's faulthandler (3.10-3.13 Modules/faulthandler.c): the error, its threads and frames,
    the extension modules; the line after it is read again."""
    lines = ["Fatal Python error: Segmentation fault", "",
             "Thread 0x00007f8a1b7fe640 (most recent call first):",
             '  File "/usr/lib/python3.10/threading.py", line 324 in wait', "",
             "Current thread 0x00007f8b9f2a8740 (most recent call first):",
             '  File "/opt/sglang/srt/managers/scheduler.py", line 2950 in run_scheduler_process', "",
             "Extension modules: numpy.core._multiarray_umath, torch._C (total: 80)",
             "[2026-07-09 17:05:40] Received sigquit from a child process. It usually means the child failed."]
    out = _parse(lines)
    assert [p.outcome for p in out] == ["event"] + ["other"] * 8 + ["event"]
    assert out[0].record.kind == "crash" and out[0].record.text == "Fatal Python error: Segmentation fault"
    assert any("scheduler.py" in f for f in out[0].record.data["frames"])


@pytest.mark.parametrize("before", ["", "vllm-1  | ", "Mar 09 16:03:25 gpu1 vllm[66]: "])
def test_uvicorns_start_behind_vllms_api_server_is_ready(before):
    """vLLM 0.11+ decorates its API server's lines, uvicorn's among them (`(APIServer pid=12) INFO:
    Application startup complete.`): ready, without its start in the log, its text uvicorn's."""
    p = LineParser().parse(before + "(APIServer pid=12) INFO:     Application startup complete.")
    assert p.outcome == "event" and p.record.kind == "ready" and p.record.text == "Application startup complete."


def _run(events: list[Event]):
    t = EpochTracker()
    for ev in events:
        t.add_event(ev, ev.ts)
    return t.epochs["h"]


def _ev(kind, ts, text="", **data):
    return Event(kind=kind, ts=ts, host="h", text=text, data=data)


def test_a_run_whose_process_died_crashed_though_a_stop_followed():
    (run,) = _run([_ev("spec_config", 0, algorithm=None), _ev("ready", 5),
                   _ev("crash", 50, "Engine core proc EngineCore_DP0 died unexpectedly, shutting down client."),
                   _ev("stopping", 51), _ev("stopped", 52)])
    ended = run.ending(last=True)
    assert ended["how"] == CRASHED and ended["error"]["kind"] == "crash"
    assert ended["text"].startswith("crashed: process died: Engine core proc")


def test_the_cause_before_the_death_names_the_crash():
    (run,) = _run([_ev("spec_config", 0, algorithm=None), _ev("ready", 5),
                   _ev("error", 40, "torch.OutOfMemoryError: CUDA out of memory.", exception="torch.OutOfMemoryError: "
                       "CUDA out of memory."),
                   _ev("crash", 41, "Received sigquit from a child process. It usually means the child failed.")])
    ended = run.ending(last=True)
    assert ended["how"] == CRASHED and ended["error"]["kind"] == "oom"


def test_a_death_after_the_stop_was_asked_is_the_stop():
    (run,) = _run([_ev("spec_config", 0, algorithm=None), _ev("ready", 5), _ev("stopping", 50),
                   _ev("crash", 51, "Killed")])
    assert run.ending(last=True)["how"] == STOPPED


def test_a_death_after_an_error_the_server_got_over_is_the_crash():
    (run,) = _run([_ev("spec_config", 0, algorithm=None), _ev("error", 3, "Health check failed. ..."), _ev("ready", 5),
                   _ev("crash", 60, "Killed")])
    ended = run.ending(last=True)
    assert ended["how"] == CRASHED and ended["error"] == {"kind": "crash", "ts": 60, "text": "Killed"}


SGLANG_RUN = [
    "[2026-03-09 16:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=1, speculative_algorithm=None)",
    *(f"[2026-03-09 16:00:{10 + i:02d}] Decode batch, #running-req: 4, #token: 900, token usage: 0.05, "
      f"gen throughput (token/s): 120.00, #queue-req: 0, " for i in range(6)),
    "[2026-03-09 16:00:20] The server is fired up and ready to roll!",
    *(f"[2026-03-09 16:01:{i:02d}] Decode batch, #running-req: 4, #token: 900, token usage: 0.05, "
      f"gen throughput (token/s): 120.00, #queue-req: 0, " for i in range(0, 59, 2)),
    "[2026-03-09 16:02:00] Scheduler or DataParallelController 41820 terminated with 255",
]


def test_the_dashboard_alerts_and_advises_on_a_dead_server():
    store = Store(capacity=64, clock=lambda: 0.0)
    Ingest(store).feed_many(SGLANG_RUN)
    store.fold()
    host = next(iter(store.epochs))
    died_at = store.epochs[host][-1].crash.ts
    found = [a for a in alerts.evaluate(store, host, died_at + 5) if a.kind == "crashed"]
    assert len(found) == 1 and found[0].severity == alerts.ERROR and "terminated with 255" in found[0].title
    assert not [a for a in alerts.evaluate(store, host, died_at - 5) if a.kind == "crashed"]
    advice = advisor.advise(store, host, died_at + 5)
    assert [a.rule for a in advice] == ["crashed"]


def test_summary_says_the_run_crashed_and_advises_so():
    s = Summary()
    ingest = Ingest(s)
    ingest.feed_many(SGLANG_RUN)
    doc = s.to_json(ingest.counts.to_json())
    (run,) = doc["epochs"]
    assert run["ended"]["how"] == CRASHED and run["ended"]["error"]["kind"] == "crash"
    assert [e["kind"] for e in doc["events"]] == ["spec_config", "ready", "crash"]
    assert [a.rule for a in advisor.advise_epochs(doc["epochs"])] == ["crashed"]  # summary's advice
