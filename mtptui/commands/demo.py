"""`mtptui demo`: the dashboard on the built-in SGLang simulator, started here as a child process.

The simulator (`python -m mtptui.sim`) takes sglang.launch_server's flags and logs what SGLang
would: server_args, startup, then Prefill/Decode batch lines with accept len under a background
load. It is not SGLang and serves no model; the status bar says so.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys

from mtptui.config import load_config
from mtptui.errors import UserError
from mtptui.sources.process import ProcessSource
from mtptui.config.windows import WINDOW_LABELS

SIM_LABEL = "simulator (mtptui sim, not a real SGLang)"
LOADS = ("light", "steady", "burst", "ramp", "saturate", "long")

EPILOG = """\
The simulated server: DeepSeek-V3 on TP 8 with DP attention and EP 8 (8 schedulers, each logging
its own batch lines), MTP via --speculative-algorithm NEXTN, 3 steps, topk 1, 4 draft tokens.
Try --fault accept-collapse@40 or --fault no-cuda-graph to see alerts fire, --no-spec to compare.

keys: m metric · w window · space pause · ← → scrub · / filter · s spec on/off · x smoke test ·
b benchmark profiles · ? all keys · q quit

exit codes: 0 quit, 1 runtime error, 2 bad arguments or config
"""


def _fault(text: str) -> str:
    """A fault the simulator knows, checked here (the simulator child would refuse it only after the
    screen opened); passed on as written."""
    from mtptui.sim.flags import parse_fault

    parse_fault(text)  # argparse.ArgumentTypeError, naming the faults there are
    return text


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mtptui demo", description=__doc__, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--load", choices=LOADS, default="steady", help="background load (default steady)")
    p.add_argument("--fault", action="append", default=[], metavar="NAME[@S]", type=_fault,
                   help="a simulator fault: accept-collapse@S, no-cuda-graph, crash@S, oom, nccl@S, hang@S")
    p.add_argument("--no-spec", action="store_true", help="run without speculative decoding")
    p.add_argument("--seed", type=int, default=0, help="simulator seed (default 0)")
    p.add_argument("--theme", metavar="NAME", help="colour theme (t cycles)")
    p.add_argument("--window", choices=WINDOW_LABELS, default="1m",
                   help="starting time window (default 1m; w cycles)")
    p.add_argument("--config", metavar="PATH",
                   help="config file for thresholds, keys, theme, profiles (default: the user's config dir)")
    p.add_argument("--record", metavar="FILE",
                   help="also write every line the simulator printed to FILE (replay or summary it later)")
    return p


def free_port() -> int:
    # The simulator also answers HTTP like SGLang; a fixed port would clash with a real server.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sim_argv(args: argparse.Namespace, port: int, extra: list[str] | None = None) -> list[str]:
    argv = [sys.executable, "-m", "mtptui.sim", "--model-path", "deepseek-ai/DeepSeek-V3-0324",
            "--tp", "8", "--dp", "8", "--enable-dp-attention", "--ep", "8", "--trust-remote-code",
            "--mem-fraction-static", "0.8", "--host", "127.0.0.1", "--port", str(port),
            "--sim-load", args.load, "--sim-seed", str(args.seed), "--enable-metrics"]
    if not args.no_spec:
        argv += ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3",
                 "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]
    for f in args.fault:
        argv += ["--sim-fault", f]
    return argv + list(extra or [])


def demo_source(args: argparse.Namespace, extra: list[str] | None = None):
    """(source for the dashboard, record writer or None). Raises OSError for a bad --record."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    source = ProcessSource(sim_argv(args, free_port(), extra), host="simulator", label=SIM_LABEL, env=env)
    if not args.record:
        return source, None
    from mtptui.sources.record import RecordingSource, RecordWriter

    writer = RecordWriter(args.record)
    return RecordingSource(source, writer), writer


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        import mtptui.sim  # noqa: F401
    except ImportError:
        raise UserError("the simulator (mtptui.sim) is not installed") from None
    config = load_config(args.config)
    from mtptui.tui.launch import run_dashboard

    try:
        source, writer = demo_source(args)
    except OSError as e:
        raise UserError(f"{args.record}: {e.strerror or e}") from None
    try:
        return run_dashboard([source], config=config, title="demo: " + SIM_LABEL, window=args.window,
                             theme=args.theme)
    finally:
        # The worker stops the child on quit; this covers an exit that skipped it.
        source.kill_now()
        if writer is not None:
            writer.close()
