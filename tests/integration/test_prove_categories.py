"""`mtptui bench --prompts FILE` against a real systemd host (the simulator as its unit): each
request's acceptance read from the server (SGLang's /generate meta_info), reported by the prompts'
category beside the log's accept len; with too few requests the table says the profiles are not
separated, and with enough it stars the winner that the simulator's model predicts for the mix
(mtptui/sim/behaviour.py: acceptance by content)."""

from __future__ import annotations

import json

import pytest
from hosts.helpers import unique_unit
from test_prove_systemd import journal_tail, mtptui, ready
from test_spec_systemd import install_unit, write_config

from mtptui.control.launch import apply_profile
from mtptui.control.profiles import BUILTINS
from mtptui.sim import behaviour
from mtptui.sim.scenario import config_from_argv

pytestmark = pytest.mark.systemd

SERVER = ["/usr/bin/python3", "-m", "mtptui.sim", "--model-path", "Qwen/Qwen3-8B", "--tp", "1",
          "--sim-load", "light", "--sim-startup-seconds", "1", "--decode-log-interval", "10"]
# mostly code, as a host serving a coding assistant would: (category, text)
TEXTS = [("code", "Write a Python function that reverses a list, with tests."),
         ("code", "Write a SQL query that counts the orders of each customer."),
         ("code", "Refactor this bash script so that it quotes every variable."),
         ("chat", "Tell me about your favourite season.")]


def predicted(argv: list[str], batch: int, drawn: dict[str, int]) -> dict[str, float]:
    """Tokens/s the model gives one request of the drawn mix (Σ tokens over Σ time, each category
    as many requests as were drawn), per profile."""
    text = {c: t for c, t in TEXTS}
    out = {}
    for name in ("off", "mtp3"):
        c = config_from_argv(apply_profile(argv, BUILTINS[name])[3:])
        q = behaviour.acceptance_chain(c.args, c.preset, c.requested_algorithm)
        step = behaviour.Timing(c.args, c.preset, graphs_broken=False).step_ms(batch)
        per_token = sum(n * step / behaviour.chain_stats(q, behaviour.content_factor(text[cat]))[0]
                        for cat, n in drawn.items())
        out[name] = 1000 * sum(drawn.values()) / per_token
    return out


def test_bench_reports_acceptance_by_category_and_stars_only_when_separated(cluster, tmp_path):
    h = cluster.hosts[1]
    unit = unique_unit("cats")
    port = install_unit(h, unit, sim=SERVER)
    cfg = write_config(tmp_path, h, unit)
    ready(h, unit)  # `off` is the unit as found: nothing restarts, so the bench measures it at once
    mine = tmp_path / "my.jsonl"
    mine.write_text("".join(json.dumps({"messages": [{"role": "user", "content": t}], "category": c}) + "\n"
                            for c, t in TEXTS))
    name = f"gpu{h.index}"
    reports = {}
    for n in (4, 32):
        out = tmp_path / f"r{n}.json"
        r = mtptui("bench", "--config", cfg, name, "--profiles", "off,mtp3", "--concurrency", "1", "--requests",
                   str(n), "--max-tokens", "48", "--yes", "--json", str(out), "--csv", str(tmp_path / f"r{n}.csv"),
                   "--prompts", str(mine), audit=tmp_path / "audit.jsonl", data=tmp_path / "data", timeout=400)
        assert r.returncode == 0, r.stdout + r.stderr + journal_tail(h, unit)
        reports[n] = (json.loads(out.read_text()), r.stdout, (tmp_path / f"r{n}.csv").read_text())
        print(f"--requests {n}:\n{r.stdout}")

    few, text, _ = reports[4]
    assert "not separated" in text and "★" not in text
    assert not few["verdicts"][0]["separated"]

    report, text, csv_text = reports[32]
    rows = {x["profile"]: x for x in report["results"]}
    off, spec = rows["off"], rows["mtp3"]
    assert off["acceptance"]["requests"] == 0 and off["acceptance"]["p50"] is None  # nothing speculated
    acc = spec["acceptance"]
    assert acc["requests"] == 32 and set(acc["by_category"]) == {"code", "chat"}
    code, chat = acc["by_category"]["code"], acc["by_category"]["chat"]
    assert code["requests"] + chat["requests"] == 32
    model = predicted(SERVER + ["--port", str(port)], 1 + behaviour.clients_target("light", 0.0, 0.0),
                      {"code": code["requests"], "chat": chat["requests"]})
    winner = max(model, key=model.get)
    print("model", model, "measured", {p: x["output_tok_s"] for p, x in rows.items()})
    # NEXTN 3 steps on Qwen3-8B: about 2.1 on chat (factor 0.85), 2.8 on code (behaviour.py); 48
    # tokens are some 20 draft chains a request, so single requests of the two overlap a little
    assert chat["p50"] < code["p10"] and chat["p90"] < code["p50"] and 1.5 < chat["p50"] < 2.5 < code["p50"] <= 4.0
    assert acc["p10"] <= acc["p50"] <= acc["p90"] and spec["accept_len"] is not None
    v = report["verdicts"][0]
    assert v["leader"] == winner and v["separated"], text
    assert f"★  {winner}" in text and "accept len per request" in text and "(log " in text
    assert "code " in text and "chat " in text and "95% interval" in text
    assert "req_accept_p50" in csv_text.splitlines()[0]
