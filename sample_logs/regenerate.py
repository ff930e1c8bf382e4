#!/usr/bin/env python3
"""Regenerates sample_logs/ from the simulator's named scenarios (`make samples`).

Every file is made on a simulated clock from a fixed seed, so running this again gives the same
bytes; a test checks that. Each scenario is written as journalctl -o short-iso shows it
(NAME.log); a few are also written as journalctl -o json (NAME.json).

  python sample_logs/regenerate.py               # into sample_logs/
  python sample_logs/regenerate.py --out DIR     # elsewhere (the test uses a temp dir)
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from mtptui.sim import scenario

JSON_TOO = ("incident-oom-crashloop", "vllm-eagle")


def targets() -> list[tuple[str, str, str]]:
    """(scenario, envelope, file name)"""
    out = [(name, "short-iso", f"{name}.log") for name in scenario.SCENARIOS]
    out += [(name, "json", f"{name}.json") for name in JSON_TOO]
    return out


def readme() -> str:
    rows = "\n".join(f"| `{name}.log` | {sc.description} |" for name, sc in scenario.SCENARIOS.items())
    extra = ", ".join(f"`{name}.json`" for name in JSON_TOO)
    return f"""# Sample logs

Made by the mtptui simulator (`mtptui sim`), **not by real servers**: every file starts with a
`mtptui SGLang simulator (not a real server)` line. They are journals as `journalctl -o short-iso`
prints them (and {extra} as `journalctl -o json` does), on a simulated clock from
2026-03-09 16:00:00 UTC. Regenerate with `make samples` (`python sample_logs/regenerate.py`); the
result is byte-identical, and a test checks that.

| file | what happens |
|---|---|
{rows}

Replay one: `mtptui replay sample_logs/mtp-on-tp4.log`, or `mtptui summary sample_logs/mtp-on-tp4.log`.
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=HERE, help="directory to write into (default: sample_logs/)")
    ns = p.parse_args(argv)
    os.makedirs(ns.out, exist_ok=True)
    with open(os.path.join(ns.out, "README.md"), "w", encoding="utf-8", newline="\n") as f:
        f.write(readme())
    for name, envelope, fname in targets():
        path = os.path.join(ns.out, fname)
        n = scenario.write_log(path, scenario.render(name, envelope=envelope))
        print(f"{fname:40} {n:6d} lines {os.path.getsize(path) / 1e6:6.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
