"""The real SGLang on a machine with an NVIDIA GPU: the engine tier's recipe for the engine that has
no CPU build (shared/reference/real-engines.md). Never part of `make test`.

    python bench/sglang_gpu.py [--sglang VERSION] [--work DIR]

What it does, each step said as it goes, every figure and file under --work (default ./sglang-gpu):
1. a venv of its own with `pip install sglang` (and `mtptui` from this checkout);
2. the engine tier's tiny model (tests/engine/tiny_model.py: a 2-layer Llama config and a trained
   tokenizer, no download), served with `--load-format dummy`;
3. `python -m sglang.launch_server --model-path DIR --load-format dummy --speculative-algorithm
   NGRAM ...` with its log in server.log, until /health answers;
4. traffic: repetitive prompts at temperature 0 (ngram accepts most drafts), then at 1;
5. `mtptui summary --json server.log` and `mtptui summary server.log`, saved beside it, and, where
   systemd runs (PID 1), the same server as a transient unit for `mtptui spec --local --unit`.
It prints what it found: the batch lines read, accept len and rate, the events, and what mtptui did
not read (its unparsed and malformed counts). Read summary.json against server.log by eye, too.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PORT = 30000
SPEC = ["--speculative-algorithm", "NGRAM", "--speculative-num-draft-tokens", "4"]


def say(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def run(argv: list[str], **kw) -> subprocess.CompletedProcess:
    say("$ " + " ".join(argv))
    return subprocess.run(argv, check=True, **kw)


def healthy(timeout: float = 3) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/health", timeout=timeout) as r:
            return r.status == 200
    except OSError:
        return False


def traffic(model: str, n: int, temperature: float) -> None:
    body = {"model": model, "prompt": "the program the program the program the program", "max_tokens": 64,
            "temperature": temperature}
    for _ in range(n):
        req = urllib.request.Request(f"http://127.0.0.1:{PORT}/v1/completions", json.dumps(body).encode(),
                                     {"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=120) as r:
            r.read()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sglang", default="", help="the version to install (default: the newest)")
    ap.add_argument("--work", default="sglang-gpu", help="where the venv, model, logs and results go")
    args = ap.parse_args()
    if shutil.which("nvidia-smi") is None:
        print("sglang_gpu: no nvidia-smi here: SGLang needs an NVIDIA GPU", file=sys.stderr)
        return 1
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    venv = work / "venv"
    py = venv / "bin" / "python"
    if not py.exists():
        run([sys.executable, "-m", "venv", str(venv)])
    run([str(py), "-m", "pip", "install", "-q", "sglang" + (f"=={args.sglang}" if args.sglang else ""),
         "tokenizers", "transformers"])
    run([str(py), "-m", "pip", "install", "-q", "-e", str(ROOT)])
    model = work / "model"
    run([str(py), str(ROOT / "tests/engine/tiny_model.py"), str(model)])
    log = work / "server.log"
    server_argv = [str(py), "-m", "sglang.launch_server", "--model-path", str(model), "--load-format", "dummy",
                   "--port", str(PORT), "--decode-log-interval", "1", *SPEC]
    with open(log, "w") as out:
        server = subprocess.Popen(server_argv, stdout=out, stderr=subprocess.STDOUT)
    try:
        t0 = time.monotonic()
        while not healthy():
            if server.poll() is not None:
                say(f"the server exited {server.returncode}: see {log}")
                return 1
            if time.monotonic() - t0 > 900:
                say(f"not ready after 900 s: see {log}")
                return 1
            time.sleep(2)
        say(f"ready in {time.monotonic() - t0:.0f} s")
        traffic(str(model), 20, 0.0)
        traffic(str(model), 20, 1.0)
        time.sleep(3)
    finally:
        server.terminate()
        server.wait(60)
    mtptui = [str(py), "-m", "mtptui"]
    summary = subprocess.run([*mtptui, "summary", "--json", str(log)], capture_output=True, text=True)
    (work / "summary.json").write_text(summary.stdout)
    table = subprocess.run([*mtptui, "summary", str(log)], capture_output=True, text=True)
    (work / "summary.txt").write_text(table.stdout + table.stderr)
    print(table.stdout[-4000:] or table.stderr)
    if Path("/run/systemd/system").is_dir():  # systemd is PID 1: the same server as a unit
        unit = "sglang-tiny"
        run(["systemd-run", f"--unit={unit}", "--collect", *server_argv])
        t0 = time.monotonic()
        while not healthy() and time.monotonic() - t0 < 900:
            time.sleep(2)
        shown = subprocess.run([*mtptui, "spec", "--local", "--unit", unit], capture_output=True, text=True)
        (work / "spec.txt").write_text(shown.stdout + shown.stderr)
        print(shown.stdout + shown.stderr)
        subprocess.run(["systemctl", "stop", unit])
    else:
        say("systemd is not PID 1 here: `mtptui spec` needs a unit, so it was not run")
    say(f"results in {work}: server.log, summary.json, summary.txt" + (", spec.txt" if os.path.exists(work / "spec.txt") else ""))
    return 0 if summary.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
