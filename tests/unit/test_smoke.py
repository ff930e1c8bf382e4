from mtptui.core.ingest import Ingest


def test_one_line():
    i = Ingest()
    p = i.feed("[2026-03-09 16:03:25 TP0] Decode batch, #running-req: 1, #queue-req: 0")
    assert p.outcome == "batch"
