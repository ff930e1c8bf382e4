"""Offline rendering: whole server lives on a simulated clock, wrapped as journalctl prints them.

`render()` yields `Line(text, truth)` pairs: the line as written (envelope included) and what it
means, computed by the simulator (see msg.py). Time starts at 2026-03-09 16:00:00 UTC and every
random draw comes from a random.Random seeded by the scenario, so output is byte-identical from
run to run. Named scenarios chain several server runs with systemd's lines between them
(restarts, failures, restart jobs).
"""

from __future__ import annotations

import calendar
import contextlib
import itertools
import json
import math
import random
import zlib
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field

from mtptui.sim import flags, formats, vllm
from mtptui.sim.journal import JOURNAL_DELAY, Journal, Line
from mtptui.sim.msg import Msg
from mtptui.sim.session import Session

T0 = float(calendar.timegm((2026, 3, 9, 16, 0, 0)))
CHUNK = 2.0  # simulated seconds per step of the offline loop


@dataclass
class Run:
    """One start of the service."""

    argv: list[str]  # SGLang flags plus --sim- options (version, load, faults)
    serve: float  # seconds of serving after the ready line (if it lives that long)
    # "stop": systemctl stops/restarts it after `serve`; "keep": the log ends while it runs;
    # "die": it serves until its --sim-fault kills it (serve is ignored)
    end: str = "stop"


@dataclass
class Scenario:
    name: str
    description: str
    runs: list[Run]
    unit: str = "sglang-qwen.service"
    unit_description: str = "SGLang Qwen3.5-122B-A10B server"
    host: str = "gpu-h1"
    startup_seconds: float = 45.0
    restart_sec: float = 10.0  # RestartSec= of the unit
    engine: str = "sglang"
    extra: dict = field(default_factory=dict)


def config_from_argv(argv: list[str]) -> flags.Config:
    """Parses a scenario's (or a caller's) flags exactly as the command line does."""
    version = flags.pre_version(argv)
    ns = flags.build_parser(version).parse_args(argv)
    return flags.resolve(ns)


def _text_of(m: Msg) -> str:
    return m.text if m.who is None else formats.prefix(m.t, m.who, utc=True) + m.text


def render_runs(runs: list[Run], *, envelope: str = "short-iso", host: str = "gpu-h1",
                unit: str = "sglang-qwen.service", unit_description: str = "SGLang server",
                seed: int = 0, t0: float = T0, startup_seconds: float | None = None,
                restart_sec: float = 10.0, t_limit: float = math.inf,
                systemd: bool = True, salt: str = "") -> Iterator[Line]:
    """Renders one or more runs of a service; systemd's lines go between them when `systemd`.
    `salt` (a scenario's name) keeps different scenarios from sharing PIDs, ids and traffic."""
    rng = random.Random(f"{seed}:{salt}:journal")
    run_seed = seed * 1000 + (zlib.crc32(salt.encode()) % 100_000) * 10
    jr = Journal(envelope, host, unit, unit_description, rng, t_boot=t0 - 3 * 86400 - rng.uniform(0, 3600))
    out = _Journaled(jr, envelope, None if envelope == "cat" else host, t_limit, systemd)
    t = t0
    restarts = 0
    for n, run in enumerate(runs):
        argv = list(run.argv) + ["--sim-seed", str(run_seed + n)]
        if startup_seconds is not None:
            argv += ["--sim-startup-seconds", str(startup_seconds)]
        cfg = config_from_argv(argv)
        pid = rng.randint(2000, 60000)
        jr.new_invocation("python3 -m mtptui.sim " + " ".join(run.argv))
        t_start = t
        yield from out.systemd(t, jr.started())
        session = Session(cfg, t + 0.4, pid, mode="offline log")
        t_end = yield from _serve(out, session, run, pid, t + 0.4)
        if t_end is None:
            return
        cpu = (t_end - t_start) * (len(session.lay.ranks) + 2) * 0.93
        if session.exit_code == 0:
            yield from out.systemd(t_end + 0.05, jr.stopped_ok(cpu))
            t = t_end + 0.3
        else:
            yield from out.systemd(t_end + 0.05, jr.failed(cpu))
            t = t_end + restart_sec
            if n + 1 < len(runs) and systemd:
                restarts += 1
                yield from out.systemd(t, jr.restart_scheduled(restarts))
                t += 0.001
        if t > t_limit:
            return


@dataclass
class _Journaled:
    """How an offline log's lines reach its journal, each with its truth, none past `t_limit`:
    systemd's own (only when `systemd`) and the server's."""

    jr: Journal
    envelope: str
    host: str | None  # None in a `cat` log, which names no host
    t_limit: float
    systemd_lines: bool

    def systemd(self, t: float, items: list[tuple[str, int, dict]]) -> Iterator[Line]:
        """systemd's lines ((text, priority, truth)), 0.1 ms apart from `t`."""
        if not self.systemd_lines:
            return
        for i, (text, prio, truth) in enumerate(items):
            tt = t + 0.0001 * i
            if tt > self.t_limit:
                return
            line = self.jr.systemd(tt, text, prio)
            yield Line(line, dict(truth, ts=tt if self.envelope != "cat" else None, host=self.host, message=text))

    def server(self, msgs: list[Msg], pid: int) -> Iterator[Line]:
        """The server's lines, as journald receives them a moment after they are written."""
        for m in msgs:
            if m.t > self.t_limit:
                continue
            text = _text_of(m)
            tj = m.t + JOURNAL_DELAY
            ts = tj if self.envelope != "cat" else (m.t if m.who is not None else None)
            yield Line(self.jr.server(tj, text, pid, m.stream), dict(m.truth, ts=ts, host=self.host, message=text))


def _serve(out: _Journaled, session: Session, run: Run, pid: int, now: float) -> Generator[Line, None, float | None]:
    """One run from its start to its end, in CHUNK steps: a "stop" run is stopped `run.serve` s after
    its ready line (systemd's stopping lines, then SIGTERM), a "die" run lives until its fault ends
    it. Returns when the process ended, or None when the log ends first (a "keep" run, or `t_limit`)."""
    t_limit = out.t_limit
    stop_at = None
    while session.exit_code is None:
        if session.ready_at is not None and stop_at is None and run.end != "die":
            stop_at = session.ready_at + run.serve
        target = min(now + CHUNK, t_limit)
        if stop_at is not None and target >= stop_at and session.state == "ready":
            yield from out.server(session.advance(stop_at), pid)
            if run.end == "keep" or stop_at >= t_limit:
                return None
            yield from out.systemd(stop_at, out.jr.stopping())
            session.terminate(stop_at + 0.002)
            now = stop_at
            continue
        if stop_at is None and session.next_time() == math.inf:
            # Idle and nothing scheduled: only a "die" run without a timed fault gets here.
            raise ValueError("a run that ends by its fault needs a timed --sim-fault")
        yield from out.server(session.advance(target), pid)
        now = target
        if now >= t_limit:
            return None
    return session.exit_at if session.exit_at is not None else now


# ---------------------------------------------------------------------------------------------
# Named scenarios (sample_logs/ is made from these)

QWEN = ["--model-path", "Qwen/Qwen3.5-122B-A10B", "--tp", "4", "--host", "0.0.0.0", "--port", "30000",
        "--trust-remote-code", "--mem-fraction-static", "0.85", "--reasoning-parser", "qwen3"]
DEEPSEEK = ["--model-path", "deepseek-ai/DeepSeek-V3-0324", "--tp", "8", "--host", "0.0.0.0",
            "--port", "30000", "--trust-remote-code", "--mem-fraction-static", "0.8"]


def nextn(steps: int) -> list[str]:
    return ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", str(steps),
            "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", str(steps + 1)]


SCENARIOS: dict[str, Scenario] = {s.name: s for s in [
    Scenario("mtp-on-tp4", "Qwen3.5 hybrid (mamba pool fields), TP4, MTP on (NEXTN 3 steps), steady load, 0.5.12",
             [Run(QWEN + nextn(3) + ["--sim-load", "steady"], serve=200, end="keep")]),
    Scenario("mtp-off-baseline", "the same server with speculation off, steady load",
             [Run(QWEN + ["--sim-load", "steady"], serve=200, end="keep")]),
    Scenario("mtp-toggle-restarts", "off, then NEXTN 3 steps, then 1 step, across systemctl restarts",
             [Run(QWEN + ["--sim-load", "steady"], serve=80),
              Run(QWEN + nextn(3) + ["--sim-load", "steady"], serve=80),
              Run(QWEN + nextn(1) + ["--sim-load", "steady"], serve=80, end="keep")]),
    Scenario("dp-attention-8", "DeepSeek-V3, TP8 DP8 with DP attention and EP8, MTP on, 0.5.8 format",
             [Run(DEEPSEEK + ["--dp", "8", "--enable-dp-attention", "--ep", "8"] + nextn(3)
                  + ["--sim-version", "0.5.8", "--sim-load", "light"], serve=120, end="keep")],
             unit="sglang-dsv3.service", unit_description="SGLang DeepSeek-V3 server", host="gpu-h2",
             startup_seconds=60.0),
    Scenario("incident-oom-crashloop",
             "a runtime CUDA OOM, then a crash loop: the restarted server finds no memory for its KV cache",
             [Run(QWEN + nextn(3) + ["--sim-load", "steady", "--sim-fault", "oom@45"], serve=0, end="die")]
             + [Run(QWEN + nextn(3) + ["--sim-fault", "oom"], serve=0, end="die") for _ in range(4)],
             startup_seconds=30.0),
    Scenario("incident-acceptance-collapse", "MTP on, acceptance collapses to about 1.0 after 80 s",
             [Run(QWEN + nextn(3) + ["--sim-load", "steady", "--sim-fault", "accept-collapse@80"],
                  serve=170, end="keep")]),
    Scenario("incident-nccl-timeout", "MTP on, a collective hangs after 60 s and NCCL's watchdog aborts",
             [Run(QWEN + nextn(3) + ["--sim-load", "light", "--sim-fault", "nccl@60"], serve=0, end="die")],
             startup_seconds=30.0),
    Scenario("incident-hang-watchdog", "the scheduler stops after 40 s; SGLang's watchdog fires 60 s later",
             [Run(QWEN + nextn(3) + ["--watchdog-timeout", "60", "--sim-load", "light", "--sim-fault", "hang@40"],
                  serve=0, end="die")], startup_seconds=30.0),
    Scenario("incident-cuda-graph-off", "MTP on but CUDA graphs unusable: `cuda graph: False`, slower decode",
             [Run(QWEN + nextn(3) + ["--sim-load", "steady", "--sim-fault", "no-cuda-graph"], serve=150,
                  end="keep")]),
    Scenario("old-format-0.4.9", "DeepSeek-V3 on TP8 with NEXTN, SGLang 0.4.9's log format",
             [Run(DEEPSEEK + nextn(3) + ["--sim-version", "0.4.9", "--sim-load", "steady"], serve=150, end="keep")],
             unit="sglang-dsv3.service", unit_description="SGLang DeepSeek-V3 server", startup_seconds=60.0),
    Scenario("long-context-toggle",
             "contexts growing from 2k to past 64k tokens, speculation off, then NEXTN 3 steps: MTP pays "
             "under 32k tokens per request and runs slower past that",
             [Run(QWEN + ["--sim-load", "long"], serve=240),
              Run(QWEN + nextn(3) + ["--sim-load", "long"], serve=240, end="keep")]),
    Scenario("vllm-eagle", "vLLM V1 with an EAGLE3 draft: its throughput and SpecDecoding lines",
             [], unit="vllm-llama.service", unit_description="vLLM Llama-3.1-8B server", engine="vllm",
             extra={"serve": 180.0}),
]}


def render(name: str, *, duration: float | None = None, envelope: str = "short-iso", seed: int = 0,
           host: str | None = None, t0: float = T0) -> Iterator[Line]:
    """The named scenario as log lines with their truth. `duration` caps the simulated time and
    scales each run's serving time so that the log spans about that many seconds."""
    sc = SCENARIOS.get(name)
    if sc is None:
        raise KeyError(f"unknown scenario {name!r} (choose from {', '.join(SCENARIOS)})")
    host = host or sc.host
    if sc.engine == "vllm":
        serve = duration if duration is not None else sc.extra["serve"]
        yield from vllm.render(envelope=envelope, host=host, unit=sc.unit, unit_description=sc.unit_description,
                               seed=seed, t0=t0, serve=serve)
        return
    runs = sc.runs
    t_limit = math.inf
    if duration is not None:
        fixed = len(runs) * (sc.startup_seconds + 2)
        natural = sum(r.serve for r in runs if r.end != "die")
        k = max(0.02, (duration - fixed) / natural) if natural else 1.0
        runs = [Run(r.argv, r.serve * k, r.end) for r in runs]
        t_limit = t0 + duration
    yield from render_runs(runs, envelope=envelope, host=host, unit=sc.unit,
                           unit_description=sc.unit_description, seed=seed, t0=t0,
                           startup_seconds=sc.startup_seconds, restart_sec=sc.restart_sec,
                           t_limit=t_limit, salt=sc.name)


def render_argv(argv: list[str], *, duration: float = 60.0, envelope: str = "short-iso", seed: int = 0,
                host: str = "gpu-h1", unit: str = "sglang-qwen.service", t0: float = T0,
                systemd: bool = True) -> Iterator[Line]:
    """One run of a server started with these flags (SGLang's plus --sim-), serving `duration` s.
    Offline the background load defaults to steady."""
    if "--sim-load" not in argv:
        argv = list(argv) + ["--sim-load", "steady"]
    yield from render_runs([Run(list(argv), duration, end="keep")], envelope=envelope, host=host, unit=unit,
                           unit_description="SGLang server (mtptui simulator)", seed=seed, t0=t0,
                           systemd=systemd)


def generate_lines(n: int, argv: list[str] | None = None, *, envelope: str = "short-iso",
                   seed: int = 0) -> list[str]:
    """N log lines of a busy server, fast, for benchmarks (default: Qwen3.5 TP4, MTP on, steady
    load). The log simply runs as long as it takes to reach N lines."""
    argv = argv or (QWEN + nextn(3) + ["--sim-load", "steady", "--sim-startup-seconds", "30"])
    it = render_argv(argv, duration=math.inf, envelope=envelope, seed=seed)
    return [line.text for line in itertools.islice(it, n)]


def write_log(path: str, lines: Iterable[Line], truth_path: str | None = None) -> int:
    """Writes the lines (and optionally their truth as JSONL); returns how many."""
    count = 0
    with contextlib.ExitStack() as stack:
        f = stack.enter_context(open(path, "w", encoding="utf-8", newline="\n"))
        tf = stack.enter_context(open(truth_path, "w", encoding="utf-8", newline="\n")) if truth_path else None
        for line in lines:
            f.write(line.text + "\n")
            if tf is not None:
                tf.write(json.dumps(dict(line.truth, text=line.text), ensure_ascii=False) + "\n")
            count += 1
    return count
