"""`mtptui sim` / `python -m mtptui.sim`: run the simulator live, or write an offline log.

  mtptui sim SGLANG-FLAGS [--sim-...]                      a live server (HTTP on --port)
  mtptui sim SGLANG-FLAGS --write-log FILE [--duration S]  one run, offline, as a journal
  mtptui sim --sim-scenario NAME --write-log FILE          a named scenario, offline
  mtptui sim --sim-scenario list                           the scenarios

Exit codes: 0 ok (also after SIGTERM); 1 a simulated fatal fault, or a file that cannot be
written; 2 bad flags, as SGLang's argparse and ServerArgs checks would refuse them.
"""

from __future__ import annotations

import argparse
import sys

from mtptui.sim import flags

SCENARIO_EPILOG = "`--sim-scenario list` prints the names with a line on each."


def _scenario_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mtptui sim --sim-scenario", allow_abbrev=False,
                                description="Write a named scenario's log offline (no sleeping).",
                                epilog=SCENARIO_EPILOG)
    p.add_argument("--sim-scenario", required=True, metavar="NAME")
    p.add_argument("--write-log", "--sim-write-log", dest="write_log", metavar="FILE",
                   help="where to write (- for stdout)")
    p.add_argument("--duration", "--sim-duration", dest="duration", type=flags._positive_float, metavar="S",
                   help="simulated seconds of the whole log (default: the scenario's)")
    p.add_argument("--sim-envelope", choices=("short-iso", "json", "cat"), default="short-iso")
    p.add_argument("--sim-seed", type=int, default=0)
    p.add_argument("--sim-hostname", metavar="HOST")
    p.add_argument("--sim-truth", metavar="FILE", help="also write what each line means, as JSONL")
    return p


def _has(argv: list[str], opt: str) -> bool:
    return any(a == opt or a.startswith(opt + "=") for a in argv)


def _write(lines, path: str, truth: str | None) -> int:
    from mtptui.sim.scenario import write_log

    try:
        if path == "-":
            for line in lines:
                sys.stdout.write(line.text + "\n")
            return 0
        n = write_log(path, lines, truth)
    except OSError as e:
        print(f"mtptui sim: cannot write {e.filename or path}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(f"mtptui sim: wrote {n} lines to {path}", file=sys.stderr)
    return 0


def _scenario(argv: list[str]) -> int:
    from mtptui.sim import scenario

    try:
        ns = _scenario_parser().parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    if ns.sim_scenario == "list":
        for name, sc in scenario.SCENARIOS.items():
            print(f"{name:30} {sc.description}")
        return 0
    if ns.sim_scenario not in scenario.SCENARIOS:
        print(f"mtptui sim: unknown scenario {ns.sim_scenario!r} (try --sim-scenario list)", file=sys.stderr)
        return 2
    if not ns.write_log:
        print("mtptui sim: --sim-scenario needs --write-log FILE (- for stdout)", file=sys.stderr)
        return 2
    lines = scenario.render(ns.sim_scenario, duration=ns.duration, envelope=ns.sim_envelope,
                            seed=ns.sim_seed, host=ns.sim_hostname)
    return _write(lines, ns.write_log, ns.sim_truth)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if _has(argv, "--sim-scenario"):
        return _scenario(argv)
    try:
        version = flags.pre_version(argv)
        ns = flags.build_parser(version).parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    bad = flags.out_of_range(ns)
    if bad:
        print(f"mtptui sim: {bad}", file=sys.stderr)
        return 2
    try:
        cfg = flags.resolve(ns)
    except flags.ServerArgsError as e:
        # SGLang refuses such flags in ServerArgs.__post_init__, before it logs anything.
        sys.stderr.write("\n".join(e.lines()) + "\n")
        return 2
    if ns.write_log:
        from mtptui.sim import scenario

        # The original command line, minus the offline-only options, is what the journal shows.
        lines = scenario.render_argv(_strip_offline(argv), duration=ns.duration if ns.duration is not None else 60.0,
                                     envelope=ns.sim_envelope, seed=ns.sim_seed, host=ns.sim_hostname,
                                     unit=ns.sim_unit)
        return _write(lines, ns.write_log, ns.sim_truth)
    if ns.sim_load is None:
        cfg.load = "none"
    from mtptui.sim import live

    return live.run(cfg, ns.sim_truth)


def _strip_offline(argv: list[str]) -> list[str]:
    takes_value = {"--write-log", "--sim-write-log", "--duration", "--sim-duration", "--sim-envelope",
                   "--sim-truth", "--sim-hostname", "--sim-unit", "--sim-seed"}
    out: list[str] = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            continue
        name = a.split("=", 1)[0]
        if name in takes_value:
            skip = "=" not in a
            continue
        out.append(a)
    return out
