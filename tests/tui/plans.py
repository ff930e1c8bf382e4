"""Plans built by hand (the real dataclass) for the preview modal's tests."""

from __future__ import annotations

from mtptui.control.plan import APPLY, Plan
from mtptui.control.profiles import BUILTINS

BASE = ["/usr/bin/python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3.5-122B-A10B",
        "--tp", "4", "--port", "30000"]
MTP3 = ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4"]
DROPIN = "/etc/systemd/system/sglang-qwen.service.d/50-mtptui-spec.conf"


def mtp3_plan(host: str = "gpu1", prod: bool = False) -> Plan:
    return Plan(host=host, unit="sglang-qwen.service", action=APPLY, profile=BUILTINS["mtp3"], engine="sglang",
                old_argv=BASE, new_argv=BASE + MTP3, old_dropin=None,
                new_dropin="[Service]\nExecStart=\nExecStart=" + " ".join(BASE + MTP3) + "\n",
                commands=[["mkdir", "/run/lock/mtptui-sglang-qwen.service"],
                          ["sh", "-c", 'cat > "$1.tmp" && mv "$1.tmp" "$1"', "sh", DROPIN],
                          ["systemctl", "daemon-reload"], ["systemctl", "restart", "sglang-qwen.service"]],
                current={}, last_start_s=312.0, prod=prod, where="ops@10.0.0.5:22")
