"""`mtptui summary --json` holds its figures: every sample log, the benchmarks' logs (made small and
deterministic here from bench/'s own writers) and the real-code tier's lines give the document kept in
tests/unit/data/summary/ (gzipped), compared as numbers: the same keys, the same strings and integers, each float
within one unit of the last decimal the kept document printed (a float may be written differently, never
be another number).

The kept documents were made by the code before issue 44's columnar rewrite; after a change that is meant
to change a figure, write them again with `python tests/process/test_summary_fixtures.py --write` and say
why in the commit."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
KEPT = ROOT / "tests" / "unit" / "data" / "summary"
SAMPLES = sorted(p for p in (ROOT / "sample_logs").iterdir() if p.suffix in (".log", ".json"))
sys.path.insert(0, str(ROOT / "bench"))

from parse_bench import ENVELOPES, write_log  # noqa: E402
from runs_bench import with_restarts  # noqa: E402

BENCH_LINES = 20_000  # every envelope's row and the runs of parse_bench, 200 runs in `restarts`
CACHE_TRIAGE = Path.home() / ".cache" / "mtptui-test" / "triage"
# the real-code tier's trouble lines of the newest release of each engine it fetched (their cache),
# and its recorded server_args line of SGLang 0.5.23 (in the repository)
REAL_RELEASES = ("sglang-0.5.23", "vllm-0.33.0")


def _bench(name: str, path: Path) -> None:
    """The benchmarks' logs, BENCH_LINES long: parse_bench's envelopes, runs_bench's 10 and 200 runs."""
    if name.startswith("runs-"):
        short = path.with_suffix(".short")
        write_log(short, BENCH_LINES, envelope="short")
        with_restarts(short, path, int(name.split("-")[1]))
    else:
        write_log(path, BENCH_LINES, envelope=name.removeprefix("bench-"))


def _real(name: str, path: Path) -> bool:
    """A log of a release's trouble templates (each a line of the server's, between decode lines), or
    False where the real-code tier's cache lacks that release."""
    if name == "real-server-args":
        path.write_bytes((ROOT / "tests" / "unit" / "data" / "sglang-0.5.23-server_args.log").read_bytes())
        return True
    f = CACHE_TRIAGE / f"{name.removeprefix('real-')}.v1.json"
    if not f.exists():
        return False
    texts = sorted({t["text"] for t in json.loads(f.read_text()) if t.get("text") and "\n" not in t["text"]})
    with open(path, "w") as out:
        for i, text in enumerate(texts):
            ts = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(1773072000 + i))
            out.write(f"[{ts} TP0] Decode batch, #running-req: {1 + i % 40}, #token: {1000 + i}, token usage: 0.{i % 90 + 10}, "
                      f"accept len: {1 + i % 300 / 100:.2f}, cuda graph: True, gen throughput (token/s): {100 + i % 977 / 4:.2f}, "
                      f"#queue-req: 0\n")
            out.write(f"[{ts} TP0] {text}\n")
    return True


CASES = ([f"sample-{p.name}" for p in SAMPLES] + [f"bench-{e}" for e in ENVELOPES] + ["runs-100", "runs-2000"]
         + ["real-server-args"] + [f"real-{r}" for r in REAL_RELEASES])


def _log(case: str, tmp: Path) -> Path | None:
    if case.startswith("sample-"):
        return ROOT / "sample_logs" / case.removeprefix("sample-")
    path = tmp / (case + ".log")
    if case.startswith("real-"):
        return path if _real(case, path) else None
    _bench(case, path)
    return path


def summary_json(log: Path, env: dict | None = None) -> dict:
    r = subprocess.run([sys.executable, "-m", "mtptui", "summary", "--json", str(log)], capture_output=True,
                       timeout=600, env=env)
    assert r.returncode == 0, r.stderr.decode()
    return json.loads(r.stdout, parse_float=Decimal)


def same_figures(kept, got, where: str = "$") -> list[str]:
    """Where got differs from kept: a key, a length, a string or integer, or a float off by more than
    one unit of kept's last printed decimal."""
    if isinstance(kept, dict):
        if not isinstance(got, dict) or list(kept) != list(got):
            return [f"{where}: keys {list(kept)[:8]} != {list(got)[:8] if isinstance(got, dict) else type(got).__name__}"]
        return [d for k in kept for d in same_figures(kept[k], got[k], f"{where}.{k}")]
    if isinstance(kept, list):
        if not isinstance(got, list) or len(kept) != len(got):
            return [f"{where}: length {len(kept)} != {len(got) if isinstance(got, list) else type(got).__name__}"]
        return [d for i, (a, b) in enumerate(zip(kept, got)) for d in same_figures(a, b, f"{where}[{i}]")]
    if isinstance(kept, Decimal):
        if not isinstance(got, (Decimal, int)) or isinstance(got, bool):
            return [f"{where}: {kept} != {got!r}"]
        unit = Decimal(1).scaleb(min(kept.as_tuple().exponent, 0))  # type: ignore[arg-type]
        return [] if abs(Decimal(got) - kept) <= unit else [f"{where}: {kept} != {got}"]
    if isinstance(got, Decimal) and isinstance(kept, int) and not isinstance(kept, bool):
        return [] if got == kept else [f"{where}: {kept} != {got}"]
    return [] if type(kept) is type(got) and kept == got else [f"{where}: {kept!r} != {got!r}"]


@pytest.mark.parametrize("case", CASES)
def test_summary_keeps_its_figures(case, tmp_path):
    log = _log(case, tmp_path)
    if log is None:
        pytest.skip(f"the real-code tier's cache lacks {case} ({CACHE_TRIAGE})")
    kept = json.loads(gzip.decompress((KEPT / f"{case}.json.gz").read_bytes()), parse_float=Decimal)
    diffs = same_figures(kept, summary_json(log))
    assert not diffs, f"{len(diffs)} figures differ, the first: " + "; ".join(diffs[:10])


def test_same_figures_tells_a_difference():
    """The comparison can fail: a float past its last decimal, a key, a length, an integer."""
    d = Decimal
    assert same_figures({"a": d("1.25")}, {"a": d("1.2500000001")}) == []
    assert same_figures({"a": d("1.25")}, {"a": d("1.26")}) == []  # one unit of the last decimal
    assert same_figures({"a": d("1.25")}, {"a": d("1.27")})
    assert same_figures({"a": 1}, {"a": 2}) and same_figures({"a": 1}, {"b": 1})
    assert same_figures({"a": [1]}, {"a": [1, 2]}) and same_figures({"a": "x"}, {"a": "y"})


def main() -> int:
    """--write: the kept documents made again from the code as it is."""
    import tempfile
    if sys.argv[1:] != ["--write"]:
        print("usage: python tests/process/test_summary_fixtures.py --write", file=sys.stderr)
        return 2
    KEPT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            log = _log(case, Path(tmp))
            if log is None:
                print(f"{case}: not in the cache, left as it was", file=sys.stderr)
                continue
            r = subprocess.run([sys.executable, "-m", "mtptui", "summary", "--json", str(log)], capture_output=True,
                               check=True)
            json.loads(r.stdout)
            (KEPT / f"{case}.json.gz").write_bytes(gzip.compress(r.stdout, mtime=0))
            print(f"{case}: {len(r.stdout):,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
