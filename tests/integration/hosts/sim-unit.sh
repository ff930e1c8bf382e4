#!/bin/sh
# ExecStart of the containers' mtptui-sim.service: the project's SGLang simulator, from the
# project mounted read-only at /opt/mtptui, logging SGLang batch lines under steady load; the host
# gets the simulator's nvidia-smi stand-in on PATH (here, so the cached rootfs needs no rebuild).
ln -sf /opt/mtptui/tests/integration/hosts/nvidia-smi /usr/local/bin/nvidia-smi 2>/dev/null || true
exec python3 -m mtptui.sim --model-path Qwen/Qwen3-8B --tp 1 --speculative-algorithm NEXTN \
  --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 \
  --sim-load steady --sim-startup-seconds 1
