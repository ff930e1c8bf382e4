"""`summary` of many runs makes the later epochs' texts (`--json`), or the later runs' lines of the
table's sections, in a forked process while it writes the rest (EpochDocs.start_later): the output
is byte for byte the one a single process writes, and so it stays when that process is killed or
fails, this one making them instead."""

from __future__ import annotations

import io
import os
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from mtptui.commands import summary as command
from mtptui.core import summary
from mtptui.sources import forked
from test_many_runs import log, many_runs_log  # noqa: F401 (the fixture shared with the unit tier)


def written(path: Path, jobs: int, form: str = "--json", sink: str = "text") -> str:
    """What the command writes: to a text in memory, or to a file's bytes (sys.stdout's kind, with
    a buffer that the other process's texts are copied into whole)."""
    out = io.StringIO() if sink == "text" else io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    with redirect_stdout(out):
        assert command.main([form, "--jobs", str(jobs), str(path)] if form else ["--jobs", str(jobs), str(path)]) == 0
    if sink == "text":
        return out.getvalue()
    out.flush()
    return out.buffer.getvalue().decode()


SINKS = [("--json", "text"), ("--json", "bytes"), ("", "text")]


@pytest.fixture
def forks(monkeypatch) -> list[forked.Forked]:
    """The processes started, with make_ahead's threshold down to this small log's 301 runs."""
    monkeypatch.setattr(summary, "AHEAD_MIN_EPOCHS", 10)
    started: list[forked.Forked] = []
    init = forked.Forked.__init__

    def counted(self, fn):
        started.append(self)
        init(self, fn)

    monkeypatch.setattr(forked.Forked, "__init__", counted)
    return started


@pytest.mark.parametrize(("form", "sink"), SINKS)
def test_the_epochs_made_ahead_are_the_ones_made_here(log, forks, monkeypatch, form, sink):
    judged: list[dict] = []  # what the advice was judged from: each host's last epoch and row
    advise = command.advise_last
    monkeypatch.setattr(command, "advise_last", lambda last, *a, **k: judged.append(dict(last)) or advise(last, *a, **k))
    alone = written(log, 1, form)
    assert not forks
    ahead = written(log, 2, form, sink)
    assert len(forks) == 1 and forks[0].process.exitcode == 0
    assert ahead == alone
    # the other process's last rows, sent back: gpu-a's 300th run, gpu-b's one
    assert judged[1] == judged[0] and {h: d["index"] for h, (d, _) in judged[1].items()} == {"gpu-a": 299, "gpu-b": 0}
    if not form:
        assert ahead.count("gpu-a") > 3 * 300  # each run in the epochs, load and context sections


@pytest.mark.parametrize(("form", "sink"), SINKS)
@pytest.mark.parametrize("end", ["killed", "raises"])
def test_when_the_other_process_gives_nothing_this_one_makes_them(log, forks, monkeypatch, end, form, sink):
    alone = written(log, 1, form)
    start = summary.EpochDocs.start_later

    def broken(self, work, share, kept, start_it):
        def fails(split):
            for f in kept if isinstance(kept, tuple) else (kept,):
                f.write(b"{broken\n" if isinstance(f, io.BufferedIOBase) else "{broken\n")  # not read: it stopped
                f.flush()
            if end == "killed":
                os._exit(9)
            raise MemoryError("out of memory")
        start(self, fails, share, kept, start_it)

    monkeypatch.setattr(summary.EpochDocs, "start_later", broken)
    assert written(log, 2, form, sink) == alone
    assert forks[0].process.exitcode == (9 if end == "killed" else 0)


@pytest.mark.parametrize("form", ["--json", ""])
def test_without_a_process_to_be_had_this_one_makes_them_all(log, forks, monkeypatch, form):
    alone = written(log, 1, form)

    def refused(self, fn):
        raise BlockingIOError(11, "Resource temporarily unavailable")  # fork's EAGAIN at a process limit

    monkeypatch.setattr(forked.Forked, "__init__", refused)
    assert written(log, 2, form) == alone


def test_a_few_runs_are_not_worth_a_fork(tmp_path, monkeypatch):
    path = tmp_path / "few.log"
    many_runs_log(path, 20)
    started: list = []
    monkeypatch.setattr(summary.EpochDocs, "start_later", lambda self, *a: started.append(self))
    written(path, 2)
    written(path, 2, "")
    assert not started
