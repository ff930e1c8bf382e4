"""The rule of core/parse: for every line, after any lines before it, a fast path declines or
gives what the general path gives (LineParser.general): the same record, the same LogLine when
lines are kept, the same date noted. The compiled lane, a fast path of its own, is held to it
too: a summary read through it equals one read by the general path alone.

Lines are drawn from every prefix shape of test_formats_prefixes.py (inside their envelopes),
the near misses of SGLang's own prefix that test_compiled.py draws, stamps of other days and
years, batch heads and their near misses, bodies of known fields in any order with extra
fields, endings and numbers of every shape, events, ordinary text and vLLM's lines.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_formats_prefixes import PREFIXES, SHAPES

from mtptui.core import compiled
from mtptui.core.ingest import Ingest
from mtptui.core.parse import LineParser
from mtptui.core.summary import Summary


class GeneralOnly(LineParser):
    """A parser without its fast paths: every line read by general()."""

    parse = LineParser.general


def _shapes() -> list[tuple[str, str, bool]]:
    """(text before the message, text after it, whether the message sits in a JSON string)."""
    out = []
    for shape in SHAPES:
        line, _rank, _ts, _host, msg = shape.values
        before, _, after = line.partition(msg.text)
        out.append((before, after, line[:1] == "{"))
    return out + [(p.values[0], "", False) for p in PREFIXES]


_envelopes = st.sampled_from(["", "Mar 09 16:03:25 gpu python3[1]: ", "Mar  9 16:03:25.250 gpu-b sglang[77]: ",
                 "Dec 31 23:59:59 h2 s[9]: ", "Jan 01 00:00:01 h2 s[9]: ", "Mar 09 16:03:25 gpu x: ",
                 "2026-03-09T16:03:25+0000 gpu python3[1]: ", "<14>Mar  9 16:03:25 h p[1]: ",
                 "Mar 09 16:03:25.1234567 gpu x[1]: ", "Mar 09 16:03:25 gpü x[1]: "])
_stamps = st.sampled_from(["[2026-03-09 16:03:25 TP0] ", "[2026-03-10 00:00:01 DP1 TP1 EP1] ", "[2025-12-31 23:59:59] ",
              "[2027-01-01 00:00:00 TP1] ", "[2026-03-09 16:03:25.500 TP2] ", "[2026-03-09 16:03:25.50 TP2] ",
              "[2026-13-45 16:03:25 TP0] ", "[2026-02-31 16:03:25 TP0] ", "[0000-01-01 00:00:00 TP0] ",
              "[23:59:59 TP0] ", "[00:00:01 TP0] ", "[12:00:00.250 TP1] ", "[2026-03-09 16:03:25]",
              "[2026-03-09 16:03:25 tp0] ", "[2026-03-09 16:03:25  TP0] ", "[2026-03-09 16:03:25 TP-1] ",
              "(SGLangEngine pid=7) [2026-03-09 16:03:25 TP0] ", "(SGLangEngine pid=7)[2026-03-09 16:03:25 TP0] ",
              "(SGLangEngine pid=7, ip=) [2026-03-09 16:03:25 TP0] ", "(SGLangEngine pid=7) [16:03:25 TP0] ",
              "2027-01-01 00:00:00,250 [INFO] x: ", "Mar 10 00:00:01 PP1 TP0 | ", "00:00:02 TP1 | ", ""])
_templates = st.one_of(st.sampled_from(_shapes()),
                       st.builds(lambda e, s: (e + s, "", False), _envelopes, _stamps))

_heads = st.sampled_from([
    "Decode batch, ", "Prefill batch, ", "Decode batch. ", "Decode batch [7], ", "Prefill batch [51341], ",
    "Decode batch,", "Decode batch", "Decode batch ", "Decode batch [12", "Decode batch [x], ", "Decode batch [], ",
    "Decode batch , ", "Pecode batch, ", "DEBUG Decode batch, ", "[gpu=0] Decode batch, ", "Cache flushed, ",
])
_int = st.integers(min_value=0, max_value=10**6).map(str)
_float = st.one_of(st.floats(min_value=0, max_value=1e5).map(lambda x: f"{x:.2f}"),
                   st.floats(min_value=0, max_value=1).map(lambda x: f"{x:.3f}"))
_pct = _float.map(lambda x: x + "%")
_bool = st.sampled_from(["True", "False"])
# a key, and the values it takes in a well-formed line
KEYS = {"#running-req": _int, "#queue-req": _int, "#token": _int, "token usage": _float, "accept len": _float,
        "accept rate": _float, "cuda graph": _bool, "npu graph": _bool, "gen throughput (token/s)": _float,
        "input throughput (token/s)": _float, "#new-seq": _int, "#new-token": _int, "#cached-token": _int,
        "cache hit rate": _pct, "#pending-token": _int, "fwd occupancy": _pct, "#full token": _int,
        "full token usage": _float}
_keys = st.sampled_from(sorted(KEYS))
_extra_keys = st.sampled_from(["largest-len", "#cache_miss", "#paused-req", "something new"])
_numbers = st.one_of(
    st.integers(min_value=-10**6, max_value=10**6).map(str),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).map(lambda x: f"{x:.2f}"),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).map(repr),
    st.sampled_from(["0", "-0", "-0.0", "0.00", "007", "1.", ".5", "+1", "1e5", "1E-3", "nan", "inf", "-inf", " 12",
                     "12 ", "1_000", "123456789012345", "1234567890123456", "1234567890.12345", "", "True",
                     "False", "true", "x", "12%", "12.5%", "1.2.3", "full=3"]),
)


@st.composite
def _bodies(draw) -> str:
    keys = draw(st.lists(_keys, unique=True, max_size=10))
    well_formed = draw(st.booleans())  # half the bodies of the common kind
    items = [f"{k}: {draw(KEYS[k] if well_formed else _numbers)}" for k in keys]
    items += [f"{k}: {draw(_numbers)}" for k in draw(st.lists(_extra_keys, unique=True, max_size=2))]
    if draw(st.booleans()):
        items = draw(st.permutations(items))
    if items and draw(st.integers(0, 9)) == 0:
        items.insert(draw(st.integers(0, len(items))), draw(st.sampled_from(["swa=3", "noise", ""])))
    return ", ".join(items) + draw(st.sampled_from(["", "", ", ", ",", ",  ", " ", "\t", "é"]))


_others = st.sampled_from([
    "Load weight begin. avail mem=77.12 GB", "KV cache pool is full. Retract requests. #retracted_reqs: 1",
    "The server is fired up and ready to roll!", "Scheduler hit an exception: boom",
    "server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE', speculative_num_steps=3, tp_size=2)",
    "text with a batch inside", "Decode", "Prefill", "naïve ü", "\x1b[0mcoloured", "memory is fine", "",
    "Cache not flushed because there are pending requests. #queue-req: 2, #running-req: 12",
    "INFO:     127.0.0.1:51234 - \"POST /generate HTTP/1.1\" 200 OK", " [repeated 3x across cluster]",
])
_vllm = st.sampled_from([
    "INFO 03-09 16:03:25 [loggers.py:1] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput:"
    " 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 5.0%",
    "INFO  12-31 23:59:59 [loggers.py:1] Engine 001: Avg prompt throughput: 0.0 tokens/s, Avg generation "
    "throughput: 11.5 tokens/s, Running: 2 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.5%",
    "INFO 03-09 16:03:26 [metrics.py:1] SpecDecoding metrics: Mean acceptance length: 2.50, Accepted: 3 tokens",
    "Mar 09 16:03:25 gpu vllm[1]: INFO 03-09 16:03:25 [metrics.py:1] SpecDecoding metrics: Draft acceptance "
    "rate: 71.2%, Accepted: 2136 tokens, Drafted: 3000 tokens",
])


# the common shapes, which the fast paths and the lane read, drawn often
_common_starts = st.builds(
    str.__add__, st.sampled_from(["", "Mar 09 16:03:25 gpu python3[1]: ", "Dec 31 23:59:59.250 gpu-b sglang[77]: "]),
    st.sampled_from(["[2026-03-09 16:03:25 TP0] ", "[2026-03-10 00:00:01 DP1 TP1 EP1] ", "[2025-12-31 23:59:59] ",
                     "[2026-03-09 16:03:25.500 TP2] ", "(SGLangEngine pid=7, ip=10.0.0.2) [2027-01-01 00:00:00 TP0] "]))
_common_heads = st.sampled_from(["Decode batch, ", "Prefill batch, ", "Decode batch. ", "Decode batch [7], "])


@st.composite
def lines(draw) -> str:
    """One raw line, as a file or a stream hands it over."""
    shape = draw(st.integers(0, 9))
    if shape == 0:
        line = draw(_vllm)
    elif shape < 5:
        start = draw(_common_starts)
        if draw(st.integers(0, 4)) == 0:
            return start + draw(_others)
        keys = draw(st.lists(_keys, unique=True, min_size=1, max_size=10))
        return start + draw(_common_heads) + ", ".join(f"{k}: {draw(KEYS[k])}" for k in keys)
    else:
        before, after, in_json = draw(_templates)
        msg = draw(_others) if draw(st.integers(0, 4)) == 0 else draw(_heads) + draw(_bodies())
        if in_json:
            msg = json.dumps(msg)[1:-1]
        line = before + msg + after
    return line + draw(st.sampled_from(["", "", "\n", "\r\n", "\r"]))


_logs = st.lists(lines(), min_size=1, max_size=25)


def _result(parsed, keep: bool) -> str:
    # Parsed, LogLine and the records are dataclasses: their reprs hold every field. Without
    # keep_lines a fast path may leave the LogLine out.
    return repr(parsed) if keep else repr((parsed.outcome, parsed.record, parsed.reason))


# Lines that a fast path once read otherwise: a stamp that no clock shows noted its date (the
# time-only stamp after it then took that day); `Pecode batch` read as a Prefill batch.
@example(["[2026-13-45 16:03:25 TP0] Decode batch, #running-req: 1", "[16:03:26 TP0] Decode batch, #token: 1"],
         None, False)
@example(["(SGLangEngine pid=41820) [2026-03-09 16:03:25 TP0] Pecode batch, #running-req: 0"], None, False)
@settings(max_examples=400, deadline=None)
@given(_logs, st.sampled_from([None, "cfg-host"]), st.booleans())
def test_the_fast_paths_give_what_the_general_path_gives(logs, host, keep):
    """Line by line through the same log twice (the second time the heads are remembered): parse()
    and general() on two parsers give the same results and keep the same date."""
    fast, general = LineParser(), LineParser()
    fast.keep_lines = general.keep_lines = keep
    for raw in logs + logs:
        assert _result(fast.parse(raw, host), keep) == _result(general.general(raw, host), keep), raw
        assert (fast.dates.date, fast.dates.year) == (general.dates.date, general.dates.year), raw


def _summary(logs: list[str], parser: LineParser | None, as_bytes: bool) -> tuple:
    summary = Summary()
    ingest = Ingest(summary, parser=parser)
    if as_bytes:
        ingest.feed_block("".join(line if line.endswith("\n") else line + "\n" for line in logs).encode())
    else:
        ingest.feed_many(logs)
    return json.dumps(summary.to_json(ingest.counts.to_json())), ingest.parser.dates.date, ingest.parser.dates.year


@pytest.mark.skipif(not compiled.ENABLED, reason="the compiled lane was not built (or MTPTUI_PURE is set)")
@settings(max_examples=200, deadline=None)
@given(_logs, st.booleans())
def test_the_compiled_lane_gives_what_the_general_path_gives(logs, as_bytes):
    """A summary read through the lane (the lines it reads in C, the rest by parse()) equals a
    summary of the same lines read by general() alone; as lines, or as a file's bytes."""
    logs = [line.replace("\n", "").replace("\r", "") for line in logs] if as_bytes else logs
    lane = _summary(logs, None, as_bytes)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(compiled, "ENABLED", False)
        general = _summary(logs, GeneralOnly(), as_bytes)
    assert lane == general


def test_a_layout_learnt_on_one_line_reads_a_value_before_a_newline_as_it_did():
    """The layouts the fast path learns outlive a parser (sglang._templates, _last): one learnt
    from a Docker line whose message ends in a newline (`cuda graph: False\\n`) once read the
    same line's graph as unreadable on every later parse, dropping the field (found by
    test_lane_envelopes.py's property test, 2026-12-02)."""
    line = ('{"log":"[2026-03-09 16:03:25 TP0] Decode batch, #running-req: 0, #token: 0, cuda graph: False\\n\\n",'
            '"stream":"stdout","time":"2026-03-09T16:03:25.123456789Z"}')
    want = {"running_req": 0, "num_token": 0, "graph": False, "graph_kind": "cuda"}
    for _ in range(3):
        assert LineParser().parse(line).record.fields == want
