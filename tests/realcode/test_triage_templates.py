"""Every trouble line the real code can print has a kind, or is none on purpose (issue 43).

From every SGLang and vLLM release this tier fetches, every `logger.error/exception/critical/fatal`
template and each `raise ...Error("...")` whose words speak of memory, NCCL or a death (it reaches
the log as its traceback's last line) is read (triage_templates.py) and classified as mtptui reads
a line (events.classify): each must get a kind, or match an entry of NONE, which says why that line
is no event of its own. KINDS holds the kind of the lines the triage is about. The test names how
many templates it classified.

The templates are cached per release: a run after the first reads no source (the first downloads
each release once, as the tier's other tests do)."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
import triage_templates
from test_real_sglang import VERSIONS as SGLANG_VERSIONS
from test_real_vllm import VERSIONS as VLLM_VERSIONS

from mtptui.core.parse.events import classify

pytestmark = pytest.mark.realcode

# Why a template is no event of its own: (where, a regex over `file` or `text`, the reason). The first
# entry that matches says it; `file` entries first, by what a part of the code is for.
REQUEST = "one request's failure, answered to its client: the server serves on"
NOT_SERVING = ("not the serving process's log: tests, benchmarks, the frontend language, the diffusion server, kernel "
               "builds")
AROUND = "said around a death or a stop whose own line is the event (the crash, systemd's stop)"
TRANSFER = ("KV transfer between instances or an external KV store: that transfer or cache entry fails, the server "
            "serves on (PD disaggregation, HiCache, LMCache, Mooncake)")
CHECK = ("a check of settings or code whose words name memory, NCCL or a death but mean none: its traceback is "
         "the event (error)")
NONE: list[tuple[str, str, str]] = [
    # not the LLM server's process
    ("file", r"^sglang/(?:test|lang|bench|multimodal_gen|jit_kernel|eval|check_env|launch_server)|^sglang/srt/"
             r"(?:bench|test)|^vllm/(?:benchmarks|scripts|entrypoints/cli/benchmark)",
     NOT_SERVING),
    # the settings' own checks at start
    ("file", r"^vllm/config/|^vllm/engine/arg_utils|^sglang/srt/server_args|^sglang/srt/configs/", CHECK),
    # a request's own failure
    ("file", r"/(?:function_call|tool_parsers?|reasoning|parser|constrained|structured_output|jinja|conversation"
             r"|multimodal|multimodal_processor|openai_api|grammar)s?(?:/|\.py)|^vllm/entrypoints/(?:openai|"
             r"serve|pooling|chat_utils|context|score|responses|anthropic|harmony|renderer|sagemaker|tool)"
             r"|^sglang/srt/entrypoints/(?:openai|anthropic|ollama|harmony)|sglang/srt/managers/(?:io_struct|"
             r"multimodal|mm_utils|template_manager|async_mm)|vllm/multimodal/|vllm/v1/sample/|vllm/sampling",
     REQUEST),
    # KV transfer between instances, external KV storage
    ("file", r"disaggregation|kv_transfer|mem_cache/(?:storage|hicache|hi_|mooncake|lmcache|nixl|eic|hf3fs|"
             r"cpp_radix|multimodal|sparsity)|/connector/|mooncake|nixl|lmcache|weight_cache|kv_offload|offload|"
             r"ec_transfer|mem_cache/memory_pool_host|mem_cache/hiradix|mem_cache/.*storage",
     TRANSFER),
    # weights and adapters, loaded at start (a failure raises: its traceback is the event) or asked for later
    ("file", r"model_loader|/lora/|weight_sync|weight_update|update_weights|remote_instance|checkpoint_engine"
             r"|model_executor/model_weight|/loader/|/ray/",
     "loading or updating weights or adapters: at start a failure raises (its traceback is the event); later "
     "it is an operator's call, answered to them"),
    # observability and the process's own tooling
    ("file", r"tracing|observability|metrics|usage_lib|dump_input|profil|debug_utils|/otel|crash_dump|"
             r"request_logger|utils/gc_utils|utils/argparse|log_utils|logging_utils|/plugins|expert_distribution"
             r"|eplb|elastic|/dumper|fault_inject",
     "the server's own observability or tooling (metrics, traces, profiles, dumps, plugins): it fails, the "
     "serving goes on"),
    # said around a death or a stop whose own line is the event
    ("text", r"before crash|crash_dump|[Dd]umping requests|[Dd]umped \d|custom SIGQUIT handler|Exit code: |"
             r"shutting down fallback|[Ss]hutdown|shut down|cleanup|[Cc]lean up|Force exiting|exit\(",
     AROUND),
    # checks of settings and code: a raise with trouble's words but none of its meaning
    ("text", r"^(?:ValueError|TypeError|NotImplementedError|AssertionError|KeyError|AttributeError): .*(?:only "
             r"supports?|[Ii]nvalid|must be|should be|not supported|is required|Expected|should not|cannot|"
             r"not found|No memory should|unbalanced|attention-free|No GPU memory values|shift timeout|"
             r"didn't finish loading|multi-modal processor on)|^RuntimeError:"
             r" (?:Test crash|cannot|Decode status not found)|^FileNotFoundError|^\w+Error: .*(?:env|environment)",
     CHECK),
    # hardware and library detection at start, with a fallback
    ("text", r"(?:NVLink|XGMI|NUMA|hop XGMI|thread-binding|P2P).*(?:detection|failed|binding)|Failed to load NCCL "
             r"library|is not supported on|not installed|Please install|install it|cupy is not|Triton|flashinfer|"
             r"FlashInfer|deep_?gemm|DeepGEMM|cuda graph|CUDA graph|torch.compile|compile",
     "hardware, library or kernel detection at start: it falls back or stops the start (whose traceback or "
     "systemd's failure is the event)"),
    # an operator's or a router's call, answered to the caller
    ("text", r"[Rr]pc|Invocation of|GetLoads|abort|Abort|profile|Profile|[Ff]lush|[Pp]ause|[Rr]esume|[Ss]leep|[Ww]ake|register|"
             r"[Rr]outer|[Ss]lots? |expert|LoRA|lora|adapter|update_|[Ss]ession|release_memory|"
             r"resume_memory|[Ww]eight|checkpoint",
     "an operator's, a router's or an RL framework's call to the server, answered to its caller"),
    # what a crash or a hang has its own event for; diagnostics on the way
    ("text", r"^[^A-Za-z]*$|debug info|[Pp]yspy|py-spy|coredump|uploaded",
     "no words of its own, or a diagnostic dump around a hang or a crash whose own line is the event"),
    # a feature's setup that fails at start
    ("text", r"zbal|ZBAL|Elastic EP|HiCache|storage|VMM|hiradix|mamba_cache|unified_cache|attach_|sanity check|model info|"
             r"projector|Vocabulary path|file list|start methods|Capturer|workspace allocation|coroutine raised|"
             r"host restore|D2H|callback|RDT|rdt-|omni|accepting a connection|awaiting cancelled|Unsupported|JIT|"
             r"warmup|fallback|MiniMax|amdsmi|CRIU|\[FT\] Instruction|hook|packages",
     "a feature's own setup or helper (an accelerator's allocator, HiCache, a hybrid cache, a model's extras) "
     "failing: at start its traceback or the start's failure is the event, later the feature is off"),
    # a request's failure, by its words
    ("text", r"[Rr]equest|\brid\b|rid=|req |reqs|prompt|[Tt]okeniz|[Dd]etokeniz|[Gg]enerate|[Ee]mbed|"
             r"[Cc]ompletion|[Ss]tream|response|[Cc]hat|image|[Vv]ideo|audio|[Gg]rammar|FSM|schema|[Jj]son|JSON"
             r"|tool|[Pp]ars|[Ii]nput|output for|[Ss]ampl|logprob|[Pp]reprocess|item |finish",
     REQUEST),
    # a component's own error that the server goes on after
    ("text", r"[Ff]ailed to|[Ee]rror (?:in|during|while|when|processing|getting|with)|[Ee]rror: |[Ee]xception "
             r"(?:in|while|occurred|during|when)|[Cc]ould not|[Cc]annot|[Uu]nable to|[Tt]imeout waiting|"
             r"[Uu]nexpected|[Uu]nknown|[Ii]nvalid|not (?:found|available|exist|ready|registered|supported)|"
             r"[Mm]ismatch|[Ee]xpected|should never happen|[Pp]lease (?:file|report)|[Ss]kipp|[Ii]gnor|"
             r"[Rr]etry|[Rr]etrying|[Ww]arning|WARNING",
     "a component's own error that the server goes on after (a task, a connection, a helper thread): "
     "logged, no run ends by it"),
]
# Words that say a process died or memory ran out: a template with them is none only for these reasons
# (the broad reasons above, by a request's or a component's words, must not hide a death or an OOM).
STRONG = re.compile(r"out of memory|[Nn]ot enough (?:\w+ )?memory|\bOOM\b|died|\bdead\b|NCCL error|[Ss]egmentation "
                    r"fault|Killed|crashed")
STRONG_NONE = (NOT_SERVING, AROUND, TRANSFER, CHECK)
# The lines the triage is about, by their template as the code writes it: the kind each must get.
KINDS = {
    "Scheduler or DataParallelController 1 terminated with 1": "crash",
    "Received sigquit from a child process. It usually means the child failed.": "crash",
    "EngineCore encountered a fatal error.": "crash",
    "EngineCore failed to start.": "crash",
    "AsyncLLM output_handler failed.": "crash",
    "Worker proc 1 died unexpectedly, shutting down executor.": "crash",
    "Worker 1 pid 1 died, exit code: 1": "crash",
    "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.": "oom",
    "Scheduler hit an exception: 1": "error",
}


def _none_reason(t: dict) -> str | None:
    for where, rx, reason in NONE:
        value = t["file"] if where == "file" else t["text"]
        if re.search(rx, value):
            return reason
    return None


def _all(need) -> dict[str, list[tuple[str, dict]]]:
    """template text (None: no words of its own) -> (release, where) of each that prints it."""
    jobs = [("sglang", v) for v in SGLANG_VERSIONS] + [("vllm", v) for v in VLLM_VERSIONS]
    with ThreadPoolExecutor(4) as pool:  # downloads, the first time; the cache's JSON after
        found = list(pool.map(lambda j: (j, getattr(triage_templates, j[0])(j[1], need)), jobs))
    out: dict = {}
    for (package, version), templates in found:
        for t in templates:
            out.setdefault(t["text"], []).append((f"{package} {version}", t))
    return out


def test_every_trouble_template_has_a_kind_or_a_reason(need):
    by_text = _all(need)
    kinds: dict[str, int] = {}
    reasons: dict[str, int] = {}
    missing = []
    for text, where in by_text.items():
        release, t = where[0]
        if text is None:
            reasons["no words of its own"] = reasons.get("no words of its own", 0) + 1
            continue
        hit = classify(text)
        if hit is not None:
            kinds[hit[0]] = kinds.get(hit[0], 0) + 1
            continue
        reason = _none_reason(t)
        if reason is None or (STRONG.search(text) and reason not in STRONG_NONE):
            missing.append(f"{release} {t['file']}:{t['line']} ({t['level']}): {text[:200]!r}"
                           + (f" (none: {reason[:40]}...?)" if reason else ""))
        else:
            reasons[reason] = reasons.get(reason, 0) + 1
    assert not missing, f"{len(missing)} templates with no kind and no reason:\n" + "\n".join(sorted(missing))
    for text, kind in KINDS.items():
        assert text in by_text, f"no fetched release prints {text!r} any more"
        hit = classify(text)
        assert hit is not None and hit[0] == kind, (text, hit)
    classified = sum(kinds.values())
    print(f"\n{len(by_text)} distinct trouble templates of {len(SGLANG_VERSIONS)} SGLang and {len(VLLM_VERSIONS)} "
          f"vLLM releases: {classified} get a kind ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}), "
          f"{sum(reasons.values())} are none, with the reason")
    assert classified >= 80
