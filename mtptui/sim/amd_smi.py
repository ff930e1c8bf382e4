"""A stand-in for AMD's `amd-smi monitor` on the simulator's hosts: the real tool's `--csv` for the
simulated server's GPUs (as an MI300X reports itself), moving with the load the simulator serves,
as the nvidia-smi stand-in's do (sim/nvidia_smi.py: the same model, the same server asked).

Only what mtptui asks of the real tool is here: `monitor` with `-p -t -u -v`, `--csv`, `-w` and
`-i`. Like the real tool (Python's print to a pipe) it does not flush each line: a reader needs
PYTHONUNBUFFERED, as mtptui's command gives it.

    python -m mtptui.sim.amd_smi monitor -p -t -u -v --csv -w 1
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
import time

from mtptui.sim.nvidia_smi import Gpu, model, read_server, sim_args

VRAM_TOTAL = 196300  # MB, as amd-smi reports an MI300X's
SCALE = VRAM_TOTAL / 81559  # the model's memory is an H100's


def rows(gpus: list[Gpu], args: argparse.Namespace, stamp: int | None) -> list[dict[str, object]]:
    """The tool's columns in its order (amd_smi_commands.py monitor): power, temperatures, gfx,
    VRAM, each asked for; a watch puts the time first."""
    out = []
    for g in gpus:
        d: dict[str, object] = {} if stamp is None else {"timestamp": stamp}
        d["gpu"] = g.index
        if args.power_usage:
            d["power_usage"] = round(g.power)
        if args.temperature:
            d["hotspot_temperature"] = g.temp + 4
            d["memory_temperature"] = g.temp - 2
        if args.gfx:
            d["gfx"] = g.util
            d["gfx_clock"] = 2100 if g.sm_clock > 1000 else 132
        if args.vram_usage:
            d["vram_used"] = round(g.mem_used * SCALE)
            d["vram_total"] = VRAM_TOTAL
        out.append(d)
    return out


def render(table: list[dict[str, object]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, list(table[0].keys()))  # the real tool's writer: \r\n line ends
    w.writeheader()
    w.writerows(table)
    return buf.getvalue()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="amd-smi",
        description="mtptui simulator's STAND-IN for amd-smi (not AMD's tool): prints the real tool's "
                    "`monitor --csv` for the simulated server's GPUs, moving with its load.")
    sub = p.add_subparsers(dest="command")
    m = sub.add_parser("monitor", help="the real tool's monitor table, as CSV")
    m.add_argument("-p", "--power-usage", action="store_true")
    m.add_argument("-t", "--temperature", action="store_true")
    m.add_argument("-u", "--gfx", action="store_true")
    m.add_argument("-v", "--vram-usage", action="store_true")
    m.add_argument("--csv", action="store_true")
    m.add_argument("-w", "--watch", type=int, metavar="INTERVAL")
    m.add_argument("-i", "--iterations", type=int)
    sim_args(m)
    return p


def main(argv: list[str] | None = None) -> int:
    ns = _parser().parse_args(argv)
    if ns.command != "monitor" or not ns.csv:
        print("amd-smi stand-in (mtptui simulator): only `monitor --csv` is served")
        return 0
    if not any((ns.power_usage, ns.temperature, ns.gfx, ns.vram_usage)):
        ns.power_usage = ns.temperature = ns.gfx = ns.vram_usage = True
    try:
        if ns.watch:
            print("'CTRL' + 'C' to stop watching output:")
        done = 0
        while True:
            tp, running = read_server(ns.sim_port)
            now = time.time()
            print(render(rows(model(ns.sim_gpus or tp or 1, running, now), ns, int(now) if ns.watch else None)))
            done += 1
            if not ns.watch or (ns.iterations is not None and done >= ns.iterations):
                return 0
            time.sleep(ns.watch)
    except (KeyboardInterrupt, BrokenPipeError):
        return 0


if __name__ == "__main__":
    sys.exit(main())
