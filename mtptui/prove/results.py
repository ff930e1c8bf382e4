"""A benchmark's results for people and programs: per concurrency a table of profiles with the
change against `off` and the best one marked, plotext bars of output tokens/s, and the JSON and
CSV files (kept in the user's data directory, `bench/HOST-YYYYmmdd-HHMMSS.{json,csv}`)."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

COLUMNS = ("profile", "concurrency", "requests", "output_tok_s", "req_s", "ttft_p50_ms", "ttft_p99_ms",
           "itl_p50_ms", "itl_p99_ms", "errors", "accept_len", "accept_rate")
BASELINE = "off"
BEST = "★"
HEADER = ("", "profile", "tok/s", "Δ tok/s", "req/s", "TTFT p50", "p99 ms", "ITL p50", "p99 ms", "errors",
          "accept len", "rate")


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


def best(rows: list[dict]) -> str | None:
    """The profile with the most output tokens/s among those that ran without errors."""
    ok = [r for r in rows if r["output_tok_s"] is not None and not r["errors"]]
    return max(ok, key=lambda r: r["output_tok_s"])["profile"] if ok else None


def delta_pct(row: dict, rows: list[dict], key: str = "output_tok_s") -> float | None:
    """row[key] against the `off` row's, in percent; None without a baseline."""
    base = next((r for r in rows if r["profile"] == BASELINE), None)
    if base is None or row["profile"] == BASELINE or not base[key] or row[key] is None:
        return None
    return (row[key] / base[key] - 1) * 100


def _num(v, fmt: str = "{:.1f}") -> str:
    return "-" if v is None else fmt.format(v)


def table_rows(report: dict, concurrency: int) -> list[tuple[str, ...]]:
    """The cells of one concurrency's table (HEADER's columns), for the terminal and the screen."""
    rows = at(report, concurrency)
    top = best(rows)
    out: list[tuple[str, ...]] = []
    for r in rows:
        d = delta_pct(r, rows)
        out.append((BEST if r["profile"] == top else "", r["profile"], _num(r["output_tok_s"]),
                    "-" if d is None else f"{d:+.1f}%", _num(r["req_s"], "{:.2f}"), _num(r["ttft_p50_ms"], "{:.0f}"),
                    _num(r["ttft_p99_ms"], "{:.0f}"), _num(r["itl_p50_ms"]), _num(r["itl_p99_ms"]),
                    str(r["errors"]) if r["requests"] else "not run", _num(r["accept_len"], "{:.2f}"),
                    _num(r["accept_rate"], "{:.2f}")))
    return out


def table_text(report: dict) -> str:
    lines = [f"{report['host']} · {report['unit']} · started {report['started']}"]
    for c in concurrencies(report):
        rows = table_rows(report, c)
        widths = [max(len(x) for x in col) for col in zip(HEADER, *rows)]
        lines.append("")
        lines.append(f"concurrency {c}, {at(report, c)[0]['requests'] or '-'} requests"
                     + ("" if any(r["profile"] == BASELINE for r in at(report, c)) else " (no `off` profile: no deltas)"))
        for cells in (HEADER, *rows):
            lines.append("  ".join(x.ljust(w) if i < 2 else x.rjust(w) for i, (x, w) in enumerate(zip(cells, widths))).rstrip())
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
    w.writerow(("host", "unit", "started", *COLUMNS))
    for r in report["results"]:
        w.writerow((report["host"], report["unit"], report["started"],
                    *("" if r[k] is None else r[k] for k in COLUMNS)))
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
            Path(path).write_text(text, encoding="utf-8")
            written.append(Path(path))
    return written
