"""The simulator's SGLang metrics model, without a clock: when updates take effect, the idle
refresh, 0.4.9's collapsed series, the EP rank, and the text format read back by prometheus_client."""

from __future__ import annotations

import math

from prometheus_client.parser import text_string_to_metric_families

from mtptui.sim import formats
from mtptui.sim.engine import layout
from mtptui.sim.formats import Pool
from mtptui.sim.metrics import SchedulerMetrics, exposition, number
from mtptui.sim.scenario import config_from_argv

POOL = Pool("plain", 500, 1000)


def setup(argv, version="0.5.12"):
    cfg = config_from_argv(["--model-path", "Qwen/Qwen3-8B", "--enable-metrics", "--sim-version", version] + argv)
    lay = layout(cfg)
    groups = [SchedulerMetrics.for_group(cfg, m, p, t_start=0.0) for m, p in zip(lay.members, lay.groups)]
    return cfg, lay, groups


def read(cfg, lay, groups) -> dict:
    text = exposition(cfg, groups, lay.ranks)
    return {s.name: s for f in text_string_to_metric_families(text) for s in f.samples}


def decode(m, t, *, gen=100.0, accept=2.5):
    m.decode(t, running=4, queue=1, pool=POOL, gen={}, default_gen=gen, accept_len=accept, accept_rate=0.5)


def test_nothing_is_served_before_a_scheduler_sets_its_stats():
    cfg, lay, groups = setup([])
    groups[0].catch_up(10.0, idle=False, queue=0, pool=POOL)
    assert exposition(cfg, groups, lay.ranks) == ""


def test_an_update_takes_effect_at_its_lines_time():
    cfg, lay, [m] = setup([])
    decode(m, 10.0)
    m.catch_up(9.99, idle=False, queue=0, pool=POOL)
    assert exposition(cfg, [m], lay.ranks) == ""
    m.catch_up(10.0, idle=False, queue=0, pool=POOL)
    s = read(cfg, lay, [m])
    assert (s["sglang:num_running_reqs"].value, s["sglang:gen_throughput"].value,
            s["sglang:spec_accept_length"].value, s["sglang:token_usage"].value) == (4, 100.0, 2.5, 0.5)


def test_a_prefill_keeps_the_last_decodes_throughput_and_acceptance():
    cfg, lay, [m] = setup([])
    decode(m, 10.0)
    m.prefill(11.0, running=4, queue=0, pool=Pool("plain", 812, 1000))
    m.catch_up(11.0, idle=False, queue=0, pool=POOL)
    s = read(cfg, lay, [m])
    assert s["sglang:gen_throughput"].value == 100.0 and s["sglang:spec_accept_length"].value == 2.5
    assert s["sglang:num_queue_reqs"].value == 0 and s["sglang:token_usage"].value == 0.81  # 0.5.12 rounds


def test_an_idle_scheduler_refreshes_every_30_s_with_zero_throughput():
    cfg, lay, [m] = setup([])
    decode(m, 10.0)
    m.catch_up(39.9, idle=True, queue=0, pool=POOL)
    assert read(cfg, lay, [m])["sglang:gen_throughput"].value == 100.0
    m.catch_up(45.0, idle=False, queue=0, pool=POOL)  # busy: no refresh
    assert read(cfg, lay, [m])["sglang:gen_throughput"].value == 100.0
    m.catch_up(45.0, idle=True, queue=2, pool=Pool("plain", 0, 1000))
    s = read(cfg, lay, [m])
    assert (s["sglang:gen_throughput"].value, s["sglang:num_running_reqs"].value,
            s["sglang:num_queue_reqs"].value, s["sglang:token_usage"].value) == (0, 0, 2, 0)
    assert s["sglang:spec_accept_length"].value == 2.5  # the stats object keeps it
    assert m.t_update == 40.0  # refreshes fall on the 30 s grid from the last update


def test_0_4_9_has_no_rank_labels_so_dp_groups_collapse_to_the_latest():
    cfg, lay, groups = setup(["--tp", "2", "--dp", "2"], version="0.4.9")
    decode(groups[0], 5.0, gen=111.0)
    decode(groups[1], 4.0, gen=222.0)
    for m in groups:
        m.catch_up(6.0, idle=False, queue=0, pool=POOL)
    text = exposition(cfg, groups, lay.ranks)
    [fam] = [f for f in text_string_to_metric_families(text) if f.name == "sglang:gen_throughput"]
    assert [(s.labels, s.value) for s in fam.samples] == [({"model_name": "Qwen/Qwen3-8B", "engine_type": "unified"},
                                                           111.0)]
    assert "sglang:spec_accept_rate" not in text


def test_the_ep_rank_is_sglangs_tp_rank_over_tp_per_ep():
    assert formats.moe_ep_rank(5, 8, 4) == 2  # TP ranks 4 and 5 share expert group 2
    assert formats.rank_label((0, 5, 8), 5, 8, None, 4) == "TP5 EP2"
    cfg, lay, groups = setup(["--tp", "8", "--ep", "4", "--enable-metrics-for-all-schedulers"], version="0.5.10")
    decode(groups[0], 1.0)
    groups[0].catch_up(1.0, idle=False, queue=0, pool=POOL)
    text = exposition(cfg, groups, lay.ranks)
    [fam] = [f for f in text_string_to_metric_families(text) if f.name == "sglang:num_running_reqs"]
    assert [(s.labels["tp_rank"], s.labels["moe_ep_rank"]) for s in fam.samples] == [
        (str(i), str(i // 2)) for i in range(8)]


def test_numbers_are_written_as_prometheus_client_writes_them():
    assert [number(x) for x in (4, 0.5, math.inf, -math.inf)] == ["4.0", "0.5", "+Inf", "-Inf"]
    assert number(math.nan) == "NaN"
