"""The fleet's outliers, as flags on its hosts: what an operator of many hosts looks for first.

- `down`: Prometheus cannot scrape the host's target; `disconnected`: mtptui export lost its log.
- `spec_off`: the host decodes without speculation while most of its peers speculate, or while
  its own `server_args` ask for it (mtptui's settings): MTP silently off.
- `accept_collapsed`: the host's accept length is at or below `[thresholds] accept_len_one_max`:
  the drafts are (almost) never accepted.
- `accept_outlier`: the host's accept length is more than `pct` % from the median of its peers
  (hosts with the same settings, see `Host.peers_key`).
- `rank_outlier`: a rank's accept length or gen throughput is more than `pct` % from its host's
  median.
- `graph_off`: a rank decoded without CUDA graphs in the last few minutes.

A median stands for a group only with at least three members: of two, neither is the odd one.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from statistics import median

from mtptui.config.thresholds import Thresholds
from mtptui.fleet.query import GRAPH_WINDOW, MTPTUI, Flag, Host

MIN_GROUP = 3
RANK_METRICS = (("accept_len", "accept len", "{:.2f}"), ("gen_throughput", "gen tok/s", "{:.0f}"))


@dataclass(frozen=True)
class Limits:
    pct: float = 25.0  # how far from a median is an outlier, in %
    collapse_max: float = 1.10  # accept len at or below this: nothing accepted

    @classmethod
    def from_thresholds(cls, th: Thresholds, pct: float | None = None) -> Limits:
        return cls(pct=th.rank_diverge_pct if pct is None else pct, collapse_max=th.accept_len_one_max)


def deviation(value: float, med: float) -> float | None:
    """Percent from the median; None when the median is no scale (0)."""
    return None if med <= 0 else (value - med) / med * 100


def flag_fleet(hosts: list[Host], limits: Limits = Limits()) -> list[Host]:
    """Sets each host's flags (replacing any) and returns the hosts."""
    members: dict[tuple, list[Host]] = defaultdict(list)
    for h in hosts:
        if h.peers_key is not None and not h.down:
            members[h.peers_key].append(h)
    # Each group summed up once: per host it would be quadratic in the group (1,000 hosts: seconds).
    peers = {key: Peers.of(group) for key, group in members.items()}
    for h in hosts:
        key = h.peers_key
        mine = peers.get(key, Peers()) if key is not None else Peers()
        h.flags = _state(h) + _spec(h, mine, limits) + _ranks(h, limits) + _graph(h)
    return hosts


@dataclass(frozen=True)
class Peers:
    """What a host is judged by among the hosts with its settings."""

    accept_lens: tuple[float, ...] = ()  # of the peers with one
    decoding: int = 0  # peers that decode
    speculating: int = 0  # ... with an accept len
    median: float | None = None  # of accept_lens, when there are enough to judge by

    @classmethod
    def of(cls, group: list[Host]) -> Peers:
        means = [(p.decoding, p.mean("accept_len")) for p in group]
        lens = tuple(m for _, m in means if m is not None)
        return cls(lens, sum(d for d, _ in means), sum(d and m is not None for d, m in means),
                   median(lens) if len(lens) >= MIN_GROUP else None)


def _state(h: Host) -> list[Flag]:
    if h.down:
        what = "mtptui export serving it" if h.source == MTPTUI else "its /metrics"
        return [Flag("down", f"Prometheus cannot scrape {what} (listed while it has series from the last hour)")]
    if h.connected is False:
        return [Flag("disconnected", "mtptui export has lost the host's log stream")]
    return []


def _spec(h: Host, peers: Peers, limits: Limits) -> list[Flag]:
    out: list[Flag] = []
    mine = h.mean("accept_len")
    if mine is None:
        if not h.decoding:
            return out
        if h.speculation:
            out.append(Flag("spec_off", f"server_args ask for {h.spec.get('settings')}, but its decode lines "
                                        "carry no accept len: speculation is not running"))
            return out
        if peers.decoding >= MIN_GROUP and peers.speculating > peers.decoding / 2:
            out.append(Flag("spec_off", f"decodes without speculation while {peers.speculating} of "
                                        f"{peers.decoding} peers speculate"))
        return out
    if mine <= limits.collapse_max:
        out.append(Flag("accept_collapsed", f"accept len {mine:.2f} <= {limits.collapse_max:.2f}: "
                                            "the drafts are (almost) never accepted",
                        metric="accept_len", value=mine))
    med = peers.median
    if med is not None:
        dev = deviation(mine, med)
        if dev is not None and abs(dev) > limits.pct:
            out.append(Flag("accept_outlier", f"accept len {mine:.2f} vs {med:.2f}, the median of "
                                              f"{len(peers.accept_lens)} peers ({dev:+.0f}%)",
                            metric="accept_len", value=mine, median=med))
    return out


def _ranks(h: Host, limits: Limits) -> list[Flag]:
    out: list[Flag] = []
    for metric, name, fmt in RANK_METRICS:
        values = {r.rank: v for r in h.ranks if (v := getattr(r, metric)) is not None}
        if len(values) < MIN_GROUP:
            continue
        med = median(list(values.values()))
        for rank, v in values.items():
            dev = deviation(v, med)
            if dev is not None and abs(dev) > limits.pct:
                out.append(Flag("rank_outlier", f"{rank or 'rank'} {name} {fmt.format(v)} vs {fmt.format(med)}, "
                                                f"the host's median ({dev:+.0f}%)",
                                rank=rank, metric=metric, value=v, median=med))
    return out


def _graph(h: Host) -> list[Flag]:
    return [Flag("graph_off", f"{r.rank or 'rank'} decoded without CUDA graphs in the last {GRAPH_WINDOW}", rank=r.rank)
            for r in h.ranks if r.graph is False]
