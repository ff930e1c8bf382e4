"""Writes small.log: a deterministic journalctl short-iso export of one host, for the TUI tests.

Epoch 1: NEXTN steps=3 on TP0-TP3 (TP2 accepts less), ready, then a restart (systemd Stopped,
Started, new server_args) into epoch 2 with speculation off. Run: python make_small_log.py
"""

import math
import os
import random
import time

HOST = "gpu1"
T0 = 1773072000.0  # 2026-03-09 16:00:00 UTC
SPEC_ARGS = ("server_args=ServerArgs(model_path='deepseek-ai/DeepSeek-V3', tp_size=4, dp_size=1, "
             "speculative_algorithm='NEXTN', speculative_draft_model_path=None, speculative_num_steps=3, "
             "speculative_eagle_topk=1, speculative_num_draft_tokens=4, decode_log_interval=40)")
PLAIN_ARGS = ("server_args=ServerArgs(model_path='deepseek-ai/DeepSeek-V3', tp_size=4, dp_size=1, "
              "speculative_algorithm=None, speculative_draft_model_path=None, speculative_num_steps=None, "
              "speculative_eagle_topk=None, speculative_num_draft_tokens=None, decode_log_interval=40)")


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(t))


def stamp(t):
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))


def main():
    rnd = random.Random(7)
    out = []

    def journal(t, ident, msg):
        out.append(f"{iso(t)} {HOST} {ident}: {msg}")

    def sg(t, who, msg):
        journal(t, "python[4242]", f"[{stamp(t)}{' ' + who if who else ''}] {msg}")

    t = T0
    journal(t, "systemd[1]", "Started sglang.service - SGLang server.")
    sg(t + 1, "", SPEC_ARGS)
    sg(t + 5, "TP0", "Load weight begin. avail mem=78.12 GB")
    sg(t + 20, "TP0", "Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=40.10 GB, mem usage=38.02 GB.")
    sg(t + 24, "TP0", "Capture cuda graph begin. This can take up to several minutes. avail mem=20.00 GB")
    sg(t + 30, "", "The server is fired up and ready to roll!")
    # Epoch 1: 120 s of decode lines every 2 s per rank, a prefill now and then.
    for k in range(60):
        tk = t + 32 + 2 * k
        for r in range(4):
            base = 2.85 if r != 2 else 2.35
            al = base + 0.15 * math.sin(k / 7 + r) + rnd.uniform(-0.05, 0.05)
            rate = (al - 1) / 3
            run = 20 + int(8 * math.sin(k / 9)) + r
            queue = max(0, int(3 * math.sin(k / 5)))
            tput = run * al * 14.5 + rnd.uniform(-20, 20)
            usage = 0.2 + 0.1 * math.sin(k / 11)
            graph = "True" if not (r == 3 and 40 <= k < 44) else "False"
            sg(tk, f"TP{r}", f"Decode batch, #running-req: {run}, #token: {int(usage * 200000)}, "
                             f"token usage: {usage:.2f}, accept len: {al:.2f}, accept rate: {rate:.2f}, "
                             f"cuda graph: {graph}, gen throughput (token/s): {tput:.2f}, #queue-req: {queue}")
        if k % 10 == 3:
            sg(tk + 1, "TP0", "Prefill batch, #new-seq: 2, #new-token: 2048, #cached-token: 512, token usage: 0.21, "
                              "#running-req: 22, #queue-req: 1, #pending-token: 0, cuda graph: False, "
                              "input throughput (token/s): 8123.50")
    t = t + 32 + 120 + 3
    journal(t, "systemd[1]", "Stopping sglang.service - SGLang server...")
    journal(t + 2, "systemd[1]", "Stopped sglang.service - SGLang server.")
    journal(t + 3, "systemd[1]", "Started sglang.service - SGLang server.")
    sg(t + 4, "", PLAIN_ARGS)
    sg(t + 30, "", "The server is fired up and ready to roll!")
    # Epoch 2: no speculation: decode lines without accept len.
    for k in range(30):
        tk = t + 32 + 2 * k
        for r in range(4):
            run = 20 + int(8 * math.sin(k / 9)) + r
            tput = run * 15.5 + rnd.uniform(-20, 20)
            usage = 0.25 + 0.05 * math.sin(k / 11)
            sg(tk, f"TP{r}", f"Decode batch, #running-req: {run}, #token: {int(usage * 200000)}, "
                             f"token usage: {usage:.2f}, cuda graph: True, gen throughput (token/s): {tput:.2f}, "
                             f"#queue-req: 0")
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "small.log"), "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
