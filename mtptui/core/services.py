"""A compose service's or a Kubernetes workload's throughput: its replicas summed.

Each replica is a host of its own (core/parse/envelope.py names a container's or a pod's lines by
it), with its own runs and settings, so a replica's throughput is its host total (compare.py: the
sum over its DP groups). The service's is the sum of its replicas' host totals, each taken in the
replica's last run that decoded (what it serves with now), and only where those runs share a span
of time (`from`: the latest of their starts, `to`: the earliest of their ends, null while every
one of them ran to the end of the input): replicas that never ran at once have no sum.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mtptui.core.compare import Comparison, EpochRow
from mtptui.core.epochs import Epoch

_NUMBER = re.compile(r"(\d+)")


def _natural(host: str) -> list:
    """`sglang-2` before `sglang-10`."""
    return [int(p) if p.isdigit() else p for p in _NUMBER.split(host)]


def _last_decoded(epochs: Iterable[Epoch]) -> tuple[Epoch, EpochRow] | None:
    """The last run that has a host total, with its row (as the epochs' table computes it)."""
    for e in reversed(list(epochs)):
        if not e.batches:
            continue  # no decode line: no host total (a crash loop's runs, looked at without a document each)
        row = Comparison().row(e.to_json(brief=True))  # its own figures: nothing before it is read
        if row.gen_total is not None:
            return e, row
    return None


def service_totals(replicas: dict[str, str], epochs: dict[str | None, list[Epoch]]) -> list[dict]:
    """The `services` of `summary --json`: each service (replicas: host -> service, the hosts a
    container's prefix named) with two replicas or more that logged a run, its replicas' last runs
    that decoded and their host totals, and its own total (null: a replica never decoded, or their
    runs never ran at once)."""
    by_service: dict[str, list[str]] = {}
    for host, service in replicas.items():
        if epochs.get(host):
            by_service.setdefault(service, []).append(host)
    out = []
    for service in sorted(by_service):
        hosts = sorted(by_service[service], key=_natural)
        if len(hosts) < 2:
            continue  # one replica: its host total is the service's, in the epochs already
        found = {host: _last_decoded(epochs[host]) for host in hosts}
        runs = [f for f in found.values() if f is not None]
        start = max((e.start for e, _ in runs), default=None)
        ends = [e.end for e, _ in runs if e.end is not None]
        end = min(ends) if ends else None
        concurrent = len(runs) == len(hosts) and (end is None or start is None or start <= end)
        out.append({
            "service": service,
            "replicas": [_replica_json(host, found[host]) for host in hosts],
            "from": start, "to": end, "concurrent": concurrent,
            "gen_throughput": sum(r.gen_total for _, r in runs if r.gen_total is not None) if concurrent else None,
            "comparable": concurrent and all(r.comparable for _, r in runs),
        })
    return out


def _replica_json(host: str, found: tuple[Epoch, EpochRow] | None) -> dict:
    if found is None:
        return {"host": host, "epoch": None, "label": None, "start": None, "end": None, "gen_throughput": None,
                "min_batches": 0}
    e, row = found
    return {"host": host, "epoch": e.index, "label": row.label, "start": e.start, "end": e.end,
            "gen_throughput": row.gen_total, "min_batches": row.min_batches}
