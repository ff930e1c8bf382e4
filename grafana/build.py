"""Writes grafana/mtptui-speculation.json, the Grafana dashboard of the speculation figures that
SGLang's own dashboard lacks: `python grafana/build.py` (a test checks the JSON is what this makes).

The variable `source` chooses the metrics: SGLang's own (`sglang:*`, served with `--enable-metrics`;
a host is the target's `instance`, a rank its `tp_rank`) or those of `mtptui export` (`mtptui_*`;
a host is its `host` label, a rank its `rank`). Every panel has one query for each; each query
carries the matcher `__name__=~"$source.+"` beside its metric's name, so only the chosen source's
query returns series. The annotations (restarts, settings, trouble) come from `mtptui export`,
whatever the source: SGLang's metrics carry no events.

Standard library only; no Grafana needed to build it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).with_name("mtptui-speculation.json")
DS = {"type": "prometheus", "uid": "${datasource}"}
SOURCES = (("SGLang native (--enable-metrics)", "sglang"), ("mtptui export", "mtptui"))
HOST_LABEL = {"sglang": "instance", "mtptui": "host"}
RANK_LEGEND = {"sglang": "{{instance}} TP{{tp_rank}}", "mtptui": "{{host}} {{rank}}"}
OUTLIER_PCT = 25  # `mtptui fleet`'s default --outlier-pct ([thresholds] rank_diverge_pct)


def sel(name: str, *matchers: str, hosts: bool = True) -> str:
    """The series of `name` when `$source` is its source, of the hosts chosen by `$host`."""
    source = "sglang" if name.startswith("sglang:") else "mtptui"
    parts = [f'__name__="{name}"', '__name__=~"$source.+"']
    if hosts:
        parts.append(f'{HOST_LABEL[source]}=~"$host"')
    return "{" + ", ".join(parts + list(matchers)) + "}"


def sglang_accept_len(hosts: bool = True) -> str:
    # SGLang reports 0 without speculation (and before the first decode): no figure, not a zero.
    return f"{sel('sglang:spec_accept_length', hosts=hosts)} > 0"


def mtptui_host_accept_len(hosts: bool = True) -> str:
    return (f"avg by (host) ({sel('mtptui_spec_accept_length', hosts=hosts)}) "
            "* on (host) group_left (settings) mtptui_spec_info")


def sglang_host_accept_len(hosts: bool = True) -> str:
    return f"avg by (instance, model_name) ({sglang_accept_len(hosts)})"


NO_GRAPH, DECODES = 'mode="decode_none"', 'mode=~"decode_.*"'


def graph_passes(mode: str) -> str:
    return f"rate({sel('sglang:cuda_graph_passes_total', mode)}[$__rate_interval])"


# Each panel: title, description, unit, and per source its expression and legend.
PANELS = [
    {"title": "Accept length per rank", "unit": "none", "min": 1,
     "description": "Tokens per request-step of each rank's last decode: accepted drafts plus the bonus "
                    "token. 1 means nothing accepted (speculation useless); SGLang's 0 (no speculation) is "
                    "left out.",
     "sglang": (sglang_accept_len(), RANK_LEGEND["sglang"]),
     "mtptui": (sel("mtptui_spec_accept_length"), RANK_LEGEND["mtptui"])},
    {"title": "Accept rate per rank", "unit": "percentunit", "min": 0, "max": 1,
     "description": "Accepted drafts over proposed drafts, as the server logs it (SGLang's formula changed "
                    "in 0.5.8 and 0.5.12; vLLM: its draft acceptance rate).",
     "sglang": (f"{sel('sglang:spec_accept_rate')} and {sglang_accept_len()}", RANK_LEGEND["sglang"]),
     "mtptui": (sel("mtptui_spec_accept_ratio"), RANK_LEGEND["mtptui"])},
    {"title": "Gen throughput per host (annotated: restarts, settings, trouble)", "unit": "tok/s", "min": 0,
     "description": "Generation throughput of each host: the TP ranks of a DP group share one batch (their "
                    "mean), the DP groups add up. The annotations come from mtptui export's events.",
     "sglang": (f"sum by (instance) (avg by (instance, dp_rank) ({sel('sglang:gen_throughput')}))",
                "{{instance}}"),
     "mtptui": ('sum by (host) (avg by (host, dp) (label_replace('
                f'{sel("mtptui_gen_throughput_tokens_per_second")}, "dp", "$1", "rank", "(DP[0-9]+).*")))',
                "{{host}}")},
    {"title": "Fleet outliers: accept length / median of the hosts with the same settings", "unit": "percentunit",
     "outliers": True,
     "description": f"Each host's accept length (mean of its ranks) over the median of the fleet's hosts "
                    f"with its settings (SGLang: serving its model). Outside {100 - OUTLIER_PCT}-"
                    f"{100 + OUTLIER_PCT} %: MTP silently off, or acceptance collapsed. The median is the "
                    "whole fleet's, whatever $host shows.",
     "sglang": (f"{sglang_host_accept_len()} / on (model_name) group_left "
                f"quantile by (model_name) (0.5, {sglang_host_accept_len(hosts=False)})", "{{instance}}"),
     "mtptui": (f"{mtptui_host_accept_len()} / on (settings) group_left "
                f"quantile by (settings) (0.5, {mtptui_host_accept_len(hosts=False)})",
                "{{host}} ({{settings}})")},
    {"title": "Decode batches without CUDA graphs", "unit": "ops", "min": 0,
     "description": "Decode steps per second that ran without CUDA graphs (a slow decode: capture failed "
                    "or the batch is larger than the graphs). 0 is good. SGLang counts them from 0.5.8.",
     # A rank that never decoded without graphs has no decode_none series: 0 from its decode_cuda_graph.
     "sglang": (f"sum without (mode) ({graph_passes(NO_GRAPH)}) or 0 * sum without (mode) ({graph_passes(DECODES)})",
                RANK_LEGEND["sglang"]),
     "mtptui": (f"rate({sel('mtptui_decode_batches_without_cuda_graph_total')}[$__rate_interval])",
                RANK_LEGEND["mtptui"])},
]

ANNOTATIONS = [
    ("Restarts", "blue", 'changes(mtptui_events_total{kind="restart", host=~"$host"}[1m]) > 0',
     "{{host}} restarted"),
    # A settings series that was not there a minute ago: the server came back with other settings
    # (or the host is new to Prometheus).
    ("Settings", "purple", 'mtptui_spec_info{host=~"$host"} unless mtptui_spec_info offset 1m',
     "{{host}}: {{settings}}"),
    ("Trouble", "red", 'changes(mtptui_events_total{kind=~"oom|nccl|crash|error|watchdog", host=~"$host"}[1m]) > 0',
     "{{host}}: {{kind}}"),
]


def panel(i: int, p: dict) -> dict:
    outliers = p.get("outliers", False)
    defaults: dict = {"unit": p["unit"], "custom": {"lineWidth": 1, "fillOpacity": 0, "spanNulls": False}}
    for k in ("min", "max"):
        if k in p:
            defaults[k] = p[k]
    if outliers:
        low, high = 1 - OUTLIER_PCT / 100, 1 + OUTLIER_PCT / 100
        defaults["thresholds"] = {"mode": "absolute", "steps": [
            {"color": "red", "value": None}, {"color": "green", "value": low}, {"color": "red", "value": high}]}
        defaults["custom"]["thresholdsStyle"] = {"mode": "line+area"}
    return {
        "id": i + 1, "type": "timeseries", "title": p["title"], "description": p["description"],
        "datasource": DS,
        "gridPos": {"h": 9, "w": 12, "x": 12 * (i % 2), "y": 9 * (i // 2)} if i < 4 else
                   {"h": 9, "w": 24, "x": 0, "y": 9 * (i // 2)},
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": {"legend": {"displayMode": "table", "placement": "right", "calcs": ["lastNotNull"]},
                    "tooltip": {"mode": "multi", "sort": "desc"}},
        "targets": [{"refId": ref, "datasource": DS, "expr": p[src][0], "legendFormat": p[src][1],
                     "range": True} for ref, src in (("A", "sglang"), ("B", "mtptui"))],
    }


def annotation(name: str, color: str, expr: str, text: str) -> dict:
    return {"name": name, "datasource": DS, "enable": True, "iconColor": color, "expr": expr, "step": "15s",
            "titleFormat": name, "textFormat": text, "tagKeys": "host"}


def dashboard() -> dict:
    return {
        "uid": "mtptui-speculation", "title": "Speculative decoding (mtptui)", "tags": ["sglang", "mtptui"],
        "description": __doc__.split("\n\n")[1].replace("\n", " "),
        "schemaVersion": 39, "version": 1, "editable": True, "graphTooltip": 1, "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"}, "timezone": "",
        "annotations": {"list": [
            {"name": "Annotations & Alerts", "builtIn": 1, "type": "dashboard", "enable": True, "hide": True,
             "iconColor": "rgba(0, 211, 255, 1)", "datasource": {"type": "grafana", "uid": "-- Grafana --"}},
            *(annotation(*a) for a in ANNOTATIONS)]},
        "templating": {"list": [
            {"name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus",
             "current": {}, "hide": 0},
            {"name": "source", "label": "Metrics", "type": "custom",
             "query": ",".join(f"{text} : {value}" for text, value in SOURCES),
             "options": [{"text": text, "value": value, "selected": i == 0}
                         for i, (text, value) in enumerate(SOURCES)],
             "current": {"text": SOURCES[0][0], "value": SOURCES[0][1]}, "hide": 0},
            {"name": "host", "label": "Hosts (regex)", "type": "textbox", "query": ".*",
             "current": {"text": ".*", "value": ".*"}, "hide": 0},
        ]},
        "panels": [panel(i, p) for i, p in enumerate(PANELS)],
    }


def render() -> str:
    return json.dumps(dashboard(), indent=2) + "\n"


if __name__ == "__main__":
    OUT.write_text(render())
    sys.stdout.write(f"wrote {OUT}\n")
