"""The serving engine: one scheduler per DP group stepping through prefill and decode batches,
clock-agnostic. The caller says what time it is (`iterate(now)`), the engine says when it next
wants to run (`next_time()`) and leaves the lines it logged in `out`. The live runner sleeps
between calls; offline rendering just jumps the clock, so the same code makes both.

Background requests are not simulated one token at a time: every running request of a group
advances by the same batch-average accept length per step, so a request's finish is a point on
the group's cumulative progress and a heap finds it. HTTP requests are real objects that get whole
tokens (sampled from the acceptance chain) and hand them to a sink.
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from mtptui.sim import behaviour, formats
from mtptui.sim.flags import Config
from mtptui.sim.metrics import LatencyMetrics, SchedulerMetrics, labels as metric_labels
from mtptui.sim.msg import Msg, batch, event

ACCEPT_REFRESH = 8  # decode steps between updates of the acceptance drift

# ---------------------------------------------------------------------------------------------
# Layout: which GPU ranks exist, and which of them print batch lines (reference §2)


@dataclass
class Rank:
    label: str  # the prefix's rank tokens
    gpu: int
    dp_rank: int | None
    tp_rank: int  # global under DP attention, within the replica under plain DP
    tp0_of_replica: bool  # prints `max_total_num_tokens=` (and the tqdm bars if it is rank 0)


@dataclass
class Layout:
    ranks: list[Rank]
    groups: list[list[str]]  # per scheduler that logs batches: the labels that print its lines
    members: list[list[Rank]]  # per such scheduler: every rank that runs its batches


def layout(cfg: Config) -> Layout:
    a, v = cfg.args, cfg.v
    tp, dp, ep = a["tp_size"], a["dp_size"], a["ep_size"]
    ranks: list[Rank] = []
    members: list[list[Rank]] = []
    if dp > 1 and a["enable_dp_attention"]:
        attn = tp // dp
        for i in range(tp):
            d = i // attn
            ranks.append(Rank(formats.rank_label(v, i, tp, d, ep), i, d, i, i == 0))
        members = [[r for r in ranks if r.dp_rank == d] for d in range(dp)]
    elif dp > 1:
        for d in range(dp):
            replica = [Rank(formats.rank_label(v, i, tp, d, ep), d * tp + i, d, i, i == 0) for i in range(tp)]
            ranks += replica
            members.append(replica)
    else:
        ranks = [Rank(formats.rank_label(v, i, tp, None, ep), i, None, i, i == 0) for i in range(tp)]
        members = [ranks]
    groups = [[r.label for r in (m if cfg.all_schedulers else m[:1])] for m in members]
    return Layout(ranks, groups, members)


# ---------------------------------------------------------------------------------------------
# Requests


@dataclass
class RealRequest:
    """A request that came over HTTP (or the warm-up): whole tokens, delivered to a sink."""

    prompt: int
    tokens: list[str]
    sink: Callable[[list[str], float, bool], None] | None = None  # (new tokens, time, finished)
    cached: int = 0
    sent: int = 0
    accept_sum: int = 0  # tokens emitted by decode steps (for the spec accept length it saw)
    steps: int = 0
    done: bool = False
    failed: str | None = None  # why the server dropped it (a crash)
    t_arrive: float | None = None  # when it was submitted (its queue time, TTFT and latency)
    accept_factor: float = 1.0  # what its content makes of acceptance (behaviour.content_factor)

    @property
    def remaining(self) -> int:
        return len(self.tokens) - self.sent

    def deliver(self, n: int, t: float) -> None:
        n = min(n, self.remaining)
        chunk = self.tokens[self.sent:self.sent + n]
        self.sent += n
        finished = self.remaining == 0
        if finished:
            self.done = True
        if self.sink is not None and (chunk or finished):
            self.sink(chunk, t, finished)


@dataclass(order=True)
class _Bg:
    """A background request waiting in the queue."""

    prompt: int
    cached: int
    out: int
    t: float = field(default=0.0, compare=False)  # when it joined the queue


# ---------------------------------------------------------------------------------------------


class Group:
    """One scheduler that logs (a DP group, a DP replica, or the only TP group)."""

    def __init__(self, eng: Engine, idx: int, labels: list[str], members: list[Rank]) -> None:
        self.eng = eng
        self.idx = idx
        self.labels = labels
        self.members = members
        self.metrics = (SchedulerMetrics.for_group(eng.cfg, members, labels, eng.t_start)
                        if eng.args["enable_metrics"] else None)
        self.queue_key = metric_labels(eng.cfg, members[0])  # the scheduler's: queue time is its histogram
        self.arrived: dict[int, float] = {}  # a background request's seq -> when it joined the queue
        self.rng = random.Random(f"{eng.cfg.seed}:group:{idx}")
        self.difficulty = behaviour.Difficulty(self.rng)
        self.phase = self.rng.uniform(0, 120)
        self.waiting: deque = deque()  # _Bg or RealRequest
        self.bg_heap: list[tuple[float, int, float, int]] = []  # (P at finish, seq, P at admit, prompt)
        self.real: list[RealRequest] = []
        self.seq = 0
        self.P = 0.0  # cumulative tokens one background request has got since the start
        self.used = 0.0
        self.forward_ct = 0
        self.decode_ct = 0
        self.win_tokens = 0.0
        self.win_acc = 0.0
        self.win_req_steps = 0
        self.cum_acc = 0.0
        self.cum_req_steps = 0
        self.last_decode_tic = eng.t_start
        self.last_prefill_tic = eng.t_start
        self.last_prefill_tokens = 0
        self.last_gen_throughput = 0.0
        self.clients = 0
        self.thinking: list[float] = []  # heap of times when a thinking client sends again
        self.finished = 0
        self.prompt_total = 0  # prompt tokens prefilled, and tokens generated, since the start (vLLM's stats)
        self.gen_total = 0.0
        self.new_token_ratio = 0.4
        self.next_t = eng.t_start
        self._acc: tuple[float, float, float] | None = None  # (multiplier, mean, variance)
        self._since_acc = 0.0

    # -- state ------------------------------------------------------------------------------
    @property
    def running(self) -> int:
        return len(self.bg_heap) + len(self.real)

    def pool(self) -> formats.Pool:
        e = self.eng
        used = int(self.used)
        if e.hybrid == "mamba":
            cached_states = int(0.25 * e.mamba_total * (1 - math.exp(-self.finished / 200)))
            return formats.Pool("mamba", used, e.total_tokens, mamba_num=self.running + cached_states,
                                mamba_total=e.mamba_total)
        if e.hybrid == "swa":
            n = self.running
            swa = int(n * min(e.swa_window, used / n)) if n else 0
            return formats.Pool("swa", used, e.total_tokens, swa_used=swa, swa_total=e.swa_total)
        return formats.Pool("plain", used, e.total_tokens)

    # -- load -------------------------------------------------------------------------------
    def _arrivals(self, now: float) -> None:
        e = self.eng
        if e.t_ready is None or e.draining:
            return
        target = behaviour.clients_target(e.cfg.load, now - e.t_ready, self.phase)
        while self.clients < target:
            self.clients += 1
            # New clients do not all fire in the same millisecond.
            heapq.heappush(self.thinking, now + self.rng.uniform(0, 0.5))
        while self.thinking and self.thinking[0] <= now:
            heapq.heappop(self.thinking)
            if self.clients > target:
                self.clients -= 1
                continue
            prompt, cached, out = behaviour.request_size(e.cfg.load, self.rng, e.max_prompt, now - e.t_ready,
                                                         e.context_len)
            if e.args["disable_radix_cache"]:
                cached = 0
            self.waiting.append(_Bg(prompt, cached, out, now))

    def _client_done(self, t: float) -> None:
        heapq.heappush(self.thinking, t + behaviour.think_time(self.rng))

    # -- one iteration ----------------------------------------------------------------------
    def iterate(self, now: float) -> None:
        self._arrivals(now)
        if self.eng.stalled:
            self.next_t = math.inf
            return
        if self.waiting and self._prefill(now):
            return
        if self.running:
            self._decode(now)
            return
        # Idle: wake for the next thinking client, or to see whether the load shape changed.
        nxt = self.thinking[0] if self.thinking else math.inf
        if self.eng.cfg.load not in (None, "none"):
            nxt = min(nxt, now + 0.25)
        self.next_t = max(nxt, now + 0.001)

    def _prefill(self, now: float) -> bool:
        e = self.eng
        admitted: list = []
        new_tok = cached_tok = 0
        reserve = self.used
        while self.waiting and self.running + len(admitted) < e.max_running:
            r = self.waiting[0]
            need = r.prompt - r.cached
            if admitted and new_tok + need > e.max_prefill_tokens:
                break
            if reserve + r.prompt + self.new_token_ratio * 256 * (self.running + len(admitted) + 1) > e.total_tokens:
                break
            self.waiting.popleft()
            admitted.append(r)
            new_tok += need
            cached_tok += r.cached
            reserve += r.prompt
        if not admitted:
            return False
        # A prompt past the chunked prefill size (only long's) runs a chunk per prefill batch, each
        # logged, as SGLang's chunked prefill does; other admissions run as one batch.
        chunk = e.args["chunked_prefill_size"] or 0
        pieces = [new_tok]
        if len(admitted) == 1 and 0 < chunk < new_tok:
            pieces = [chunk] * (new_tok // chunk) + ([new_tok % chunk] if new_tok % chunk else [])
        pending = sum(r.prompt for r in self.waiting)
        t_end = now
        used = self.used  # the pool grows chunk by chunk; the prompts are counted whole below
        for i, piece in enumerate(pieces):
            pool = self.pool()
            gap = t_end - self.last_prefill_tic
            input_tp = self.last_prefill_tokens / gap if gap > 0 else 0.0
            self.last_prefill_tic = t_end
            self.last_prefill_tokens = piece
            if self.metrics is not None:
                self.metrics.prefill(t_end, running=self.running, queue=len(self.waiting), pool=pool)
            text, fields, tol = formats.prefill_line(
                e.cfg.v, new_seq=len(admitted), new_token=piece, cached_token=cached_tok if i == 0 else 0,
                pool=pool, running=self.running, queue=len(self.waiting), pending_token=pending,
                input_throughput=input_tp, forward_ct=self.forward_ct)
            for label in self.labels:
                e.out.append(Msg(t_end, label, text, batch("prefill", label, fields, tol)))
            t_end += e.timing.prefill_ms(piece) / 1000
            self.forward_ct += 1
            self.used += piece
        self.used = used
        self.prompt_total += new_tok
        self.gen_total += len(admitted)
        lat = e.latency
        for r in admitted:
            # The prefill also yields each request's first token.
            self.used += r.prompt + 1
            arrived = r.t if isinstance(r, _Bg) else r.t_arrive
            if lat is not None and arrived is not None:
                lat.observe(now, "queue", max(0.0, now - arrived), key=self.queue_key)
                lat.observe(t_end, "ttft", t_end - arrived)
            if isinstance(r, RealRequest):
                self.real.append(r)
                r.deliver(1, t_end)
                if r.done:
                    self._finish_real(r, t_end)
            else:
                self.seq += 1
                heapq.heappush(self.bg_heap, (self.P - 1 + r.out, self.seq, self.P - 1, r.prompt))
                self.arrived[self.seq] = r.t
        self.next_t = t_end
        return True

    def _decode(self, now: float) -> None:
        e = self.eng
        bs = self.running
        graph = e.timing.graph_on(bs)
        dt = e.timing.decode_ms(bs, self.rng) / 1000
        t_end = now + dt
        n_bg = len(self.bg_heap)
        real_tokens: list[int] = []
        if e.chain:
            self._since_acc += dt
            if self._acc is None or self.decode_ct % ACCEPT_REFRESH == 0:
                # The acceptance drifts slowly; refreshing it every few steps keeps offline
                # rendering fast without changing what a logging window averages.
                mult = self.difficulty.step(self._since_acc) * behaviour.collapse_factor(
                    e.t_ready or now, now, e.collapse_at) * behaviour.context_factor(self.used / bs)
                self._since_acc = 0.0
                self._acc = (mult, *behaviour.chain_stats(e.chain, mult))
            mult, mean, var = self._acc
            a = 1.0
            if n_bg:
                a = mean + self.rng.gauss(0, math.sqrt(var / n_bg))
                a = min(len(e.chain) + 1.0, max(1.0, a))
            # Tokens past a request's end are drafted and verified, then thrown away.
            real_tokens = [min(behaviour.sample_chain(self.rng, e.chain, mult * r.accept_factor), r.remaining)
                           for r in self.real]
            step_tokens = n_bg * a + sum(real_tokens)
            self.win_acc += step_tokens
            self.win_req_steps += bs
            self.cum_acc += step_tokens
            self.cum_req_steps += bs
        else:
            a = 1.0
            real_tokens = [1] * len(self.real)
            step_tokens = float(bs)
        self.P += a
        self.used += step_tokens
        self.gen_total += step_tokens
        self.win_tokens += step_tokens
        self.decode_ct += 1
        self.forward_ct += 1
        lat = e.latency
        if lat is not None and bs:
            # each token's share of the step (SGLang observes a chunk's interval / its tokens)
            if n_bg:
                lat.observe(t_end, "itl", dt / a, round(n_bg * a))
            for n in real_tokens:
                lat.observe(t_end, "itl", dt / max(n, 1), n)
        while self.bg_heap and self.bg_heap[0][0] <= self.P:
            _, seq, p_admit, prompt = heapq.heappop(self.bg_heap)
            self.used -= prompt + (self.P - p_admit)
            self.finished += 1
            self._client_done(t_end)
            arrived = self.arrived.pop(seq, None)
            if lat is not None and arrived is not None:
                lat.observe(t_end, "e2e", t_end - arrived)
        for r, n in zip(list(self.real), real_tokens):
            r.accept_sum += n
            r.steps += 1
            r.deliver(n, t_end)
            if r.done:
                self._finish_real(r, t_end)
        self.used = max(0.0, self.used)
        if self.metrics is not None:
            self.metrics.decode_step(self.members, graph)
        if self.decode_ct % e.interval == 0:
            self._log_decode(t_end, bs, graph)
        if self.used > e.total_tokens * 0.98:
            self._retract(t_end)
        self.next_t = t_end

    def _finish_real(self, r: RealRequest, t: float | None = None) -> None:
        if r in self.real:
            self.real.remove(r)
            if self.eng.latency is not None and r.t_arrive is not None and t is not None:
                self.eng.latency.observe(t, "e2e", t - r.t_arrive)
            self.used -= r.prompt + r.sent
            self.finished += 1

    def _log_decode(self, t: float, bs: int, graph: bool) -> None:
        e = self.eng
        gap = t - self.last_decode_tic
        gen = self.win_tokens / gap if gap > 0 else 0.0
        self.last_gen_throughput = gen
        spec = None
        if e.chain:
            spec = formats.Spec(self.win_acc, self.win_req_steps, e.args["speculative_num_steps"],
                                e.args["speculative_num_draft_tokens"])
        pool = self.pool()
        gens: dict[str, float] = {}
        for i, label in enumerate(self.labels):
            # Every rank times its own window: the same batch, a hair's different throughput.
            g = gens[label] = gen if i == 0 else gen * (1 + self.rng.uniform(-0.002, 0.002))
            text, fields, tol = formats.decode_line(
                e.cfg.v, running=bs, pool=pool, spec=spec, graph=graph, gen_throughput=g,
                queue=len(self.waiting), forward_ct=self.forward_ct)
            e.out.append(Msg(t, label, text, batch("decode", label, fields, tol)))
        if self.metrics is not None:
            rate = formats.accept_rate(e.cfg.v, spec) if spec is not None else None
            length = spec.acc_tokens / spec.request_steps if spec is not None and spec.request_steps else None
            self.metrics.decode(t, running=bs, queue=len(self.waiting), pool=pool, gen=gens, default_gen=gen,
                                accept_len=length, accept_rate=rate)
        self.last_decode_tic = t
        self.win_tokens = self.win_acc = 0.0
        self.win_req_steps = 0

    def _retract(self, t: float) -> None:
        """KV pool full: put the requests with the most left to do back in the queue."""
        e = self.eng
        entries = sorted(self.bg_heap, reverse=True)
        gained = 0
        back: list[_Bg] = []
        while entries and self.used - gained > e.total_tokens * 0.85:
            p_fin, seq, p_admit, prompt = entries.pop(0)
            done = int(self.P - p_admit)
            gained += prompt + done
            self.arrived.pop(seq, None)
            back.append(_Bg(prompt + done, 0, max(1, int(p_fin - self.P)), t))  # queued anew from here
        if not back:
            return
        self.bg_heap = entries
        heapq.heapify(self.bg_heap)
        self.used -= gained
        for r in reversed(back):
            self.waiting.appendleft(r)
        old = self.new_token_ratio
        self.new_token_ratio = min(1.0, old + 0.1)
        text = (f"KV cache pool is full. Retract requests. #retracted_reqs: {len(back)}, "
                f"#new_tokens_gained: {gained}, #new_token_ratio: {old:.4f} -> {self.new_token_ratio:.4f}")
        e.out.append(Msg(t, self.labels[0], text, event("retract")))


class Engine:
    def __init__(self, cfg: Config, lay: Layout, t_start: float, total_tokens: int) -> None:
        """t_start: when the schedulers start their stats clocks (SGLang: at the end of their
        init, after the KV pool and CUDA graphs), so the first Decode line's throughput covers
        the warm-up and the wait for traffic, as a real first line does."""
        self.cfg = cfg
        self.args = cfg.args
        self.layout = lay
        self.t_start = t_start
        self.t_ready: float | None = None
        self.out: list[Msg] = []
        self.total_tokens = max(1, total_tokens)
        self.hybrid = cfg.hybrid
        self.mamba_total = min(2048, max(64, 3 * self.args["max_running_requests"]))
        self.swa_window = 128 if "GptOss" in cfg.preset.arch else 4096
        self.swa_total = max(1, int(self.total_tokens * 0.8))
        self.max_running = self.args["max_running_requests"]
        self.max_prefill_tokens = self.args["max_prefill_tokens"]
        self.max_prompt = min(self.args["chunked_prefill_size"] or 8192, 8192)
        self.context_len = self.args["context_length"] or cfg.preset.context_len
        self.interval = max(1, self.args["decode_log_interval"])
        self.chain = behaviour.acceptance_chain(self.args, cfg.preset, cfg.requested_algorithm)
        self.timing = behaviour.Timing(self.args, cfg.preset, cfg.fault("no-cuda-graph") is not None)
        f = cfg.fault("accept-collapse")
        self.collapse_at = f.at if f else None
        self.stalled = False
        self.draining = False  # SIGTERM: no new background requests
        self.latency = LatencyMetrics(cfg) if self.args["enable_metrics"] else None
        self.groups = [Group(self, i, labels, members)
                       for i, (labels, members) in enumerate(zip(lay.groups, lay.members))]
        self._rr = 0

    # -- requests ---------------------------------------------------------------------------
    def submit(self, req: RealRequest, now: float) -> None:
        g = self.groups[self._rr % len(self.groups)]
        self._rr += 1
        req.t_arrive = now
        g.waiting.append(req)
        g.next_t = min(g.next_t, now)

    def fail_all(self, reason: str, now: float) -> None:
        """The server died: every HTTP request in flight ends with an error."""
        for g in self.groups:
            for r in list(g.real) + [w for w in g.waiting if isinstance(w, RealRequest)]:
                r.failed = reason
                r.done = True
                if r.sink is not None:
                    r.sink([], now, True)

    # -- time -------------------------------------------------------------------------------
    def next_time(self) -> float:
        return min(g.next_t for g in self.groups)

    def run_until(self, t_end: float) -> None:
        """Offline: advance every group in time order until t_end (no sleeping)."""
        heap = [(g.next_t, g.idx) for g in self.groups]
        heapq.heapify(heap)
        while heap:
            t, i = heapq.heappop(heap)
            if t > t_end:
                break
            g = self.groups[i]
            g.iterate(t)
            heapq.heappush(heap, (g.next_t, i))

    def set_ready(self, t: float) -> None:
        self.t_ready = t
        for g in self.groups:
            g.next_t = t
            g.last_decode_tic = min(g.last_decode_tic, t)

    # -- state for /server_info and /metrics ------------------------------------------------
    def internal_states(self) -> list[dict]:
        out = []
        for g in self.groups:
            st: dict = {"last_gen_throughput": round(g.last_gen_throughput, 4),
                        "memory_usage": {"token_usage": round(g.used / self.total_tokens, 4)},
                        "num_running_reqs": g.running, "num_queue_reqs": len(g.waiting)}
            if self.chain and g.cum_req_steps:
                st["avg_spec_accept_length"] = round(g.cum_acc / g.cum_req_steps, 4)
            out.append(st)
        return out


def warmup_request() -> RealRequest:
    # SGLang's warm-up: "The capital city of France is", 8 new tokens.
    return RealRequest(prompt=7, tokens=[" Paris", ".", " It", " is", " also", " the", " largest", " city"])


def warmup(eng: Engine, t: float) -> float:
    """Runs SGLang's warm-up request on the first group; returns when it finished."""
    r = warmup_request()
    g = eng.groups[0]
    g.waiting.append(r)
    g.next_t = t
    now = t
    while not r.done:
        g.iterate(now)
        now = g.next_t
    return now

