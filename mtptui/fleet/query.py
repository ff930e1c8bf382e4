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
from collections.abc import Collection
from functools import lru_cache
from dataclasses import dataclass, field

from mtptui.core.epochs import rank_key
from mtptui.errors import UsageError
from mtptui.core.nogc import without_cycle_collector
from mtptui.fleet.prom import Prometheus, Sample

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


class SelectorError(UsageError, ValueError):
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
# 9 MB of JSON a refresh, most of it labels repeated). SGLang's model_name comes with one gauge
# of the five, not all (the targets of the last hour name it too, but maybe the one before a swap).
SGLANG_RANK_BY = "instance, dp_rank, pp_rank, tp_rank"
SGLANG_MODEL_GAUGE = "sglang:num_running_reqs"
MTPTUI_RANK_BY = "host, rank"


def queries(match: str | None) -> dict[str, str]:
    """The PromQL the fleet is read with, by purpose: one query per gauge (each answers every
    host's ranks at once), keyed by the gauge's name; the graph state over GRAPH_WINDOW; and the
    targets of the last DOWN_WINDOW (with `up`, which of them Prometheus can scrape now). Ordered
    costliest first: a client asking a few at a time reads the first answers while Prometheus works
    on the rest."""
    m = selector_matchers(match)
    decode_modes = 'mode=~"decode_.*"'
    out = {name: f"max by ({SGLANG_RANK_BY}{', model_name' * (name == SGLANG_MODEL_GAUGE)}) ({name}{_sel(m)})"
           for name in SGLANG_GAUGES}
    out |= {name: f"max by ({MTPTUI_RANK_BY}) ({name}{_sel(m)})" for name in MTPTUI_GAUGES}
    return {
        # Counts of 0 are left out (> 0) where they say nothing: most ranks never decode without
        # graphs, and a rank that did not decode has no graph state.
        "sglang_graph": (f"sum by ({SGLANG_RANK_BY}, mode) (increase(sglang:cuda_graph_passes_total"
                         f"{_sel(decode_modes, m)}[{GRAPH_WINDOW}])) > 0"),
        "mtptui_decodes": f"sum by ({MTPTUI_RANK_BY}) (increase(mtptui_decode_batches_total{_sel(m)}[{GRAPH_WINDOW}])) > 0",
        "mtptui_no_graph": (f"sum by ({MTPTUI_RANK_BY}) (increase(mtptui_decode_batches_without_cuda_graph_total"
                            f"{_sel(m)}[{GRAPH_WINDOW}])) > 0"),
        "sglang_targets": (f"group by (instance, job, model_name) (last_over_time(sglang:num_running_reqs"
                           f"{_sel(m)}[{DOWN_WINDOW}]))"),
        **out,
        "mtptui_targets": (f"group by (instance, job, host) (last_over_time(mtptui_source_connected"
                           f"{_sel(m)}[{DOWN_WINDOW}]))"),
        "spec_info": f"max by (host, algorithm, steps, topk, draft_tokens, settings) (mtptui_spec_info{_sel(m)})",
        "connected": f"max by (host) (mtptui_source_connected{_sel(m)})",
        "up": "group by (instance, job) (up == 1)",  # not narrowed: only looked up by the targets
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


@lru_cache(maxsize=4096)  # a fleet's ranks have a few dozen labels; a refresh asks 24,000 times
def dp_group(rank: str) -> str:
    """The DP token of a rank label (`DP3` of `DP3 TP3 EP3`), "" without DP."""
    return next((t for t in rank.split() if t.startswith("DP")), "")


def _int(text: str) -> int | None:
    return int(text) if text.isdigit() else None


def read_fleet(prom: Prometheus, match: str | None = None) -> list[Host]:
    """Every host, in the natural order of its name, with its ranks in natural order; no flags
    yet (see outliers).
    Raises PromError, SelectorError."""
    with without_cycle_collector():  # the answers' dicts all live until assembled
        return assemble(prom.queries(queries(match)))


class _Found:
    """The hosts and ranks found so far while the answers are read: each made on its first
    sample, the same object for every later one."""

    def __init__(self) -> None:
        self.hosts: dict[tuple[str, str], Host] = {}
        self.ranks: dict[tuple, Rank] = {}  # by sglang_key / mtptui_key

    def host(self, source: str, name: str) -> Host:
        h = self.hosts.get((source, name))
        if h is None:
            h = self.hosts[(source, name)] = Host(name, source)
        return h

    def rank(self, key: tuple, labels: dict[str, str]) -> Rank:
        r = self.ranks.get(key)
        if r is None:
            if key[0] == SGLANG:
                h, label = self.host(SGLANG, key[1]), sglang_rank(labels)
            else:
                h, label = self.host(MTPTUI, key[1]), labels.get("rank", "")
            # Keys that name one rank alike (a pp_rank of "0" or none) share it.
            r = next((x for x in h.ranks if x.rank == label), None)
            if r is None:
                r = Rank(label)
                h.ranks.append(r)
            self.ranks[key] = r
        return r


def assemble(answers: dict[str, list[Sample]]) -> list[Host]:
    """The hosts from the answers to `queries()` (by the same keys). A rank is found by the labels
    that name it, read once a sample: 40,000 samples a refresh at 1,000 hosts x 8 ranks."""
    found = _Found()
    _read_gauges(found, answers)
    up = {(s.labels.get("instance"), s.labels.get("job")) for s in answers["up"]}
    # The gauges first: the graph state is kept only for the hosts they found, and an SGLang
    # target only where they found it or it is down.
    _read_sglang_state(found, answers, up)
    _read_mtptui_state(found, answers, up)
    return _in_order(found.hosts.values())


def _read_gauges(found: _Found, answers: dict[str, list[Sample]]) -> None:
    """Each rank's figures from the gauges of both sources, and an SGLang host's model."""
    ranks = found.ranks  # the loop runs once a sample: a local lookup, the method only for a new rank
    for names, key_of in ((SGLANG_GAUGES, sglang_key), (MTPTUI_GAUGES, mtptui_key)):
        for name, field_ in names.items():
            count = field_ in COUNTS
            for labels, v in answers[name]:
                r = ranks.get(key := key_of(labels)) or found.rank(key, labels)
                setattr(r, field_, int(v) if count and v.is_integer() else v)
    for labels, _ in answers[SGLANG_MODEL_GAUGE]:
        if "model_name" in labels:
            found.hosts[(SGLANG, labels.get("instance", ""))].spec["model_name"] = labels["model_name"]


def _read_sglang_state(found: _Found, answers: dict[str, list[Sample]], up: set[tuple]) -> None:
    """SGLang's hosts: whether each rank decodes with CUDA graphs, and the targets down."""
    hosts = found.hosts
    for s in answers["sglang_graph"]:
        if (SGLANG, s.labels.get("instance", "")) in hosts and s.value > 0:
            r = found.rank(sglang_key(s.labels), s.labels)
            if s.labels.get("mode") == "decode_none":
                r.graph = False
            elif r.graph is None:
                r.graph = True
    for s in answers["sglang_targets"]:  # after the figures: a target down has none, not old ones
        # The model of a target down (an up one's is its gauge's: this may be the one before a swap)
        lab = s.labels
        down = (lab.get("instance"), lab.get("job")) not in up
        if down or (SGLANG, lab.get("instance", "")) in hosts:
            h = found.host(SGLANG, lab.get("instance", ""))
            h.spec.setdefault("model_name", lab.get("model_name", ""))
            h.down = h.down or down


def _read_mtptui_state(found: _Found, answers: dict[str, list[Sample]], up: set[tuple]) -> None:
    """The exporters' hosts: the log stream connected, the speculation settings, whether each
    rank decodes with CUDA graphs, and the exporters down."""
    for s in answers["connected"]:
        found.host(MTPTUI, s.labels.get("host", "")).connected = s.value == 1
    for s in answers["spec_info"]:
        lab = s.labels
        found.host(MTPTUI, lab.get("host", "")).spec = {
            "algorithm": lab.get("algorithm") or None, "steps": _int(lab.get("steps", "")),
            "topk": _int(lab.get("topk", "")), "draft_tokens": _int(lab.get("draft_tokens", "")),
            "settings": lab.get("settings", "")}
    no_graph = {mtptui_key(s.labels): s.value for s in answers["mtptui_no_graph"]}
    for s in answers["mtptui_decodes"]:
        key = mtptui_key(s.labels)
        if (MTPTUI, key[1]) in found.hosts and s.value > 0:
            found.rank(key, s.labels).graph = not no_graph.get(key, 0) > 0
    for s in answers["mtptui_targets"]:  # an exporter Prometheus cannot scrape: its hosts are down
        if (s.labels.get("instance"), s.labels.get("job")) not in up:
            found.host(MTPTUI, s.labels.get("host", "")).down = True


def _in_order(hosts: Collection[Host]) -> list[Host]:
    """The hosts in the natural order of their names, each one's ranks too; SGLang's accept
    length 0 read as absent (see the module's docstring)."""
    for h in hosts:
        if h.source == SGLANG:
            for r in h.ranks:
                if r.accept_len == 0:
                    r.accept_len = r.accept_rate = None
        h.ranks.sort(key=lambda r: rank_key(r.rank))
    return sorted(hosts, key=lambda h: (rank_key(h.host), h.source))


def sglang_key(labels: dict[str, str]) -> tuple:
    """What names an SGLang rank: its target and rank labels (SGLANG_RANK_BY)."""
    return (SGLANG, labels.get("instance", ""), labels.get("dp_rank"), labels.get("pp_rank"), labels.get("tp_rank"))


def mtptui_key(labels: dict[str, str]) -> tuple:
    """What names an exported rank: its host and rank labels (MTPTUI_RANK_BY)."""
    return (MTPTUI, labels.get("host", ""), labels.get("rank", ""))
