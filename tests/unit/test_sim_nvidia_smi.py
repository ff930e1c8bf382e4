"""The simulator's nvidia-smi stand-in writes what core/gpus reads of the real tool, and its GPUs
move with the load."""

from __future__ import annotations

from mtptui.core.gpus import FIELDS, parse_text
from mtptui.sim import nvidia_smi


def test_its_csv_is_read_as_the_real_tools():
    text = nvidia_smi.render(nvidia_smi.model(2, 12, 100.0), list(FIELDS), header=False, units=False)
    got = parse_text(text, 1.0)
    assert [s.index for s in got] == [0, 1]
    assert all(s.name == "NVIDIA H100 80GB HBM3" and s.mem_total == 81559 and s.power_limit == 700 for s in got)


def test_header_and_units_as_the_real_tool_writes_them():
    text = nvidia_smi.render(nvidia_smi.model(1, 3, 0.0), ["index", "utilization.gpu", "power.draw"],
                             header=True, units=True)
    head, row = text.splitlines()
    assert head == "index, utilization.gpu [%], power.draw [W]"
    assert row.split(", ")[1].endswith(" %") and row.endswith(" W")


def test_utilisation_and_power_move_with_load():
    idle, busy, down = (nvidia_smi.model(1, r, 5.0)[0] for r in (0, 24, None))
    assert idle.util == 0 and busy.util >= 95
    assert down.power < idle.power < busy.power <= nvidia_smi.POWER_LIMIT
    assert down.mem_used < idle.mem_used == busy.mem_used  # the pool is claimed at start


def test_help_says_stand_in(capsys):
    try:
        nvidia_smi.main(["--help"])
    except SystemExit:
        pass
    assert "STAND-IN" in capsys.readouterr().out


def test_an_unknown_field_is_refused_as_the_real_tool_does(capsys):
    assert nvidia_smi.main(["--query-gpu=index,bogus", "--format=csv", "--sim-port", "1"]) == 2
    assert 'Field "bogus" is not a valid field to query.' in capsys.readouterr().out
