"""`summary` of many runs writes each run once, in order, in one pass (EpochDocs): `--json`'s epochs and
the table's runs sections are the same whichever sink they go to and however many readers read the
file, and the advice is judged from each host's last run as that pass left it."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from mtptui.commands import summary as command
from test_many_runs import log, many_runs_log  # noqa: F401 (the fixture shared with the unit tier)


def written(path: Path, jobs: int, form: str = "--json", sink: str = "text") -> str:
    """What the command writes: to a text in memory, or to a file's bytes (sys.stdout's kind)."""
    out = io.StringIO() if sink == "text" else io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    with redirect_stdout(out):
        assert command.main([form, "--jobs", str(jobs), str(path)] if form else ["--jobs", str(jobs), str(path)]) == 0
    if sink == "text":
        return out.getvalue()
    out.flush()
    return out.buffer.getvalue().decode()


@pytest.mark.parametrize("form", ["--json", ""])
def test_many_runs_are_written_once_each_and_the_advice_is_judged_from_the_last(log, monkeypatch, form):
    judged: list[dict] = []  # what the advice was judged from: each host's last epoch and row
    advise = command.advise_last
    monkeypatch.setattr(command, "advise_last", lambda last, *a, **k: judged.append(dict(last)) or advise(last, *a, **k))
    one = written(log, 1, form)
    assert written(log, 2, form, "bytes") == one
    assert judged[1] == judged[0] and {h: d["index"] for h, (d, _) in judged[0].items()} == {"gpu-a": 299, "gpu-b": 0}
    if form:
        assert [e["index"] for e in json.loads(one)["epochs"] if e["host"] == "gpu-a"] == list(range(300))
    else:
        assert one.count("gpu-a") > 3 * 300  # each run in the epochs, load and context sections
