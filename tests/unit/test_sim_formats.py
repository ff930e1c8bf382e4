"""The simulator's lines follow the reference (shared/reference/sglang-log-formats.md) to the
letter: its example lines (§1.6) and rank prefixes (§2) are reproduced byte for byte."""

import pytest

from mtptui.sim import formats
from mtptui.sim.formats import Pool, Spec, decode_line, prefill_line, rank_label, vtuple

# §1.6: accept len 2.87 with steps=3, topk=1, draft=4, 12 running, 45678 tokens, 1234.50 tok/s.
POOL = Pool("plain", 45678, int(45678 / 0.23))
SPEC = Spec(acc_tokens=287.0, request_steps=100, num_steps=3, num_draft_tokens=4)

REFERENCE_DECODE = {
    "0.4.9": "Decode batch. #running-req: 12, #token: 45678, token usage: 0.23, accept len: 2.87, cuda graph: True, "
             "gen throughput (token/s): 1234.50, #queue-req: 0",
    "0.5.3": "Decode batch. #running-req: 12, #token: 45678, token usage: 0.23, accept len: 2.87, cuda graph: True, "
             "gen throughput (token/s): 1234.50, #queue-req: 0, ",
    "0.5.4": "Decode batch [1234], #running-req: 12, #token: 45678, token usage: 0.23, accept len: 2.87, accept rate: 0.72, "
             "cuda graph: True, gen throughput (token/s): 1234.50, #queue-req: 0, ",
    "0.5.8": "Decode batch, #running-req: 12, #token: 45678, token usage: 0.23, accept len: 2.87, accept rate: 0.72, "
             "cuda graph: True, gen throughput (token/s): 1234.50, #queue-req: 0, ",
    "0.5.12": "Decode batch, #running-req: 12, #token: 45678, token usage: 0.23, accept len: 2.87, accept rate: 0.62, "
              "cuda graph: True, gen throughput (token/s): 1234.50, #queue-req: 0",
}


@pytest.mark.parametrize("version", sorted(REFERENCE_DECODE))
def test_decode_lines_match_the_reference_examples(version):
    text, fields, _ = decode_line(vtuple(version), running=12, pool=POOL, spec=SPEC, graph=True,
                                  gen_throughput=1234.5, queue=0, forward_ct=1234)
    assert text == REFERENCE_DECODE[version]
    assert fields["accept_len"] == pytest.approx(2.87)


def test_prefill_line_matches_the_reference_example():
    text, fields, _ = prefill_line(vtuple("0.5.12"), new_seq=1, new_token=512, cached_token=0,
                                   pool=Pool("plain", 1990, 199000), running=0, queue=0, pending_token=0,
                                   input_throughput=4321.0, forward_ct=7)
    assert text == ("Prefill batch, #new-seq: 1, #new-token: 512, #cached-token: 0, token usage: 0.01, #running-req: 0, "
                    "#queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 4321.00")
    assert "accept_len" not in fields


def test_spec_off_has_no_accept_fields():
    text, fields, _ = decode_line(vtuple("0.5.12"), running=3, pool=POOL, spec=None, graph=False,
                                  gen_throughput=10, queue=2, forward_ct=1)
    assert "accept" not in text and "accept_len" not in fields and "accept_rate" not in fields
    assert "cuda graph: False" in text


def test_accept_rate_before_054_is_absent():
    text, _, _ = decode_line(vtuple("0.5.3"), running=12, pool=POOL, spec=SPEC, graph=True,
                                  gen_throughput=1, queue=0, forward_ct=1)
    assert "accept len: 2.87" in text and "accept rate" not in text


@pytest.mark.parametrize("version,rate", [("0.5.4", 2.87 / 4), ("0.5.8", 2.87 / 4), ("0.5.10", 2.87 / 4),
                                          ("0.5.12", (2.87 - 1) / 3)])
def test_accept_rate_formula_by_version(version, rate):
    assert formats.accept_rate(vtuple(version), SPEC) == pytest.approx(rate)


def test_accept_rate_054_uses_num_steps_plus_one_not_draft_tokens():
    # topk > 1: draft tokens (8) differ from steps + 1 (6); 0.5.4 divides by 6, 0.5.8 by 8.
    s = Spec(acc_tokens=350.0, request_steps=100, num_steps=5, num_draft_tokens=8)
    assert formats.accept_rate(vtuple("0.5.4"), s) == pytest.approx(3.5 / 6)
    assert formats.accept_rate(vtuple("0.5.8"), s) == pytest.approx(3.5 / 8)
    assert formats.accept_rate(vtuple("0.5.12"), s) == pytest.approx(2.5 / 7)


def test_pool_forms():
    v = vtuple("0.5.12")
    mamba = Pool("mamba", 1000, 10000, mamba_num=12, mamba_total=144)
    text, _, _ = decode_line(v, running=12, pool=mamba, spec=None, graph=True, gen_throughput=1, queue=0, forward_ct=1)
    assert "#full token: 1000, full token usage: 0.10, mamba num: 12, mamba usage: 0.08" in text
    text, _, _ = prefill_line(v, new_seq=1, new_token=5, cached_token=0, pool=mamba, running=0, queue=0,
                              pending_token=0, input_throughput=0, forward_ct=1)
    assert "full token usage: 0.10, mamba usage: 0.08, #running-req" in text
    swa = Pool("swa", 1000, 10000, swa_used=200, swa_total=8000)
    text, _, _ = decode_line(vtuple("0.4.9"), running=1, pool=swa, spec=None, graph=True, gen_throughput=1, queue=0,
                             forward_ct=1)
    assert "#token: full=1000, swa=200, token usage: full=0.10, swa=0.03" in text
    text, _, _ = decode_line(vtuple("0.5.3"), running=1, pool=swa, spec=None, graph=True, gen_throughput=1, queue=0,
                             forward_ct=1)
    assert "#full token: 1000, full token usage: 0.10, #swa token: 200, swa token usage: 0.03" in text


def test_prefill_heads_and_tails():
    kw = {"new_seq": 1, "new_token": 5, "cached_token": 0, "pool": Pool("plain", 5, 100), "running": 0, "queue": 0,
              "pending_token": 0, "input_throughput": 0, "forward_ct": 41}
    assert prefill_line(vtuple("0.4.9"), **kw)[0] == (
        "Prefill batch. #new-seq: 1, #new-token: 5, #cached-token: 0, #token: 5, token usage: 0.05, "
        "#running-req: 0, #queue-req: 0")
    assert prefill_line(vtuple("0.5.4"), **kw)[0].startswith("Prefill batch [42], #new-seq: 1")
    assert prefill_line(vtuple("0.5.8"), **kw)[0].endswith("#queue-req: 0, ")
    assert prefill_line(vtuple("0.5.10"), **kw)[0].endswith("#queue-req: 0, cuda graph: False, input throughput (token/s): 0.00")


@pytest.mark.parametrize("version,args,label", [
    ("0.5.8", {"tp_rank": 3, "tp_size": 8, "dp_rank": 3, "ep_size": 8}, "DP3 TP3 EP3"),
    ("0.5.12", {"tp_rank": 3, "tp_size": 4}, "TP3"),
    ("0.5.12", {"tp_rank": 0, "tp_size": 1}, ""),
    ("0.4.9", {"tp_rank": 0, "tp_size": 1}, ""),
    ("0.4.9", {"tp_rank": 5, "tp_size": 8, "dp_rank": 5, "ep_size": 8}, "DP5 TP5"),
    ("0.5.3", {"tp_rank": 1, "tp_size": 2, "dp_rank": 1}, "DP1 TP1"),
    ("0.5.4", {"tp_rank": 2, "tp_size": 4, "ep_size": 4, "pp_rank": 1, "pp_size": 2}, "TP2 EP2 PP1"),
    ("0.5.8", {"tp_rank": 2, "tp_size": 4, "ep_size": 4, "pp_rank": 1, "pp_size": 2}, "PP1 TP2 EP2"),
    ("0.5.12", {"tp_rank": 0, "tp_size": 1, "dp_rank": 1}, "DP1"),
])
def test_rank_tokens_by_version(version, args, label):
    assert rank_label(vtuple(version), **args) == label


def test_prefix():
    t = 1773072205.0  # 2026-03-09 16:03:25 UTC
    assert formats.prefix(t, "TP0", utc=True) == "[2026-03-09 16:03:25 TP0] "
    assert formats.prefix(t, "", utc=True) == "[2026-03-09 16:03:25] "
