"""Properties over arbitrary input: the parser never raises, and a line means the same in any envelope."""

import json
from datetime import datetime, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from mtptui.core.ingest import Ingest
from mtptui.core.parse import LineParser
from mtptui.core.summary import Summary


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=400))
def test_parser_never_raises_on_bytes(data):
    raw = data.decode("utf-8", "replace")
    p = LineParser().parse(raw)
    assert p.outcome in ("batch", "event", "other", "dropped")


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)
_prefixes = st.sampled_from([
    "", "[2026-03-09 16:03:25 TP0] ", "[2026-03-09 16:03:25.123 DP1 TP1 EP1] ", "Mar 09 16:03:25 h p[1]: ",
    "2026-03-09T16:03:25+0000 h p[1]: ", '{"MESSAGE": "', "(APIServer pid=6) INFO 09-02 08:46:23 [loggers.py:1] ",
    "(SGLangEngine pid=4, ip=10.0.0.1) [2026-03-09 16:03:25 TP0] ", "[16:03:25 TP0] ", "[gpu=0] ",
    "2026-03-09 16:03:25,659 [INFO] sglang: ", "2026-03-09T16:03:25.123456789Z stdout F ", '{"log": "',
    "<14>Mar  9 16:03:25 h p[1]: ", "<14>1 2026-03-09T16:03:25Z h p 1 - - ", "[99:99:99 TP0] ",
    "2026-13-45 25:61:61,999 [INFO] x: ", "(SGLangEngine pid=4) ",
])
_heads = st.sampled_from(["", "Decode batch, ", "Decode batch. ", "Decode batch [12], ", "Prefill batch, ",
                          "SpecDecoding metrics: ", "1 Engines Aggregated: Avg prompt throughput: ", "server_args=ServerArgs("])
_items = st.lists(st.tuples(st.sampled_from(["#running-req", "accept len", "cuda graph", "token usage", "#token",
                                             "Mean acceptance length", "Running", "x"]),
                            st.one_of(_text, st.integers().map(str), st.floats().map(str),
                                      st.sampled_from(["inf", "-Infinity", "nan", "1e999", "9" * 400, "nan%"]))),
                   max_size=8)


@settings(max_examples=400, deadline=None)
@given(_prefixes, _heads, _items, _text)
def test_parser_never_raises_on_near_misses(prefix, head, items, tail):
    raw = prefix + head + ", ".join(f"{k}: {v}" for k, v in items) + tail
    summary = Summary()
    ingest = Ingest(summary)
    p = ingest.feed(raw)
    c = ingest.counts
    assert c.read == c.batch + c.event + c.unparsed + c.dropped == 1
    if p.outcome == "batch":
        for v in p.record.fields.values():
            assert not (isinstance(v, float) and v in (float("inf"), float("-inf"))), p.record.fields
    json.dumps(summary.to_json(c.to_json()), allow_nan=False)  # strict JSON: no NaN or infinity


_rank = st.sampled_from(["", " TP0", " TP3", " DP2 TP2 EP2", " PP1 TP0"])
_num = st.floats(min_value=0, max_value=1e5, allow_nan=False).map(lambda x: round(x, 2))
_int = st.integers(min_value=0, max_value=10**6)


@st.composite
def sglang_lines(draw):
    rank = draw(_rank)
    fields = [f"#running-req: {draw(_int)}", f"#token: {draw(_int)}", f"token usage: {draw(_num):.2f}"]
    if draw(st.booleans()):
        fields.append(f"accept len: {draw(_num):.2f}")
    fields.append(f"cuda graph: {draw(st.booleans())}")
    fields.append(f"gen throughput (token/s): {draw(_num):.2f}")
    fields.append(f"#queue-req: {draw(_int)}")
    head = draw(st.sampled_from(["Decode batch. ", "Decode batch, ", "Decode batch [7], "]))
    tail = draw(st.sampled_from(["", ", "]))
    return f"[2026-03-09 16:03:25{rank}] {head}" + ", ".join(fields) + tail


def envelopes(msg):
    usec = int(datetime(2026, 3, 9, 16, 3, 25, tzinfo=timezone.utc).timestamp() * 1e6)
    return [
        msg,
        msg + "\n",
        msg + "\r\n",
        "Mar 09 16:03:25 gpu python3[1]: " + msg,
        "Mar 09 16:03:25.000000 gpu python3[1]: " + msg + "\n",
        "2026-03-09T16:03:25+0000 gpu python3[1]: " + msg,
        "2026-03-09T16:03:25.000000+00:00 gpu python3[1]: " + msg,
        json.dumps({"MESSAGE": msg, "_HOSTNAME": "gpu", "__REALTIME_TIMESTAMP": str(usec)}),
        json.dumps({"MESSAGE": list(msg.encode()), "_HOSTNAME": "gpu", "__REALTIME_TIMESTAMP": str(usec)}),
    ]


@settings(max_examples=200, deadline=None)
@given(sglang_lines())
def test_a_line_parses_the_same_inside_any_envelope(msg):
    records = []
    for raw in envelopes(msg):
        p = LineParser().parse(raw)
        assert p.outcome == "batch", raw
        r = p.record
        records.append((r.kind, r.ts, r.rank, r.engine, r.fields, r.extra, r.truncated))
    assert all(r == records[0] for r in records), records


@settings(max_examples=300, deadline=None)
@given(sglang_lines(), st.integers(min_value=1, max_value=400))
def test_a_cut_off_batch_line_is_still_a_batch_with_a_subset_of_fields(msg, cut):
    full = LineParser().parse(msg).record
    part = msg[:cut]
    p = LineParser().parse(part)
    body_at = part.find("] ") + 2
    if body_at < 2 or not part[body_at:].startswith("Decode batch"):
        return
    assert p.outcome == "batch"
    cut_fields = p.record.fields
    assert set(cut_fields) <= set(full.fields)
    # only the item the cut went through may read differently (`1234.50` cut to `12`)
    differing = [k for k in cut_fields if cut_fields[k] != full.fields[k]]
    assert len(differing) <= 1
    if len(msg) > cut:
        assert len(cut_fields) < len(full.fields) or differing or p.record.truncated or not msg[cut:].strip(", ")


_envs = st.sampled_from(["", "Mar 09 16:03:25 gpu python3[1]: ", "Mar  9 16:03:25.250 gpu-b sglang[77]: ",
                         "Mar 09 16:03:25 gpu x: "])
_stamps = st.sampled_from(["[2026-03-09 16:03:25 TP0] ", "[2026-03-09 16:03:25 DP1 TP1 EP1] ", "[2026-03-09 16:03:25] ",
                           "[2026-03-09 16:03:25.500 TP2] ", "[2026-13-45 16:03:25 TP0] ", "[16:03:25 TP0] ",
                           "(SGLangEngine pid=7) [2026-03-09 16:03:25 TP0] ", "2026-03-09 16:03:25,250 [INFO] x: ",
                           "[gpu=1] ", ""])
_heads2 = st.sampled_from(["Decode batch, ", "Prefill batch, ", "Decode batch. ", "Decode batch [7], ",
                           "Decode batch,", "Cache flushed, ", "Decode batch, #running-req: 1, "])
_tails = st.one_of(sglang_lines().map(lambda s: s.split("] ", 1)[1].split(", ", 1)[-1]),
                   st.text(st.characters(blacklist_categories=("Cs",)), max_size=80))


@settings(max_examples=500, deadline=None)
@given(_envs, _stamps, _heads2, _tails, _tails, st.booleans())
def test_a_known_head_reads_as_a_fresh_parser_reads_it(env, stamp, head, tail_a, tail_b, keep):
    """The parser remembers batch heads by their text; a line that begins like an earlier one
    must parse exactly as a parser that never saw the earlier line parses it."""
    first, second = env + stamp + head + tail_a, env + stamp + head + tail_b
    warm, cold = LineParser(), LineParser()
    warm.keep_lines = cold.keep_lines = keep
    warm.parse(first)
    warm.parse(first)
    # Parsed, LogLine and the records are dataclasses: their reprs hold every field
    assert repr(warm.parse(second)) == repr(cold.parse(second)), second
