"""Many-runs benchmark: `mtptui summary --json` of the same lines as one run and as thousands.

A crash-looping unit (Restart=always) makes thousands of runs a day, and each run (epoch) keeps
its own exact statistics: this measures what that costs. It writes the parse benchmark's content
(bench/parse_bench.py's write_log: 70% Decode, 15% Prefill, 15% other lines) under bench/out/, then
the same lines with a restart every `--every` lines (the line there replaced by systemd's `Started`
and, turn about, a `server_args=` with speculation on or off, so that the epochs compare), and runs
`mtptui summary --json` on each. Prints wall time, CPU time (the command and its children) and peak
memory (the sum of PSS over the process tree, as parse_bench measures it) of:

- 10 runs against `--lines / --every` runs (the same lines), and their ratios;
- the many runs again, each printing SGLang 0.5.23's own settings line (18 KB, recorded from the
  real server: tests/unit/data/), as a crash loop of a real server logs them;
- journald JSON (`-o json`) lines, `--lines` against `--big` lines (one run each: the same
  generator, so the first are the same lines), and the ratio of their peak memory;

each as `mtptui summary --json` runs, and as summary's own work alone (CORE: the latency section's
scan of the file is left out, its mapped pages counting as the file is large).

Usage: python bench/runs_bench.py [--lines N] [--every N] [--big N] [--turns N] [--skip-big]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from parse_bench import BIG_BUDGET_MB, RUNS_BUDGET, timed, write_log  # noqa: E402

OUT = HERE / "out"
STAMP = "%b %d %H:%M:%S"


# SGLang 0.5.23's settings line as the real server printed it (18 KB), without its stamp
REAL_SETTINGS = (HERE.parent / "tests" / "unit" / "data" / "sglang-0.5.23-server_args.log").read_text().split("] ", 1)[1].rstrip("\n")


def _restart_text(k: int, ts: str, real: bool = False) -> list[str]:
    """The lines of the k-th restart (after systemd's Started): the new process's settings,
    speculation on and off in turn; `real`: SGLang 0.5.23's own line, each time."""
    if real:
        return [f"[{ts}] {REAL_SETTINGS}"]
    algo = "'EAGLE'" if k % 2 else "None"
    steps = 3 if k % 2 else None
    return [f"[{ts}] server_args=ServerArgs(model_path='m', speculative_algorithm={algo}, "
            f"speculative_num_steps={steps}, speculative_num_draft_tokens={4 if steps else None})"]


def with_restarts(src: Path, dst: Path, every: int, real: bool = False) -> None:
    """src's lines with every `every`-th one (from the first) replaced by a restart: systemd's
    Started line then the server's settings (the line after it replaced too; `real`: SGLang
    0.5.23's own), the same count of lines in all."""
    with open(src) as f, open(dst, "w") as out:
        k = 0
        pending: list[str] = []
        for i, line in enumerate(f):
            stamp = line[:15]  # `Mar 09 16:00:00`, journald short's stamp
            if i % every == 0:
                t = time.strptime("2026 " + stamp, "%Y " + STAMP)
                iso = time.strftime("%Y-%m-%d %H:%M:%S", t)
                out.write(f"{stamp} gpu-h1 systemd[1]: Started sglang.service - SGLang server.\n")
                pending = _restart_text(k, iso, real)
                k += 1
                continue
            if pending:
                out.write(f"{stamp} gpu-h1 python3[4242]: {pending.pop(0)}\n")
                continue
            out.write(line)


def ensure(path: Path, make) -> Path:
    if not path.exists():
        t = time.perf_counter()
        tmp = path.with_suffix(".tmp")
        make(tmp)
        tmp.rename(path)
        print(f"wrote {path.name} ({path.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s", flush=True)
    return path


# summary's own work (the read, the document, the JSON written) without the latency section,
# whose scan of the file for recorded scrapes (sources/record.recorded_scrapes) maps it whole:
# the pages it reads count in the process's memory, as much as the file is large
CORE = ("import sys; from mtptui.sources.parallel import summarise; "
        "from mtptui.commands.summary import write_json; "
        "s, c = summarise([sys.argv[1]]); write_json(s.document(c.to_json()), sys.stdout)")


def measure(path: Path, turns: int, core: bool = False) -> tuple[float, float, float, dict]:
    """(best wall s, least CPU s, most peak MB, the document) of summary --json over turns;
    core: summary's own work alone (CORE)."""
    cmd = ([sys.executable, "-c", CORE, str(path)] if core else
           [sys.executable, "-m", "mtptui", "summary", "--json", str(path)])
    runs = [timed(cmd) for _ in range(turns)]
    return (min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs) / 1024,
            json.loads(runs[0][3]))


def row(label: str, m: tuple[float, float, float, dict]) -> str:
    return f"{label:<28}wall {m[0]:6.2f} s  CPU {m[1]:6.2f} s  peak {m[2]:6.0f} MB"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--every", type=int, default=100, help="a restart every N lines in the many-runs log")
    ap.add_argument("--big", type=int, default=10_000_000, help="JSON lines of the big log")
    ap.add_argument("--turns", type=int, default=1, help="turns of each command (best wall, least CPU, most memory)")
    ap.add_argument("--skip-big", action="store_true", help="leave out the JSON rows")
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    n = args.lines
    plain = ensure(OUT / f"mixed-{n}.log", lambda p: write_log(p, n))
    few = ensure(OUT / f"runs-{n}-every-{n // 10}.log", lambda p: with_restarts(plain, p, n // 10))
    many = ensure(OUT / f"runs-{n}-every-{args.every}.log", lambda p: with_restarts(plain, p, args.every))
    real = ensure(OUT / f"runs-{n}-every-{args.every}-real.log", lambda p: with_restarts(plain, p, args.every, real=True))
    print(f"lines: {n}; turns: {args.turns}", flush=True)
    for core in (False, True):
        print("mtptui summary --json:" if not core else
              "summary's own work (without the latency section's scan of the file):", flush=True)
        m_few = measure(few, args.turns, core)
        print(row(f"  {len(m_few[3]['epochs'])} runs:", m_few), flush=True)
        m_many = measure(many, args.turns, core)
        print(row(f"  {len(m_many[3]['epochs'])} runs:", m_many), flush=True)
        print(f"  many / few:                 wall {m_many[0] / m_few[0]:.2f}x  CPU {m_many[1] / m_few[1]:.2f}x  "
              f"peak {m_many[2] / m_few[2]:.2f}x  (the budget: wall <= {RUNS_BUDGET:g}x)", flush=True)
        m_real = measure(real, args.turns, core)
        print(row(f"  {len(m_real[3]['epochs'])} runs, real settings:", m_real), flush=True)
        print(f"  real settings / few:        wall {m_real[0] / m_few[0]:.2f}x  CPU {m_real[1] / m_few[1]:.2f}x  "
              f"peak {m_real[2] / m_few[2]:.2f}x  (SGLang 0.5.23's 18 KB line at each start)", flush=True)
    if args.skip_big:
        return 0
    small = ensure(OUT / f"mixed-{n}-json.log", lambda p: write_log(p, n, envelope="json"))
    big = ensure(OUT / f"json-{args.big}.log", lambda p: write_log(p, args.big, envelope="json"))
    for core in (False, True):
        print("mtptui summary --json:" if not core else
              "summary's own work (without the latency section's scan of the file):", flush=True)
        m_small = measure(small, args.turns, core)
        print(row(f"  {n} JSON lines:", m_small), flush=True)
        m_big = measure(big, args.turns, core)
        print(row(f"  {args.big} JSON lines:", m_big), flush=True)
        print(f"  big / small:                peak {m_big[2] / m_small[2]:.2f}x  (the budget: {BIG_BUDGET_MB} MB for "
              "10,000,000 lines)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
