"""A stand-in for `nvidia-smi` on the simulator's hosts: the CSV of the real tool's `--query-gpu` for
the simulated server's GPUs, utilisation and power moving with the load the simulator serves.

It asks the simulator's own HTTP API (`/get_load`, `/get_server_info`, on MTPTUI_SIM_PORT, 30000 by
default) each interval, so it needs no hook in the engine: a server that is down reads as idle GPUs
with their memory freed, as the real ones would. Only what mtptui asks of the real tool is here:
`--query-gpu` with the fields below, `--format=csv[,noheader][,nounits]`, `-l`/`-lms` and `-L`.

    python -m mtptui.sim.nvidia_smi --query-gpu=index,name,power.draw --format=csv -lms 1000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import urllib.request
from dataclasses import dataclass

NAME = "NVIDIA H100 80GB HBM3"
MEM_TOTAL = 81559  # MiB, as an H100 80GB reports it
POWER_LIMIT = 700.0
POWER_IDLE = 72.0
MEM_FRACTION = 0.88  # SGLang's mem_fraction_static claims this much at start
REQS_FULL = 24  # running requests at which a GPU reads near 100 %

UNITS = {"utilization.gpu": " %", "memory.used": " MiB", "memory.total": " MiB", "power.draw": " W",
         "power.limit": " W", "clocks.sm": " MHz"}
HEADERS = {"index": "index", "name": "name", "uuid": "uuid", "utilization.gpu": "utilization.gpu [%]",
           "memory.used": "memory.used [MiB]", "memory.total": "memory.total [MiB]",
           "power.draw": "power.draw [W]", "power.limit": "power.limit [W]",
           "temperature.gpu": "temperature.gpu", "clocks.sm": "clocks.current.sm [MHz]"}
ALIASES = {"clocks.current.sm": "clocks.sm", "gpu_name": "name", "gpu_uuid": "uuid"}


@dataclass(frozen=True)
class Gpu:
    index: int
    util: int
    mem_used: int
    power: float
    temp: int
    sm_clock: int

    def value(self, field: str) -> str:
        if field == "index":
            return str(self.index)
        if field == "name":
            return NAME
        if field == "uuid":
            return f"GPU-5e1a{self.index:04x}-0000-4000-8000-000000000000"
        if field == "utilization.gpu":
            return str(self.util)
        if field == "memory.used":
            return str(self.mem_used)
        if field == "memory.total":
            return str(MEM_TOTAL)
        if field == "power.draw":
            return f"{self.power:.2f}"
        if field == "power.limit":
            return f"{POWER_LIMIT:.2f}"
        if field == "temperature.gpu":
            return str(self.temp)
        return str(self.sm_clock)


def model(n_gpus: int, running: float | None, t: float) -> list[Gpu]:
    """The GPUs at time t serving `running` requests (None: no server). Each GPU of a TP group does the
    same work, so they move together, a little apart (a wobble per index) as real ones do."""
    out = []
    for i in range(n_gpus):
        wobble = math.sin(t * 0.7 + i * 1.3)
        if running is None:
            util, mem, power, clock = 0, 512, POWER_IDLE + wobble, 345
        elif running <= 0:
            util, mem, power, clock = 0, int(MEM_TOTAL * MEM_FRACTION), POWER_IDLE + 18 + wobble, 1980
        else:
            util = max(1, min(100, round(30 + 70 * min(1.0, running / REQS_FULL) + 2 * wobble)))
            mem = int(MEM_TOTAL * MEM_FRACTION)
            power = min(POWER_LIMIT, POWER_IDLE + 90 + (POWER_LIMIT - POWER_IDLE - 90) * util / 100
                        + 6 * wobble)
            clock = 1980
        temp = round(33 + util * 0.35 + wobble)
        out.append(Gpu(i, util, mem, round(power, 2), temp, clock))
    return out


def render(gpus: list[Gpu], fields: list[str], header: bool, units: bool) -> str:
    lines = []
    if header:
        lines.append(", ".join(HEADERS[f] for f in fields))
    for g in gpus:
        lines.append(", ".join(g.value(f) + (UNITS.get(f, "") if units else "") for f in fields))
    return "".join(line + "\n" for line in lines)


def _get(port: int, path: str) -> object:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=0.5) as r:
        return json.loads(r.read())


def read_server(port: int) -> tuple[int | None, float | None]:
    """(tp_size, running requests per GPU group) from the simulator, (None, None) where it is down."""
    try:
        load = _get(port, "/get_load")
    except (OSError, ValueError):
        return None, None
    tp = None
    try:
        info = _get(port, "/get_server_info")
        if isinstance(info, dict) and isinstance(info.get("tp_size"), int):
            tp = info["tp_size"]
    except (OSError, ValueError):
        pass
    if not isinstance(load, list) or not load:
        return tp, 0.0
    running = [d.get("num_reqs", 0) for d in load if isinstance(d, dict)]
    return tp, (sum(running) / len(running)) if running else 0.0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="nvidia-smi", add_help=True,
        description="mtptui simulator's STAND-IN for nvidia-smi (not NVIDIA's tool): prints the real "
                    "tool's --query-gpu CSV for the simulated server's GPUs, moving with its load.")
    p.add_argument("--query-gpu", dest="query", metavar="FIELDS")
    p.add_argument("--format", default="csv", metavar="csv[,noheader][,nounits]")
    p.add_argument("-l", "--loop", type=int, metavar="S")
    p.add_argument("-lms", "--loop-ms", dest="loop_ms", type=int, metavar="MS")
    p.add_argument("-L", "--list-gpus", action="store_true")
    sim_args(p)
    return p


def sim_args(p: argparse.ArgumentParser) -> None:
    """The stand-ins' own options (this one's and sim/amd_smi.py's): which GPUs, which server."""
    p.add_argument("--sim-gpus", type=int, default=int(os.environ.get("MTPTUI_SIM_GPUS", "0")),
                   help="GPUs to show (default: the simulated server's tp_size, or 1)")
    p.add_argument("--sim-port", type=int, default=int(os.environ.get("MTPTUI_SIM_PORT", "30000")))


def main(argv: list[str] | None = None) -> int:
    ns = _parser().parse_args(argv)
    tp, running = read_server(ns.sim_port)
    n = ns.sim_gpus or tp or 1
    if ns.list_gpus:
        for g in model(n, running, time.time()):
            sys.stdout.write(f"GPU {g.index}: {NAME} (UUID: {g.value('uuid')})\n")
        return 0
    if not ns.query:
        sys.stdout.write("nvidia-smi stand-in (mtptui simulator): only --query-gpu and -L are served\n")
        return 0
    fields = [ALIASES.get(f.strip(), f.strip()) for f in ns.query.split(",") if f.strip()]
    for f in fields:
        if f not in HEADERS:
            sys.stdout.write(f'Field "{f}" is not a valid field to query.\n\n')
            return 2
    opts = {o.strip() for o in ns.format.split(",")}
    if "csv" not in opts:
        sys.stdout.write('"--format" option requires "csv".\n')
        return 2
    header, units = "noheader" not in opts, "nounits" not in opts
    period = ns.loop_ms / 1000 if ns.loop_ms else ns.loop
    try:
        while True:
            sys.stdout.write(render(model(n, running, time.time()), fields, header, units))
            sys.stdout.flush()
            if not period:
                return 0
            header = False  # once, at the top of the stream
            time.sleep(max(0.05, period))
            tp, running = read_server(ns.sim_port)
            n = ns.sim_gpus or tp or 1
    except (KeyboardInterrupt, BrokenPipeError):
        return 0


if __name__ == "__main__":
    sys.exit(main())
