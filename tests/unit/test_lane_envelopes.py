"""The compiled lane in the container and syslog envelopes: Docker's json-file, Kubernetes' CRI, syslog
(RFC 3164 and 5424), read as the Python path reads them, to the byte (test_compiled.py's zoned
envelopes, extended: the same lines, these shapes and their near misses mixed in)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compiled import _both, _messages, _python_path, _store, _zoned_lines

from mtptui.core import compiled, valueset
from mtptui.core.ingest import Ingest
from mtptui.core.summary import Summary

pytestmark = pytest.mark.skipif(not compiled.BUILT, reason="the compiled hot path was not built (no C compiler at install)")

# RFC 3339 stamps as container runtimes and RFC 5424 write them, and near misses
_good_stamps = st.sampled_from([
    "2026-03-09T16:03:25.123456789Z", "2026-03-09T16:03:25Z", "2026-03-09T16:03:25.5+01:00", "2026-03-09T16:03:25.003Z",
    "2026-03-09T08:03:25.000000001-0800", "2024-02-29T23:59:59.999999999+14:00", "2026-03-10T00:00:01.25-05:30",
    "2026-02-31T16:03:25Z", "2026-03-09T16:03:61Z", "2026-03-09T16:03:25+99:99", "2026-03-09T16:03:25.000Z",
])
_stamps = _good_stamps | st.sampled_from([  # no time there, or not this shape
    "2026-03-09T16:03:25.1234567890Z", "2026-03-09T24:03:25Z", "2026-03-09T16:03:62Z", "2026-13-09T16:03:25Z",
    "0000-01-01T00:00:00Z", "2026-03-09T16:03:25", "2026-03-09T16:03:25.Z", "2026-03-09T16:03:25+01",
    "2026-03-09T16:03:25+01:0", "2026-03-09 16:03:25Z", "2026-03-09t16:03:25Z", "-", "",
])


@st.composite
def _docker_lines(draw) -> str:
    """Docker's json-file lines: `log` (its newline escaped at the end, or not), `stream`, `time`, in
    any order, and near misses (no time, a time of no clock, a key twice, a null, MESSAGE beside it)."""
    good = draw(st.booleans())
    msg = draw(_messages()) + ("\n" if good else draw(st.sampled_from(["\n", "", "\r\n", "\n\n", " "])))
    fields = [("log", json.dumps(msg, ensure_ascii=draw(st.booleans()))), ("stream", '"stdout"')]
    stamp = draw(_good_stamps if good else st.one_of(_stamps, st.sampled_from([None, 7, "null"])))
    if stamp is not None:
        fields.append(("time", "null" if stamp == "null" else json.dumps(stamp)))
    extra = 0 if good else draw(st.integers(0, 12))
    if extra == 1:
        fields.append(("log", '"again\\n"'))
    elif extra == 2:
        fields.append(("time", '"2026-03-09T16:03:26Z"'))
    elif extra == 3:
        fields.append(("MESSAGE", json.dumps(msg)))
    elif extra == 4:
        fields.append(("attrs", '{"tag": "x"}'))
    elif extra == 5:
        fields.append(("__REALTIME_TIMESTAMP", '"1773072205000000"'))
    elif extra == 6:
        fields.append(("_HOSTNAME", '"h"'))
    fields = draw(st.permutations(fields))
    sep, colon = draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : ")]))
    text = "{" + sep.join(f'"{k}"{colon}{v}' for k, v in fields) + draw(st.sampled_from(["}", "}", " }", "} x", ""]))
    if not good and not draw(st.integers(0, 3)):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(["\\n", "\\", '\\"', "\t", "\u00e9", "\\u0041"])) + text[at:]
    return text


_streams = st.sampled_from([" stdout F ", " stderr F ", " stdout P ", " stdout F ", " stdin F ", " stdout X ",
                            " stdout F", " stdout  F ", " stdout F: ", "  stdout F ", " stdout F\t"])
_priorities = st.sampled_from(["<14>", "<30>", "<3>", "<191>", "<1234>", "<>", "<a>", "14>", "<14"])
_rfc3164 = st.sampled_from(["Mar  9 16:03:25 gpu sglang[1]: ", "Mar 09 16:03:25.250 gpu-b python3[77]: ",
                            "Mar 09 16:03:25 gpu x:", "Foo 09 16:03:25 gpu x[1]: ", "Mar 09 16:03:25 gpu x[a]: ",
                            "Mar 09 16:03:25  gpu x[1]: "])
_hosts = st.sampled_from(["gpu", "gpu-b.example", "-", "", "g\tpu", "gp\u00fc"])
_data = st.sampled_from(["-", "- ", "[a]", '[exampleSDID@32473 iut="3" eventSource="App"]', "[a][b x=\"]\"]",
                         "[a] ", "[a", "x", "[a\x1b]", "[a]-", "-x", "[]", "[a][b"])


@st.composite
def _rfc5424(draw) -> str:
    if draw(st.booleans()):
        return f"1 {draw(_good_stamps)} {draw(st.sampled_from(['gpu', '-']))} sglang 4242 - {draw(_data)} "
    tokens = [draw(st.sampled_from(["1", "1", "2", ""])), draw(_stamps), draw(_hosts),
              draw(st.sampled_from(["sglang", "python3", "-"])), draw(st.sampled_from(["4242", "-"])),
              draw(st.sampled_from(["-", "ID47"]))]
    return " ".join(tokens) + " " + draw(_data) + draw(st.sampled_from([" ", "", " "]))


_monotonic = st.sampled_from(["[  371.469140] gpu sglang[1]: ", "[1234567.000001] gpu-b python3[77]: ", "[0.000000] h x: ",
                              # near misses
                              "[  371.46914] gpu x[1]: ", "[  371.4691400] gpu x[1]: ", "[ 371.469140]gpu x[1]: ",
                              "[  .469140] gpu x[1]: ", "[\t371.469140] gpu x[1]: ", "[  371.469140] gpu x:",
                              "[  371.469140]  gpu x[1]: ", "[  371.469140] gpu x[a]: ", "[371,469140] gpu x[1]: "])


@st.composite
def _container_lines(draw) -> str:
    shape = draw(st.integers(0, 6))
    if shape == 6:
        return draw(_monotonic) + draw(_messages())
    if shape <= 1:
        return draw(_docker_lines())
    good = draw(st.booleans())
    if shape == 2:
        return draw(_good_stamps if good else _stamps) + (" stdout F " if good else draw(_streams)) + draw(_messages())
    priority = "<14>" if good else draw(_priorities)
    if shape == 3:
        return priority + draw(_rfc3164) + draw(_messages())
    if shape == 4:
        return priority + draw(_rfc5424()) + draw(_messages())
    return draw(_zoned_lines())


_logs = st.lists(_container_lines(), max_size=40)


@settings(max_examples=300, deadline=None)
@given(logs=_logs, fold=st.sampled_from([2, 5, valueset.FOLD]), host=st.sampled_from([None, "gpu1"]))
def test_the_lane_reads_container_and_syslog_envelopes_as_the_python_path_does(logs, fold, host):
    """Docker's, CRI's and RFC 5424's time is the line's (zoned), their host none (5424: its own,
    `-` none); RFC 3164 is journald's `short` behind a priority; short-monotonic gives the host only."""
    fast, slow = _both(lambda i: i.feed_many(logs, host), fold)
    assert fast == slow


@settings(max_examples=150, deadline=None)
@given(logs=_logs, newline=st.booleans())
def test_a_block_of_container_lines_reads_as_its_lines_do(logs, newline):
    text = "\n".join(logs) + ("\n" if newline else "")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    fast, _ = _both(lambda i: i.feed_block(text.encode()))
    _, slow = _both(lambda i: i.feed_many(lines))
    assert fast == slow


@settings(max_examples=100, deadline=None)
@given(chunks=st.lists(st.tuples(_logs, st.sampled_from([None, "gpu1"])), max_size=3))
def test_the_store_fed_container_lines_by_the_lane_is_the_python_paths(chunks):
    def feed(i):
        for lines, host in chunks:
            i.feed_many(lines, host)

    with pytest.MonkeyPatch.context() as m:
        fast = _store(feed)
        _python_path(m)
        slow = _store(feed)
    assert fast == slow


def test_each_envelope_of_a_line_is_the_lanes():
    """A batch line and an ordinary one in each envelope are read in C, not handed to Python."""
    batch = ("[2026-03-09 16:03:25 TP0] Decode batch, #running-req: 1, #token: 5, token usage: 0.10, accept len: 2.00, "
             "accept rate: 0.50, cuda graph: True, gen throughput (token/s): 12.00, #queue-req: 0")
    other = "[2026-03-09 16:03:25] Load weight begin. avail mem=77.12 GB"
    shapes = [
        lambda m: json.dumps({"log": m + "\n", "stream": "stdout", "time": "2026-03-09T16:03:25.123456789Z"}),
        lambda m: "2026-03-09T16:03:25.123456789Z stdout F " + m,
        lambda m: "<14>Mar  9 16:03:25 gpu sglang[1]: " + m,
        lambda m: "[  371.469140] gpu sglang[1]: " + m,
        lambda m: "<14>1 2026-03-09T16:03:25.003Z gpu sglang 12 - - " + m,
        lambda m: '<14>1 2026-03-09T16:03:25.003+01:00 - sglang 12 - [a b="c"][d] ' + m,
        lambda m: json.dumps({"MESSAGE": m + "\n", "__REALTIME_TIMESTAMP": "1773072205000000", "_HOSTNAME": "h"}),
    ]
    for shape in shapes:
        summary = Summary()
        Ingest(summary).feed_block((shape(batch) + "\n" + shape(other) + "\n").encode())
        assert (summary.lane.batches, summary.lane.unparsed) == (1, 1), shape(batch)


def _parse_bench():
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "bench/parse_bench.py"
    spec = importlib.util.spec_from_file_location("parse_bench", path)
    bench = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(bench)
    finally:
        sys.path.pop(0)
    return bench


@pytest.mark.parametrize("envelope", _parse_bench().ENVELOPES)
def test_the_benchmark_lines_in_every_envelope_are_the_lanes(envelope, tmp_path):
    """parse_bench's rows measure the lane: its lines in each envelope are read in C, every one, as
    the Python path reads them."""
    path = tmp_path / "log"
    _parse_bench().write_log(path, 1500, envelope=envelope)
    data = path.read_bytes()
    summary = Summary()
    ingest = Ingest(summary)
    ingest.feed_block(data)
    lane = summary.lane
    assert lane.batches + lane.unparsed + lane.events == ingest.counts.read == 1500
    fast, slow = _both(lambda i: i.feed_block(data))
    assert fast == slow


def test_short_monotonic_gives_the_host_and_no_time():
    """journalctl -o short-monotonic: seconds since boot, which say nothing of the time of day; the
    server's own stamp is the line's time, and the envelope's host its host."""
    from mtptui.core.parse import LineParser
    from mtptui.core.parse.envelope import EnvelopeReader

    line = EnvelopeReader().read("[  371.469140] gpu-h1 sglang[77]: [2026-03-09 16:03:25 TP0] Load weight begin.")
    assert (line.text, line.host, line.ts, line.zoned) == ("[2026-03-09 16:03:25 TP0] Load weight begin.", "gpu-h1",
                                                           None, False)
    p = LineParser().parse("[  371.469140] gpu-h1 sglang[77]: [2026-03-09 16:03:25 TP1] Decode batch, #running-req: 3, "
                           "accept len: 2.50")
    assert (p.record.host, p.record.rank, p.record.ts, p.record.fields["accept_len"]) == ("gpu-h1", "TP1", 1773072205.0, 2.5)
