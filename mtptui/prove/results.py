"""A benchmark's results for people and programs: per concurrency a table of profiles with the
change against `off` and its interval, the best one marked only where it is separated from the
runner-up, plotext bars of output tokens/s, and the JSON and CSV files (kept in the user's data
directory, `bench/HOST-YYYYmmdd-HHMMSS.{json,csv}`).

How sure a change is: each row keeps its requests' output tokens and times (`per_request`); the
ratio of two rows' Σ tokens / Σ request time is bootstrapped over their requests (2000 resamples,
seed 0: core.stats.ratio_interval), and the 95% interval's ends, relative to that ratio, are put
around the measured change in output tokens/s. The leader is separated from the runner-up when
the interval of its change against the runner-up lies wholly above 0; otherwise the requests it
would take are estimated from the interval's width, which narrows as 1/√n (stats.requests_needed).

Acceptance per request: a row measured where the server reports it (prove/load.py) keeps
`acceptance` (JSON): p10/p50/p90 of its requests' accept lengths and the same by the prompts'
category; the table prints it under each concurrency beside the log's accept len (the batch
lines' average over the same time), and the CSV carries its p10/p50/p90."""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path

from mtptui.core import stats
from mtptui.files import write_replacing

COLUMNS = ("profile", "concurrency", "requests", "output_tok_s", "change_pct", "change_lo_pct", "change_hi_pct",
           "req_s", "ttft_p50_ms", "ttft_p99_ms", "ttft_max_ms", "itl_p50_ms", "itl_p99_ms", "itl_max_ms", "errors",
           "accept_len", "accept_rate")
MEASURED = "per_request"  # a row's requests (JSON only): {"tokens": [...], "seconds": [...]}
ACCEPTANCE = "acceptance"  # a row's per-request acceptance (load.acceptance), where reported
CSV_ACCEPTANCE = ("req_accept_p10", "req_accept_p50", "req_accept_p90")
BASELINE = "off"
BEST = "★"
HEADER = ("", "profile", "tok/s", "Δ tok/s", "95% interval", "req/s", "TTFT p50", "p99", "max ms", "ITL p50",
          "p99", "max ms", "errors", "accept len", "rate")


def data_dir() -> Path:
    try:
        from platformdirs import user_data_dir
    except ImportError:  # a bare python3 on a GPU host
        base = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
        return Path(base) / "mtptui" / "bench"
    return Path(user_data_dir("mtptui", appauthor=False)) / "bench"


def concurrencies(report: dict) -> list[int]:
    return sorted({r["concurrency"] for r in report["results"]})


def at(report: dict, concurrency: int) -> list[dict]:
    return [r for r in report["results"] if r["concurrency"] == concurrency]


def _pairs(row: dict) -> list[tuple[float, float]]:
    m = row.get(MEASURED) or {}
    return list(zip(m.get("tokens") or (), m.get("seconds") or ()))


def change(row: dict, other: dict) -> tuple[float, float | None, float | None] | None:
    """row's output tokens/s against other's, in percent, with its 95% interval (the bootstrap's
    spread of the two rows' requests around the measured change); the interval's ends are None
    where either row has fewer than stats.MIN_REQUESTS requests kept."""
    a, b = row.get("output_tok_s"), other.get("output_tok_s")
    if not a or not b:
        return None
    ratio = a / b
    lo = hi = None
    pa, pb = _pairs(row), _pairs(other)
    ci = stats.ratio_interval(pa, pb)
    ra, rb = stats.rate(pa), stats.rate(pb)
    if ci and ra and rb:
        point = ra / rb  # the bootstrap's own statistic, as measured
        lo, hi = ratio * ci[0] / point, ratio * ci[1] / point
    return (ratio - 1) * 100, None if lo is None else (lo - 1) * 100, None if hi is None else (hi - 1) * 100


def verdict(rows: list[dict]) -> dict | None:
    """Among the rows that ran without errors, the leader in output tokens/s against the
    runner-up: the change and its interval, whether they are separated (the interval above 0),
    and where not, about how many more requests of each would be needed (None: no difference
    measured). None with fewer than two such rows."""
    ok = sorted((r for r in rows if r.get("output_tok_s") is not None and not r["errors"] and r["requests"]),
                key=lambda r: -r["output_tok_s"])
    if len(ok) < 2:
        return None
    top, runner = ok[0], ok[1]
    c = change(top, runner)
    assert c is not None
    pct, lo, hi = c
    separated = lo is not None and lo > 0
    more = None
    if not separated and lo is not None:
        n = min(len(_pairs(top)), len(_pairs(runner)))
        need = stats.requests_needed(n, 1 + pct / 100, 1 + lo / 100)
        more = None if need is None else max(1, need - n)
    return {"concurrency": top["concurrency"], "leader": top["profile"], "runner_up": runner["profile"],
            "change_pct": _round(pct), "change_lo_pct": _round(lo), "change_hi_pct": _round(hi),
            "separated": separated, "more_requests": more}


def best(rows: list[dict]) -> str | None:
    """The profile with the most output tokens/s among those that ran without errors, where its
    interval against the runner-up clears it; None where they are not separated."""
    v = verdict(rows)
    return v["leader"] if v and v["separated"] else None


def delta_pct(row: dict, rows: list[dict], key: str = "output_tok_s") -> float | None:
    """row[key] against the `off` row's, in percent; None without a baseline."""
    base = next((r for r in rows if r["profile"] == BASELINE), None)
    if base is None or row["profile"] == BASELINE or not base[key] or row[key] is None:
        return None
    return (row[key] / base[key] - 1) * 100


def with_intervals(results: list[dict]) -> list[dict]:
    """The rows with their change against `off` at their concurrency and its interval
    (change_pct, change_lo_pct, change_hi_pct; None for `off` itself or without it)."""
    out = []
    for r in results:
        base = next((b for b in results if b["profile"] == BASELINE and b["concurrency"] == r["concurrency"]), None)
        c = change(r, base) if base is not None and r["profile"] != BASELINE else None
        pct, lo, hi = c if c else (None, None, None)
        out.append({**r, "change_pct": _round(pct), "change_lo_pct": _round(lo), "change_hi_pct": _round(hi)})
    return out


def verdicts(report: dict) -> list[dict]:
    return [v for c in concurrencies(report) if (v := verdict(at(report, c))) is not None]


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 2) if abs(v) >= 0.1 or v == 0 else float(f"{v:.2g}")


def _fixed(v: float, decimals: int) -> str:
    """v to `decimals` places, or where that would hide it (under 0.1), to 2 significant digits."""
    if v != 0 and abs(v) < 0.1:
        decimals = max(decimals, 1 - math.floor(math.log10(abs(v))))
    return f"{v:.{decimals}f}"


def _num(v, fmt: str = "{:.1f}") -> str:
    if v is None:
        return "-"
    decimals = int(fmt[3:-2]) if fmt.startswith("{:.") else 1
    return _fixed(v, decimals)


def _pct(v: float | None) -> str:
    return "-" if v is None else ("+" if v >= 0 else "") + _fixed(v, 1) + "%"


def _interval(lo: float | None, hi: float | None) -> str:
    return "-" if lo is None or hi is None else f"{_pct(lo)} to {_pct(hi)}"


def verdict_line(v: dict | None) -> str:
    """What the table says of its leader: `★ mtp3 ahead of mtp1: +5.2% (+2.1% to +8.3%)`, or not
    separated, and about how many more requests would be needed."""
    if v is None:
        return "fewer than two profiles without errors: nothing to compare"
    head = (f"{v['leader']} ahead of {v['runner_up']}: {_pct(v['change_pct'])} "
            f"({_interval(v['change_lo_pct'], v['change_hi_pct'])}, 95%)")
    if v["separated"]:
        return f"{BEST} {head}"
    if v["change_lo_pct"] is None:
        return (f"not separated: {v['leader']} ahead of {v['runner_up']}: {_pct(v['change_pct'])}, but too few "
                f"requests for an interval ({stats.MIN_REQUESTS} or more each)")
    if v["more_requests"] is None:
        return f"not separated: {v['leader']} and {v['runner_up']} measured the same"
    return (f"not separated: {head}; about {v['more_requests']} more requests of each would be needed "
            "(if the gap holds: the interval narrows as 1/√requests)")


def table_rows(report: dict, concurrency: int) -> list[tuple[str, ...]]:
    """The cells of one concurrency's table (HEADER's columns), for the terminal and the screen."""
    rows = at(report, concurrency)
    top = best(rows)
    out: list[tuple[str, ...]] = []
    for r in with_intervals(rows):
        out.append((BEST if r["profile"] == top else "", r["profile"], _num(r["output_tok_s"]),
                    _pct(r["change_pct"]), _interval(r["change_lo_pct"], r["change_hi_pct"]) if r["change_pct"] is not None
                    else "-", _num(r["req_s"], "{:.2f}"), _num(r["ttft_p50_ms"], "{:.0f}"),
                    _num(r["ttft_p99_ms"], "{:.0f}"), _num(r.get("ttft_max_ms"), "{:.0f}"), _num(r["itl_p50_ms"]),
                    _num(r["itl_p99_ms"]), _num(r.get("itl_max_ms")),
                    str(r["errors"]) if r["requests"] else "not run", _num(r["accept_len"], "{:.2f}"),
                    _num(r["accept_rate"], "{:.2f}")))
    return out


def acceptance_lines(rows: list[dict]) -> list[str]:
    """Per-request acceptance of each row that has it: `mtp3  p10 2.10  p50 2.75  p90 3.20  (log
    2.61)  code 2.98 (8)  chat 1.51 (8)  context <4k 2.80 (12)  4-16k 2.31 (4)`, the categories' and
    the context buckets' p50 and request counts; [] where no row has any."""
    have = [r for r in rows if (r.get(ACCEPTANCE) or {}).get("requests")]
    if not have:
        return []
    width = max(len(r["profile"]) for r in have)
    out = ["accept len per request (the server's count; log: the batch lines' average):"]
    for r in have:
        a = r[ACCEPTANCE]
        cats = "  ".join(f"{c} {_num(d['p50'], '{:.2f}')} ({d['requests']})" for c, d in a["by_category"].items())
        ctx = "  ".join(f"{c} {_num(d['p50'], '{:.2f}')} ({d['requests']})" for c, d in (a.get("by_context") or {}).items())
        out.append(f"  {r['profile'].ljust(width)}  p10 {_num(a['p10'], '{:.2f}')}  p50 {_num(a['p50'], '{:.2f}')}  "
                   f"p90 {_num(a['p90'], '{:.2f}')}  (log {_num(r.get('accept_len'), '{:.2f}')})  {cats}"
                   f"{'  context ' + ctx if ctx else ''}".rstrip())
        out += _flag_lines(a, width)
    return out


def _flag_lines(a: dict, width: int) -> list[str]:
    """The requests whose drafts were nearly never or nearly always accepted (load.acceptance)."""
    out = []
    for key, what in (("near_0", "drafts nearly never accepted (garbled output?)"),
                      ("near_1", "drafts nearly always accepted (a repetition loop?)")):
        got = a.get(key) or []
        if got:
            cats = sorted({str(g["category"] or "-") for g in got})
            out.append(f"  {'':{width}}  ! {len(got)} request{'s' if len(got) != 1 else ''} with {what}: "
                       f"{', '.join(cats)}")
    return out


def table_text(report: dict) -> str:
    lines = [f"{report['host']} · {report['unit']} · started {report['started']}"]
    for c in concurrencies(report):
        rows = table_rows(report, c)
        widths = [max(len(x) for x in col) for col in zip(HEADER, *rows)]
        lines.append("")
        # the rows' requests: a profile that failed and was rolled back has none, the others theirs
        lines.append(f"concurrency {c}, {max(r['requests'] for r in at(report, c)) or '-'} requests"
                     + ("" if any(r["profile"] == BASELINE for r in at(report, c)) else " (no `off` profile: no deltas)"))
        for cells in (HEADER, *rows):
            lines.append("  ".join(x.ljust(w) if i < 2 else x.rjust(w) for i, (x, w) in enumerate(zip(cells, widths))).rstrip())
        lines.append(verdict_line(verdict(at(report, c))))
        lines += acceptance_lines(at(report, c))
    lines.append("")
    lines.append(f"restored: {'yes' if report['restored'] else 'NO'}")
    return "\n".join(lines)


def bars(report: dict, width: int = 70, color: bool = False) -> str:
    """plotext bars of output tokens/s, one chart per concurrency, the best profile marked."""
    import plotext as plt

    out = []
    for c in concurrencies(report):
        rows = [r for r in at(report, c) if r["output_tok_s"] is not None]
        if not rows:
            continue
        top = best(rows)
        plt.clear_figure()
        plt.bar([f"{r['profile']} {BEST}" if r["profile"] == top else r["profile"] for r in rows],
                [r["output_tok_s"] for r in rows], orientation="horizontal", width=0.4)
        plt.plotsize(width, 4 + 2 * len(rows))
        plt.title(f"concurrency {c}: output tokens/s")
        if not color:
            plt.theme("clear")
        text = plt.build()
        out.append(text if color else plt.uncolorize(text))
    plt.clear_figure()
    return "\n".join(out)


def to_csv(report: dict) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(("host", "unit", "started", *COLUMNS, *CSV_ACCEPTANCE))
    for r in with_intervals(report["results"]):
        a = r.get(ACCEPTANCE) or {}
        w.writerow((report["host"], report["unit"], report["started"],
                    *("" if r.get(k) is None else r[k] for k in COLUMNS),
                    *("" if a.get(k) is None else a[k] for k in ("p10", "p50", "p90"))))
    return buf.getvalue()


def save(report: dict, json_path: str | None = None, csv_path: str | None = None) -> list[Path]:
    """Writes the JSON and CSV to the data directory, and to the paths asked for; the paths
    written. Raises OSError."""
    d = data_dir()
    d.mkdir(parents=True, exist_ok=True)
    stamp = report["started"].replace("-", "").replace(":", "").replace("T", "-").rstrip("Z")
    name = f"{report['host']}-{stamp}".replace("/", "_")
    text_json = json.dumps(report, indent=2) + "\n"
    text_csv = to_csv(report)
    written = []
    for path, text in ((d / f"{name}.json", text_json), (d / f"{name}.csv", text_csv),
                       (json_path, text_json), (csv_path, text_csv)):
        if path:
            write_replacing(path, text)  # never a device, a FIFO or a link's place; mode and owner kept
            written.append(Path(path))
    return written
