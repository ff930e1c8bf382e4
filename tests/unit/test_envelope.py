"""Every journald output mode, json byte-array messages, and the debris of terminals."""

import json
from datetime import datetime, timezone

import pytest

from mtptui.core.parse import LineParser
from mtptui.core.parse.envelope import EnvelopeError, EnvelopeReader, clean

MSG = ("[2026-03-09 16:03:25 TP1] Decode batch, #running-req: 12, #token: 45678, token usage: 0.23, "
       "accept len: 2.87, accept rate: 0.62, cuda graph: True, gen throughput (token/s): 1234.50, #queue-req: 0")
T = datetime(2026, 3, 9, 16, 3, 25, tzinfo=timezone.utc).timestamp()


def journal_json(msg, host="gpu-a", usec=None, cursor="s=abc;i=1", unit="sglang-qwen.service"):
    obj = {"__CURSOR": cursor, "__REALTIME_TIMESTAMP": str(usec if usec is not None else int(T * 1e6) + 250000),
           "_HOSTNAME": host, "_SYSTEMD_UNIT": unit, "SYSLOG_IDENTIFIER": "python3", "MESSAGE": msg}
    return json.dumps(obj)


ENVELOPES = {
    "raw": (MSG, None),
    "cat with CRLF": (MSG + "\r\n", None),
    "short": ("Mar 09 16:03:25 gpu-a python3[4242]: " + MSG, "gpu-a"),
    "short, space-padded day": ("Mar  9 16:03:25 gpu-a python3[4242]: " + MSG, "gpu-a"),
    "short-precise": ("Mar 09 16:03:25.250000 gpu-a python3[4242]: " + MSG, "gpu-a"),
    "short-iso": ("2026-03-09T16:03:25+0000 gpu-a python3[4242]: " + MSG, "gpu-a"),
    "short-iso, colon zone": ("2026-03-09T16:03:25+00:00 gpu-a python3[4242]: " + MSG, "gpu-a"),
    "short-iso-precise": ("2026-03-09T16:03:25.250000+0000 gpu-a python3[4242]: " + MSG, "gpu-a"),
    "ident without pid": ("Mar 09 16:03:25 gpu-a sglang: " + MSG, "gpu-a"),
    "json": (journal_json(MSG), "gpu-a"),
    "json, byte-array MESSAGE": (journal_json(list(MSG.encode())), "gpu-a"),
    "ansi colours": ("\x1b[32m" + MSG + "\x1b[0m", None),
    "syslog RFC 3164 with a priority": ("<14>Mar  9 16:03:25 gpu-a python3[4242]: " + MSG, "gpu-a"),
    "syslog RFC 5424": ("<14>1 2026-03-09T16:03:25.250Z gpu-a python3 4242 - - " + MSG, "gpu-a"),
    "Kubernetes CRI": ("2026-03-09T16:03:25.250000000Z stderr F " + MSG, None),
    "Docker json-file": (json.dumps({"log": MSG + "\n", "stream": "stderr", "time": "2026-03-09T16:03:25.25Z"}),
                         None),
}
ZONED = {"json", "json, byte-array MESSAGE", "short-iso-precise", "syslog RFC 5424", "Kubernetes CRI",
         "Docker json-file"}


@pytest.mark.parametrize("name", ENVELOPES)
def test_same_record_in_every_envelope(name):
    raw, host = ENVELOPES[name]
    p = LineParser().parse(raw)
    assert p.outcome == "batch"
    rec = p.record
    assert rec.host == host
    assert rec.rank == "TP1"
    assert rec.fields["accept_len"] == 2.87
    assert rec.fields["gen_throughput"] == 1234.5
    assert rec.fields["queue_req"] == 0
    # zoned envelopes (json, iso) give the time; elsewhere the server's own stamp does
    if name in ZONED:
        assert rec.ts == pytest.approx(T + 0.25)
    else:
        assert rec.ts == T


def test_json_fields_taken():
    line = EnvelopeReader().read(journal_json("hello", host="h9", usec=1773072205123456, cursor="s=x;i=9"))
    assert (line.text, line.host, line.unit, line.cursor) == ("hello", "h9", "sglang-qwen.service", "s=x;i=9")
    assert line.ts == pytest.approx(1773072205.123456)


def test_json_binary_message_is_decoded_with_replacement():
    raw = journal_json([0x41, 0xFF, 0x42])
    assert EnvelopeReader().read(raw).text == "A\ufffdB"


@pytest.mark.parametrize("raw", ['{"MESSAGE": null}', '{"no": "message"}', "{broken json", "[1, 2]", '{"MESSAGE": [1, 999]}'])
def test_unreadable_json_is_an_envelope_error(raw):
    if raw.startswith("["):
        assert LineParser().parse(raw).outcome == "other"  # not an object: a plain text line
        return
    with pytest.raises(EnvelopeError):
        EnvelopeReader().read(raw)
    assert LineParser().parse(raw).outcome == "dropped"


def test_progress_bar_carriage_returns_keep_the_last_frame():
    raw = "Capturing batches (bs=1 avail_mem=10 GB):  10%|#\rCapturing batches (bs=8 avail_mem=9 GB): 100%|##########\r\n"
    assert clean(raw) == "Capturing batches (bs=8 avail_mem=9 GB): 100%|##########"


def test_short_year_follows_the_servers_own_stamps():
    p = LineParser()
    p.parse("Dec 31 23:59:59 h python3[1]: [2024-12-31 23:59:59 TP0] Prefill batch. #new-seq: 1")
    ev = p.parse("Dec 31 23:59:59 h systemd[1]: Stopped sglang-qwen.service - SGLang.")
    assert ev.outcome == "event" and ev.record.kind == "stopped"
    assert ev.record.ts == datetime(2024, 12, 31, 23, 59, 59, tzinfo=timezone.utc).timestamp()


def test_journal_meta_lines_are_unparsed_not_errors():
    p = LineParser()
    for raw in ("-- Journal begins at Mon 2026-03-09 10:00:00 UTC. --", "-- Boot 0123456789abcdef --", "-- No entries --"):
        assert p.parse(raw).outcome == "other"


_BATCH = ("Mar 09 16:03:25 gpu-a python3[1]: [2026-03-09 16:03:25 TP0] Decode batch, #running-req: 3, "
          "#token: 100, token usage: 0.01, accept len: 2.50, accept rate: 0.50, cuda graph: True, "
          "gen throughput (token/s): 100.00, #queue-req: 0")


def _insert_everywhere(ch: str):
    """The batch line with `ch` put at each position in turn (every field, the envelope, the prefix)."""
    for i in range(len(_BATCH) + 1):
        yield _BATCH[:i] + ch + _BATCH[i:]


def test_a_nul_anywhere_in_a_batch_line_drops_it():
    from mtptui.core.parse import LineParser

    p = LineParser()
    for raw in _insert_everywhere("\x00"):
        assert p.parse(raw).outcome == "dropped", repr(raw)


def test_colour_codes_anywhere_read_as_the_clean_line():
    """The fast path admits no ESC: a coloured line takes the general path, which removes the
    codes, so it reads as the clean line wherever the code sits (or as no batch, where the code
    splits a token the way a terminal would not)."""
    from mtptui.core.parse import LineParser

    p = LineParser()
    clean = p.parse(_BATCH)
    for raw in _insert_everywhere("\x1b[31m"):
        got = p.parse(raw)
        assert got.outcome == "batch" and got.record.fields == clean.record.fields, repr(raw)
        assert got.record.ts == clean.record.ts and got.record.rank == "TP0" and got.record.host == "gpu-a"


def test_a_progress_bar_return_keeps_only_what_follows_it():
    from mtptui.core.parse import LineParser

    p = LineParser()
    clean = p.parse(_BATCH)
    got = p.parse("Loading 45%|####\r" + _BATCH + "\r\n")
    assert got.outcome == "batch" and got.record.fields == clean.record.fields
