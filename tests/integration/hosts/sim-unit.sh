#!/bin/sh
# ExecStart of the containers' mtptui-sim.service: the project's SGLang simulator once it exists,
# else the numbered line writer (both log SGLang batch lines that the dashboard reads).
if [ -f /opt/mtptui/mtptui/sim/__main__.py ]; then
  exec python3 -m mtptui.sim --model-path Qwen/Qwen3-8B --tp 1 --speculative-algorithm NEXTN \
    --speculative-num-steps 3 --sim-load steady --sim-startup-seconds 1
fi
exec python3 /opt/mtptui/tests/integration/hosts/linewriter.py --rate 4
