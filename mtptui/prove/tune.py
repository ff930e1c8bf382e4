"""`mtptui tune`: the best speculation settings at the concurrency a host serves, found by
successive halving instead of a grid.

Candidates: the profiles named, and around their chains a neighbourhood: one draft step more
than the longest chain (control.profiles.step), and each chain's steps drafted as a tree of topk
2 and 4 (draft tokens steps + 1: the tree's best steps + 1 nodes verified, what a chain
verifies), those the server's rules allow (control.profiles.check_profile on the unit's own
version and arguments). The grid it replaces is SGLang's bench_speculative.py's: every steps
from 1 to that longest, topk 1, 2, 4 and draft tokens from steps + 1 up to the tree's
steps x topk + 1 nodes, each point measured with the last round's requests.

Load: the concurrency given (--concurrency), else the load the host's log shows (Served): the
traffic that shows there goes on while the tune measures, so the tune sends one request per DP
group at a time on top of it (one on a server without DP) and is measured at that load, which
its preview names; sending as many as run would measure at twice the load named.

Rounds: every candidate still in is applied through the benchmark's own path (prove.bench:
plan, check against the preview, apply, verify, warm up) and measured at the concurrency with
the round's requests (the first round's, doubled each round). After a round the leader (most
output tokens/s, no errors) is compared with each other candidate by the bootstrap interval of
core.stats (prove.results.change): it is separated, and the tune ends, when its interval
against the runner-up lies above 0; otherwise the lower half is dropped, but only those of it
whose interval against the leader lies wholly below 0 (clearly worse: the others are measured
again). It stops too with one candidate left, or when the next round (estimated from this
one's times) would not fit the time budget. The host is restored at the end, as `bench`
restores it, unless the operator accepts the winner (`accept`), when it is left applied.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from mtptui.control import launch
from mtptui.control.errors import ControlError
from mtptui.control.plan import APPLY, Plan, duration_text
from mtptui.control.profiles import Profile, ProfileError, check_profile, step
from mtptui.core.epochs import spec_label
from mtptui.core.parse import BATCH, LineParser
from mtptui.core.records import DECODE
from mtptui.files import write_replacing
from mtptui.prove import prompts, results, schedule
from mtptui.prove.bench import DONE, Bench, Report
from mtptui.transport.errors import TransportError

TREE_TOPKS = (2, 4)  # the neighbourhood's trees
GRID_TOPKS = (1, 2, 4)  # the grid's topk (bench_speculative.py's example: 0 1 2 4, 0 being off)
LISTEN_S = 10.0  # how long the log is read for the concurrency the host serves
SEPARATED, ONE_LEFT, BUDGET, NONE_LEFT = "separated", "one left", "budget spent", "none measured"

Allowed = Callable[[Profile], bool]


# --- the candidates --------------------------------------------------------------------------------

def _chains(profiles: Sequence[Profile]) -> list[Profile]:
    """The profiles that draft a chain of a known length (topk 1), whose steps can be varied."""
    return [p for p in profiles if p.on and isinstance(p.num_steps, int) and p.topk in (None, 1)
            and p.algorithm and p.algorithm.upper() in ("NEXTN", "EAGLE", "EAGLE3", "STANDALONE")]


def _settings(p: Profile) -> dict:
    return {"algorithm": p.algorithm, "num_steps": p.num_steps, "topk": p.topk,
            "num_draft_tokens": p.num_draft_tokens, "draft_model_path": p.draft_model_path}


def _key(p: Profile) -> tuple:
    return (p.algorithm.upper() if p.algorithm else None, p.num_steps, (p.topk or 1) if p.on else None,
            p.num_draft_tokens, p.draft_model_path)


def _tree(chain: Profile, topk: int, draft: int | None = None) -> Profile:
    s = chain.num_steps
    assert s is not None  # a chain's
    d = s + 1 if draft is None else draft
    name = f"{chain.name}-top{topk}" + ("" if draft is None else f"-d{d}")
    return Profile(name, algorithm=chain.algorithm, num_steps=s, topk=topk, num_draft_tokens=d,
                   draft_model_path=chain.draft_model_path, env=chain.env, extra_args=chain.extra_args)


def candidates(profiles: Sequence[Profile], allowed: Allowed) -> list[Profile]:
    """The profiles (each allowed one, in order), then the neighbourhood of their chains: one
    step more than the longest, and every chain's steps as trees of TREE_TOPKS; no settings twice."""
    out: list[Profile] = []
    seen: set[tuple] = set()

    def add(p: Profile) -> None:
        if _key(p) not in seen and allowed(p):
            seen.add(_key(p))
            out.append(p)

    for p in profiles:
        add(p)
    chains = _chains(out)
    if chains:
        longest = max(chains, key=lambda p: p.num_steps or 0)
        with contextlib.suppress(ProfileError):
            chains.append(step(_settings(longest), +1))
        for c in chains:
            add(c)
        for c in chains:
            for k in TREE_TOPKS:
                add(_tree(c, k))
    return out


def grid(profiles: Sequence[Profile], allowed: Allowed) -> list[Profile]:
    """The grid over the same ground (bench_speculative.py's): off where a profile is off, and
    for the first chain's algorithm every steps 1..longest (one more than the profiles'), topk in
    GRID_TOPKS, draft tokens steps + 1 .. steps x topk + 1, those allowed."""
    out = [p for p in profiles if not p.on and allowed(p)][:1]
    chains = _chains(profiles)
    if not chains:
        return out
    top = max(p.num_steps or 0 for p in chains) + 1
    base = chains[0]
    for s in range(1, top + 1):
        chain = Profile(f"s{s}", algorithm=base.algorithm, num_steps=s, topk=1, num_draft_tokens=s + 1,
                        draft_model_path=base.draft_model_path)
        for k in GRID_TOPKS:
            for d in range(s + 1, s * k + 2):
                p = chain if k == 1 else _tree(chain, k, d)
                if allowed(p):
                    out.append(p)
    return out


def allowed_on(ctx: launch.Context, engine: str) -> Allowed:
    """Whether the server (ctx: its version and arguments) would take a profile: the control
    path's own check."""
    def ok(p: Profile) -> bool:
        try:
            check_profile(p, ctx, engine)
        except ProfileError:
            return False
        return True
    return ok


# --- the concurrency it serves -----------------------------------------------------------------------

@dataclass(frozen=True)
class Served:
    """The load a server's decode lines show: requests running in all, over the schedulers that
    each log their own batch (DP groups; one where TP ranks log the same batch), from `lines`."""

    running: int
    groups: int
    lines: int

    def own(self) -> int:
        """The tune's own requests at once: one per DP group. The load the log shows is traffic
        that goes on while the tune measures, so the tune's requests ride on it, one in each
        group's batch, and are measured at that load; as many again as run (the log's total)
        would measure at twice the load it names."""
        return self.groups

    def words(self, source: str) -> str:
        """Where the tune's concurrency came from, said with the load it measures at (source:
        where the lines were read, e.g. "in its log's last 60 s")."""
        each = (f"one per DP group, on top of the {self.running} running that its log shows: {self.groups} DP "
                f"groups, about {self.running / self.groups:.0f} each" if self.groups > 1 else
                f"one at a time, on top of the {self.running} running that its log shows")
        return f"{each}, the median #running-req of {self.lines} decode lines {source}"


def served(samples: Sequence[tuple[str, int]]) -> Served | None:
    """The load a server runs from its decode lines' (rank, #running-req): each rank's median;
    where the ranks are DP groups (each logs its own requests) their sum, else the largest (TP
    ranks log the same batch). None without samples."""
    by_rank: dict[str, list[int]] = {}
    for rank, n in samples:
        by_rank.setdefault(rank, []).append(n)
    if not by_rank:
        return None
    medians = [statistics.median(v) for v in by_rank.values()]
    dp = any("DP" in r for r in by_rank) and len(by_rank) > 1
    total = sum(medians) if dp else max(medians)
    return Served(max(1, round(total)), len(by_rank) if dp else 1, len(samples))


async def read_served(hc, listen_s: float = LISTEN_S) -> Served | None:
    """The load the unit's log shows over listen_s seconds (None without a decode line)."""
    follower = await hc.follow_log()
    parser = LineParser()
    samples: list[tuple[str, int]] = []
    loop = asyncio.get_running_loop()
    end = loop.time() + listen_s
    try:
        while (left := end - loop.time()) > 0:
            got = await follower.lines(min(left, 1.0))
            if got is None:
                break
            for raw in got:
                p = parser.parse(raw)
                if p.outcome == BATCH and p.record.kind == DECODE and p.record.fields.get("running_req") is not None:
                    samples.append((p.record.rank, int(p.record.fields["running_req"])))
    except TransportError as e:
        raise ControlError(f"{hc.host}: the log stopped: {e}") from None
    finally:
        with contextlib.suppress(Exception):
            await follower.close()
    return served(samples)


# --- the halving ---------------------------------------------------------------------------------------

@dataclass
class Decision:
    kept: list[str]  # still in, best first
    dropped: dict[str, str]  # name -> why
    leader: str | None
    verdict: dict | None  # prove.results.verdict of the round
    stop: str = ""  # SEPARATED, ONE_LEFT, NONE_LEFT, or "" to go on


def decide(rows: Sequence[dict]) -> Decision:
    """A round's rows (prove.bench's, one concurrency): what goes on to the next round."""
    ok = sorted((r for r in rows if r["requests"] and not r["errors"] and r["output_tok_s"]),
                key=lambda r: -r["output_tok_s"])
    dropped = {r["profile"]: ("did not apply (rolled back)" if not r["requests"] else f"{r['errors']} errors")
               for r in rows if r not in ok}
    v = results.verdict(list(rows))
    if not ok:
        return Decision([], dropped, None, v, NONE_LEFT)
    leader = ok[0]
    if len(ok) == 1:
        return Decision([leader["profile"]], dropped, leader["profile"], v, ONE_LEFT)
    if v is not None and v["separated"]:
        dropped.update({r["profile"]: "behind the separated leader" for r in ok[1:]})
        return Decision([leader["profile"]], dropped, leader["profile"], v, SEPARATED)
    half = len(ok) // 2
    for r in ok[len(ok) - half:]:
        c = results.change(r, leader)
        if c is not None and c[2] is not None and c[2] < 0:
            dropped[r["profile"]] = (f"clearly worse than {leader['profile']}: {c[0]:+.1f}% "
                                     f"({c[1]:+.1f}% to {c[2]:+.1f}%, 95%)")
    kept = [r["profile"] for r in ok if r["profile"] not in dropped]
    return Decision(kept, dropped, leader["profile"], v, ONE_LEFT if len(kept) == 1 else "")


def decide_loads(rows: Sequence[dict], at: int) -> Decision:
    """A round measured at several concurrencies (a tune for a schedule): concurrency `at`'s
    halving names the leader; a candidate goes on while any concurrency keeps it (it may win a
    bucket of its own), and the tune stops only where every concurrency would."""
    cs = sorted({r["concurrency"] for r in rows})
    if len(cs) < 2:
        return decide(rows)
    each = {c: decide([r for r in rows if r["concurrency"] == c]) for c in cs}
    main = each[at]
    kept = list(dict.fromkeys([*main.kept, *(n for c in cs for n in each[c].kept)]))
    dropped = {n: "; ".join(f"c={c}: {each[c].dropped[n]}" for c in cs)
               for n in main.dropped if n not in kept}
    stop = main.stop if all(d.stop for d in each.values()) else ""
    return Decision(kept, dropped, main.leader, main.verdict, stop)


def next_round_s(apply_s: Sequence[float], measure_s: Sequence[float], kept: int, factor: float = 2.0) -> float:
    """What the next round would take: each candidate kept applied as this round's were, and
    measured with `factor` times the requests; the first needs no restart (it is running)."""
    if not kept:
        return 0.0
    a = statistics.fmean(apply_s) if apply_s else 0.0
    m = statistics.fmean(measure_s) if measure_s else 0.0
    return (kept - 1) * a + kept * m * factor


def points(rounds: Sequence[dict]) -> int:
    """Settings measured, counted once a round each."""
    return sum(len(r["candidates"]) for r in rounds)


def counts(report: dict) -> str:
    """`measured 17 points (13 settings over 3 rounds, 232 requests); a grid over the same
    steps, topk and draft tokens: 53 points (1696 requests at 32 each)`."""
    rounds = report["rounds"]
    if not rounds:  # stopped or failed within its first round: what it measured there, no more
        return (f"no round finished: {len(report['results'])} of {len(report['candidates'])} settings measured "
                f"in the first; a grid over the same steps, topk and draft tokens: {report['grid']} points")
    last = rounds[-1]["requests"]
    sent = sum(len(r["candidates"]) * r["requests"] for r in rounds)
    return (f"measured {points(rounds)} points ({len(report['candidates'])} settings over {len(rounds)} "
            f"round{'s' * (len(rounds) != 1)}, {sent} requests); a grid over the same steps, topk and draft "
            f"tokens: {report['grid']} points ({report['grid'] * last} requests at {last} each)")


def by_round(data: dict) -> list[tuple[str, dict, list[str]]]:
    """Each round of a tune's report: its heading, the report of its rows alone (for
    prove.results' tables), and what it dropped and why."""
    several = len({r["concurrency"] for r in data["results"]}) > 1  # a tune for a schedule
    return [(f"round {rd['round']}: {len(rd['candidates'])} candidates, {rd['requests']} requests each"
             + (" (at a higher concurrency, as many as it has in flight)" if several else ""),
             {**data, "results": [r for r in data["results"] if r.get("round") == rd["round"]]},
             [f"  dropped {name}: {why}" for name, why in rd["dropped"].items()])
            for rd in data["rounds"]]


def ending_lines(data: dict) -> list[str]:
    """The end of a tune's report, for the terminal and the results screen: the winner, the
    counts against the grid, what was left on the host."""
    head = (f"winner: {data['winner'] or '-'} ({'separated' if data['separated'] else 'not separated'}; "
            f"stopped: {data['stopped'] or '-'})" if data["rounds"] else "winner: none (no round finished)")
    return [head, counts(data), *(schedule.evidence_lines(data["schedule"]) if data.get("schedule") else []),
            "host: " + (f"left running {data['kept']}, as accepted" if data["kept"]
                        else "restored" if data["restored"] else "NOT restored")]


def save(data: dict, json_path: str | None = None, csv_path: str | None = None) -> list[Path]:
    """The JSON and a CSV with each row's round, in the data directory (tune-HOST-stamp) and
    where asked; the paths written. Raises OSError."""
    d = results.data_dir()
    d.mkdir(parents=True, exist_ok=True)
    stamp = data["started"].replace("-", "").replace(":", "").replace("T", "-").rstrip("Z")
    name = f"tune-{data['host']}-{stamp}".replace("/", "_")
    lines = results.to_csv(data).splitlines()
    rounds = [str(r.get("round", "")) for r in data["results"]]
    csv_text = "\n".join(["round," + lines[0], *(f"{k},{x}" for k, x in zip(rounds, lines[1:]))]) + "\n"
    json_text = json.dumps(data, indent=2) + "\n"
    config = (data.get("schedule") or {}).get("adaptive_config")  # SGLang's tiers, for the operator to put on the host
    written = []
    for path, body in ((d / f"{name}.json", json_text), (d / f"{name}.csv", csv_text), (json_path, json_text),
                       (csv_path, csv_text),
                       (config and d / f"{name}-adaptive-config.json", json.dumps(config, indent=2) + "\n")):
        if path:
            write_replacing(path, body)  # never a device, a FIFO or a link's place; mode and owner kept
            written.append(Path(path))
    return written


# --- the run ---------------------------------------------------------------------------------------------

async def prepare(hc, profiles: Sequence[Profile], concurrency: int, where: str, requests: int, *,
                  budget_s: float, **kw) -> Tune:
    """A Tune of the candidates around `profiles` that the host's server allows (its version and
    arguments as they are now), at `concurrency` (`where`: how it was found), the grid it
    replaces counted; the command's and the dashboard's. Raises ControlError, launch.LaunchError."""
    st = await hc.state()
    version = (await hc.server_version(st.argv))[0]
    ctx, engine = launch.context_of(st.base, version), launch.find_launch(st.argv).engine
    allowed = allowed_on(ctx, engine)
    t = Tune(hc, candidates(profiles, allowed), concurrency, requests, budget_s=budget_s,
             grid_points=len(grid(profiles, allowed)), **kw)
    t.tr.concurrency_from = where
    t.engine, t.version, t.check = engine, ctx.version, lambda p: check_profile(p, ctx, engine)
    return t


@dataclass
class TuneReport(Report):
    concurrency: int = 0
    concurrency_from: str = ""  # "--concurrency", or what the log showed
    budget_s: float = 0.0
    grid: int = 0
    candidates: list[dict] = field(default_factory=list)
    rounds: list[dict] = field(default_factory=list)
    winner: str | None = None
    separated: bool = False
    stopped: str = ""
    kept: str = ""  # the winner left applied, as the operator accepted
    schedule: dict | None = None  # prove.schedule.propose's, where measured at several concurrencies

    def to_json(self) -> dict:
        rows = results.with_intervals(self.results)
        data = {"host": self.host, "unit": self.unit, "started": self.started, "prompts": self.prompts,
                "concurrency": self.concurrency, "concurrency_from": self.concurrency_from,
                "budget_s": self.budget_s, "candidates": self.candidates, "grid": self.grid,
                "rounds": self.rounds, "winner": self.winner, "separated": self.separated, "stopped": self.stopped,
                "results": rows, "restored": self.restored, "kept": self.kept or None}
        if self.schedule is not None:
            data["schedule"] = self.schedule
        data["points"] = points(self.rounds)
        return data

    @property
    def exit_code(self) -> int:
        if self.kept and not self.interrupted and not self.error:
            return DONE
        return super().exit_code


class Tune(Bench):
    """prove.bench's run (preview, apply, verify, restore, audit) over rounds of candidates."""

    ACTION = "tune"
    REPORT = TuneReport

    def __init__(self, hc, profiles: list[Profile], concurrency: int, requests: int, *, budget_s: float,
                 grid_points: int = 0, accept: Callable[[Tune], Awaitable[bool]] | None = None,
                 loads: Sequence[int] = (), **kw) -> None:
        # loads: more concurrencies, measured too for a schedule by load (the asked one first)
        super().__init__(hc, profiles, [concurrency, *sorted(set(loads) - {concurrency})], requests, **kw)
        # each load gets the round's requests, or as many as it has in flight where that is more:
        # not the highest load's count at every load (128 requests one at a time)
        self.requests = max(requests, concurrency)
        self.raised = self.requests > requests
        self._round_requests = self.requests
        self.engine: str = "sglang"  # the server's engine and version (prepare), for the schedule's rules
        self.version: tuple | None = None
        self.check: Callable[[Profile], None] | None = None
        self.budget_s = budget_s
        self.accept = accept
        self.keep: Profile | None = None
        self._apply_s: list[float] = []
        r = self.report
        assert isinstance(r, TuneReport)
        self.tr = r
        r.concurrency, r.budget_s, r.grid = concurrency, budget_s, grid_points
        r.candidates = [{"profile": p.name, **{k: v for k, v in _settings(p).items() if v is not None}}
                        for p in profiles]

    def title(self) -> str:
        return f"{self.hc.host} · {self.hc.unit}: tune {len(self.profiles)} candidates"

    def preview_lines(self) -> list[str]:
        lines = super().preview_lines()
        lines[0] = (f"tune: {len(self.profiles)} candidates at concurrency {self.concurrencies[0]} "
                    f"({self.tr.concurrency_from}); {self.requests} requests each in the first round"
                    f"{' (raised to the concurrency: fewer would never have that many in flight)' if self.raised else ''}"
                    f", twice as many "
                    f"in each next one; {self.max_tokens} tokens each; budget {self.budget_s / 60:g} min "
                    f"(a grid would measure {self.tr.grid} points)")
        lines[1] = (f"restarts: {self.first_round_cost()}; then one per candidate a round (each round's first is "
                    "already running), then back to the unit as it was found (its drop-in byte for byte), also after "
                    f"a cancel or a failure ({self.restore_within()}), unless the winner is accepted at the end")
        # each candidate on one line of its settings, where bench lists each profile's flag diff
        # (a wrapped line per candidate): the whole list in one screen; the diffs follow below
        n = len(self.profiles)
        width = max(len("restore"), *(len(p.name) for p in self.profiles))
        lines[3:5 + n] = ["the candidates, in the order the first round runs them:",
                          *(f"  {p.name.ljust(width)}  {spec_label(_settings(p))}" + ("" if changed else "  (no change: no restart)")
                            for p, (_, changed) in zip(self.profiles, self.changes())),
                          f"  {'restore'.ljust(width)}  back to the unit as it was found"]
        return lines

    def first_round_cost(self) -> str:
        """Round 1 measures every candidate, whatever the budget (which only ends the rounds after
        it): its restarts, and what they cost at this server's last start (Started to ready),
        the median of its last few where the journal has several. A real model's start is minutes:
        a dozen candidates is an hour or two before the budget counts."""
        n = sum(bool(changed) for _, changed in self.changes())
        st = self._before
        start = statistics.median(st.starts_s) if st is not None and st.starts_s else (st.last_start_s if st else None)
        head = f"round 1 restarts the server {n} time{'s' if n != 1 else ''} whatever the budget"
        if not n:
            return head
        if start is None:
            return head + ", each as long as a start of it (none seen in its journal to measure)"
        which = "its last start" if not st or len(st.starts_s) < 2 else f"the median of its last {len(st.starts_s)} starts"
        return head + f", about {duration_text(n * start)} at {which} ({duration_text(start)}, Started → ready)"

    async def _apply(self, plan: Plan) -> bool:
        t = time.monotonic()
        try:
            return await super()._apply(plan)
        finally:
            self._apply_s.append(time.monotonic() - t)

    async def _measure(self) -> None:
        r = self.tr
        by_name = {p.name: (p, shown) for p, shown in zip(self.profiles, self.previewed)}
        alive = [p.name for p in self.profiles]
        requests = self.requests
        for k in range(1, 64):
            t0 = time.monotonic()
            self._apply_s = []
            measure_s: list[float] = []
            prompt_set = prompts.draw(max(requests, *self.concurrencies), self.seed + k - 1, self.pool)
            self._round_requests = requests
            self._progress.steps_done, self._progress.steps_total = 0, len(alive) * len(self.concurrencies)
            rows: list[dict] = []
            for name in alive:
                profile, shown = by_name[name]
                self._say(profile=f"round {k}: {name}")
                n_apply = len(self._apply_s)
                t = time.monotonic()
                got = await self._measure_profile(profile, shown, self.concurrencies, prompt_set)
                applied = sum(self._apply_s[n_apply:])
                if got[0]["requests"]:
                    measure_s.append(time.monotonic() - t - applied)
                for row in got:
                    row["round"] = k
                rows += got
            d = decide_loads(rows, r.concurrency)
            spent = time.monotonic() - self._t0
            ahead = next_round_s([a for a in self._apply_s if a > 1.0] or self._apply_s, measure_s, len(d.kept))
            stop = d.stop or (BUDGET if spent + ahead > self.budget_s else "")
            r.rounds.append({"round": k, "requests": requests, "candidates": alive, "leader": d.leader,
                             "verdict": d.verdict, "kept": d.kept, "dropped": d.dropped,
                             "seconds": round(time.monotonic() - t0, 1), "stop": stop or None})
            self._step(f"round {k}", "ok", f"{len(alive)} measured, {len(d.kept)} kept"
                       + (f"; stopped: {stop}" if stop else ""))
            r.winner, r.separated, r.stopped = d.leader, bool(d.verdict and d.verdict["separated"]), stop
            if stop:
                break
            # the one running now first: it needs no restart
            alive = sorted(d.kept, key=lambda n: -alive.index(n))
            requests *= 2
        if len(self.concurrencies) > 1:
            r.schedule = schedule.propose(r.results, self.profiles, r.concurrency, self.engine, self.version,
                                          self.check)
        chosen = self.choice()
        if chosen is not None and self.accept is not None and await self.accept(self):
            self.keep = chosen

    def _prompts_at(self, prompt_set: list[prompts.Prompt], concurrency: int) -> list[prompts.Prompt]:
        return prompt_set[:max(self._round_requests, concurrency)]

    def proposal(self) -> Profile | None:
        """The schedule by load the measurements propose, as a profile; None where there is none."""
        got = (self.tr.schedule or {}).get("profile")
        return schedule.profile_of(got) if got else None

    def choice(self) -> Profile | None:
        """What accepting leaves running: the proposed schedule where there is one, else the winner."""
        return self.proposal() or next((p for p in self.profiles if p.name == self.tr.winner), None)

    async def winner_plan(self) -> Plan | None:
        """The winner's plan against the unit as it was found: what accepting it leaves, against
        what a restore would bring back. None without a winner."""
        winner = self.choice()
        if winner is None or self._before is None:
            return None
        return replace(await self.hc.plan(APPLY, winner), old_argv=self._before.argv)

    async def _restore(self) -> None:
        r = self.tr
        if self.keep is not None and not r.interrupted and not r.error and not self._hands_off:
            try:
                plan = await self.hc.plan(APPLY, self.keep)
                if await self._apply(plan):
                    r.kept = self.keep.name
                    r.restore_message = f"left running {self.keep.name}, as accepted"
                    self._step("keep", "ok", r.restore_message)
                    return
            except ControlError as e:
                self._step("keep", "fail", str(e))
        await super()._restore()

    def summary(self) -> str:
        r = self.tr
        if r.winner:
            head = (f"winner {r.winner}" + (" (separated)" if r.separated else " (not separated)")
                    + f" at concurrency {r.concurrency}; stopped: {r.stopped}")
        else:
            head = "no winner"
        if r.kept:
            return f"{head}; {r.restore_message}"
        return f"{head}; {super().summary()}"

