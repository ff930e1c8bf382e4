"""On connect, the dashboard tells of an action that a killed console left half done on a host
(HostControl.interrupted: issue 17), once, as a warning; a host it cannot reach says nothing
here (its source tells that)."""

from __future__ import annotations

from tui_helpers import make_app, notes, until

from mtptui.control.errors import ControlError

LINE = ("gpu1: mtp3 by ops@laptop at 18:32:05 was interrupted at restart (process not running); "
        "the unit now runs mtp3 (ExecStart), active")


class Control:
    def __init__(self, host: str, said: str | None = None, fails: bool = False) -> None:
        self.host, self.said, self.fails, self.asked = host, said, fails, 0

    async def interrupted(self) -> str | None:
        self.asked += 1
        if self.fails:
            raise ControlError(f"{self.host}: unreachable")
        return self.said

    async def close(self) -> None:
        pass


async def test_an_interrupted_action_is_told_once_on_connect():
    cut, quiet, down = Control("gpu1", LINE), Control("gpu2"), Control("gpu3", fails=True)
    app = make_app(controls={"gpu1": cut, "gpu2": quiet, "gpu3": down})
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: any(m == LINE for m, _ in notes(app)), "the interrupted action told")
        await until(pilot, lambda: down.asked and quiet.asked, "every host asked")
        await pilot.pause(0.2)
        assert [n for n in notes(app) if "interrupted" in n[0] or "unreachable" in n[0]] == [(LINE, "warning")]
    assert (cut.asked, quiet.asked, down.asked) == (1, 1, 1)


async def test_a_read_only_dashboard_asks_nothing():
    cut = Control("gpu1", LINE)
    app = make_app(controls={"gpu1": cut}, read_only=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.3)
        assert not [m for m, _ in notes(app) if "interrupted" in m]
    assert cut.asked == 0
