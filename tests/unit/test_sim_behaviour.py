"""The behaviour model: acceptance around the right mean for the settings, throughput that rises
with acceptance and gains less at large batches, load that moves usage and queue, faults that
look like SGLang's, and offline output that depends on nothing but the seed."""

import itertools
import random
import statistics
import time

import pytest

from mtptui.sim import answers, behaviour, scenario
from mtptui.sources import parallel

QWEN = ["--model-path", "Qwen/Qwen3.5-122B-A10B", "--tp", "4"]
LLAMA = ["--model-path", "meta-llama/Llama-3.1-8B-Instruct"]
BIG = ["--model-path", "Qwen/Qwen3.5-397B-A17B", "--tp", "8"]


def render(argv, duration=90, load="steady", envelope="cat"):
    argv = argv + ["--sim-startup-seconds", "2", "--sim-load", load]
    return list(scenario.render_argv(argv, duration=duration, envelope=envelope))


def decode(lines, skip=2):
    """Decode fields, without the first windows (they include the warm-up and the idle start)."""
    return [ln.truth["fields"] for ln in lines if ln.truth.get("kind") == "decode"][skip:]


def mean(lines, key):
    return statistics.mean(f[key] for f in decode(lines))


def test_nextn_accept_len_around_the_expected_means():
    three = [f["accept_len"] for f in decode(render(QWEN + scenario.nextn(3)))]
    one = [f["accept_len"] for f in decode(render(QWEN + scenario.nextn(1)))]
    assert 2.6 <= statistics.mean(three) <= 2.9
    assert 1.8 <= statistics.mean(one) <= 1.95
    assert sum(2.5 <= x <= 3.0 for x in three) >= 0.9 * len(three)
    assert all(1.0 <= x <= 4.0 for x in three) and all(1.0 <= x <= 2.0 for x in one)
    assert statistics.pstdev(three) > 0.02  # windows differ, as real traffic makes them


def test_throughput_rises_with_acceptance():
    good = render(LLAMA + ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path",
                           "jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B"])
    # An EAGLE3 head driven as EAGLE accepts nothing (reference §1.5): accept len 1.00.
    broken = render(LLAMA + ["--speculative-algorithm", "EAGLE", "--speculative-draft-model-path",
                             "jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B"])
    assert mean(broken, "accept_len") == pytest.approx(1.0)
    assert mean(good, "accept_len") > 3
    assert mean(good, "gen_throughput") > 2.5 * mean(broken, "gen_throughput")


def test_speculation_gains_less_at_large_batches():
    def gain(load):
        on = mean(render(QWEN + scenario.nextn(3), load=load), "gen_throughput")
        off = mean(render(QWEN, load=load), "gen_throughput")
        return on / off

    small, large = gain("light"), gain("steady")
    assert small > large > 1.1


def implied(argv, bs=1, context=0.0):
    cfg = scenario.config_from_argv(argv)
    return behaviour.implied_tok_s(cfg.args, cfg.preset, cfg.requested_algorithm, bs, context)


def test_a_cheap_draft_makes_each_draft_step_pay_at_batch_one():
    off, one, three = (implied(BIG + extra) for extra in ([], scenario.nextn(1), scenario.nextn(3)))
    assert one > 1.25 * off and three > 1.25 * one
    # long contexts take the gain away: at 64k tokens a request, the third step costs more than it gives
    assert implied(BIG + scenario.nextn(3), context=65536) < implied(BIG + scenario.nextn(1), context=65536)
    # a dense 8B's head (a tenth of its step): each draft step pays too, where acceptance is high
    small = [implied(["--model-path", "Qwen/Qwen3-8B"] + extra) for extra in ([], scenario.nextn(1), scenario.nextn(3))]
    assert small[1] > 1.4 * small[0] and small[2] > 1.15 * small[1]


DSV3_DP8 = ["--model-path", "deepseek-ai/DeepSeek-V3-0324", "--tp", "8", "--dp", "8", "--enable-dp-attention",
            "--ep", "8"]


@pytest.mark.parametrize("server", [DSV3_DP8, ["--model-path", "Qwen/Qwen3-8B"], BIG], ids=["dsv3-dp8", "8b", "397b"])
def test_speculation_gains_less_as_the_load_grows_and_stops_paying_past_its_graphs(server):
    """The reports' shape (behaviour.py, "Speculation under load"): mtp3's gain over off falls
    with the batch; with speculation SGLang runs at most 48 requests (its graphs' size), so with
    twice that many wanting to run the server gives fewer tokens/s than without it."""
    spec = scenario.config_from_argv(server + scenario.nextn(3)).args
    cap = spec["max_running_requests"]
    assert cap == spec["cuda_graph_max_bs"] == 48
    gains = [implied(server + scenario.nextn(3), bs) / implied(server, bs) for bs in (1, 8, 25, cap)]
    assert gains[0] > 1.5 and gains == sorted(gains, reverse=True), gains

    def served(argv, load):  # the server's tokens/s with `load` requests wanting to run
        bs = min(load, scenario.config_from_argv(argv).args["max_running_requests"])
        return bs * implied(argv, bs)

    assert served(server + scenario.nextn(3), 2 * cap) < served(server, 2 * cap)


def test_the_best_number_of_steps_falls_as_the_batch_grows():
    """Qwen3-235B's best steps were 4 at batch 1 and 2 at batch 64 (sgl PR #22246): here the
    demo's DeepSeek-V3 per DP group, 3 at batch 1 and 2 at its steady load's 25 and beyond."""
    def best(bs):
        return max((1, 2, 3, 4), key=lambda n: implied(DSV3_DP8 + scenario.nextn(n), bs))

    assert best(1) >= 3 and best(25) == best(45) == 2


def test_the_engine_runs_at_the_implied_speed():
    for extra in ([], scenario.nextn(1), scenario.nextn(3)):
        fields = decode(render(BIG + extra, duration=60, load="light"))
        per_request = sum(f["gen_throughput"] for f in fields) / sum(f["running_req"] for f in fields)
        bs = round(statistics.mean(f["running_req"] for f in fields))
        assert per_request == pytest.approx(implied(BIG + extra, bs), rel=0.06)


def test_load_moves_batch_usage_and_queue():
    model = ["--model-path", "meta-llama/Llama-3.1-70B-Instruct", "--tp", "4"]
    light = render(model, load="light", duration=60)
    heavy = render(model, load="saturate", duration=60)
    assert mean(heavy, "running_req") > 10 * mean(light, "running_req")
    assert mean(heavy, "token_usage") > 0.5 > mean(light, "token_usage")
    assert max(f["queue_req"] for f in decode(heavy)) > 0
    assert any(ln.truth.get("event") == "retract" for ln in heavy)  # the KV pool fills up
    # With speculation SGLang caps the batch at 48 and the rest queues.
    spec = render(model + scenario.nextn(3), load="saturate", duration=60)
    assert max(f["running_req"] for f in decode(spec)) == 48
    assert mean(spec, "queue_req") > 50


def test_decode_lines_every_decode_log_interval_steps():
    every40 = decode(render(QWEN + scenario.nextn(3), duration=60), skip=0)
    every20 = decode(render(QWEN + scenario.nextn(3) + ["--decode-log-interval", "20"], duration=60), skip=0)
    assert 1.7 < len(every20) / len(every40) < 2.3
    times = [ln.truth["ts"] for ln in render(QWEN + scenario.nextn(3)) if ln.truth.get("kind") == "decode"]
    gaps = [b - a for a, b in itertools.pairwise(times)][2:]
    assert 0.5 <= statistics.median(gaps) <= 2.0  # about a line a second per logging rank


def test_acceptance_collapse_fault():
    lines = render(QWEN + scenario.nextn(3) + ["--sim-fault", "accept-collapse@20"], duration=60)
    ready = next(ln.truth["ts"] for ln in lines if ln.truth.get("event") == "ready")
    before = [ln.truth["fields"]["accept_len"] for ln in lines
              if ln.truth.get("kind") == "decode" and ready + 5 < ln.truth["ts"] < ready + 20]
    after = [ln.truth["fields"]["accept_len"] for ln in lines
             if ln.truth.get("kind") == "decode" and ln.truth["ts"] > ready + 35]
    assert min(before) > 2.3 and max(after) < 1.2


def _context(fields: dict) -> float:
    """Tokens in use per running request, as a decode line gives them (a hybrid pool: #full token)."""
    return fields.get("num_token", fields.get("full_token")) / fields["running_req"]


def test_acceptance_falls_with_context():
    assert [behaviour.context_factor(c) for c in (0, 4096, 8192)] == [1.0, 1.0, 1.0]
    factors = [behaviour.context_factor(1024 * k) for k in (9, 16, 32, 64, 128)]
    assert factors == sorted(factors, reverse=True) and factors[0] < 1
    assert factors[2] == pytest.approx(1 / 1.8)  # 32k: 0.56 of each q
    lines = decode(render(QWEN + scenario.nextn(3), duration=240, load="long"))
    by_context = {}
    for f in lines:
        if f["running_req"]:
            by_context.setdefault(min(4, int(_context(f) // 16384)), []).append(f["accept_len"])
    short, long_ = statistics.mean(by_context[0]), statistics.mean(by_context[3] + by_context[4])
    assert short > 2.5 and long_ < 1.6
    assert max(_context(f) for f in lines if f["running_req"]) > 65536  # the long load reaches past 64k


def test_the_long_context_sample_finds_where_speculation_stops_paying(tmp_path):
    """Off, then NEXTN 3 steps, with contexts growing: MTP pays under 32k tokens per request and
    runs slower than without it from 32-64k on, as the model above implies; summary says so."""
    path = tmp_path / "long.log"
    scenario.write_log(str(path), scenario.render("long-context-toggle"))
    summary, counts = parallel.summarise([str(path)], jobs=1)
    off, on = summary.to_json(counts.to_json())["epochs"]
    assert off["label"] == "spec off" and on["label"].startswith("EAGLE")
    changes = {b["context"]: b["vs_baseline"] for b in on["by_context"]}
    assert list(changes) == ["<4k", "4-16k", "16-32k", "32-64k", "64k+"]
    assert changes["<4k"] > 0.3 and changes["4-16k"] > 0.3 and changes["16-32k"] > 0
    assert changes["32-64k"] < 0 and changes["64k+"] < 0
    assert on["stops_paying_from"] == "32-64k"
    accept = [b["accept_len"] for b in on["by_context"]]
    assert accept == sorted(accept, reverse=True)


@pytest.mark.parametrize("how", [["--sim-fault", "no-cuda-graph"], ["--disable-cuda-graph"]])
def test_cuda_graphs_off(how):
    off = render(QWEN + scenario.nextn(3) + how)
    on = render(QWEN + scenario.nextn(3))
    assert all(f["graph"] is False for f in decode(off))
    assert all(f["graph"] is True for f in decode(on))
    assert not any("Capture cuda graph" in ln.text for ln in off)
    assert mean(off, "gen_throughput") < 0.85 * mean(on, "gen_throughput")


def test_runtime_faults_offline():
    def events(fault, extra=()):
        lines = render(QWEN + scenario.nextn(3) + list(extra) + ["--sim-fault", fault], duration=200, load="light",
                       envelope="short-iso")  # torch's NCCL lines carry no SGLang prefix: time from journald
        return lines, [(ln.truth["event"], ln.truth["ts"]) for ln in lines if ln.truth["expect"] == "event"]

    lines, ev = events("crash@5")
    kinds = [k for k, _ in ev]
    # The scheduler's exception, the main process's sigquit, then systemd's two failure lines.
    assert kinds[-4:] == ["error", "crash", "failed", "failed"]
    assert "Scheduler hit an exception: Traceback (most recent call last):" in "\n".join(ln.text for ln in lines)
    assert any("illegal memory access" in ln.text for ln in lines)
    lines, ev = events("oom@5")
    assert "oom" in [k for k, _ in ev]
    lines, ev = events("hang@5", ["--watchdog-timeout", "30"])
    ready = next(t for k, t in ev if k == "ready")
    dog = [t for k, t in ev if k == "watchdog"]
    assert len(dog) == 4 and 34 < dog[0] - ready < 36  # every rank's watchdog, 30 s after the hang
    last_batch = max(ln.truth["ts"] for ln in lines if ln.truth["expect"] == "batch")
    assert last_batch < ready + 6
    lines, ev = events("nccl@5")
    nccl = [t for k, t in ev if k == "nccl"]
    assert nccl and 14 < nccl[0] - ready < 16


def test_startup_oom_when_the_weights_do_not_fit():
    lines = render(QWEN + ["--mem-fraction-static", "0.4"], duration=10)
    kinds = [ln.truth.get("event") for ln in lines if ln.truth["expect"] == "event"]
    assert "oom" in kinds and "ready" not in kinds and kinds[-1] == "failed"
    assert not any(ln.truth["expect"] == "batch" for ln in lines)


def test_offline_rendering_is_deterministic_and_uses_no_clock_or_global_random(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("offline rendering must not read the clock or the global random")

    first = [ln.text for ln in scenario.render("mtp-toggle-restarts", duration=150)]
    for name in ("time", "monotonic", "localtime", "perf_counter"):
        monkeypatch.setattr(time, name, boom)
    for name in ("random", "gauss", "uniform", "randint", "choice", "expovariate", "lognormvariate"):
        monkeypatch.setattr(random, name, boom)
    again = [ln.text for ln in scenario.render("mtp-toggle-restarts", duration=150)]
    assert first == again
    other_seed = [ln.text for ln in scenario.render("mtp-toggle-restarts", duration=150, seed=1)]
    assert other_seed != first


def test_generate_lines_for_benchmarks():
    lines = scenario.generate_lines(3000)
    assert len(lines) == 3000
    assert sum("Decode batch" in x for x in lines) > 100
    assert lines == scenario.generate_lines(3000)


@pytest.mark.parametrize("prompt,answer", [
    ("What is 15*23?", "345"), ("what's 15 x 23", "345"), ("Compute (2+3)*4 please", "20"),
    ("What is 7 times 6?", "42"), ("100 / 8 = ?", "12.5"), ("2^10?", "1024"),
])
def test_arithmetic_answers(prompt, answer):
    tokens, finish = answers.reply(prompt, None)
    assert answer in "".join(tokens) and finish == "stop"


def test_asked_for_the_number_only_it_says_the_number_only():
    assert answers.reply("What is 15*23? Answer with the number only.", 64) == (["345"], "stop")
    assert answers.reply("What is 15*23?", 64)[0] == ["15*23", " =", " 345."]


def test_non_arithmetic_prompts_get_the_placeholder():
    tokens, finish = answers.reply("Tell me a story", 200)
    text = "".join(tokens)
    assert "mtptui SGLang simulator" in text and len(tokens) == 200 and finish == "length"
    assert answers.arithmetic("The year 2026 and version 0.5.12") is None
