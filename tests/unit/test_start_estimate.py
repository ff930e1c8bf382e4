"""The downtime a plan shows: the starts (systemd's `Started` to the server's ready line) read
from the unit's journal, in journal order whichever way journalctl hands them over, and the line
the preview makes of them."""

from __future__ import annotations

import json

from mtptui.control.plan import RESTART, Plan
from mtptui.control.target import SystemdTarget, last_start_seconds, start_durations


def test_oldest_or_newest_first_the_last_start_is_the_same():
    def e(ts, msg):
        return json.dumps({"__REALTIME_TIMESTAMP": str(int(ts * 1e6)), "MESSAGE": msg})

    lines = [e(100, "Started a.service - A."), e(160, "[x] The server is fired up and ready to roll!"),
             e(200, "Started a.service - A."), e(290.5, "[x] The server is fired up and ready to roll!"),
             e(300, "Started a.service - A.")]
    assert last_start_seconds(lines) == 90.5
    assert last_start_seconds(lines[::-1]) == 90.5  # was 0 s: the newest Started, then an older ready


SEQ = "7a3f0c2b9e1d4f6a8b5c0d1e2f3a4b5c"


def journal_entry(seq: int, ts: float, msg: str, **fields) -> str:
    """An entry as journalctl -o json writes it: the cursor (with its sequence number) first."""
    cursor = f"s={SEQ};i={seq:x};b=0f1e;m={seq * 1000:x};t={int(ts * 1e6):x};x=ab{seq:x}"
    return json.dumps({"__CURSOR": cursor, "__REALTIME_TIMESTAMP": str(int(ts * 1e6)), **fields, "MESSAGE": msg},
                      separators=(",", ":"))


def started(seq: int, ts: float, inv: str) -> str:
    return journal_entry(seq, ts, "Started a.service - A.", _PID="1", UNIT="a.service", INVOCATION_ID=inv,
                         MESSAGE_ID="39f53479d3a045ac8e11786248231fbf")


def server(seq: int, ts: float, msg: str, inv: str) -> str:
    return journal_entry(seq, ts, msg, _PID="4242", _SYSTEMD_UNIT="a.service", _SYSTEMD_INVOCATION_ID=inv)


FIRED = "[2026-03-09 16:00:09] The server is fired up and ready to roll!"
UVICORN = "INFO:     Application startup complete."

# Six starts of 3.8, 4.1, 3.7, 3.9, 4.0 and 3.8 s (the uvicorn line before the ready line is not
# the end of a start), a start that never became ready, and one still starting at the end.
JOURNAL = []
for _n, _took in enumerate((3.8, 4.1, 3.7, 3.9, 4.0, 3.8)):
    _t, _inv = 1000.0 + 100 * _n, f"inv{_n}"
    JOURNAL += [started(10 * _n + 1, _t, _inv), server(10 * _n + 2, _t + _took - 1.5, UVICORN, _inv),
                server(10 * _n + 3, _t + _took, FIRED, _inv)]
JOURNAL += [started(100, 1800.0, "dead"), started(110, 1900.0, "now")]


def test_starts_in_journal_order_whichever_way_journalctl_gives_them():
    """journalctl 252 gives `--grep` with `--lines` newest first: oldest or newest first, the starts
    come out the same, oldest first; the last and all of them."""
    want = [3.8, 4.1, 3.7, 3.9, 4.0, 3.8]
    for lines in (JOURNAL, JOURNAL[::-1]):
        assert [round(x, 3) for x in start_durations(lines)] == want
        assert round(last_start_seconds(lines), 3) == 3.8


def test_a_ready_line_stamped_before_its_started_is_a_start_of_0_s():
    # systemd's Started and the server's own line are stamped by different writers; the cursor's
    # sequence number says which came first in the journal
    lines = [started(1, 10.5, "i"), server(2, 10.2, FIRED, "i")]
    assert last_start_seconds(lines) == 0.0
    assert last_start_seconds(lines[::-1]) == 0.0


def test_a_start_is_ended_only_by_its_own_run_and_not_by_a_server_line_saying_started():
    lines = [started(1, 10.0, "a"), server(2, 11.0, "Started server process [77]", "a"),
             server(3, 12.0, FIRED, "b"), server(4, 15.0, FIRED, "a")]
    assert start_durations(lines) == [5.0]
    # vLLM logs no "fired up": uvicorn's startup complete is its ready
    vllm = [started(1, 10.0, "v"), server(2, 13.25, UVICORN, "v")]
    assert start_durations(vllm) == [3.25] and start_durations(vllm[::-1]) == [3.25]
    # junk is skipped, not fatal
    assert start_durations(["", "not json", "{}", '{"__REALTIME_TIMESTAMP":"x","MESSAGE":"Started a."}',
                            json.dumps({"__REALTIME_TIMESTAMP": "5", "MESSAGE": [1, 2]}), *vllm]) == [3.25]


class FakeRunner:
    def __init__(self, stdout: str, returncode: int = 0) -> None:
        self.stdout, self.returncode, self.argvs = stdout, returncode, []

    async def run(self, argv, timeout=None, input=None):
        from mtptui.transport.process import CompletedCommand

        self.argvs.append(argv)
        return CompletedCommand(returncode=self.returncode, stdout=self.stdout, stderr="")


async def test_the_target_keeps_the_last_five_starts():
    runner = FakeRunner("\n".join(JOURNAL[::-1]) + "\n")
    starts = await SystemdTarget(runner, "a.service").last_start()
    assert [round(x, 3) for x in starts] == [4.1, 3.7, 3.9, 4.0, 3.8]
    argv = runner.argvs[0]
    assert argv[:2] == ["journalctl", "--unit=a.service"] and any(a.startswith("--grep=") for a in argv)
    assert await SystemdTarget(FakeRunner("", returncode=1), "a.service").last_start() == []


def plan(last, starts, **more) -> Plan:
    return Plan(host="gpu1", unit="a.service", action=RESTART, profile=None, engine="sglang", old_argv=["x"],
                new_argv=["x"], old_dropin=None, new_dropin=None, commands=[], last_start_s=last, starts_s=starts,
                **more)


def test_the_preview_shows_the_last_start_and_the_median_of_the_last_few():
    lines = plan(3.8, [4.1, 3.7, 3.9, 4.0, 3.8]).preview_lines()
    assert "downtime: last start 3.8 s (Started → ready), median of 5: 3.9 s" in lines
    assert "downtime: last start 3.8 s (Started → ready)" in plan(3.8, [3.8]).preview_lines()
    assert "downtime: last start 10 min 12 s (Started → ready)" in plan(612.0, []).preview_lines()
    assert "downtime: unknown (no start to ready seen in the journal)" in plan(None, []).preview_lines()
    # a container's starts are read from its runtime's logs, not a journal
    assert "downtime: unknown (no start to ready seen in `docker logs`)" in plan(
        None, [], starts_from="`docker logs`").preview_lines()
