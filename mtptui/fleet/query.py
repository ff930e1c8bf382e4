"""Every host Prometheus knows, with its figures per rank, from whichever metrics the host has:
SGLang's own (`sglang:*`, served with `--enable-metrics`; a host is its target, the `instance`
label; a rank its `dp_rank`, `pp_rank`, `tp_rank`) or those of `mtptui export` (`mtptui_*`; a host
is its `host` label, a rank its `rank` label, the log's rank tokens).

SGLang's gauges say `spec_accept_length` 0, not nothing, when the server runs without speculation
(and before its first decode): an accept length is at least 1, so 0 is read as absent, and the
accept rate beside it too. SGLang's metrics carry no speculation settings; mtptui's do
(`mtptui_spec_info`, from `server_args=`).

A target Prometheus cannot scrape is listed, without figures, while it has series from the last
hour, flagged `down`; an exporter's host whose log stream is lost is flagged `disconnected`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from mtptui.core.epochs import rank_key
from mtptui.fleet.prom import Prometheus, PromError, Sample

SGLANG, MTPTUI = "sglang", "mtptui"
RANK_FIELDS = ("accept_len", "accept_rate", "gen_throughput", "running", "queue")
COUNTS = ("running", "queue")  # whole numbers
GRAPH_WINDOW = "2m"  # decode steps without CUDA graphs in this window: graph off
DOWN_WINDOW = "1h"  # a target down is listed while it has series this recent

# metric name -> the rank field it gives
SGLANG_GAUGES = {"sglang:spec_accept_length": "accept_len", "sglang:spec_accept_rate": "accept_rate",
                 "sglang:gen_throughput": "gen_throughput", "sglang:num_running_reqs": "running",
                 "sglang:num_queue_reqs": "queue"}
MTPTUI_GAUGES = {"mtptui_spec_accept_length": "accept_len", "mtptui_spec_accept_ratio": "accept_rate",
                 "mtptui_gen_throughput_tokens_per_second": "gen_throughput",
                 "mtptui_running_requests": "running", "mtptui_queued_requests": "queue"}


@dataclass
class Rank:
    rank: str
    accept_len: float | None = None
    accept_rate: float | None = None
    gen_throughput: float | None = None
    running: int | None = None
    queue: int | None = None
    graph: bool | None = None  # decoded with CUDA graphs over GRAPH_WINDOW; None: no decode seen

    def to_json(self) -> dict:
        return {"rank": self.rank, **{k: getattr(self, k) for k in RANK_FIELDS}, "graph": self.graph}


@dataclass
class Flag:
    kind: str  # down, disconnected, spec_off, accept_collapsed, accept_outlier, rank_outlier, graph_off
    text: str  # one line for the operator
    rank: str | None = None
    metric: str | None = None
    value: float | None = None
    median: float | None = None

    def to_json(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class Host:
    host: str  # SGLang: the target's instance (ADDR:PORT); mtptui: the exporter's host label
    source: str  # SGLANG or MTPTUI
    spec: dict = field(default_factory=dict)  # SGLang: model_name; mtptui: the settings, when known
    ranks: list[Rank] = field(default_factory=list)
    flags: list[Flag] = field(default_factory=list)
    down: bool = False  # Prometheus cannot scrape the target (the SGLang server or the exporter)
    connected: bool | None = None  # mtptui: whether the exporter's log stream is up

    def to_json(self) -> dict:
        return {"host": self.host, "source": self.source, "spec": self.spec,
                "ranks": [r.to_json() for r in self.ranks], "flags": [f.to_json() for f in self.flags]}

    def mean(self, name: str) -> float | None:
        vals = [v for r in self.ranks if (v := getattr(r, name)) is not None]
        return sum(vals) / len(vals) if vals else None

    def total(self, name: str) -> float | None:
        """Summed over the DP groups: the TP ranks of one group report the same batch, each DP
        group its own (so the mean within a group, the sum across them)."""
        groups: dict[str, list[float]] = {}
        for r in self.ranks:
            if (v := getattr(r, name)) is not None:
                groups.setdefault(dp_group(r.rank), []).append(v)
        return sum(sum(g) / len(g) for g in groups.values()) if groups else None

    @property
    def decoding(self) -> bool:
        return any((r.gen_throughput or 0) > 0 for r in self.ranks)

    @property
    def speculation(self) -> str | None:
        """The algorithm the settings ask for: mtptui's spec_info only ("" for none)."""
        if self.source != MTPTUI or "algorithm" not in self.spec:
            return None
        return self.spec["algorithm"] or ""

    @property
    def peers_key(self) -> tuple | None:
        """Hosts with the same settings: mtptui's settings label; for SGLang, whose metrics carry
        none, the model it serves (a fleet runs a model one way)."""
        if self.source == MTPTUI:
            return (MTPTUI, self.spec["settings"]) if self.spec.get("settings") else None
        return (SGLANG, self.spec.get("model_name", ""))


class SelectorError(ValueError):
    """--match is not a label selector: one line, exit 2."""


def selector_matchers(match: str | None) -> str:
    """`{job="sglang"}` or `job="sglang"` -> `job="sglang"`: the matchers to add to each query."""
    text = (match or "").strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if text and not re.match(r"^[A-Za-z_][A-Za-z0-9_]*\s*(=~|!~|!=|=)", text):
        raise SelectorError(f"--match {match!r}: give label matchers, e.g. '{{job=\"sglang\"}}'")
    return text


def _sel(*matchers: str) -> str:
    return "{" + ",".join(m for m in matchers if m) + "}"


# What a host and a rank are, by source: the labels each answer is reduced to (`max by`/`sum by`),
# so that Prometheus sends the figures, not every series' full label set (1,000 hosts x 8 ranks:
# 9 MB of JSON a refresh, most of it labels repeated).
SGLANG_RANK_BY = "instance, model_name, dp_rank, pp_rank, tp_rank"
MTPTUI_RANK_BY = "host, rank"


def queries(match: str | None) -> dict[str, str]:
    """The PromQL the fleet is read with, by purpose: one query per gauge (each answers every
    host's ranks at once; Prometheus evaluates them side by side), keyed by the gauge's name."""
    m = selector_matchers(match)
    decode_modes = 'mode=~"decode_.*"'
    out = {name: f"max by ({SGLANG_RANK_BY}) ({name}{_sel(m)})" for name in SGLANG_GAUGES}
    out |= {name: f"max by ({MTPTUI_RANK_BY}) ({name}{_sel(m)})" for name in MTPTUI_GAUGES}
    return out | {
        "spec_info": f"max by (host, algorithm, steps, topk, draft_tokens, settings) (mtptui_spec_info{_sel(m)})",
        "connected": f"max by (host) (mtptui_source_connected{_sel(m)})",
        "sglang_graph": (f"sum by ({SGLANG_RANK_BY}, mode) (increase(sglang:cuda_graph_passes_total"
                         f"{_sel(decode_modes, m)}[{GRAPH_WINDOW}]))"),
        "mtptui_decodes": f"sum by ({MTPTUI_RANK_BY}) (increase(mtptui_decode_batches_total{_sel(m)}[{GRAPH_WINDOW}]))",
        "mtptui_no_graph": (f"sum by ({MTPTUI_RANK_BY}) (increase(mtptui_decode_batches_without_cuda_graph_total"
                            f"{_sel(m)}[{GRAPH_WINDOW}]))"),
        "sglang_down": (f"group by (instance, job, model_name) (last_over_time(sglang:num_running_reqs{_sel(m)}"
                        f"[{DOWN_WINDOW}])) unless on (instance, job) up == 1"),
        "mtptui_down": (f"group by (instance, job, host) (last_over_time(mtptui_source_connected{_sel(m)}"
                        f"[{DOWN_WINDOW}])) unless on (instance, job) up == 1"),
    }


def sglang_rank(labels: dict[str, str]) -> str:
    """SGLang's rank labels as its log prefix names the scheduler: `TP0`, `DP1 TP1`, `PP1 TP0`;
    "" for 0.4.9, whose metrics have no rank."""
    parts = []
    if "dp_rank" in labels:
        parts.append(f"DP{labels['dp_rank']}")
    if labels.get("pp_rank", "0") != "0":
        parts.append(f"PP{labels['pp_rank']}")
    if "tp_rank" in labels:
        parts.append(f"TP{labels['tp_rank']}")
    return " ".join(parts)


def dp_group(rank: str) -> str:
    """The DP token of a rank label (`DP3` of `DP3 TP3 EP3`), "" without DP."""
    return next((t for t in rank.split() if t.startswith("DP")), "")


def _int(text: str) -> int | None:
    return int(text) if text.isdigit() else None


def read_fleet(prom: Prometheus, match: str | None = None) -> list[Host]:
    """Every host, sorted by name, with its ranks in natural order; no flags yet (see outliers).
    Raises PromError, SelectorError."""
    return assemble(prom.queries(queries(match)))


def assemble(answers: dict[str, list[Sample]]) -> list[Host]:
    """The hosts from the answers to `queries()` (by the same keys)."""
    hosts: dict[tuple[str, str], Host] = {}
    ranks: dict[tuple[str, str, str], Rank] = {}

    def host(source: str, name: str) -> Host:
        h = hosts.get((source, name))
        if h is None:
            h = hosts[(source, name)] = Host(name, source)
        return h

    def rank(h: Host, label: str) -> Rank:
        r = ranks.get((h.source, h.host, label))
        if r is None:
            r = ranks[(h.source, h.host, label)] = Rank(label)
            h.ranks.append(r)
        return r

    # A rank by its labels, which the gauge queries reduce to those naming it (`max by`): named
    # once, not once per metric (8,000 ranks, 40,000 samples).
    sglang_ranks: dict[tuple, Rank] = {}
    mtptui_ranks: dict[tuple, Rank] = {}

    def sglang_rank_of(labels: dict[str, str]) -> Rank:
        key = tuple(labels.items())
        r = sglang_ranks.get(key)
        if r is None:
            h = host(SGLANG, labels.get("instance", ""))
            h.spec.setdefault("model_name", labels.get("model_name", ""))
            r = sglang_ranks[key] = rank(h, sglang_rank(labels))
        return r

    def mtptui_rank_of(labels: dict[str, str]) -> Rank:
        key = tuple(labels.items())
        r = mtptui_ranks.get(key)
        if r is None:
            r = mtptui_ranks[key] = rank(host(MTPTUI, labels.get("host", "")), labels.get("rank", ""))
        return r

    def gauges(names: dict[str, str], rank_of: Callable[[dict[str, str]], Rank]) -> None:
        for name, field_ in names.items():
            count = field_ in COUNTS
            for s in answers[name]:
                v = s.value
                setattr(rank_of(s.labels), field_, int(v) if count and v.is_integer() else v)

    gauges(SGLANG_GAUGES, sglang_rank_of)
    for s in answers["sglang_graph"]:
        key = (SGLANG, s.labels.get("instance", ""))
        if key in hosts and s.value > 0:
            r = rank(hosts[key], sglang_rank(s.labels))
            if s.labels.get("mode") == "decode_none":
                r.graph = False
            elif r.graph is None:
                r.graph = True
    for s in answers["sglang_down"]:  # after the figures: a target down has none, not old ones
        h = host(SGLANG, s.labels.get("instance", ""))
        h.spec.setdefault("model_name", s.labels.get("model_name", ""))
        h.down = True

    gauges(MTPTUI_GAUGES, mtptui_rank_of)
    for s in answers["connected"]:
        host(MTPTUI, s.labels.get("host", "")).connected = s.value == 1
    for s in answers["spec_info"]:
        lab = s.labels
        host(MTPTUI, lab.get("host", "")).spec = {
            "algorithm": lab.get("algorithm") or None, "steps": _int(lab.get("steps", "")),
            "topk": _int(lab.get("topk", "")), "draft_tokens": _int(lab.get("draft_tokens", "")),
            "settings": lab.get("settings", "")}
    no_graph = {(s.labels.get("host", ""), s.labels.get("rank", "")): s.value for s in answers["mtptui_no_graph"]}
    for s in answers["mtptui_decodes"]:
        key = (MTPTUI, s.labels.get("host", ""))
        if key in hosts and s.value > 0:
            off = no_graph.get((key[1], s.labels.get("rank", "")), 0) > 0
            rank(hosts[key], s.labels.get("rank", "")).graph = not off
    for s in answers["mtptui_down"]:
        host(MTPTUI, s.labels.get("host", "")).down = True

    for h in hosts.values():
        if h.source == SGLANG:
            for r in h.ranks:
                if r.accept_len == 0:  # SGLang's "no speculation": see the module's docstring
                    r.accept_len = r.accept_rate = None
        h.ranks.sort(key=lambda r: rank_key(r.rank))
    return sorted(hosts.values(), key=lambda h: (h.host, h.source))
