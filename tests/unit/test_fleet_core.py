"""The fleet's headless core on hand-made answers in the shape of Prometheus' query API: hosts and
ranks from either source, SGLang's 0 as no figure, the outliers, the table's order and filter, and
which SSH host a row opens. (The whole, against a real Prometheus: tests/integration/test_fleet_prometheus.py.)"""

from __future__ import annotations

import socket
import threading

import pytest

from mtptui.config import ConfigError, load_config
from mtptui.fleet.outliers import Limits, flag_fleet
from mtptui.fleet.prom import IN_FLIGHT, Prometheus, PromError, check_url
from mtptui.fleet.query import (Host, Rank, SelectorError, Sample, assemble, dp_group, queries, selector_matchers,
                                sglang_rank)
from mtptui.fleet.table import COLUMN_KEYS, SPARE, FleetRows, ViewState, fitted, rows, text_table
from mtptui.fleet.target import live_host, live_spec

NO_ANSWERS = {k: [] for k in queries(None)}


def sglang(name: str, value: float, instance: str = "10.0.0.5:30000", **labels: str) -> Sample:
    return Sample({"__name__": f"sglang:{name}", "instance": instance, "job": "sglang", "model_name": "m",
                   "engine_type": "unified", "pp_rank": "0", **labels}, value)


def answers(sglang: list[Sample] = (), mtptui: list[Sample] = (), **given: list[Sample]) -> dict[str, list[Sample]]:
    """The answers by query; gauges' samples (sglang, mtptui) go to their metric's query, which
    answers them without the metric's name (`max by` the rank's labels). As Prometheus would, the
    SGLang gauges' targets are the recent targets (with their model), and every target of a gauge
    is up unless `up` is given."""
    out = {k: list(v) for k, v in {**NO_ANSWERS, **given}.items()}
    targets: dict[tuple, dict] = {}
    for s in [*sglang, *mtptui]:
        labels = dict(s.labels)
        out[labels.pop("__name__")].append(Sample(labels, s.value))
        targets[(labels["instance"], labels["job"])] = labels
    out["sglang_targets"] += [Sample({k: labels[k] for k in ("instance", "job", "model_name")}, 1.0)
                              for labels in targets.values() if labels["job"] == "sglang"]
    if "up" not in given:
        out["up"] = [Sample({"instance": i, "job": j}, 1.0) for i, j in targets]
    return out


def host(name: str, *accept: float | None, source: str = "sglang", gen: float = 1000.0, spec: dict | None = None,
         **kw) -> Host:
    spec = spec if spec is not None else ({"model_name": "m"} if source == "sglang" else {})
    ranks = [Rank(f"TP{i}", accept_len=a, gen_throughput=gen) for i, a in enumerate(accept or (None,))]
    return Host(name, source, spec=spec, ranks=ranks, **kw)


def kinds(h: Host) -> list[str]:
    return [f.kind for f in h.flags]


# --- reading ---------------------------------------------------------------------------------------

def test_sglang_zero_accept_length_is_no_figure_and_ranks_are_named_as_in_the_log():
    got = assemble(answers(sglang=[
        sglang("spec_accept_length", 0.0, tp_rank="0"), sglang("spec_accept_rate", 0.0, tp_rank="0"),
        sglang("gen_throughput", 812.5, tp_rank="0"), sglang("num_running_reqs", 12.0, tp_rank="0"),
        sglang("spec_accept_length", 2.4, "10.0.0.6:30000", tp_rank="1", dp_rank="1"),
        sglang("spec_accept_length", 2.1, "10.0.0.6:30000", tp_rank="0", dp_rank="0"),
    ]))
    assert [(h.host, h.source, h.spec) for h in got] == [("10.0.0.5:30000", "sglang", {"model_name": "m"}),
                                                         ("10.0.0.6:30000", "sglang", {"model_name": "m"})]
    r = got[0].ranks[0]
    assert (r.rank, r.accept_len, r.accept_rate, r.gen_throughput, r.running) == ("TP0", None, None, 812.5, 12)
    assert type(r.running) is int
    assert [(r.rank, r.accept_len) for r in got[1].ranks] == [("DP0 TP0", 2.1), ("DP1 TP1", 2.4)]


@pytest.mark.parametrize("labels,rank", [({}, ""), ({"tp_rank": "3"}, "TP3"), ({"tp_rank": "1", "pp_rank": "1"}, "PP1 TP1"),
                                         ({"tp_rank": "2", "dp_rank": "2", "pp_rank": "0"}, "DP2 TP2")])
def test_sglang_rank_labels(labels, rank):
    assert sglang_rank(labels) == rank


def test_mtptui_hosts_settings_graph_and_state():
    m = {"job": "mtptui", "instance": "exp:9464"}
    got = assemble(answers(
        mtptui=[Sample({"__name__": "mtptui_spec_accept_length", "host": "gpu1", "rank": "TP0", **m}, 1.8),
                Sample({"__name__": "mtptui_queued_requests", "host": "gpu1", "rank": "TP0", **m}, 3.0)],
        spec_info=[Sample({"__name__": "mtptui_spec_info", "host": "gpu1", "algorithm": "EAGLE", "steps": "3",
                           "topk": "1", "draft_tokens": "4", "settings": "EAGLE steps=3 topk=1 draft=4", **m}, 1.0),
                   Sample({"__name__": "mtptui_spec_info", "host": "gpu2", "algorithm": "", "steps": "",
                           "topk": "", "draft_tokens": "", "settings": "spec off", **m}, 1.0)],
        connected=[Sample({"host": "gpu1", **m}, 1.0), Sample({"host": "gpu2", **m}, 0.0)],
        mtptui_decodes=[Sample({"host": "gpu1", "rank": "TP0", **m}, 40.0)],
        mtptui_no_graph=[Sample({"host": "gpu1", "rank": "TP0", **m}, 2.0)],
        mtptui_targets=[Sample({"host": "gpu3", "job": "mtptui", "instance": "exp2:9464"}, 1.0),  # exp2: down
                        Sample({"host": "gpu1", **m}, 1.0)],
    ))
    assert [(h.host, h.connected, h.down) for h in got] == [("gpu1", True, False), ("gpu2", False, False),
                                                             ("gpu3", None, True)]
    g1, g2, _ = got
    assert g1.spec == {"algorithm": "EAGLE", "steps": 3, "topk": 1, "draft_tokens": 4,
                       "settings": "EAGLE steps=3 topk=1 draft=4"}
    assert g2.spec["algorithm"] is None and g2.speculation == "" and g1.speculation == "EAGLE"
    assert g1.ranks == [Rank("TP0", accept_len=1.8, queue=3, graph=False)]
    assert g2.ranks == []


def test_sglang_graph_state_and_a_target_that_is_down():
    got = assemble(answers(
        sglang=[sglang("gen_throughput", 100.0, tp_rank="0"), sglang("gen_throughput", 100.0, tp_rank="1")],
        sglang_graph=[Sample({"instance": "10.0.0.5:30000", "tp_rank": "0", "mode": "decode_cuda_graph"}, 50.0),
                      Sample({"instance": "10.0.0.5:30000", "tp_rank": "1", "mode": "decode_cuda_graph"}, 50.0),
                      Sample({"instance": "10.0.0.5:30000", "tp_rank": "1", "mode": "decode_none"}, 3.0),
                      Sample({"instance": "10.0.0.9:30000", "tp_rank": "0", "mode": "decode_cuda_graph"}, 9.0)],
        sglang_targets=[Sample({"instance": "10.0.0.9:30000", "job": "sglang", "model_name": "m"}, 1.0)],
    ))
    assert [r.graph for r in got[0].ranks] == [True, False]
    assert (got[1].host, got[1].down, got[1].ranks) == ("10.0.0.9:30000", True, [])


def test_a_target_that_swapped_models_within_the_hour_shows_the_one_it_serves():
    """The targets of the last hour name both models; the running gauge names the current one."""
    got = assemble(answers(
        sglang=[sglang("num_running_reqs", 3.0, tp_rank="0", model_name="new")],
        sglang_targets=[Sample({"instance": "10.0.0.5:30000", "job": "sglang", "model_name": "old"}, 1.0)],
    ))
    assert [(h.host, h.spec, h.down) for h in got] == [("10.0.0.5:30000", {"model_name": "new"}, False)]


def test_host_totals_add_dp_groups_not_the_tp_ranks_of_one_batch():
    h = Host("x", "sglang", ranks=[Rank("DP0 TP0", running=10), Rank("DP0 TP1", running=10),
                                   Rank("DP1 TP2", running=4), Rank("DP1 TP3", running=4)])
    assert h.total("running") == 14
    assert Host("y", "sglang", ranks=[Rank("TP0", running=7), Rank("TP1", running=7)]).total("running") == 7
    assert dp_group("DP3 TP3 EP3") == "DP3" and dp_group("TP1") == ""


def test_match_is_added_to_every_query_and_must_be_matchers():
    got = queries('{job="sglang", instance=~"gpu.*"}')
    # `up` is only looked up by the targets: narrowed, a --match on a metric's label (model_name)
    # would leave every target down.
    assert got.pop("up") == queries(None)["up"] and "gpu" not in queries(None)["up"]
    for q in got.values():
        assert 'job="sglang", instance=~"gpu.*"' in q
    assert selector_matchers('job!="x"') == 'job!="x"'
    assert selector_matchers(None) == selector_matchers("{}") == ""
    for bad in ("up", 'up{job="x"}', "{job}"):
        with pytest.raises(SelectorError):
            selector_matchers(bad)


def test_a_prometheus_that_does_not_answer_is_asked_no_more_than_it_can_take_at_once():
    """A refresh asks IN_FLIGHT queries at a time; after the first that fails (here: no answer in
    the timeout) it asks no more, so a dead server costs one timeout, not one per query."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                accepted.append(server.accept()[0])
            except OSError:
                return
    threading.Thread(target=accept, daemon=True).start()
    try:
        prom = Prometheus(f"http://127.0.0.1:{server.getsockname()[1]}", timeout=0.5)
        with pytest.raises(PromError, match="no answer in 0.5 s"):
            prom.queries(queries(None))
        for _ in range(200):  # the connections are made; the thread may not have taken them all yet
            if len(accepted) >= IN_FLIGHT:
                break
            threading.Event().wait(0.01)
        assert len(queries(None)) > IN_FLIGHT and len(accepted) == IN_FLIGHT
    finally:
        server.close()
        for c in accepted:
            c.close()


@pytest.mark.parametrize("url", ["prom:9090", "ftp://prom", "http://", "http://prom:x"])
def test_a_url_that_is_not_one(url):
    with pytest.raises(PromError):
        check_url(url)


def test_rows_are_made_once_a_hosts_ranks_when_it_is_expanded_and_columns_fit_what_was_made():
    hosts = [host("a", 2.5, 2.5), Host("b", "sglang", spec={"model_name": "m"},
                                         ranks=[Rank("DP1 TP1 EP1", accept_len=2.0)])]
    model = FleetRows(hosts)
    assert model.widths()[0] == 1  # the host names only: no rank row made yet
    shown = ViewState(expanded={"sglang:b"})
    got = model.rows(shown)
    assert [r.cells[0] for r in got] == ["a", "b", "  DP1 TP1 EP1"]
    assert model.rows(ViewState(sort="accept_len", expanded={"sglang:b"}))[1] is got[2]  # b first: 2.00
    every = FleetRows(hosts)
    every.rows(ViewState(expanded={"sglang:a", "sglang:b"}))
    assert model.widths()[0] == len("  DP1 TP1 EP1") == every.widths()[0]
    assert model.rows(ViewState()) == got[:2] and model.widths()[0] == len("  DP1 TP1 EP1")  # folded: kept


# --- outliers --------------------------------------------------------------------------------------

def test_the_silent_off_and_the_collapsed_host_among_their_peers():
    fleet = flag_fleet([host("a", 2.5, 2.5), host("b", 2.4), host("off", None), host("low", 1.6),
                        host("other-model", 1.0, spec={"model_name": "n"})])
    by = {h.host: h for h in fleet}
    assert kinds(by["a"]) == kinds(by["b"]) == []
    assert kinds(by["off"]) == ["spec_off"]
    assert kinds(by["low"]) == ["accept_outlier"]
    f = by["low"].flags[0]
    assert (f.value, f.median) == (1.6, 2.4)
    assert f.text == "accept len 1.60 vs 2.40, the median of 3 peers (-33%)"
    # Alone with its model: no peers, but a collapse is one by its own measure.
    assert kinds(by["other-model"]) == ["accept_collapsed"]


def test_two_peers_have_no_odd_one_out():
    assert [kinds(h) for h in flag_fleet([host("a", 2.5), host("low", 1.5)])] == [[], []]
    assert [kinds(h) for h in flag_fleet([host("a", 2.5), host("off", None)])] == [[], []]


def test_an_idle_host_without_figures_is_not_called_off():
    fleet = flag_fleet([host("a", 2.5), host("b", 2.5), host("c", 2.5), host("idle", None, gen=0.0)])
    assert kinds(fleet[-1]) == []


def test_settings_that_ask_for_speculation_without_accept_len():
    asks = {"algorithm": "EAGLE", "settings": "EAGLE steps=3 topk=1 draft=4"}
    fleet = flag_fleet([host("gpu1", None, source="mtptui", spec=asks),
                        host("gpu2", None, source="mtptui", spec={"algorithm": None, "settings": "spec off"})])
    assert kinds(fleet[0]) == ["spec_off"] and kinds(fleet[1]) == []
    assert fleet[0].flags[0].text.startswith("server_args ask for EAGLE steps=3 topk=1 draft=4, but")


def test_the_rank_far_from_its_hosts_median_and_graphs_off():
    h = host("x", 2.5, 2.4, 2.6, 1.2)
    h.ranks[1].graph = False
    flag_fleet([h], Limits(pct=25))
    assert [(f.kind, f.rank) for f in h.flags] == [("rank_outlier", "TP3"), ("graph_off", "TP1")]
    assert h.flags[0].text == "TP3 accept len 1.20 vs 2.45, the host's median (-51%)"
    flag_fleet([h], Limits(pct=60))
    assert kinds(h) == ["graph_off"]


def test_down_and_disconnected_come_first():
    down = host("d", 2.5, down=True)
    lost = host("l", 2.5, source="mtptui", spec={"settings": "s", "algorithm": "EAGLE"}, connected=False)
    flag_fleet([down, lost])
    assert kinds(down) == ["down"] and kinds(lost) == ["disconnected"]


# --- the table -------------------------------------------------------------------------------------

def test_sort_keeps_absent_figures_last_and_ranks_under_their_host():
    fleet = [host("b", 2.0, 3.0), host("a", None), host("c", 1.0)]
    st = ViewState(sort="accept_len")
    assert [r.cells[0] for r in rows(fleet, st)] == ["c", "b", "a"]
    st.reverse = True
    assert [r.cells[0] for r in rows(fleet, st)] == ["b", "c", "a"]
    st.expanded = {"sglang:b"}
    assert [r.cells[0] for r in rows(fleet, st)] == ["b", "  TP1", "  TP0", "c", "a"]
    st.sort = "host"
    assert [r.cells[0] for r in rows(fleet, st)] == ["c", "b", "  TP0", "  TP1", "a"]


def test_filter_and_flagged_only():
    fleet = flag_fleet([host("gpu1", 2.5), host("gpu2", 2.5), host("gpu3", 2.5), host("web9", None)])
    assert [r.cells[0] for r in rows(fleet, ViewState(filter="GPU"))] == ["gpu1", "gpu2", "gpu3"]
    assert [r.cells[0] for r in rows(fleet, ViewState(filter="spec_off"))] == ["web9"]
    assert [r.cells[0] for r in rows(fleet, ViewState(flagged_only=True))] == ["web9"]


def test_text_table():
    text = text_table(rows([host("gpu1", 2.5)], ViewState()))
    assert text.splitlines() == [
        "host  source  settings  ranks  accept len  accept rate  gen tok/s  running  queue  graph  flags",
        "gpu1  sglang  model m       1        2.50            -      1,000        -      -  -"]


# --- which host Enter opens ------------------------------------------------------------------------

@pytest.fixture
def config(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text('[defaults]\nunit = "sglang"\nuser = "ops"\n\n[[hosts]]\nname = "gpu1"\naddress = "10.0.0.5"\n\n'
                 '[[hosts]]\nname = "gpu2"\n')
    return load_config(str(p))


@pytest.mark.parametrize("name,source,spec", [
    ("10.0.0.5:30000", "sglang", "gpu1"),  # the config host of that address
    ("gpu2:30000", "sglang", "gpu2"),  # the config host of that name
    ("10.0.0.7:30000", "sglang", "10.0.0.7"),  # ad hoc
    ("[fd00::7]:30000", "sglang", "[fd00::7]"),
    ("gpu1", "mtptui", "gpu1"),
    ("box9", "mtptui", "box9"),
])
def test_live_spec(config, name, source, spec):
    assert live_spec(Host(name, source), config) == spec


def test_live_host_takes_the_defaults_or_says_why_not(config, tmp_path):
    h = live_host(Host("10.0.0.7:30000", "sglang"), config)
    assert (h.name, h.address, h.user, h.unit) == ("10.0.0.7", "10.0.0.7", "ops", "sglang")
    assert live_host(Host("10.0.0.7:30000", "sglang"), config, unit="other").unit == "other"
    bare = tmp_path / "bare.toml"
    bare.write_text("")
    with pytest.raises(ConfigError, match="which unit"):
        live_host(Host("10.0.0.7:30000", "sglang"), load_config(str(bare)))


def test_columns_that_do_not_fit_are_left_out_spare_first():
    widths = [10] * len(COLUMN_KEYS)  # 12 cells each with the padding
    assert fitted(widths, 12 * len(COLUMN_KEYS), 2) == tuple(range(len(COLUMN_KEYS)))
    two_less = fitted(widths, 12 * len(COLUMN_KEYS) - 13, 2)
    assert [COLUMN_KEYS[i] for i in range(len(COLUMN_KEYS)) if i not in two_less] == list(SPARE[:2])
    assert [COLUMN_KEYS[i] for i in fitted(widths, 0, 2)] == [k for k in COLUMN_KEYS if k not in SPARE]


def test_hosts_sort_in_natural_order():
    names = ["10.1.0.10:30000", "gpu-10", "10.1.0.9:30000", "gpu-9", "10.1.0.100:30000"]
    hosts = [host(n, 2.5) for n in names]
    want = ["10.1.0.9:30000", "10.1.0.10:30000", "10.1.0.100:30000", "gpu-9", "gpu-10"]
    assert [r.host.host for r in rows(hosts, ViewState())] == want
    assert [r.host.host for r in rows(hosts, ViewState(reverse=True))] == want[::-1]
    got = assemble(answers(sglang=[sglang("gen_throughput", 1.0, n, tp_rank="0") for n in names[::2]]))
    assert [h.host for h in got] == ["10.1.0.9:30000", "10.1.0.10:30000", "10.1.0.100:30000"]
