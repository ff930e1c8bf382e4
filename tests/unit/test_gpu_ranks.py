"""GPUs mapped to ranks (core/gpus.rank_devices, placement_holds; core/parse/events.placement_args):
where SGLang's launch puts each rank (engine.py: base_gpu_id + (tp_rank % tp_per_node) *
gpu_id_step, PP stages tp_size apart; data_parallel_controller.py: DP replicas tp_size * step
apart, DP attention's ranks in one group), through CUDA_VISIBLE_DEVICES, and nothing where the
settings do not say."""

from __future__ import annotations

from pathlib import Path

import pytest

from mtptui.core.gpus import GpuSample, placement_holds, rank_devices, visible_devices
from mtptui.core.parse.events import placement_args
from mtptui.sim import flags

REAL_0_5_23 = (Path(__file__).parent / "data" / "sglang-0.5.23-server_args.log").read_text().rstrip("\n")
TP8 = [f"TP{i}" for i in range(8)]


def _spec(tp, dp=1, attention=False):
    return {"tp_size": tp, "dp_size": dp, "enable_dp_attention": attention}


def test_placement_from_both_forms_of_the_line():
    assert placement_args(REAL_0_5_23) == {"nnodes": 1, "base_gpu_id": 0, "gpu_id_step": 1}
    line = "server_args=" + flags.server_args_repr({"tp_size": 2, "base_gpu_id": 4, "gpu_id_step": 2, "nnodes": 1})
    assert placement_args(line) == {"base_gpu_id": 4, "gpu_id_step": 2, "nnodes": 1}
    # a version without the fields: its defaults (an empty dict), not unknown
    assert placement_args("server_args=ServerArgs(model_path='m', tp_size=2)") == {}


def test_no_placement_from_a_line_cut_short_or_not_sglangs():
    cut = REAL_0_5_23[:REAL_0_5_23.index("'base_gpu_id'")]
    assert placement_args(cut) is None
    assert placement_args("non-default args: {'model': 'm', 'tensor_parallel_size': 2}") is None


def test_tp_ranks_from_base_and_step():
    assert rank_devices(TP8, _spec(8), {}, None) == {f"TP{i}": i for i in range(8)}
    assert rank_devices(["TP0", "TP1"], _spec(2), {"base_gpu_id": 4}, None) == {"TP0": 4, "TP1": 5}
    assert rank_devices(["TP0", "TP1"], _spec(2), {"gpu_id_step": 2}, None) == {"TP0": 0, "TP1": 2}
    # the label's other tokens (EP, a pid prefix) do not move it
    assert rank_devices(["pid=41 TP1 EP0"], _spec(2), {}, None) == {"pid=41 TP1 EP0": 1}


def test_through_cuda_visible_devices():
    assert rank_devices(["TP0", "TP1"], _spec(2), {}, visible_devices("4,5,6,7")) == {"TP0": 4, "TP1": 5}
    assert rank_devices(["TP0", "TP1"], _spec(2), {"base_gpu_id": 2}, visible_devices("6,7,0,1")) == \
        {"TP0": 0, "TP1": 1}
    # a device past the visible list is left out, not guessed
    assert rank_devices(["TP0", "TP1"], _spec(2), {}, visible_devices("3")) == {"TP0": 3}


def test_dp_attention_is_one_group_and_replicas_are_tp_apart():
    labels = [f"DP{i} TP{i} EP{i}" for i in range(8)]
    assert rank_devices(labels, _spec(8, 8, True), {}, None) == {lab: i for i, lab in enumerate(labels)}
    replicas = ["DP0 TP0", "DP0 TP1", "DP1 TP0", "DP1 TP1"]
    assert rank_devices(replicas, _spec(2, 2), {"base_gpu_id": 1}, None) == \
        {"DP0 TP0": 1, "DP0 TP1": 2, "DP1 TP0": 3, "DP1 TP1": 4}
    assert rank_devices(["DP0", "DP1", "DP2"], _spec(1, 3), {"gpu_id_step": 2}, None) == \
        {"DP0": 0, "DP1": 2, "DP2": 4}


def test_pp_stages_follow_the_tp_group():
    labels = ["PP0 TP0", "PP0 TP1", "PP1 TP0", "PP1 TP1"]
    assert rank_devices(labels, _spec(2), {}, None) == {"PP0 TP0": 0, "PP0 TP1": 1, "PP1 TP0": 2, "PP1 TP1": 3}


def test_one_rank_without_a_token():
    assert rank_devices([""], _spec(1), {"base_gpu_id": 3}, None) == {"": 3}


@pytest.mark.parametrize("labels, spec, placement", [
    (["TP0", "TP1"], _spec(2), None),  # no settings line seen (or vLLM's, or one cut short)
    (["TP0", "TP1"], {}, {}),  # no tp_size
    (["TP0", "TP1"], _spec(2), {"nnodes": 2}),  # the other node's ranks are not this host's GPUs
    ([""], _spec(4), {}),  # an engine-wide line of a TP 4 server is no one GPU's
    (["TP4"], _spec(4), {}),  # a rank the settings have no room for (an older run's)
    (["DP0 PP1 TP0"], _spec(2, 2), {}),  # DP over PP: the versions differ on where it goes
    (["DP2 TP0"], _spec(2, 2), {}),  # a replica the settings do not have
    (["TP0"], _spec(2), {"base_gpu_id": "0"}),  # not a number as SGLang writes it
])
def test_nothing_where_the_settings_do_not_say(labels, spec, placement):
    assert rank_devices(labels, spec, placement, None) == {}


def _gpu(i, used, total=81559.0):
    return GpuSample(0.0, i, "NVIDIA H100 80GB HBM3", util=90.0, mem_used=used, mem_total=total, power=600.0)


def test_the_readings_must_agree_with_the_mapping():
    held = [_gpu(0, 71771.0), _gpu(1, 71771.0), _gpu(2, 1.0)]
    assert placement_holds({"TP0": 0, "TP1": 1}, held)
    # a CUDA_VISIBLE_DEVICES set where the mapping could not see it: the ranks' GPUs read idle
    assert not placement_holds({"TP0": 1, "TP1": 2}, held)
    assert not placement_holds({"TP0": 5}, held)  # a GPU the tool does not list
    assert not placement_holds({}, held)
    # a GPU that cannot read its memory does not contradict it
    assert placement_holds({"TP0": 3}, [GpuSample(0.0, 3, "T400")])
