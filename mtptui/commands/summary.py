"""`mtptui summary`: headless statistics of saved logs."""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from typing import Any, TextIO


from mtptui.config import ranges
from mtptui.core.advisor import advise_last
from mtptui.core.compare import DELTA_MIN_BATCHES, EpochRow, bucket_cells, delta_text, iter_epoch_rows
from mtptui.core.loadmatch import CONTEXT, LOAD, Scale
from mtptui.core.nogc import without_cycle_collector
from mtptui.core.recorded import Recorded
from mtptui.core.jsontext import dumps
from mtptui.core.summary import EpochDocs
from mtptui.sources.parallel import summarise
from mtptui.core.timespec import when

EPILOG = """\
PATH is a saved log: a journalctl export in any short mode or json (-o json), a raw server log,
a .gz of either, or - for standard input. Times without a zone are read as UTC.

WHEN is a span back from now (10min, 2h, 1h 30min: the spans `live --since` takes), now, today,
yesterday, a time (2026-03-09 16:00, 16:00, ISO 8601; UTC unless it gives its zone), @EPOCH or
epoch seconds.

exit codes:
  0  summary printed (also for an empty input)
  1  an input could not be read (missing, a directory, binary, its times running backwards): one
     line on stderr (a gzip cut short is read as far as it goes, its missing end counted)
  2  bad arguments
Limits (a line's length and time, values no server prints): docs/limits.md
"""


def parse_time(s: str) -> float:
    """`--since`/`--until`: the words `live --since` takes, read as mtptui.core.timespec says."""
    try:
        return when(s, time.time())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a time: {s!r} (10min, 2h, today, 2026-03-09 16:00 ...: "
                                         "see --help)") from None


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mtptui summary", description=__doc__, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--since", type=parse_time, metavar="WHEN", help="only records at or after WHEN")
    p.add_argument("--until", type=parse_time, metavar="WHEN", help="only records at or before WHEN")
    p.add_argument("--jobs", type=ranges.JOBS, default=None, metavar="N",
                   help="worker processes for big plain files (default: one per core)")
    return p


def fmt_time(ts: float | None) -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _num(s: dict | None, key: str, width: int, prec: int) -> str:
    if s is None:
        return "-".rjust(width)
    return f"{s[key]:{width}.{prec}f}"


def render_table(doc: dict) -> str:
    return "\n".join(table_lines(doc))


def table_lines(doc: dict) -> Iterator[str]:
    """The table, a line at a time (doc["events"] may be an EventLog of millions)."""
    # ranks are shown whole: Ray engines' labels (`pid=111711@10.15.36.1 TP0`) differ at the end
    rw = max([14] + [len(s["rank"]) for s in doc["series"]])
    hdr = (f"{'host':<14} {'rank':<{rw}} {'engine':<6} {'decode':>7} {'graph':>5} "
           f"{'acc len':>7} {'p50':>5} {'min':>5} {'acc rate':>8} {'gen tok/s':>10} {'p50':>9} "
           f"{'run':>5} {'queue':>5} {'prefill':>7}")
    yield hdr
    yield "-" * len(hdr)
    for s in doc["series"]:
        d = s["decode"]
        yield (f"{(s['host'] or '-'):<14.14} {(s['rank'] or '-'):<{rw}} {s['engine']:<6} {d['batches']:>7} "
               f"{'off' if d['graph_off'] else 'on' if d['graph_on'] else '-':>5} "
               f"{_num(d['accept_len'], 'mean', 7, 2)} {_num(d['accept_len'], 'p50', 5, 2)} "
               f"{_num(d['accept_len'], 'min', 5, 2)} {_num(d['accept_rate'], 'mean', 8, 2)} "
               f"{_num(d['gen_throughput'], 'mean', 10, 1)} {_num(d['gen_throughput'], 'p50', 9, 1)} "
               f"{_num(d['running_req'], 'mean', 5, 1)} {_num(d['queue_req'], 'mean', 5, 1)} "
               f"{s['prefill']['batches']:>7}")
        if d["batches"] and d["accept_len"] is None:
            yield f"{'':<14} {'':<{rw}} speculation OFF: decode lines carry no accept len"
        elif d["graph_off"]:
            yield f"{'':<14} {'':<{rw}} {d['graph_off']} decode batches ran without graphs"
        yield f"{'':<14} {'':<{rw}} {fmt_time(s['first'])} .. {fmt_time(s['last'])}"
    if not doc["series"]:
        yield "(no batch lines)"
    if doc["events"]:
        yield ""
        yield "events:"
        for e in doc["events"]:
            text = e["text"] if len(e["text"]) <= 100 else e["text"][:97] + "..."
            yield f"  {fmt_time(e['ts'])}  {(e['host'] or '-'):<12.12} {e['kind']:<12} {text}"
    yield from _runs_lines(doc["epochs"], doc.get("crash_loops", []))
    yield from service_lines(doc.get("services", []))
    yield from advice_lines(resolved(doc.get("advice", [])))
    yield from latency_lines(doc.get("latency", []))
    yield from gpu_lines(doc.get("gpus", []))
    ln = doc["lines"]
    yield ""
    yield (f"lines: {ln['read']} read, {ln['batch']} batch, {ln['event']} event, "
           f"{ln['unparsed']} unparsed, {ln['dropped']} dropped, {ln['malformed']} malformed")
    for reason, n in ln["drop_reasons"].items():
        yield f"  dropped {n}: {reason}"
    for host, off in ln.get("clock_offsets", {}).items():
        h, m = divmod(round(abs(off)) // 60, 60)
        yield (f"  {host}: the server's stamps are {h}h{m:02d} {'ahead of' if off > 0 else 'behind'} the "
               "journal's; read on the journal's clock")


def resolved(value: Any) -> Any:
    """A document's value, or what it gives when it is judged on being reached (a callable)."""
    return value() if callable(value) else value


WRITE_BYTES = 1 << 20


def write_json(doc: dict, out: TextIO) -> None:
    """Writes doc as JSON (orjson), with the events and the epochs written one by one as their
    EventLog and EpochDocs make them (doc from Summary.document()), and a value judged on being
    reached (resolved()) when it is. Bytes go to out's buffer where it has one, a megabyte at a
    time: 10,000 runs' 40 MB went to a pipe in 50,000 writes of 8 KB, at 0.1 s to each side."""
    binary = getattr(out, "buffer", None)
    if binary is not None:
        out.flush()
        send = binary.write
    else:
        def send(b: bytes) -> None:
            out.write(b.decode())
    pending = bytearray()

    def write(b: bytes) -> None:
        pending.extend(b)
        if len(pending) >= WRITE_BYTES:
            send(pending)
            pending.clear()

    for i, (key, value) in enumerate(doc.items()):
        write((b"{" if not i else b",") + dumps(key) + b":")
        value = resolved(value)
        texts = getattr(value, "json_texts", None)  # the events (EventLog), the epochs (EpochDocs)
        if texts is None:
            write(dumps(value))
            continue
        write(b"[")
        for j, text in enumerate(texts()):
            if j:
                write(b",")
            write(text)
        write(b"]")
    write(b"}\n")
    send(pending)
    if binary is not None:
        binary.flush()


class _Ending:
    """How each run ended, a line each, a crash loop as one line with its count (epochs.crash_loops)."""

    def __init__(self, loops: list[dict]) -> None:
        self.looped = {(lp["host"], lp["first"]): lp for lp in loops}
        self.skip_to: dict = {}  # host -> the last index of the loop being skipped

    def line(self, e: dict) -> str | None:
        host, i = e["host"], e["index"]
        if i <= self.skip_to.get(host, -1):
            return None
        lp = self.looped.get((host, i))
        if lp is not None:
            self.skip_to[host] = lp["last"]
            runs = f"{lp['first'] + 1}-{lp['last'] + 1}"
            text = lp["text"] + (", each restarted by systemd" if lp.get("restarted_by") else "")
        else:
            runs = str(i + 1)
            text = (e.get("ended") or {}).get("text", "")
        if len(text) > 110:
            text = text[:107] + "..."
        return f"  {(host or '-'):<12.12} {runs:>5} {fmt_time(e['start']):<19} {text}"


SPOOL_BYTES = 1 << 20


class _Spool:
    """Lines written now and read back later, in memory up to a megabyte, then on disk: a table's
    later sections while the first is printed from the same pass over 10,000 runs."""

    def __init__(self) -> None:
        self.file = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES, mode="w+", encoding="utf-8")
        self.empty = True

    def __enter__(self) -> _Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.file.close()

    def write(self, line: str) -> None:
        self.file.write(line + "\n")
        self.empty = False

    def lines(self) -> Iterator[str]:
        self.file.seek(0)
        return (line[:-1] for line in self.file)


def _compared(epochs: Iterable[dict]) -> Iterator[tuple[dict, EpochRow]]:
    """Each epoch with its row: an EpochDocs' (EpochDocs.rows), a list of documents
    (summary.to_json's) compared as they are."""
    return epochs.rows() if isinstance(epochs, EpochDocs) else iter_epoch_rows(epochs)


# The runs' sections of the table, each written in one pass over the runs, in this order
SECTIONS = ("epochs", "load", "context", "paying", "ended")


def _fill(pairs: Iterable[tuple[dict, EpochRow]], ending: _Ending, out: dict[str, _Spool], shown: bool) -> None:
    """The runs' lines of each section (SECTIONS) from their rows."""
    for e, r in pairs:
        line = ending.line(e)
        if line is not None:
            out["ended"].write(line)
        if not shown:
            continue
        al, gen = r.accept_len, r.gen_total
        out["epochs"].write(f"  {(r.host or '-'):<12.12} {r.index + 1:>2} {fmt_time(r.start):<19} {r.label:<28.28} "
                            f"{r.decode_batches:>7} {'-' if al is None else f'{al:.2f}':>7} "
                            f"{'-' if gen is None else f'{gen:.1f}':>10} {delta_text(r, r.vs_previous):>7} "
                            f"{delta_text(r, r.vs_baseline, baseline=True):>11}")
        _bucket_lines(r, LOAD, out["load"])
        _bucket_lines(r, CONTEXT, out["context"], below=True)  # where speculation runs slower than without it
        if r.stops_paying_from is not None:
            out["paying"].write(f"  {(r.host or '-')} epoch {r.index + 1} ({r.label}): speculation stops paying "
                                f"from {r.stops_paying_from} tokens per request")


def _shown(epochs: Iterable[dict]) -> bool:
    """Whether the epochs' sections are shown: some host ran more than once."""
    hosts = epochs.hosts() if isinstance(epochs, EpochDocs) else Counter(e["host"] for e in epochs)
    return any(n > 1 for n in hosts.values())


def _runs_lines(epochs: Iterable[dict], loops: list[dict]) -> Iterator[str]:
    """The epochs' sections (runs between restarts with their settings, the host's throughput
    summed over DP groups and its change against the run before and against the last run without
    speculation; then their buckets of load and of context), and how each run ended: from one pass
    over the epochs, compared, none of them held (the sections wait in spools)."""
    shown = _shown(epochs)
    with contextlib.ExitStack() as stack:
        out = {name: stack.enter_context(_Spool()) for name in SECTIONS}
        _fill(_compared(epochs), _Ending(loops), out, shown)
        if shown:
            yield from ["", "epochs (runs between restarts; host tok/s: summed over DP groups; "
                            f"changes need {DELTA_MIN_BATCHES} decode lines a DP group):",
                        f"  {'host':<12} {'#':>2} {'from':<19} {'settings':<28} {'decode':>7} {'acc len':>7} "
                        f"{'host tok/s':>10} {'vs prev':>7} {'vs spec off':>11}"]
            yield from out["epochs"].lines()
            yield from _bucket_head(LOAD, "epochs at the same load (decode lines by #running-req; tok/s: gen "
                                          f"throughput of a line; changes need {DELTA_MIN_BATCHES} lines in the "
                                          "bucket in both epochs):")
            yield from out["load"].lines()
            if not out["context"].empty:
                yield from _bucket_head(CONTEXT, "epochs by context (decode lines by tokens in use per running "
                                                 "request; `below`: speculation slower there than the last run "
                                                 "without it):")
                yield from out["context"].lines()
                yield from out["paying"].lines()
        if not out["ended"].empty:
            yield from ["", "runs (how each ended):"]
            yield from out["ended"].lines()


def _bucket_head(scale: Scale, title: str) -> list[str]:
    return ["", title, f"  {'host':<12} {'#':>2} {scale.name:>7} {'decode':>7} {'acc len':>7} {'tok/s':>10} "
                       f"{'vs prev':>7} {'vs spec off':>11}"]


def _bucket_lines(r: EpochRow, scale: Scale, out: _Spool, *, below: bool = False) -> None:
    """An epoch's buckets of one scale (loadmatch.py); below: the buckets where speculation runs
    slower than the last run without it marked `below`."""
    for b in r.matched.get(scale.json_key, ()):
        label, decode, al, gen, prev, base = bucket_cells(b)
        out.write(f"  {(r.host or '-'):<12.12} {r.index + 1:>2} {label:>7} {decode:>7} {al:>7} {gen:>10} "
                  f"{prev:>7} {base:>11}{'  below' if below and b.below_baseline else ''}")


def service_lines(services: list[dict]) -> list[str]:
    """A line per compose service or workload of two replicas or more (core/services.py): its
    throughput, its replicas' own, and since when they all ran so."""
    if not services:
        return []
    out = ["", "services (replicas, each a host of its own; tok/s: each replica's host tok/s in its last run "
               "that decoded, summed):",
           f"  {'service':<12} {'replicas':>8} {'since':<19} {'tok/s':>10}  replicas' tok/s"]
    for sv in services:
        gen = sv["gen_throughput"]
        parts = [f"{r['host']} {'-' if r['gen_throughput'] is None else format(r['gen_throughput'], '.1f')}"
                 for r in sv["replicas"]]
        why = "" if sv["concurrent"] else "  (no span when all of them ran)"
        if gen is not None and not sv["comparable"]:
            why = f"  (n<{DELTA_MIN_BATCHES} in a DP group)"
        out.append(f"  {sv['service']:<12.12} {len(sv['replicas']):>8} {fmt_time(sv['from']):<19} "
                   f"{'-' if gen is None else f'{gen:.1f}':>10}  {' + '.join(parts)}{why}")
    return out


def latency_lines(rows: list[dict]) -> list[str]:
    """The latency section of the table: per epoch each figure's p50/p90/p99."""
    from mtptui.core.latency import FIGURES, LABELS, ms

    if not rows:
        return []
    out = ["", "server latency per epoch (from the /metrics scrapes recorded; p50 / p90 / p99):"]
    for r in rows:
        parts = [f"{LABELS[f]} {' / '.join(ms(r[f][q]) for q in ('p50', 'p90', 'p99'))}"
                 for f in FIGURES if r.get(f)]
        out.append(f"  {(r['host'] or '-'):<12.12} #{r['epoch'] + 1:<3} " + "  ".join(parts))
    return out


def latency_section(rec: Recorded, epochs: list[dict]) -> list[dict]:
    """Each epoch's server latency from the scrapes recorded beside its lines (a record made with
    /metrics read): the same figures the dashboard showed for it (core/latency.by_epoch)."""
    from mtptui.core import latency

    out = []
    for host, got in rec.scrapes.items():
        mine = [e for e in epochs if e["host"] == host]
        figs = latency.by_epoch(sorted(got, key=lambda x: x[0].t), [e["start"] for e in mine])
        for e in mine:
            if e["start"] in figs:
                out.append({"host": host, "epoch": e["index"], **(latency.brief(figs[e["start"]]) or {})})
    return out


def gpu_lines(rows: list[dict]) -> list[str]:
    """The GPU section of the table: per epoch the GPUs' mean use and power, and energy per token."""
    if not rows:
        return []
    out = ["", "GPUs per epoch (from the nvidia-smi samples recorded):"]
    for r in rows:
        util = "-" if r["util_mean"] is None else f"{r['util_mean']:.0f}%"
        power = "-" if r["power_mean_w"] is None else f"{r['power_mean_w']:.0f} W"
        jpt = "-" if r["joules_per_token"] is None else f"{r['joules_per_token']:.3g} J/token"
        out.append(f"  {(r['host'] or '-'):<12.12} #{r['epoch'] + 1:<3} {r['gpus']} GPU{'s' if r['gpus'] != 1 else ''}"
                   f"  util {util}  power {power}  {jpt}")
    return out


def gpu_section(rec: Recorded, epochs: list[dict]) -> list[dict]:
    """Each epoch's GPUs from the samples recorded beside its lines (core/gpus.epoch_gpus)."""
    from mtptui.core.gpus import epoch_gpus

    out: list[dict] = []
    if not rec.gpus:
        return out  # none recorded: the epochs (10,000 runs) are not made again to find none
    for e in epochs:
        mine = rec.gpus.get(e["host"])
        if not mine:
            continue
        row = epoch_gpus(sorted(mine, key=lambda s: s.t), e["start"], e.get("end"),
                         (e.get("host_totals") or {}).get("gen_throughput"))
        if row is not None:
            out.append({"host": e["host"], "epoch": e["index"], **row})
    return out


def _step_name(spec: dict, delta: int) -> str | None:
    from mtptui.control.profiles import ProfileError, step
    from mtptui.core.advisor import launch_settings

    try:
        return step(launch_settings(spec), delta).name
    except ProfileError:
        return None


def advice_lines(advice: list[dict]) -> list[str]:
    """What the advisor says to try (core/advisor.py), each host's last epoch whole."""
    if not advice:
        return []
    out = ["", "advice (each host's last epoch, whole):"]
    for a in advice:
        how = f"`{a['keys'].split(',')[0]}` ({a['key']}) tries {a['tries']}" if a["key"] else a["tries"]
        out += [f"  {(a['host'] or '-'):<12.12} {a['title']}", f"  {'':<12} {a['evidence']}", f"  {'':<12} {how}"]
    return out


def main(argv: list[str]) -> int:
    args = build_parser().parse_intermixed_args(argv)  # options may come between the positionals
    # the cycle collector off throughout, as the read has it: what the command makes is freed by
    # reference counting (tests/unit/test_many_runs), and the collector's passes over 10,000 runs'
    # objects once the read is done, some 200,000 of them, found nothing and took 30 ms
    with without_cycle_collector():
        return _summary(args)


def _summary(args: argparse.Namespace) -> int:
    if args.since is not None and args.until is not None and args.since > args.until:
        from mtptui.errors import UsageError

        raise UsageError("--since is after --until: no record could be in between")
    summary, counts = summarise(args.paths, args.since, args.until, args.jobs)
    doc = summary.document(counts.to_json(), replicas=counts.replicas)
    seen: dict = {}
    for s in doc["series"]:
        if s["last"] is not None:
            seen[s["host"]] = max(s["last"], seen.get(s["host"], s["last"]))
    epochs, series, gpus_seen = doc["epochs"], doc["series"], summary.recorded.gpus
    # judged when it is reached, after the epochs (its place in the document): from the pass that
    # wrote or showed them, not from another over 10,000 runs. It holds neither doc nor summary:
    # a cycle through them would leave 10,000 runs to the cycle collector at exit (0.2 s).
    doc["advice"] = lambda: [a.to_json() for a in advise_last(epochs.last_rows(), seen, step_name=_step_name,
                                                              series=series, gpus=gpus_seen)]
    lat = latency_section(summary.recorded, doc["epochs"])
    if lat:
        doc["latency"] = lat
    gpus = gpu_section(summary.recorded, doc["epochs"])
    if gpus:
        doc["gpus"] = gpus
    if args.json:
        write_json(doc, sys.stdout)
    else:
        from mtptui.printable import printable  # a host, a label, an event's text: as the log had them

        for line in table_lines(doc):
            print(printable(line, newlines=True))
    return 0
