from tui_helpers import make_app, settle


async def test_replay_opens_and_shows_every_rank():
    app = make_app()
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        from mtptui.tui.widgets.rank_grid import RankPanel

        assert [p.rank for p in app.screen.query(RankPanel)] == ["TP0", "TP1", "TP2", "TP3"]
        assert app.dash.feed.counts.read == 377
