"""The shipped Grafana dashboard: the JSON is what grafana/build.py makes, and its queries keep to
the rules that make the `source` variable work (tests/integration/test_grafana_prometheus.py runs
them against a real Prometheus)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

GRAFANA = Path(__file__).resolve().parents[2] / "grafana"


def load_build():
    spec = importlib.util.spec_from_file_location("grafana_build", GRAFANA / "build.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def dashboard() -> dict:
    return json.loads((GRAFANA / "mtptui-speculation.json").read_text())


def test_the_json_is_what_build_makes():
    assert (GRAFANA / "mtptui-speculation.json").read_text() == load_build().render(), \
        "run: python grafana/build.py"


def test_every_query_reads_the_datasource_variable():
    d = dashboard()
    assert [v["name"] for v in d["templating"]["list"]] == ["datasource", "source", "host"]
    assert [o["value"] for o in d["templating"]["list"][1]["options"]] == ["sglang", "mtptui"]
    queries = [t for p in d["panels"] for t in p["targets"]] + d["annotations"]["list"][1:]
    assert queries and all(q["datasource"] == {"type": "prometheus", "uid": "${datasource}"} for q in queries)
    assert all(p["datasource"]["uid"] == "${datasource}" for p in d["panels"])


def test_each_panel_has_one_query_per_source_each_gated_by_it():
    names = re.compile(r'__name__="([^"]+)"')
    for p in dashboard()["panels"]:
        sglang, mtptui = p["targets"]
        for target, prefix in ((sglang, "sglang:"), (mtptui, "mtptui_")):
            found = names.findall(target["expr"])
            assert found and all(n.startswith(prefix) for n in found), (p["title"], target["expr"])
            # every selector of a source's metric is gated, so the other source's query is empty
            assert target["expr"].count('__name__=~"$source.+"') == len(found), target["expr"]


def test_panels_do_not_overlap():
    cells = set()
    for p in dashboard()["panels"]:
        g = p["gridPos"]
        mine = {(x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])}
        assert not cells & mine, p["title"]
        assert g["x"] + g["w"] <= 24
        cells |= mine
