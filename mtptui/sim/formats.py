"""SGLang's text, version by version: the log prefix, rank tokens and the batch lines.

Everything here follows /work/shared/reference/sglang-log-formats.md (§1 lines, §2 prefix and
ranks), not mtptui's parser. Each batch line is built together with its *truth*: the normalised
field names (the project's vocabulary, see DESIGN.md) and the unrounded values the simulator meant
to print, plus the absolute tolerance that the printed precision allows.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

VERSIONS = ("0.4.9", "0.5.3", "0.5.4", "0.5.8", "0.5.10", "0.5.12", "0.5.19", "0.5.23")
DEFAULT_VERSION = "0.5.12"


def vtuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


# ---------------------------------------------------------------------------------------------
# Prefix and rank tokens (reference §2)


def stamp(t: float, utc: bool) -> str:
    """SGLang's `%Y-%m-%d %H:%M:%S` asctime. Live runs use local time like the real logger;
    offline logs use UTC so that regenerating them never depends on the machine's zone."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t) if utc else time.localtime(t))


def prefix(t: float, who: str, utc: bool) -> str:
    """`[2026-03-09 16:03:25 TP0] ` for a scheduler, `[2026-03-09 16:03:25] ` for the main process."""
    return f"[{stamp(t, utc)}{' ' + who if who else ''}] "


def moe_ep_rank(tp_rank: int, tp_size: int, ep_size: int) -> int:
    """SGLang's MoE expert-parallel rank of a TP rank (moe_dp_size 1): the EP token and the
    `moe_ep_rank` metrics label."""
    return tp_rank // (tp_size // ep_size) if ep_size > 1 else 0


def rank_label(v: tuple, tp_rank: int, tp_size: int, dp_rank: int | None = None,
               ep_size: int = 1, pp_rank: int = 0, pp_size: int = 1) -> str:
    """The scheduler's rank tokens. dp_rank is None when DP is not in use (dp_size == 1)."""
    dp = f"DP{dp_rank}" if dp_rank is not None else None
    tp = f"TP{tp_rank}" if tp_size > 1 else None  # 0.4.9+: no TP token at TP=1
    ep = f"EP{moe_ep_rank(tp_rank, tp_size, ep_size)}" if ep_size > 1 else None
    pp = f"PP{pp_rank}" if pp_size > 1 else None
    order: tuple[str | None, ...]
    if v < (0, 5, 0):  # 0.4.8-0.4.9: DP, TP, PP (no EP token yet)
        order = (dp, tp, pp)
    elif v < (0, 5, 8):  # 0.5.1-0.5.4: DP, TP, EP, PP
        order = (dp, tp, ep, pp)
    else:  # 0.5.8: DP, PP, TP, EP; 0.5.10+ adds ATTN_CP and MOE_DP (never > 1 here)
        order = (dp, pp, tp, ep)
    return " ".join(p for p in order if p)


# ---------------------------------------------------------------------------------------------
# Batch lines (reference §1)


@dataclass
class Pool:
    """Memory-pool state at the moment of a batch line."""

    kind: str  # "plain", "mamba" or "swa"
    used: int  # tokens in the (full) KV pool
    total: int  # max_total_num_tokens
    mamba_num: int = 0
    mamba_total: int = 1
    swa_used: int = 0
    swa_total: int = 1


@dataclass
class Spec:
    """Speculation counts over one logging window."""

    acc_tokens: float  # accepted drafts + one bonus token per request-step
    request_steps: int  # sum of batch sizes over the window's decode steps
    num_steps: int | None
    num_draft_tokens: int | None


class Line:
    """Builds `key: value` items together with what they mean."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.fields: dict = {}
        self.tol: dict = {}

    def int(self, key: str, name: str, value: int) -> None:
        self.items.append(f"{key}: {value}")
        self.fields[name] = int(value)

    def f2(self, key: str, name: str, value: float) -> None:
        self.items.append(f"{key}: {value:.2f}")
        self.fields[name] = float(value)
        self.tol[name] = 0.005

    def graph(self, on: bool) -> None:
        self.items.append(f"cuda graph: {on}")
        self.fields["graph"] = bool(on)
        self.fields["graph_kind"] = "cuda"

    def raw(self, text: str) -> None:
        self.items.append(text)


def _usage(used: int, total: int) -> float:
    return used / total if total else 0.0


def _pool_decode(v: tuple, ln: Line, p: Pool) -> None:
    if p.kind == "swa" and v < (0, 5, 0):
        # 0.4.9's one-off hybrid SWA form.
        fu, su = _usage(p.used, p.total), _usage(p.swa_used, p.swa_total)
        ln.raw(f"#token: full={p.used}, swa={p.swa_used}, token usage: full={fu:.2f}, swa={su:.2f}")
        ln.fields.update(full_token=p.used, swa_token=p.swa_used, full_token_usage=fu, swa_token_usage=su)
        ln.tol.update(full_token_usage=0.005, swa_token_usage=0.005)
    elif p.kind == "swa":
        ln.int("#full token", "full_token", p.used)
        ln.f2("full token usage", "full_token_usage", _usage(p.used, p.total))
        ln.int("#swa token", "swa_token", p.swa_used)
        ln.f2("swa token usage", "swa_token_usage", _usage(p.swa_used, p.swa_total))
    elif p.kind == "mamba":
        ln.int("#full token", "full_token", p.used)
        ln.f2("full token usage", "full_token_usage", _usage(p.used, p.total))
        ln.int("mamba num", "mamba_num", p.mamba_num)
        ln.f2("mamba usage", "mamba_usage", _usage(p.mamba_num, p.mamba_total))
    else:
        ln.int("#token", "num_token", p.used)
        ln.f2("token usage", "token_usage", _usage(p.used, p.total))


def _pool_prefill(v: tuple, ln: Line, p: Pool) -> None:
    if v < (0, 5, 0):
        if p.kind == "swa":
            _pool_decode(v, ln, p)
            return
        # 0.4.9: `#token: N, token usage: x`
        ln.int("#token", "num_token", p.used)
        ln.f2("token usage", "token_usage", _usage(p.used, p.total))
    elif p.kind == "swa":
        ln.f2("full token usage", "full_token_usage", _usage(p.used, p.total))
        ln.f2("swa token usage", "swa_token_usage", _usage(p.swa_used, p.swa_total))
    elif p.kind == "mamba":
        ln.f2("full token usage", "full_token_usage", _usage(p.used, p.total))
        ln.f2("mamba usage", "mamba_usage", _usage(p.mamba_num, p.mamba_total))
    else:
        ln.f2("token usage", "token_usage", _usage(p.used, p.total))


def accept_rate(v: tuple, s: Spec) -> float | None:
    """The version's accept-rate formula (reference §1.5); None before 0.5.4."""
    if v < (0, 5, 4) or s.request_steps == 0:
        return None
    steps, draft = s.num_steps, s.num_draft_tokens
    n = s.request_steps
    denom: int | None
    if v < (0, 5, 8):  # 0.5.4: (accepted+bonus) / (steps x (num_steps+1))
        denom = (steps + 1) if steps is not None else draft
    elif v < (0, 5, 12):  # 0.5.8-0.5.10: / (steps x num_draft_tokens), falling back to num_steps+1
        denom = draft if draft is not None else None if steps is None else steps + 1
    else:  # 0.5.12+: accepted drafts only / (steps x (num_draft_tokens-1)), falling back to num_steps
        denom = (draft - 1) if draft is not None else steps
    if denom is None:
        return None  # neither count is known: no formula to apply
    return (s.acc_tokens if v < (0, 5, 12) else s.acc_tokens - n) / (n * denom)


def _head(v: tuple, kind: str, forward_ct: int) -> str:
    word = "Decode batch" if kind == "decode" else "Prefill batch"
    if v < (0, 5, 4):
        return f"{word}. "
    if v < (0, 5, 8):
        n = forward_ct if kind == "decode" else forward_ct + 1
        return f"{word} [{n}], "
    return f"{word}, "


def _trailing(v: tuple) -> str:
    # 0.5.1-0.5.8: every line ends with `, `
    return ", " if (0, 5, 0) <= v < (0, 5, 10) else ""


def decode_line(v: tuple, *, running: int, pool: Pool, spec: Spec | None, graph: bool,
                gen_throughput: float, queue: int, forward_ct: int) -> tuple[str, dict, dict]:
    """(message, fields, tolerances) for one Decode line."""
    ln = Line()
    ln.int("#running-req", "running_req", running)
    _pool_decode(v, ln, pool)
    if spec is not None and spec.request_steps:
        ln.f2("accept len", "accept_len", spec.acc_tokens / spec.request_steps)
        rate = accept_rate(v, spec)
        if rate is not None:
            ln.f2("accept rate", "accept_rate", rate)
    ln.graph(graph)
    ln.f2("gen throughput (token/s)", "gen_throughput", gen_throughput)
    ln.int("#queue-req", "queue_req", queue)
    return _head(v, "decode", forward_ct) + ", ".join(ln.items) + _trailing(v), ln.fields, ln.tol


def prefill_line(v: tuple, *, new_seq: int, new_token: int, cached_token: int, pool: Pool,
                 running: int, queue: int, pending_token: int, input_throughput: float,
                 forward_ct: int) -> tuple[str, dict, dict]:
    """(message, fields, tolerances) for one Prefill line (never with accept len)."""
    ln = Line()
    ln.int("#new-seq", "new_seq", new_seq)
    ln.int("#new-token", "new_token", new_token)
    ln.int("#cached-token", "cached_token", cached_token)
    _pool_prefill(v, ln, pool)
    ln.int("#running-req", "running_req", running)
    ln.int("#queue-req", "queue_req", queue)
    if v >= (0, 5, 12):
        ln.int("#pending-token", "pending_token", pending_token)
    if v >= (0, 5, 10):
        ln.graph(False)
        ln.f2("input throughput (token/s)", "input_throughput", input_throughput)
    return _head(v, "prefill", forward_ct) + ", ".join(ln.items) + _trailing(v), ln.fields, ln.tol
