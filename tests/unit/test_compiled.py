"""The compiled hot path (core/_compiled.pyx) gives what the Python path gives, to the byte.

`summary` reads with the compiled lane when it was built, and in Python otherwise; both paths run here on the same input and their summaries (JSON, line counts,
the parser's date) must be equal. Skipped where the build had no C compiler: there only the Python
path exists.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtptui.core import compiled, valueset
from mtptui.sources import parallel
from mtptui.core.ingest import Ingest
from mtptui.core.parse import events
from mtptui.core.summary import Summary

pytestmark = pytest.mark.skipif(not compiled.BUILT, reason="the compiled hot path was not built (no C compiler at install)")

SAMPLES = sorted((Path(__file__).resolve().parents[2] / "sample_logs").glob("*.*[gn]"))


def _python_path(m: pytest.MonkeyPatch) -> None:
    """The Python path: the lane left unused."""
    m.setattr(compiled, "ENABLED", False)


def test_the_lane_is_all_the_extension_holds():
    """One seam to C: the extension's public names are the lane's class and nothing else."""
    public = {n for n in vars(compiled._compiled) if not n.startswith("_") and callable(getattr(compiled._compiled, n))
              and getattr(getattr(compiled._compiled, n), "__module__", "") == "mtptui.core._compiled"}
    assert public <= {"Lane", "Layout", "Acc"}, public


@contextlib.contextmanager
def _path(use_c: bool) -> Iterator[pytest.MonkeyPatch]:
    """The compiled path, or (use_c False) the Python path, for the block."""
    with pytest.MonkeyPatch.context() as m:
        if not use_c:
            _python_path(m)
        yield m


@pytest.fixture
def python_path(monkeypatch):
    return lambda: _python_path(monkeypatch)


def _summary(feed) -> tuple[str, object]:
    summary = Summary()
    ingest = Ingest(summary)
    feed(ingest)
    doc = summary.to_json(ingest.counts.to_json())
    return json.dumps(doc), (ingest.parser.dates.date, ingest.parser.dates.year)


def _both(feed, fold: int = valueset.FOLD, distinct: int = valueset.MAX_DISTINCT) -> tuple:
    """(compiled, Python): the summaries of what feed gives an Ingest, with folds and spills at
    these sizes (small ones make the rarer steps happen in a short log)."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(valueset, "FOLD", fold)
        m.setattr(valueset, "MAX_DISTINCT", distinct)
        fast = _summary(feed)
        _python_path(m)
        return fast, _summary(feed)


# ---- lines: SGLang's shapes, near misses of them, and everything else ---------------------------

_envelopes = st.sampled_from([
    "", "", "Mar 09 16:03:25 gpu python3[1]: ", "Mar  9 16:03:25.250 gpu-b sglang[77]: ", "Mar 09 16:03:25 gpu x: ",
    "Mar 09 16:03:25 gpu x:", "Mar 09 16:03:25.1234567 gpu x[1]: ", "Foo 09 16:03:25 gpu x[1]: ",
    "Dec 31 23:59:59 h2 s[9]: ", "2026-03-09T16:03:25+0000 gpu python3[1]: ", "<14>Mar  9 16:03:25 h p[1]: ",
    "Mar 09 16:03:25 g\tpu x[1]: ", "Mar 09 16:03:25 gpü x[1]: ", "Mar 09 16:03:25 gpu x[a]: ",
])
_prefixes = st.sampled_from([
    "[2026-03-09 16:03:25 TP0] ", "[2026-03-10 00:00:01 DP1 TP1 EP1] ", "[2026-03-09 16:03:25] ",
    "[2026-03-09 16:03:25]", "[2026-03-09 16:03:25.500 TP2] ", "[2026-03-09 16:03:25.5000 TP2] ",
    "[2026-03-09 16:03:25.50 TP2] ", "[2026-13-45 16:03:25 TP0] ", "[2026-02-31 16:03:25 TP0] ",
    "[0000-01-01 00:00:00 TP0] ", "[2025-12-31 23:59:59 TP1] ", "[16:03:25 TP0] ", "[2027-01-01 00:00:00 TP-1] ",
    "[2026-03-09 16:03:25 ATTN_CP1 MOE_DP2] ", "[2026-03-09 16:03:25 tp0] ", "[2026-03-09 16:03:25  TP0] ",
    "(SGLangEngine pid=7) [2026-03-09 16:03:25 TP0] ", "(SGLangEngine pid=111711, ip=10.15.36.1) [2026-03-09 16:03:25 TP0] ",
    "(SGLangEngine pid=7)[2026-03-09 16:03:25 TP0] ", "(SGLangEngine pid=7, ip=) [2026-03-09 16:03:25 TP0] ",
    "(Other.x-1 pid=7) [2026-03-09 16:03:25] ", "(SGLangEngine pid=7) Mar 09 16:03:25 gpu x[1]: [2026-03-09 16:03:25 TP0] ",
    "2026-03-09 16:03:25,250 [INFO] x: ", "[gpu=1] ", "",
])
_heads = st.sampled_from([
    "Decode batch, ", "Decode batch, ", "Prefill batch, ", "Decode batch. ", "Decode batch [7], ", "Decode batch,",
    "Decode batch", "Decode batch [x], ", "Decode batch [], ", "Pecode batch, ", "Drefill batch, ", "Cache flushed, ",
    "", "Decode batch , ",
])
_values = st.one_of(
    st.integers(min_value=-10**6, max_value=10**6).map(str),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).map(lambda x: f"{x:.2f}"),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["0", "-0", "-0.0", "0.00", "007", "1.", ".5", "+1", "1e5", "nan", "inf", " 12", "12 ", "1_000",
                     "123456789012345", "1234567890123456", "123456789012345678", "1234567890.12345",
                     "0.1234567890123456", "", "True", "False", "x", "12%", "1.2.3"]),
)
_keys = st.sampled_from(["#running-req", "#queue-req", "#token", "#full token", "token usage", "accept len", "accept rate",
                         "cuda graph", "npu graph", "gen throughput (token/s)", "input throughput (token/s)",
                         "#new-seq", "#new-token", "#cached-token", "cache hit rate", "largest-len", "#cache_miss"])


@st.composite
def _bodies(draw) -> str:
    if draw(st.booleans()):  # the common layouts, in plain numbers
        al = draw(st.floats(min_value=1, max_value=4)).__round__(2)
        items = [f"#running-req: {draw(st.integers(0, 64))}", f"#token: {draw(st.integers(0, 10**5))}",
                 f"token usage: {draw(st.floats(0, 1)):.2f}", f"accept len: {al:.2f}",
                 f"accept rate: {draw(st.floats(0, 1)):.2f}", f"cuda graph: {draw(st.booleans())}",
                 f"gen throughput (token/s): {draw(st.floats(0, 3000)):.2f}", f"#queue-req: {draw(st.integers(0, 5))}"]
        if draw(st.booleans()):  # a hybrid pool's count of tokens in use (the context buckets read either)
            items[1] = f"#full token: {draw(st.integers(0, 10**5))}"
        if draw(st.booleans()):
            items = [items[i] for i in sorted(draw(st.sets(st.integers(0, 7), min_size=1)))]
        if draw(st.booleans()):
            items = ["#new-seq: 1", f"#new-token: {draw(st.integers(0, 8192))}", "token usage: 0.50",
                     "#running-req: 3", "#queue-req: 0", f"input throughput (token/s): {draw(st.floats(0, 2e4)):.2f}"]
    else:
        items = [f"{k}: {v}" for k, v in draw(st.lists(st.tuples(_keys, _values), max_size=9))]
    return ", ".join(items) + draw(st.sampled_from(["", "", ", ", ",", ",  ", " ", "\r", "\t", "é", ", x"]))


_others = st.sampled_from([
    "Load weight begin. avail mem=77.12 GB", "KV cache pool is full. Retract requests. #retracted_reqs: 1, #x: 2",
    "The server is fired up and ready to roll!", "Started sglang.service - SGLang.",
    "server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE', speculative_num_steps=3, tp_size=2)",
    "server_args=ServerArgs(model_path='m', speculative_algorithm=None, tp_size=2)",
    "Scheduler hit an exception: boom", "text with a batch inside", "naïve ü", "\x1b[0mcoloured", "a\x00b", "",
    "Decode", "Prefill", "INFO:     127.0.0.1:51234 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
    "Cache not flushed because there are pending requests. #queue-req: 2, #running-req: 12",
    "memory is fine", "Stopped sglang.service.", " [repeated 3x across cluster]",
])
_raw = st.sampled_from([
    '{"MESSAGE": "[2026-03-09 16:03:25 TP0] Decode batch, #running-req: 1, accept len: 2.00", "_HOSTNAME": "j",'
    ' "__REALTIME_TIMESTAMP": "1773072205000000"}',
    "INFO 03-09 16:03:25 [loggers.py:1] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput:"
    " 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 5.0%",
    "INFO 03-09 16:03:26 [metrics.py:1] SpecDecoding metrics: Mean acceptance length: 2.50, Accepted: 3 tokens",
    "x" * 40, "{bad json", "Mar 09 16:03:25 gpu x[1]: Started sglang.service.",
])


# the shapes that the lane reads, to be drawn often
_good_envelopes = st.sampled_from(["", "Mar 09 16:03:25 gpu python3[1]: ", "Mar  9 16:03:25.250 gpu-b sglang[77]: "])
_good_prefixes = st.sampled_from(["[2026-03-09 16:03:25 TP0] ", "[2026-03-10 00:00:01 DP1 TP1 EP1] ",
                                  "[2026-03-09 16:03:25.500 TP2] ", "[2025-12-31 23:59:59] ",
                                  "(SGLangEngine pid=111711, ip=10.15.36.1) [2026-03-09 16:03:25 TP0] "])
_good_heads = st.sampled_from(["Decode batch, ", "Prefill batch, ", "Decode batch. ", "Decode batch [7], "])


@st.composite
def _lines(draw) -> str:
    shape = draw(st.integers(0, 9))
    if shape == 0:
        return draw(_raw)
    good = shape > 4
    start = draw(_good_envelopes if good else _envelopes) + draw(_good_prefixes if good else _prefixes)
    if draw(st.integers(0, 3)):
        return start + draw(_good_heads if good else _heads) + draw(_bodies())
    return start + draw(_others)


_logs = st.lists(_lines(), max_size=40)


@settings(max_examples=300, deadline=None)
@given(logs=_logs, fold=st.sampled_from([2, 5, valueset.FOLD]), distinct=st.sampled_from([3, valueset.MAX_DISTINCT]))
def test_the_lane_reads_lines_as_the_python_path_does(logs, fold, distinct):
    fast, slow = _both(lambda i: i.feed_many(logs), fold, distinct)
    assert fast == slow


@settings(max_examples=150, deadline=None)
@given(logs=_logs, newline=st.booleans(), fold=st.sampled_from([2, valueset.FOLD]))
def test_a_block_of_bytes_reads_as_its_lines_do(logs, newline, fold):
    """feed_block (the lane on a file's bytes, decoding only what it leaves to Python) against
    the Python path on the lines of the same text."""
    text = "\n".join(logs) + ("\n" if newline else "")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    fast, _ = _both(lambda i: i.feed_block(text.encode()), fold)
    _, slow = _both(lambda i: i.feed_many(lines), fold)
    assert fast == slow


@settings(max_examples=100, deadline=None)
@given(logs=_logs)
def test_lines_with_their_newline_read_as_without(logs):
    """A text stream leaves each line its newline; the lane reads those as the Python path does."""
    lines = [line + "\n" for line in logs]
    fast, slow = _both(lambda i: i.feed_many(lines))
    assert fast == slow


def test_the_lane_reads_the_benchmark_lines_itself():
    """The common lines are the lane's: every line of the benchmark's shapes (batch lines,
    ordinary text, events) is read in C."""
    lines = []
    for i in range(400):
        t = f"16:{i // 60:02d}:{i % 60:02d}"
        env = f"Mar 09 {t} gpu-h1 python3[4242]: [2026-03-09 {t} TP{i % 4}] "
        lines.append(env + f"Decode batch, #running-req: {i % 64}, #token: {i * 7}, token usage: 0.{i % 100:02d}, "
                           f"accept len: 2.{i % 100:02d}, accept rate: 0.{i % 100:02d}, cuda graph: True, "
                           f"gen throughput (token/s): {i * 3.25:.2f}, #queue-req: {i % 5}")
        lines.append(env + f"Prefill batch, #new-seq: 1, #new-token: {i}, #cached-token: 0, token usage: 0.10, "
                           f"#running-req: 2, #queue-req: 0, #pending-token: 0, cuda graph: False, "
                           f"input throughput (token/s): {i * 11.5:.2f}")
        lines.append(env + "Load weight begin. avail mem=77.12 GB")
        lines.append(env + "KV cache pool is full. Retract requests. #retracted_reqs: 1")
    summary = Summary()
    ingest = Ingest(summary)
    ingest.feed_block(("\n".join(lines) + "\n").encode())
    lane = summary.lane
    assert (lane.batches, lane.unparsed, lane.events) == (800, 400, 400)
    assert ingest.counts.event == 400 and ingest.counts.read == 1600
    assert [e["kind"] for e in summary.events] == ["retract"] * 400


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_sample_log_summarises_the_same_both_ways(path, monkeypatch, python_path):
    def run() -> str:
        summary, counts = parallel.summarise([str(path)], jobs=1)
        return json.dumps(summary.to_json(counts.to_json()))

    fast = run()
    python_path()
    assert fast == run()




def test_no_word_of_an_event_holds_another():
    """The lane finds every word a line holds, wherever it is; classify() looks for each rule's
    words anywhere in the line too: the same while no word holds another (then one word at most
    matches at a place). (A line with `batch` anywhere is left to the Python path.)"""
    for a in events.WORDS:
        for b in events.WORDS:
            if a != b:
                assert a not in b, (a, b)
    # one word's end another's start (`Worker failed`, `died`): both found, as the lane finds them
    for msg in ("Worker failedied", "RuntimeError: Worker failedied unexpectedly"):
        lane = {w for w in events.WORDS if w in msg}
        assert lane >= {"Worker failed", "died"}
        assert events.classify(msg) == events.classify(msg, lane)


@settings(max_examples=150, deadline=None)
@given(chunks=st.lists(st.tuples(_logs, st.sampled_from([None, "gpu1", "gpu2"])), max_size=4),
       fold=st.sampled_from([2, valueset.FOLD]))
def test_lines_read_for_a_host_read_as_the_python_path_does(chunks, fold):
    """A source that names its host (a config name, over the envelope's): the lane reads its lines
    for that host, as parse(raw, host) does, however the hosts of the chunks alternate."""
    fast, slow = _both(lambda i: [i.feed_many(lines, host) for lines, host in chunks], fold)
    assert fast == slow


def _store(feed) -> str:
    """A dashboard store fed through an Ingest: its rings, whole-span statistics, epochs, events."""
    from mtptui.core.store import Store

    store = Store(capacity=8, clock=lambda: 0.0)
    ingest = Ingest(store)
    feed(ingest)
    ranks = {f"{h} {r}": {"decode": [s.decode.times(), {c: s.decode.raw_windows((c,))[1][c].tolist()
                                                         for c in s.decode.columns}],
                          "prefill": s.prefill.times(), "whole": s.whole.describe(),
                          "counts": [s.decode_batches, s.prefill_batches, s.graph_off, s.first_batch_ts, s.last_batch_ts]}
             for (h, r), s in store.series.items()}
    epochs = [e.to_json() for e in store._epochs.all()]
    events = [(e.kind, e.ts, e.host, e.rank) for e in store.events]
    return json.dumps([ranks, epochs, events, ingest.counts.to_json(), store.last_ts], default=str)


@settings(max_examples=150, deadline=None)
@given(chunks=st.lists(st.tuples(_logs, st.sampled_from([None, "gpu1"])), max_size=3))
def test_the_store_fed_by_the_lane_is_the_store_fed_by_the_python_path(chunks):
    """The dashboard's store takes the lane's timed rows in bulk: the same rings, statistics,
    epochs and events as from one record at a time."""
    def feed(i):
        for lines, host in chunks:
            i.feed_many(lines, host)

    with pytest.MonkeyPatch.context() as m:
        fast = _store(feed)
        _python_path(m)
        slow = _store(feed)
    assert fast == slow


# ---- zoned envelopes: journald's short-iso(-precise) and json, whose time is the line's -----------

_iso_stamps = st.sampled_from([
    "2026-03-09T16:03:25+0000", "2026-03-09T16:03:25.123456+00:00", "2026-03-09T16:03:25Z",
    "2026-03-09T16:03:25.1-05:30", "2026-03-09T08:03:25+0800", "2024-02-29T23:59:59.999999-14:00",
    "2026-03-09T16:03:25.250+01:00", "2026-03-10T00:00:01.5+00:00",
    # near misses: no time there, a fraction or zone the envelope's regex or fromisoformat refuses
    "2026-03-09T16:03:25.1234567+00:00", "2026-02-29T16:03:25+00:00", "2026-03-09T24:03:25+00:00",
    "2026-03-09T16:03:60Z", "2026-03-09T16:03:25+00:60", "2026-03-09T16:03:25+2400", "2026-03-09T16:03:25+00",
    "2026-03-09T16:03:25", "2026-03-09 16:03:25+00:00", "0000-01-01T00:00:00Z", "2026-03-09T16:03:25.+00:00",
    "9999-12-31T23:59:59Z", "2026-3-09T16:03:25Z",
])
_iso_rest = st.sampled_from([" gpu python3[1]: ", " gpu-b sglang[77]: ", " gpu x: ", " gpu x:", " gpu x[a]: ",
                             "  gpu x[1]: ", " gpu", " g\tpu x[1]: "])


@st.composite
def _messages(draw) -> str:
    """What a server writes: SGLang's lines (good and near misses) and others."""
    good = draw(st.booleans())
    start = draw(_good_prefixes if good else _prefixes)
    if draw(st.integers(0, 3)):
        return start + draw(_good_heads if good else _heads) + draw(_bodies())
    return start + draw(_others)


_rt = st.sampled_from(["1773072205000000", "1773072205123456", "1773043405000001", "0", "", "12a", "+1773072205000000",
                       " 1773072205000000", "17730722050000001", "9007199254740993", 1773072205000000, None])
_json_hosts = st.sampled_from(["gpu", "gpu", "h-2", "", "gp\\u0075", "g\u00fcp", "a b", None, 7, ["x"], "MISSING"])


@st.composite
def _json_lines(draw) -> str:
    """journalctl -o json's lines: its fields in any order, with or without spaces, and near misses
    (a byte-array or escaped MESSAGE, a key given twice, an escaped key, null, junk after it)."""
    msg = draw(_messages())
    ascii_only = draw(st.booleans())
    message = json.dumps(msg, ensure_ascii=ascii_only)
    if not draw(st.integers(0, 9)):
        message = json.dumps(list(msg.encode()))  # MESSAGE as journald gives a binary one
    fields = [("__CURSOR", json.dumps("s=ab;i=1;b=cd")), ("MESSAGE", message), ("_SYSTEMD_UNIT", '"sglang.service"'),
              ("PRIORITY", draw(st.sampled_from(['"6"', "null", "6", "[1, 2]"])))]
    rt = draw(_rt)
    if rt is not None:
        fields.append(("__REALTIME_TIMESTAMP", json.dumps(rt)))
    host = draw(_json_hosts)
    if host != "MISSING":
        fields.append(("_HOSTNAME", json.dumps(host) if not (isinstance(host, str) and "\\" in host)
                       else f'"{host}"'))
    fields = draw(st.permutations(fields))
    extra = draw(st.integers(0, 12))
    if extra == 1:
        fields.append(("MESSAGE", json.dumps("[2026-03-09 16:03:25 TP0] Decode batch, #running-req: 2")))
    elif extra == 2:
        fields.append(("MESS\\u0041GE", json.dumps("x")))
    elif extra == 3:
        fields.append(("_HOSTNAME", '"other"'))
    elif extra == 4:
        fields.append(("__REALTIME_TIMESTAMP", '"1773072206000000"'))
    sep, colon = draw(st.sampled_from([(",", ":"), (", ", " : "), (",", ": "), (" ,\t", ":")]))
    text = "{" + draw(st.sampled_from(["", " "])) + sep.join(f'"{k}"{colon}{v}' for k, v in fields)
    text += draw(st.sampled_from(["}", " }", "}", "} ", "}\r", "} x", "", "},", "}}"]))
    if not draw(st.integers(0, 5)):  # a byte anywhere that json.loads refuses or reads its own way
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(["\x01", "\t", "\\q", "\\", '"', "\x7f", "\u00e9", "\\u12", '\\"',
                                                 "\\\\", "\\u0041"])) + text[at:]
    return text


@st.composite
def _zoned_lines(draw) -> str:
    shape = draw(st.integers(0, 4))
    if shape <= 1:
        return draw(_json_lines())
    if shape == 2:
        return draw(_lines())
    return draw(_iso_stamps) + draw(_iso_rest) + draw(_messages())


_zoned_logs = st.lists(_zoned_lines(), max_size=40)


@settings(max_examples=300, deadline=None)
@given(logs=_zoned_logs, fold=st.sampled_from([2, 5, valueset.FOLD]), host=st.sampled_from([None, "gpu1"]))
def test_the_lane_reads_zoned_envelopes_as_the_python_path_does(logs, fold, host):
    """short-iso and json lines, mixed with the others: their time is the envelope's (no date noted
    from the server's stamp, whatever its clock), their host _HOSTNAME's or the source's."""
    fast, slow = _both(lambda i: i.feed_many(logs, host), fold)
    assert fast == slow


@settings(max_examples=150, deadline=None)
@given(logs=_zoned_logs, newline=st.booleans())
def test_a_block_of_zoned_lines_reads_as_its_lines_do(logs, newline):
    text = "\n".join(logs) + ("\n" if newline else "")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    fast, _ = _both(lambda i: i.feed_block(text.encode()))
    _, slow = _both(lambda i: i.feed_many(lines))
    assert fast == slow


@settings(max_examples=100, deadline=None)
@given(chunks=st.lists(st.tuples(_zoned_logs, st.sampled_from([None, "gpu1"])), max_size=3))
def test_the_store_fed_zoned_lines_by_the_lane_is_the_python_paths(chunks):
    def feed(i):
        for lines, host in chunks:
            i.feed_many(lines, host)

    with pytest.MonkeyPatch.context() as m:
        fast = _store(feed)
        _python_path(m)
        slow = _store(feed)
    assert fast == slow


@pytest.mark.parametrize("envelope", ["short-iso", "json"])
def test_the_lane_reads_the_benchmark_lines_in_a_zoned_envelope_itself(envelope):
    """The benchmark's lines in journald's short-iso and json envelopes are the lane's, every one."""
    import importlib.util
    import tempfile

    spec = importlib.util.spec_from_file_location("parse_bench", Path(__file__).resolve().parents[2] / "bench/parse_bench.py")
    bench = importlib.util.module_from_spec(spec)
    import sys

    sys.path.insert(0, str(Path(spec.origin).parent))
    try:
        spec.loader.exec_module(bench)
    finally:
        sys.path.pop(0)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "log"
        bench.write_log(path, 2000, envelope=envelope)
        data = path.read_bytes()
    summary = Summary()
    ingest = Ingest(summary)
    ingest.feed_block(data)
    lane = summary.lane
    assert lane.batches + lane.unparsed + lane.events == ingest.counts.read == 2000
    fast, slow = _both(lambda i: i.feed_block(data))
    assert fast == slow


@pytest.mark.parametrize("stamp", ["1969-12-31 23:59:59", "1900-01-01 00:00:00", "0001-01-01 00:00:00",
                                   "1970-01-01 00:00:00", "9999-12-31 23:59:59"])
def test_a_stamp_outside_1970_9999_is_dropped_and_counted_by_the_lane_as_by_the_python_path(stamp):
    """SGLang's own stamp before 1970 (a clock not set, a line forged): the Python path drops the line
    and counts it (ingest.OUT_OF_TIME); the lane kept it (issue 42). Raw, behind journald's short
    envelope and inside its json."""
    body = f"[{stamp} TP0] Decode batch, #running-req: 1, #token: 10, token usage: 0.01, gen throughput (token/s): 5.00"
    event = f"[{stamp} TP0] KV cache pool is full. Retract requests. #retracted_reqs: 1"
    good = "[2026-03-09 16:03:25 TP0] Decode batch, #running-req: 2, #token: 20, token usage: 0.02, gen throughput (token/s): 6.00"
    lines = [good, body, event, f"Mar 09 16:03:25 gpu python3[1]: {body}",
             json.dumps({"__CURSOR": "s=a;i=1", "__REALTIME_TIMESTAMP": "1773072205000000", "_HOSTNAME": "gpu", "MESSAGE": body})]
    fast, slow = _both(lambda i: i.feed_many(lines))
    assert fast == slow
    assert json.loads(slow[0])["lines"]["drop_reasons"] == ({} if stamp[:4] in ("1970", "9999") else {"time outside 1970-9999": 3})


def test_a_journald_entry_read_twice_is_counted_once_by_the_lane_as_by_the_python_path():
    """The same __CURSOR again (a resume that replays an entry, an export that holds it twice): the
    entry counted once, the repeat dropped and counted, on both paths alike (issue 42)."""
    def entry(i: int, msg: str, cursor: str | None = None) -> str:
        return json.dumps({"__CURSOR": cursor or f"s=ab;i={i:x};b=cd", "__REALTIME_TIMESTAMP": str(1773072205000000 + i),
                           "_HOSTNAME": "gpu", "MESSAGE": msg})

    def batch(i: int) -> str:
        return (f"[2026-03-09 16:03:{i % 60:02d} TP0] Decode batch, #running-req: {i}, #token: {10 * i}, "
                f"token usage: 0.01, gen throughput (token/s): {i}.00")

    first = [entry(i, batch(i) if i % 3 else "Load weight begin. avail mem=77.12 GB") for i in range(1, 10)]
    escaped = entry(20, 'a "quoted" word', cursor="s=ab;i=14;b=cd")  # one the lane leaves to the parser
    lines = [*first, escaped, *first[6:], escaped, entry(10, batch(10))]
    fast, slow = _both(lambda i: i.feed_many(lines))
    assert fast == slow
    counts = Ingest(Summary())
    _python = pytest.MonkeyPatch()
    try:
        _python_path(_python)
        counts.feed_many(lines)
    finally:
        _python.undo()
    c = counts.counts
    assert (c.read, c.batch + c.event + c.unparsed, c.dropped) == (15, 11, 4)
    assert c.drop_reasons == {"a journald entry read before (the same __CURSOR)": 4}
