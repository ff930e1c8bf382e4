"""Every line the simulator writes, read back through mtptui's core parser, says what the simulator
meant it to say: for every log-format version x layout x speculation setting x pool kind, in
every envelope, and for every named scenario. The simulator computes its truth itself (it follows
the reference, not the parser), so a disagreement is a bug on one side or the other."""

import itertools

import pytest

from mtptui.core.parse import LineParser
from mtptui.sim import flags, scenario
from mtptui.sim.truthcheck import mismatch

VERSIONS = ["0.4.9", "0.5.3", "0.5.4", "0.5.8", "0.5.10", "0.5.12", "0.5.23"]  # 0.5.23: the dict server_args
LAYOUTS = {
    "tp1": ["--tp", "1"],
    "tp4": ["--tp", "4"],
    "dp-attention-8": ["--tp", "8", "--dp", "8", "--enable-dp-attention", "--ep", "8"],
    "dp2-tp2": ["--tp", "2", "--dp", "2"],
    "tp4-all-schedulers": ["--tp", "4", "--enable-metrics-for-all-schedulers"],
}
SPECS = {
    "off": [],
    "nextn-3": scenario.nextn(3),
    "nextn-1": scenario.nextn(1),
    "eagle-tree": ["--speculative-algorithm", "EAGLE", "--speculative-draft-model-path",
                   "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B", "--speculative-num-steps", "5",
                   "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "8"],
    "ngram": ["--speculative-algorithm", "NGRAM"],
}
POOLS = {"plain": "meta-llama/Llama-3.1-70B-Instruct", "mamba": "Qwen/Qwen3.5-122B-A10B", "swa": "openai/gpt-oss-120b"}

def check(lines) -> tuple[int, list[str]]:
    parser = LineParser()
    problems = []
    n = 0
    for line in lines:
        n += 1
        parsed = parser.parse(line.text)
        why = mismatch(line.truth, parsed)
        if why:
            problems.append(f"{why}\n      {line.text[:300]}")
    return n, problems


def combos():
    for v, lay, spec, pool in itertools.product(VERSIONS, LAYOUTS, SPECS, POOLS):
        vt = flags.vtuple(v)
        if lay == "tp4-all-schedulers" and vt < (0, 5, 4):
            continue  # the flag does not exist before 0.5.4 (see test_sim_flags)
        if spec == "ngram" and (vt < (0, 5, 3) or lay == "dp-attention-8"):
            continue  # refused by SGLang (see test_sim_flags)
        if pool == "mamba" and vt < (0, 5, 4):
            continue  # mamba pool fields arrived in 0.5.4
        yield v, lay, spec, pool


@pytest.mark.parametrize("version,layout,spec,pool", list(combos()))
def test_every_line_parses_into_what_the_simulator_meant(version, layout, spec, pool):
    argv = (["--model-path", POOLS[pool], "--sim-version", version, "--sim-hybrid", pool if pool != "plain" else "none",
             "--sim-load", "steady", "--sim-startup-seconds", "2"] + LAYOUTS[layout] + SPECS[spec])
    lines = list(scenario.render_argv(argv, duration=8, envelope="short-iso"))
    n, problems = check(lines)
    assert not problems, f"{len(problems)} of {n} lines differ:\n" + "\n".join(problems[:5])
    kinds = {(ln.truth.get("kind"), ln.truth["expect"]) for ln in lines}
    # A startup OOM (a big model on few GPUs) is a fine outcome too; otherwise batches were seen.
    if not any(ln.truth.get("event") == "oom" for ln in lines):
        assert ("decode", "batch") in kinds and ("prefill", "batch") in kinds
        decode = [ln.truth["fields"] for ln in lines if ln.truth.get("kind") == "decode"]
        assert all(("accept_len" in f) == (spec != "off") for f in decode)
        assert all(("accept_rate" in f) == (spec != "off" and flags.vtuple(version) >= (0, 5, 4)) for f in decode)


@pytest.mark.parametrize("name", list(scenario.SCENARIOS))
@pytest.mark.parametrize("envelope", ["short-iso", "json", "cat"])
def test_named_scenarios_parse_in_every_envelope(name, envelope):
    lines = list(scenario.render(name, envelope=envelope, duration=100))
    n, problems = check(lines)
    assert n > 40
    assert not problems, f"{len(problems)} of {n} lines differ:\n" + "\n".join(problems[:5])


def test_layout_decides_which_ranks_log():
    def ranks(extra, version="0.5.12"):
        argv = ["--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--sim-version", version, "--sim-load", "steady",
                "--sim-startup-seconds", "1"] + extra
        return {ln.truth["rank"] for ln in scenario.render_argv(argv, duration=4, envelope="cat")
                if ln.truth["expect"] == "batch"}

    assert ranks(["--tp", "4"]) == {"TP0"}
    assert ranks(["--tp", "1"]) == {""}
    assert ranks(["--tp", "8", "--dp", "8", "--enable-dp-attention", "--ep", "8"]) == {
        f"DP{i} TP{i} EP{i}" for i in range(8)}
    assert ranks(["--tp", "8", "--dp", "2", "--enable-dp-attention"]) == {"DP0 TP0", "DP1 TP4"}
    assert ranks(["--tp", "2", "--dp", "2"]) == {"DP0 TP0", "DP1 TP0"}
    # 0.5.4-0.5.8 with --enable-metrics-for-all-schedulers: every TP rank logs; 0.5.10+: only TP0.
    assert ranks(["--tp", "4", "--enable-metrics-for-all-schedulers"], "0.5.8") == {"TP0", "TP1", "TP2", "TP3"}
    assert ranks(["--tp", "4", "--enable-metrics-for-all-schedulers"], "0.5.10") == {"TP0"}


def test_startup_lines_come_from_every_rank_in_order():
    argv = ["--model-path", "Qwen/Qwen3.5-122B-A10B", "--tp", "4", "--sim-startup-seconds", "3"] + scenario.nextn(3)
    msgs = [ln.truth["message"] for ln in scenario.render_argv(argv, duration=2, envelope="cat", systemd=False)]
    text = "\n".join(msgs)

    def first(s):
        return next(i for i, m in enumerate(msgs) if s in m)

    order = ["mtptui SGLang simulator (not a real server)", "server_args=ServerArgs(", "Init torch distributed begin.",
             "Load weight begin.", "type=Qwen3_5MoeForConditionalGeneration", "Mamba Cache is allocated.",
             "KV Cache is allocated.", "Capture cuda graph begin.", "Capture cuda graph end.",
             "type=Qwen3_5MoeForCausalLMMTP", "Capture draft cuda graph begin.", "Capture draft extend cuda graph end.",
             "max_total_num_tokens=", "Uvicorn running on", "Prefill batch", "POST /generate",
             "The server is fired up and ready to roll!"]
    idx = [first(s) for s in order]
    assert idx == sorted(idx), list(zip(order, idx))
    for r in range(4):
        assert text.count(f"TP{r}] Load weight begin.") == 2  # the target, then the draft model
        assert f"TP{r}] Capture draft cuda graph end." in text
    assert text.count("max_total_num_tokens=") == 1


@pytest.mark.parametrize("envelope", ["short-iso", "json", "cat"])
def test_vllm_0_32_lines_say_what_they_mean(envelope):
    from mtptui.sim import vllm

    lines = vllm.render(envelope=envelope, host="h", unit="vllm.service", unit_description="vLLM", seed=3,
                        t0=scenario.T0, serve=0, version="0.32.0", pattern=[4, 4, 1, 0, 0, 3], interval=2.0)
    n, problems = check(lines)
    assert n > 20 and not problems, problems[:5]
