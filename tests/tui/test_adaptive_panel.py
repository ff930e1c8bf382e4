"""Issue 46 item 2, the controller on screen: where the engine adapts its steps, each rank panel
draws the steps in use over time beside the batch size (vLLM's drafts per step, SGLang's
spec_num_steps gauge), and badges a fall of throughput as the load crossed an edge of the run's
schedule; a run that does not adapt shows neither. Read off the screen as drawn."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_helpers import make_app, settle

from mtptui.core.adaptive import FELL_SHARE, drafts_per_step, fell_across, steps_between
from mtptui.core.latency import parse
from mtptui.core.parse.vllm import parse_stats
from mtptui.tui.widgets.rank_grid import RankGrid, RankPanel
from mtptui.tui.widgets.rank_table import RankTable

SCHEDULE = [[1, 2, 3], [3, 1024, 1]]


def _stamp(i: int) -> str:
    return f"12-07 02:{10 + i // 30:02d}:{(2 * i) % 60:02d}"


def vllm_log(path: Path, *, schedule: list | None, tok_s_above: float, k_static: int = 3, idle: bool = False) -> str:
    """A vLLM 0.32 run as its journal holds it (the engine tier's lines): its settings, then 40
    intervals, the first 20 at 2 running requests, the rest at 6; each a throughput line (232 tok/s
    at 2 running, `tok_s_above` at 6) and a SpecDecoding line drafting the K the schedule gives
    that load (else `k_static`), 10 drafts an interval, the per-position list as wide as the most K."""
    spec = {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4, "prompt_lookup_min": 2}
    if schedule is not None:
        spec["num_speculative_tokens_per_batch_size"] = schedule
    lines = [f"(APIServer pid=66) INFO 12-07 02:09:50 [utils.py:253] non-default args: {{'model': '/m', "
             f"'speculative_config': {spec!r}}}"]
    for i in range(40):
        running = 2 if i < 20 else 6
        k = next((k for a, b, k in schedule if a <= running <= b), 0) if schedule is not None else k_static
        tok_s = 232.0 if running == 2 else tok_s_above
        lines.append(f"(APIServer pid=66) INFO {_stamp(i)} [loggers.py:335] Engine 000: Avg prompt throughput: "
                     f"0.0 tokens/s, Avg generation throughput: {tok_s:.1f} tokens/s, Running: {running} reqs, "
                     f"Waiting: 0 reqs, GPU KV cache usage: 1.0%")
        pos = [6, 5, 4][:k] + [0] * (3 - k)
        accepted, drafted = sum(pos), 10 * k
        rates = ", ".join(f"{p / 10:.3f}" for p in pos)
        lines.append(f"(APIServer pid=66) INFO {_stamp(i)} [metrics.py:120] SpecDecoding metrics: Mean acceptance "
                     f"length: {1 + accepted / 10:.2f}, Accepted throughput: {accepted / 2:.2f} tokens/s, Drafted "
                     f"throughput: {drafted / 2:.2f} tokens/s, Accepted: {accepted} tokens, Drafted: {drafted} "
                     f"tokens, Per-position acceptance rate: {rates}, Avg Draft acceptance rate: "
                     f"{accepted / drafted * 100:.1f}%")
    if idle:  # the traffic ended: an interval with nothing running, and no SpecDecoding line
        lines.append(f"(APIServer pid=66) INFO {_stamp(40)} [loggers.py:335] Engine 000: Avg prompt throughput: "
                     f"0.0 tokens/s, Avg generation throughput: 3.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, "
                     f"GPU KV cache usage: 0.0%")
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def plain(widget) -> str:
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


async def _panel(path: str, size=(160, 48)) -> tuple[str, str, str]:
    """The rank's panel as drawn (its rows, its title, its bottom border), or on a screen too short
    for panels the rank table's (its text, title and bottom border)."""
    app = make_app(path, window="all")
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        grid = app.screen.query_one(RankGrid)
        if grid.table_mode:
            table = app.screen.query_one(RankTable)
            return plain(table), str(table.border_title), str(table.border_subtitle)
        (panel,) = app.screen.query(RankPanel)
        return plain(panel), str(panel.border_title), str(panel.border_subtitle)


# -- what the figures are made of ---------------------------------------------------------------

def test_drafts_per_step_from_vllms_specdecoding_line():
    """vLLM 0.32's line (v1/spec_decode/metrics.py) prints drafted and accepted tokens and the rates
    per position (accepted there over the drafts): drafts = accepted / their sum."""
    line = ("(APIServer pid=66) INFO 12-07 02:10:00 [metrics.py:120] SpecDecoding metrics: Mean acceptance "
            "length: 2.10, Accepted throughput: 5.50 tokens/s, Drafted throughput: 12.50 tokens/s, Accepted: 11 "
            "tokens, Drafted: 25 tokens, Per-position acceptance rate: 0.600, 0.400, 0.100, Avg Draft acceptance "
            "rate: 44.0%")
    rec, _ = parse_stats(line, "h", 2026)
    assert rec is not None
    assert drafts_per_step(rec.fields) == pytest.approx(2.5)  # 10 drafts: 2.5 tokens each (a schedule's mix)
    # nothing accepted: the drafts cannot be told from the line, so no K (never a made-up one)
    assert drafts_per_step({**rec.fields, "accepted_tokens": 0, "per_position_accept_rate": [0.0] * 3}) is None


def test_steps_in_use_from_metrics():
    sglang = parse('# TYPE sglang:spec_num_steps gauge\nsglang:spec_num_steps{dp_rank="0"} 2.0\n'
                   'sglang:spec_num_steps{dp_rank="1"} 4.0\n', 10.0)
    assert steps_between(None, sglang) == 3.0  # the gauge, the DP groups' mean

    def vllm(t, drafts, tokens):
        # as prometheus_client writes a counter (vLLM 0.32's /metrics in the engine tier)
        return parse(f"# TYPE vllm:spec_decode_num_drafts_total counter\n"
                     f'vllm:spec_decode_num_drafts_total{{engine="0"}} {drafts}\n'
                     f"# TYPE vllm:spec_decode_num_draft_tokens_total counter\n"
                     f'vllm:spec_decode_num_draft_tokens_total{{engine="0"}} {tokens}\n', t)
    assert steps_between(vllm(0, 100, 300), vllm(5, 140, 340)) == 1.0  # 40 drafts of 40 tokens
    assert steps_between(None, vllm(5, 140, 340)) is None  # counts since the start say no K now
    assert steps_between(vllm(0, 100, 300), vllm(5, 100, 300)) is None  # no drafts between


def test_a_fall_past_a_schedule_edge_and_none_where_it_rises_or_is_noise():
    running = [1.0] * 5 + [2.0] * 5 + [8.0] * 5
    assert fell_across(SCHEDULE, running, [232.0] * 10 + [60.0] * 5).edge == 3
    assert fell_across(SCHEDULE, running, [232.0] * 10 + [400.0] * 5) is None
    assert fell_across(SCHEDULE, running, [232.0] * 10 + [232.0 * (1 - FELL_SHARE / 2)] * 5) is None
    assert fell_across(SCHEDULE, running[:12], [232.0] * 10 + [60.0] * 2) is None  # too few lines above
    assert fell_across([[1, 1024, 3]], running, [232.0] * 10 + [60.0] * 5) is None  # no edge


# -- on screen -------------------------------------------------------------------------------------

async def test_a_schedule_shows_the_k_in_use_beside_the_batch_size(tmp_path):
    text, title, note = await _panel(vllm_log(tmp_path / "sched.log", schedule=SCHEDULE, tok_s_above=400.0))
    rows = text.splitlines()
    heads = next(r for r in rows if r.lstrip().startswith(("running", "run ")))
    # four to a row: the batch size, queue, KV use, and the K the last interval drafted (1 at 6 running)
    assert heads.split()[:2] in (["running", "6"], ["run", "6"]), heads
    assert heads.split()[-2:] in (["K", "1.0"], ["steps", "1.0"]), heads
    spark = rows[rows.index(heads) + 1]
    col = len(heads) // 4
    steps = spark[3 * col:].strip()
    # K 3 for the first half, 1 for the second: high bars, then low ones, on 0..3
    assert steps and steps[0] in "▆▇█" and steps[-1] in "▁▂▃", spark
    assert "TOK/S FELL" not in title  # throughput rose with the load


async def test_an_idle_server_has_no_k_now_and_keeps_its_sparkline(tmp_path):
    text, _, _ = await _panel(vllm_log(tmp_path / "idle.log", schedule=SCHEDULE, tok_s_above=400.0, idle=True))
    rows = text.splitlines()
    heads = next(r for r in rows if r.lstrip().startswith(("running", "run ")))
    assert heads.split()[:2] == ["running", "0"] and heads.split()[-2:] == ["steps", "-"], heads
    assert rows[rows.index(heads) + 1][3 * (len(heads) // 4):].strip()[0] in "▆▇█"


@pytest.mark.parametrize("schedule", [SCHEDULE, None], ids=["schedule", "static"])
async def test_an_idle_vllm_is_still_spec_on_not_a_silent_fallback(tmp_path, schedule):
    # vLLM's last line as traffic stops has nothing running and no SpecDecoding line: it said "SPEC OFF!"
    _, title, note = await _panel(vllm_log(tmp_path / "idle.log", schedule=schedule, tok_s_above=400.0, idle=True))
    assert "SPEC ON" in title and "SPEC OFF" not in title, title
    assert "configured, yet no accept len" not in note, note


async def test_on_a_short_screen_the_table_gives_k_after_the_batch_size(tmp_path):
    text, _, note = await _panel(vllm_log(tmp_path / "sched.log", schedule=SCHEDULE, tok_s_above=400.0), (80, 24))
    head, sub, row = text.splitlines()[:3]
    assert head.split()[-3:] == ["run", "K", "queue"] or head.split()[-4:-1] == ["run", "K", "queue"], head
    cells = row.split()
    assert "1.0" in cells and cells[cells.index("1.0") - 1] == "6", row  # K 1 beside 6 running
    assert "TOK/S FELL" not in note


async def test_a_fall_of_throughput_past_the_schedule_edge_is_badged(tmp_path):
    text, title, note = await _panel(vllm_log(tmp_path / "fell.log", schedule=SCHEDULE, tok_s_above=60.0))
    assert "TOK/S FELL AT 3+" in title, title
    assert "gen tok/s 232 at 1-2 running (K 3), 60 at 3-1024 (K 1)" in note, note
    _, _, note = await _panel(vllm_log(tmp_path / "fell.log", schedule=SCHEDULE, tok_s_above=60.0), (80, 24))
    assert "TOK/S FELL AT 3+: gen tok/s 232 at 1-2 running" in note, note


async def test_a_run_that_does_not_adapt_shows_neither(tmp_path):
    """Static K=3, throughput falling with load as much: no steps column, no badge."""
    text, title, note = await _panel(vllm_log(tmp_path / "static.log", schedule=None, tok_s_above=60.0))
    heads = next(r for r in text.splitlines() if r.lstrip().startswith("running"))
    assert "steps" not in heads and " K " not in heads + " ", heads
    assert "TOK/S FELL" not in title and "gen tok/s" not in note
    text, _, note = await _panel(vllm_log(tmp_path / "static.log", schedule=None, tok_s_above=60.0), (80, 24))
    assert " K " not in text.splitlines()[0] + " " and "TOK/S FELL" not in note


def sglang_log(path: Path, *, adaptive: bool, dp_attention: bool = False) -> str:
    """An SGLang 0.5.23 run with --speculative-adaptive (or without): its settings, 30 decode lines
    two seconds apart, and its controller switching from the 3 steps it starts with to 1 after the
    tenth (the line eagle_worker_v2.py apply_runtime_state logs on TP rank 0)."""
    lines = [f"[2026-03-09 16:00:00] server_args=ServerArgs(model_path='m', tp_size=1, dp_size=1, "
             f"speculative_algorithm='EAGLE', speculative_draft_model_path='d', speculative_num_steps=3, "
             f"speculative_eagle_topk=1, speculative_num_draft_tokens=4, speculative_adaptive={adaptive}, "
             f"enable_dp_attention={dp_attention}, enable_two_batch_overlap=False)"]
    for i in range(30):
        stamp = f"2026-03-09 16:01:{2 * i:02d}"
        if i == 10 and adaptive:
            lines.append(f"[{stamp} TP0] Switch adaptive runtime state: steps 3 -> 1, draft_tokens 4 -> 2")
        lines.append(f"[{stamp} TP0] Decode batch, #running-req: {4 if i < 10 else 40}, #token: 9000, token usage: "
                     f"0.10, accept len: 2.50, accept rate: 0.50, cuda graph: True, gen throughput (token/s): "
                     f"900.00, #queue-req: 0")
    path.write_text("\n".join(lines) + "\n")
    return str(path)


async def test_sglangs_switch_lines_give_the_tier_at_each_decode_line(tmp_path):
    text, title, _ = await _panel(sglang_log(tmp_path / "adaptive.log", adaptive=True))
    rows = text.splitlines()
    heads = next(r for r in rows if r.lstrip().startswith(("running", "run ")))
    assert heads.split()[-2:] in (["K", "1.0"], ["steps", "1.0"]), heads
    col = len(heads) // 4
    steps = rows[rows.index(heads) + 1][3 * col:].strip()
    assert steps[0] == "█" and steps[-1] in "▁▂▃", steps  # 3 (the configured start) until the switch, then 1
    assert "TOK/S FELL" not in title  # SGLang's tiers have no schedule edges to badge
    # without --speculative-adaptive (no switch lines either), or asked for with DP attention (the
    # settings line says OFF: SGLang runs static steps): no steps column
    for name, kw in (("static", {"adaptive": False}), ("dpa", {"adaptive": True, "dp_attention": True})):
        text, _, _ = await _panel(sglang_log(tmp_path / f"{name}.log", **kw))
        heads = next(r for r in text.splitlines() if r.lstrip().startswith("running"))
        assert "steps" not in heads and " K " not in heads + " ", (name, heads)


def test_the_switch_line_is_an_event_with_the_steps_now():
    from mtptui.core.parse.events import classify

    assert classify("Switch adaptive runtime state: steps 3 -> 1, draft_tokens 4 -> 2") == \
        ("spec_steps", {"steps": 1, "draft_tokens": 2})
    assert classify("Built adaptive runtime state steps=3: elapsed=1.20s, mem=0.50GB") is None


async def test_sglangs_gauge_read_off_metrics_gives_the_steps_where_no_line_says_them(tmp_path):
    """A run with --speculative-adaptive whose log has no switch line (a version before them, or
    lines lost): the steps come from the server's /metrics as a record kept them (the dashboard's
    adopt_recorded, as `open` and replay hand them over), the gauge at 2 then 1."""
    import calendar
    import time

    path = tmp_path / "gauge.log"
    path.write_text("\n".join(x for x in Path(sglang_log(path, adaptive=True)).read_text().splitlines()
                              if "Switch adaptive" not in x) + "\n")
    app = make_app(str(path), window="all")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        (host,) = app.dash.store.hosts()
        t0 = calendar.timegm(time.strptime("2026-03-09 16:01:00", "%Y-%m-%d %H:%M:%S"))  # zone-less stamps: UTC

        def gauge(t, k):
            return parse(f"# TYPE sglang:spec_num_steps gauge\nsglang:spec_num_steps {k}\n", t)
        app.dash.adopt_recorded({host: [(gauge(t0 + 5 * i, 2 if i < 6 else 1), None) for i in range(12)]})
        app.screen.redraw_now()
        await pilot.pause()
        (panel,) = app.screen.query(RankPanel)
        rows = plain(panel).splitlines()
    heads = next(r for r in rows if r.lstrip().startswith(("running", "run ")))
    assert heads.split()[-2:] in (["K", "1.0"], ["steps", "1.0"]), heads
    col = len(heads) // 4
    steps = rows[rows.index(heads) + 1][3 * col:].strip()
    assert steps and steps[0] in "▅▆" and steps[-1] in "▂▃", steps  # 2 then 1, on 0..3


def test_a_switch_line_without_a_rank_goes_to_the_hosts_ranks_and_makes_none():
    from mtptui.core.records import DECODE, SGLANG, BatchStats, Event
    from mtptui.core.store import Store

    store = Store()
    switch = {"steps": 1, "draft_tokens": 2}
    store.add_event(Event("spec_steps", 5.0, "h", "Switch adaptive runtime state: ...", data=switch))
    assert store.ranks("h") == []  # no panel for it alone
    store.add_batch(BatchStats(DECODE, 10.0, "h", "TP0", SGLANG, {"running_req": 4, "gen_throughput": 900.0}))
    store.add_event(Event("spec_steps", 12.0, "h", "Switch adaptive runtime state: ...", data=switch))
    store.add_event(Event("spec_steps", 14.0, "h", "Switch adaptive runtime state: ...", rank="TP0",
                          data={"steps": 2, "draft_tokens": 3}))
    (s,) = store.ranks("h")
    assert list(s.switches) == [(12.0, 1.0), (14.0, 2.0)]
