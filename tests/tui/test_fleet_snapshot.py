"""SVG snapshots of the fleet table on hand-made hosts (mtptui/fleet/query.py's rows, flagged by the
real outliers code), so every figure is fixed: SGLang hosts of one model (three alike, one whose
acceptance collapsed, one decoding without speculation, one down) and mtptui-exported hosts (one with
a rank without CUDA graphs and a slow rank, one whose log stream is lost). The refresh time is
frozen. Update with `pytest --snapshot-update` and look at the SVGs before committing them."""

from __future__ import annotations

import time

import pytest

from mtptui.config import load_config
from mtptui.fleet.outliers import Limits, flag_fleet
from mtptui.fleet.query import MTPTUI, SGLANG, Host, Rank
from mtptui.fleet.table import ViewState
from mtptui.tui.fleet_app import FleetApp

MODEL = {"model_name": "Qwen/Qwen3-8B"}
NEXTN3 = {"algorithm": "EAGLE", "steps": 3, "topk": 1, "draft_tokens": 4, "settings": "EAGLE steps=3 topk=1 draft=4"}
REFRESHED = 1796040000.0  # 2026-11-30 12:00:00 UTC


def tp2(accept_len, accept_rate, gen, running=12, queue=0, graph=True, tp=("TP0", "TP1")) -> list[Rank]:
    return [Rank(r, accept_len, accept_rate, gen, running, queue, graph) for r in tp]


def fleet() -> list[Host]:
    hosts = [
        Host("10.0.0.11:30000", SGLANG, dict(MODEL), tp2(3.12, 0.71, 1480.0)),
        Host("10.0.0.12:30000", SGLANG, dict(MODEL), tp2(3.05, 0.68, 1455.5, running=14, queue=2)),
        Host("10.0.0.13:30000", SGLANG, dict(MODEL), tp2(2.98, 0.66, 1420.2)),
        Host("10.0.0.14:30000", SGLANG, dict(MODEL), tp2(1.03, 0.01, 905.0, running=9)),
        Host("10.0.0.15:30000", SGLANG, dict(MODEL), tp2(None, None, 610.0, running=10)),
        Host("10.0.0.16:30000", SGLANG, dict(MODEL), down=True),
        Host("gpu-a1", MTPTUI, dict(NEXTN3), [Rank("TP0", 2.91, 0.64, 1390.0, 11, 1, True),
                                              Rank("TP1", 2.88, 0.63, 1385.0, 11, 1, True),
                                              Rank("TP2", 2.93, 0.65, 1392.0, 11, 1, False),
                                              Rank("TP3", 2.90, 0.63, 640.0, 11, 1, True)]),
        Host("gpu-a2", MTPTUI, dict(NEXTN3), tp2(2.95, 0.65, 1401.0), connected=False),
    ]
    return flag_fleet(hosts, Limits())


def make_app(state: ViewState | None = None) -> FleetApp:
    hosts = fleet()
    return FleetApp(lambda: hosts, config=load_config("/dev/null"), hosts=hosts, interval=3600,
                    title="http://prom:9090", state=state)


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


async def frozen(pilot) -> None:
    pilot.app.fleet.refreshed = REFRESHED
    pilot.app.fleet.show_title()
    await pilot.pause()


def test_fleet_flags_are_what_the_snapshot_shows():
    """The flags the snapshots show, checked apart from the picture."""
    flags = {h.host: [f.kind for f in h.flags] for h in fleet()}
    assert flags == {
        "10.0.0.11:30000": [], "10.0.0.12:30000": [], "10.0.0.13:30000": [],
        "10.0.0.14:30000": ["accept_collapsed", "accept_outlier"], "10.0.0.15:30000": ["spec_off"],
        "10.0.0.16:30000": ["down"], "gpu-a1": ["rank_outlier", "graph_off"], "gpu-a2": ["disconnected"]}


@pytest.mark.parametrize("size", [(160, 24), (100, 24)], ids=["160x24", "100x24"])
def test_fleet_table(snap_compare, size):
    assert snap_compare(make_app(), terminal_size=size, run_before=frozen)


def test_fleet_table_expanded_sorted_by_accept_len(snap_compare):
    state = ViewState(sort="accept_len", expanded={"mtptui:gpu-a1"})
    assert snap_compare(make_app(state), terminal_size=(160, 24), run_before=frozen)
