"""Hand-made logs of two epochs, spec off then spec on (EAGLE), each decode line at a chosen load,
context, throughput and accept len: the input of the bucket tests (by load: test_loadmatch.py; by
context: test_context_buckets.py), and the ways those tests read it back."""

from __future__ import annotations

import json
import subprocess
import sys

from logsynth import sglang_line, utc
from test_compare import store_epochs, store_of

from mtptui.sources import parallel

T0 = utc(2026, 3, 9, 16)


def decode_line(running: int, tokens: int, gen: float, accept: float | None, pool: str = "#token") -> str:
    """A Decode batch message; pool `#token`, or `#full token` as a hybrid model's pool logs it."""
    acc = "" if accept is None else f"accept len: {accept:.2f}, "
    return (f"Decode batch, #running-req: {running}, {pool}: {tokens}, {pool[1:]} usage: 0.10, {acc}"
            f"cuda graph: True, gen throughput (token/s): {gen:.2f}, #queue-req: 0")


def _epoch(t: int, algo: str, lines: list[tuple], pool: str) -> tuple[int, list[str]]:
    out = [sglang_line(f"server_args=ServerArgs(model_path='m', speculative_algorithm={algo})", t)]
    for running, tokens, gen, accept in lines:
        t += 1
        out.append(sglang_line(decode_line(running, tokens, gen, accept, pool), t))
    return t, out


def write_two_epochs(path, off: list[tuple], on: list[tuple], on_pool: str = "#token") -> str:
    """Writes the log: a spec-off run of the lines `off`, then ten seconds later a spec-on run of
    the lines `on` (each line: running requests, tokens in use, gen throughput, accept len or
    None), its pool logged as on_pool. Returns the path as a string."""
    t, a = _epoch(T0, "None", off, "#token")
    _, b = _epoch(t + 10, "'EAGLE'", on, on_pool)
    path.write_text("\n".join(a + b) + "\n")
    return str(path)


def summary_json(path: str) -> dict:
    r = subprocess.run([sys.executable, "-m", "mtptui", "summary", "--json", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def table_after(path: str, title: str) -> list[str]:
    """The lines of `mtptui summary PATH` after the title and the header of the table whose title
    begins with `title`."""
    r = subprocess.run([sys.executable, "-m", "mtptui", "summary", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    return lines[next(i for i, ln in enumerate(lines) if ln.startswith(title)) + 2:]


def assert_readers_agree(path: str, monkeypatch) -> None:
    """The dashboard's store (its rings far shorter than the log) and a parallel read give the
    epochs, buckets and all, that `summary --json` gives."""
    want = summary_json(path)["epochs"]
    assert store_epochs(store_of(path, capacity=8)) == want
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1)
    par, counts = parallel.summarise([path], jobs=2)
    assert par.to_json(counts.to_json())["epochs"] == want
