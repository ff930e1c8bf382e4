"""A container's last start, as a plan's downtime: the runtime's StartedAt to the ready line of that
run in `docker logs --timestamps` (SGLang's, else uvicorn's, by the systemd target's own rule), else
its first answered /health. (The grep that picks those lines on the host: tests/process/test_container_start_grep.py.)"""

from __future__ import annotations

import pytest

from mtptui.control.container_start import start_seconds
from mtptui.control.target import ready_at

STARTED = "2026-12-07T13:00:00.250000000Z"
FIRED = "[2026-12-07 13:00:04] The server is fired up and ready to roll!"
UVICORN = "INFO:     Application startup complete."
HEALTH = 'INFO:     127.0.0.1:41234 - "GET /health HTTP/1.1" 200 OK'
HEALTH_503 = 'INFO:     127.0.0.1:41234 - "GET /health HTTP/1.1" 503 Service Unavailable'


def at(second: str, text: str) -> str:
    return f"2026-12-07T13:00:{second}Z {text}"


def test_sglangs_ready_line_ends_the_start_not_uvicorns_before_its_warmup():
    lines = [at("01.5", "Load weight begin"), at("02.75", UVICORN), at("03", HEALTH), at("04.5", FIRED)]
    assert start_seconds(STARTED, lines) == pytest.approx(4.25)


def test_uvicorns_line_where_the_run_has_no_sglang_ready_line():
    lines = [at("01", "vLLM API server version 0.32.0"), at("07.25", UVICORN), at("08", HEALTH)]
    assert start_seconds(STARTED, lines) == pytest.approx(7.0)


def test_the_first_answered_health_where_no_line_says_ready():
    lines = [at("02", HEALTH_503), at("05.75", HEALTH), at("06", HEALTH)]
    assert start_seconds(STARTED, lines) == pytest.approx(5.5)
    assert start_seconds(STARTED, [at("02", HEALTH_503), at("03", "Load weight begin")]) is None


def test_lines_by_their_stamps_whatever_order_the_streams_came_in():
    # stderr's lines after stdout's: the ready line first as handed over, a later uvicorn line after;
    # stamps the runtime wrote without trailing zeros (`04.5` is `04.500000000`)
    lines = [at("09.125", HEALTH), at("04.5", FIRED), at("03.25", UVICORN)]
    assert start_seconds(STARTED, lines) == pytest.approx(4.25)


def test_an_earlier_runs_lines_and_unstamped_lines_are_not_this_start():
    lines = ["2026-12-07T12:59:30.000000000Z " + FIRED, "no stamp " + FIRED, at("06.25", FIRED)]
    assert start_seconds(STARTED, lines) == pytest.approx(6.0)
    assert start_seconds(STARTED, lines[:2]) is None
    assert start_seconds("", [at("06.25", FIRED)]) is None  # never started: no start to measure from


def test_ready_at_is_the_systemd_rule():
    assert ready_at([(1.0, UVICORN), (2.0, FIRED), (3.0, FIRED)]) == 2.0
    assert ready_at([(1.0, UVICORN), (2.0, UVICORN)]) == 1.0
    assert ready_at([(1.0, HEALTH)]) is None

