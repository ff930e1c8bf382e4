"""vLLM's logs for the `vllm-eagle` sample (reference §6): a short V1 startup, then every 5 s the
`Engine 000:` throughput line and the current `SpecDecoding metrics:` line, with the per-position
acceptance rates. Offline only; the numbers come from the same behaviour model as SGLang's
(EAGLE3 chain, step time, closed-loop load), summed over each 5-second interval.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterator

from mtptui.sim import behaviour, models
from mtptui.sim.journal import Journal
from mtptui.sim.msg import batch, event, other

INTERVAL = 5.0
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
DRAFT = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
K = 3  # num_speculative_tokens


def _stamp(t: float) -> str:
    return time.strftime("%m-%d %H:%M:%S", time.gmtime(t))


def render(*, envelope: str, host: str, unit: str, unit_description: str, seed: int, t0: float,
           serve: float) -> Iterator:
    from mtptui.sim.scenario import JOURNAL_DELAY, Line

    rng = random.Random(f"{seed}:vllm")
    jr = Journal(envelope, host, unit, unit_description, rng, t_boot=t0 - 86400)
    env_host = None if envelope == "cat" else host
    api, core = rng.randint(2000, 30000), rng.randint(30001, 60000)
    jr.new_invocation(f"/usr/bin/python3 /usr/local/bin/vllm serve {MODEL} --speculative-config ...")

    def ts(t: float) -> float | None:
        return t + JOURNAL_DELAY if envelope != "cat" else t

    def line(t: float, proc: str, pid: int, where: str, msg: str, truth: dict, level: str = "INFO") -> Line:
        text = f"({proc} pid={pid}) {level} {_stamp(t)} [{where}] {msg}"
        return Line(jr.server(t + JOURNAL_DELAY, text, api, "stderr", ident="vllm"),
                    dict(truth, ts=ts(t), host=env_host, message=text))

    started = f"Started {unit} - {unit_description}."
    yield Line(jr.systemd(t0, started), dict(event("started"), ts=t0 + JOURNAL_DELAY if envelope != "cat" else None,
                                             host=env_host, message=started))
    t = t0 + 3.1
    yield line(t, "APIServer", api, "api_server.py:1896", "vLLM API server version 0.10.2", event("starting"))
    args = (f"non-default args: {{'model_tag': '{MODEL}', 'host': '0.0.0.0', 'model': '{MODEL}', "
            f"'speculative_config': {{'method': 'eagle3', 'model': '{DRAFT}', 'num_speculative_tokens': {K}}}}}")
    settings = {"model_path": MODEL, "algorithm": "eagle3", "draft_model_path": DRAFT, "num_steps": K}
    yield line(t + 0.01, "APIServer", api, "utils.py:328", args, event("spec_config", settings))
    t += 9.0
    yield line(t, "EngineCore_DP0", core, "gpu_model_runner.py:2007", f"Starting to load model {MODEL}...", other())
    t += 14.0
    yield line(t, "EngineCore_DP0", core, "gpu_model_runner.py:2039", "Model loading took 15.88 GiB and 13.72 seconds", other())
    t += 9.0
    tokens = 412_560
    yield line(t, "EngineCore_DP0", core, "kv_cache_utils.py:864", f"GPU KV cache size: {tokens:,} tokens", other())
    t += 11.0
    yield line(t, "EngineCore_DP0", core, "gpu_model_runner.py:3118", "Graph capturing finished in 11 secs, took 0.62 GiB", other())
    t += 1.5
    for msg in (f"Started server process [{api}]", "Waiting for application startup.", "Application startup complete."):
        text = f"(APIServer pid={api}) INFO:     {msg}"
        truth = event("ready", {"by": "uvicorn"}) if msg.startswith("Application") else other()
        yield Line(jr.server(t + JOURNAL_DELAY, text, api, ident="vllm"), dict(truth, ts=ts(t) if envelope != "cat" else None, host=env_host, message=text))  # no stamp of its own
        t += 0.01

    # Serving: one Llama-3.1-8B on one GPU, EAGLE3 with 3 speculative tokens, steady load.
    preset = models.preset_for(MODEL)
    served = {"tp_size": 1, "enable_dp_attention": False, "speculative_algorithm": "EAGLE3",
              "speculative_num_steps": K, "speculative_eagle_topk": 1, "speculative_num_draft_tokens": K + 1,
              "cuda_graph_max_bs": 512, "disable_cuda_graph": False, "speculative_draft_model_path": DRAFT,
              "model_path": MODEL}
    chain = behaviour.acceptance_chain(served, preset, "EAGLE3")
    timing = behaviour.Timing(served, preset, graphs_broken=False)
    difficulty = behaviour.Difficulty(rng)
    t_ready = t
    hit_rate = 0.0
    end = t_ready + serve
    t = t_ready + INTERVAL
    while t <= end:
        clients = behaviour.clients_target("steady", t - t_ready, 7.0)
        running = max(1, round(clients * rng.uniform(0.85, 1.0)))
        waiting = 0 if running < 48 else rng.randint(0, 3)
        mult = difficulty.step(INTERVAL)
        step_s = timing.decode_ms(running, rng) / 1000
        steps = INTERVAL / step_s
        drafts = int(steps * running)
        # Per-position acceptance: P(position i accepted) = q1 ... qi, with sampling noise.
        pos = []
        p = 1.0
        for q in chain:
            p *= min(0.995, q * mult)
            pos.append(min(1.0, max(0.0, p + rng.gauss(0, 0.4 * math.sqrt(p * (1 - p) / max(drafts, 1))))))
        accepted_pos = [round(x * drafts) for x in pos]
        accepted = sum(accepted_pos)
        drafted = drafts * K
        gen_tokens = drafts + accepted
        gen_tp = gen_tokens / INTERVAL
        prompt_tp = gen_tp / 350 * 1200 * rng.uniform(0.8, 1.2)
        usage = min(0.99, running * (1200 + 350) / tokens * rng.uniform(0.9, 1.1))
        hit_rate = hit_rate * 0.8 + 0.2 * rng.uniform(0.35, 0.55) if hit_rate else rng.uniform(0.35, 0.55)
        msg = (f"Engine 000: Avg prompt throughput: {prompt_tp:.1f} tokens/s, Avg generation throughput: "
               f"{gen_tp:.1f} tokens/s, Running: {running} reqs, Waiting: {waiting} reqs, "
               f"GPU KV cache usage: {usage * 100:.1f}%, Prefix cache hit rate: {hit_rate * 100:.1f}%")
        fields = {"prompt_throughput": prompt_tp, "gen_throughput": gen_tp, "running_req": running,
                  "queue_req": waiting, "token_usage": usage, "prefix_cache_hit_rate": hit_rate}
        tol = {"prompt_throughput": 0.05, "gen_throughput": 0.05, "token_usage": 0.0005,
               "prefix_cache_hit_rate": 0.0005}
        yield line(t, "APIServer", api, "v1/metrics/loggers.py:127", msg, batch("decode", "Engine 000", fields, tol))
        mean_len = 1 + accepted / drafts if drafts else 1.0
        rates = [a / drafts for a in accepted_pos] if drafts else [0.0] * K
        rate = accepted / drafted if drafted else 0.0
        spec = (f"SpecDecoding metrics: Mean acceptance length: {mean_len:.2f}, Accepted throughput: "
                f"{accepted / INTERVAL:.2f} tokens/s, Drafted throughput: {drafted / INTERVAL:.2f} tokens/s, "
                f"Accepted: {accepted} tokens, Drafted: {drafted} tokens, Per-position acceptance rate: "
                f"{', '.join(f'{r:.3f}' for r in rates)}, Avg Draft acceptance rate: {rate * 100:.1f}%")
        sfields = {"accept_len": mean_len, "accepted_throughput": accepted / INTERVAL,
                   "drafted_throughput": drafted / INTERVAL, "accepted_tokens": accepted,
                   "drafted_tokens": drafted, "per_position_accept_rate": rates, "accept_rate": rate}
        stol = {"accept_len": 0.005, "accepted_throughput": 0.005, "drafted_throughput": 0.005,
                "per_position_accept_rate": 0.0005, "accept_rate": 0.0005}
        yield line(t + 0.0004, "APIServer", api, "v1/spec_decode/metrics.py:96", spec,
                   batch("spec", "Engine 000", sfields, stol))
        t += INTERVAL
