"""A container's envelopes in full (issue 43): the same server lines, raw, in journald's json, Docker's
json-file, `docker logs -t`, `docker compose logs` with and without `-t`, CRI, and `kubectl logs
--timestamps` (with and without `--prefix`), give the same events, epochs and runs in `summary
--json`, apart from the host the envelope names; two replicas of one compose service, their lines
interleaved, are two engines with their own epochs."""

from __future__ import annotations

import json

import pytest

from mtptui.core.ingest import Ingest
from mtptui.core.parse import LineParser
from mtptui.core.parse.envelope import service_of
from mtptui.core.parse.timeparse import instant
from mtptui.core.store import Store
from mtptui.core.summary import Summary


def _batch(stamp: str, gen: float, running: int = 4) -> str:
    return (f"[{stamp}] Decode batch, #running-req: {running}, #token: 900, token usage: 0.05, "
            f"gen throughput (token/s): {gen:.2f}, #queue-req: 0, ")


def _server_lines() -> list[tuple[str, str]]:
    """(SGLang's stamp, the line) of two runs: one stopped, one that died of an OOM."""
    out: list[tuple[str, str]] = []

    def add(stamp: str, msg: str) -> None:
        out.append((stamp, f"[{stamp}] {msg}" if not msg.startswith("[") else msg))

    add("2026-03-09 16:00:00", "server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=1, "
                               "speculative_algorithm='EAGLE', speculative_num_steps=3, speculative_eagle_topk=1, "
                               "speculative_num_draft_tokens=4)")
    add("2026-03-09 16:00:20", "The server is fired up and ready to roll!")
    for i in range(20):
        stamp = f"2026-03-09 16:00:{30 + i:02d}"
        add(stamp, _batch(stamp, 150.0 + i))
    add("2026-03-09 16:01:00", "SIGTERM received. signum=None frame=None. Draining requests and shutting down...")
    add("2026-03-09 16:01:01", "Gracefully exiting... Remaining number of requests 0.")
    add("2026-03-09 16:02:00", "server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=1, "
                               "speculative_algorithm=None)")
    add("2026-03-09 16:02:20", "The server is fired up and ready to roll!")
    for i in range(20):
        stamp = f"2026-03-09 16:02:{30 + i:02d}"
        add(stamp, _batch(stamp, 120.0 + i))
    add("2026-03-09 16:03:00", "Scheduler hit an exception: Traceback (most recent call last):")
    for bare in ['  File "/opt/sglang/srt/managers/scheduler.py", line 2950, in run_scheduler_process',
                 "    scheduler.event_loop_normal()",
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB."]:
        out.append(("2026-03-09 16:03:00", bare))
    add("2026-03-09 16:03:01", "Received sigquit from a child process. It usually means the child failed.")
    return out


def _rfc(stamp: str, nanos: bool) -> str:
    return stamp.replace(" ", "T") + (".000000000Z" if nanos else "Z")


ENVELOPES = {
    "raw": lambda stamp, text: text,
    "journald json": lambda stamp, text: json.dumps({
        "__REALTIME_TIMESTAMP": str(int(instant(stamp, None, None) * 1_000_000)), "_HOSTNAME": "gpu1",
        "_SYSTEMD_UNIT": "sglang.service", "MESSAGE": text}),
    "docker json-file": lambda stamp, text: json.dumps({"log": text + "\n", "stream": "stdout",
                                                        "time": _rfc(stamp, True)}),
    "docker logs -t": lambda stamp, text: f"{_rfc(stamp, True)} {text}",
    "compose": lambda stamp, text: f"sglang-1  | {text}",
    "compose -t": lambda stamp, text: f"sglang-1  | {_rfc(stamp, True)} {text}",
    "cri": lambda stamp, text: f"{_rfc(stamp, True)} stdout F {text}",
    "kubectl --timestamps": lambda stamp, text: f"{_rfc(stamp, False)} {text}",
    "kubectl --prefix --timestamps": lambda stamp, text: f"[pod/sglang-0/sglang] {_rfc(stamp, False)} {text}",
}


def _doc(lines: list[str]) -> dict:
    s = Summary()
    ingest = Ingest(s)
    ingest.feed_many(lines)
    return s.to_json(ingest.counts.to_json(), ingest.counts.replicas)


def _without_hosts(doc: dict) -> dict:
    def strip(items):
        return [{k: v for k, v in item.items() if k != "host"} for item in items]
    return {"events": strip(doc["events"]), "epochs": strip(doc["epochs"]),
            "crash_loops": strip(doc["crash_loops"]), "lines": doc["lines"]}


def test_the_same_server_lines_in_each_envelope_read_the_same():
    server = _server_lines()
    want = _without_hosts(_doc([text for _, text in server]))
    kinds = [e["kind"] for e in want["events"]]
    assert kinds == ["spec_config", "ready", "stopping", "stopped", "spec_config", "ready", "error", "oom", "crash"]
    assert [e["ended"]["how"] for e in want["epochs"]] == ["stopped", "crashed"]
    assert want["epochs"][1]["ended"]["error"]["kind"] == "oom"
    assert all(e["ts"] is not None for e in want["events"])
    hosts = {}
    for name, wrap in ENVELOPES.items():
        doc = _doc([wrap(stamp, text) for stamp, text in server])
        assert _without_hosts(doc) == want, name
        hosts[name] = {e["host"] for e in doc["events"]} | {e["host"] for e in doc["epochs"]}
    assert hosts["compose"] == hosts["compose -t"] == {"sglang-1"}
    assert hosts["kubectl --prefix --timestamps"] == {"sglang-0"}
    assert hosts["journald json"] == {"gpu1"}
    assert hosts["docker logs -t"] == hosts["raw"] == {None}


def test_the_dashboards_runs_are_dated_by_the_log_in_each_envelope():
    """`open` and `replay` read into a Store: its runs begin and end at the log's times in every envelope,
    as summary's do, not at the wall clock's (a clock far from the log's: 2033)."""
    server = _server_lines()
    want = [(e["start"], e["end"]) for e in _doc([text for _, text in server])["epochs"]]
    assert want[0][0] == instant("2026-03-09 16:00:00", None, None)
    for name, wrap in ENVELOPES.items():
        store = Store(clock=lambda: 2e9)
        Ingest(store).feed_many([wrap(stamp, text) for stamp, text in server])
        [(host, runs)] = store.epochs.items()
        assert [(e.start, e.end) for e in runs] == want, name


@pytest.mark.parametrize("raw,host,ts,text", [
    # `docker logs -t`: RFC 3339 with nanoseconds (Docker's RFC3339NanoFixed)
    ("2026-03-09T16:03:25.123456789Z SIGTERM received. signum=None frame=None. Draining requests and shutting "
     "down...", None, 1773072205.123456789, "SIGTERM received. signum=None frame=None. Draining requests and "
     "shutting down..."),
    # kubectl's RFC3339Nano drops trailing zeros, down to none: no host is read from SGLang's prefix
    ("2026-03-09T16:03:25Z [2026-03-09 16:03:25] Gracefully exiting... Remaining number of requests 0.", None,
     1773072205.0, "[2026-03-09 16:03:25] Gracefully exiting... Remaining number of requests 0."),
    ("2026-03-09T16:03:25.5Z Killed", None, 1773072205.5, "Killed"),
    # compose v1 names its containers project_service_N
    ("mtp_sglang_1  | 2026-03-09T16:03:25.000000000Z Killed", "mtp_sglang_1", 1773072205.0, "Killed"),
    ("[pod/vllm-7d9f/vllm] (APIServer pid=1) INFO:     Application startup complete.", "vllm-7d9f", None,
     "(APIServer pid=1) INFO:     Application startup complete."),
])
def test_a_containers_envelope(raw, host, ts, text):
    line = LineParser().envelope.read(raw)
    assert (line.host, line.text) == (host, text)
    assert line.ts == (pytest.approx(ts) if ts is not None else None) and line.zoned == (ts is not None)


def _replicas(*runs: tuple[str, str, float, str, int]) -> list[str]:
    """Compose lines of replicas interleaved second by second: per run (container, speculative_algorithm,
    gen throughput, the minute it starts at, decode lines), its server_args line, then a decode line a
    second from 10 s after it."""
    timed = []
    for name, algo, gen, minute, n in runs:
        start = f"2026-03-09 16:{minute}:00"
        timed.append((start, name, f"[{start}] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=1, "
                                    f"speculative_algorithm={algo})"))
        for i in range(n):
            stamp = f"2026-03-09 16:{minute}:{10 + i:02d}"
            timed.append((stamp, name, _batch(stamp, gen)))
    timed.sort(key=lambda t: t[0])  # stable: at one second, the runs' lines in the order given
    return [f"{name}  | {text}" for _, name, text in timed]


def test_two_compose_replicas_are_two_engines_with_their_own_epochs():
    """`docker compose logs` of a service scaled to two (`sglang-1`, `sglang-2`), lines interleaved:
    two hosts, each its own run and settings, each host's throughput its replica's own (not twice
    the lines of one rank, not one run broken in three), and the service's (`services`) their sum."""
    doc = _doc(_replicas(("sglang-1", "'EAGLE'", 150.0, "00", 30), ("sglang-2", "None", 100.0, "00", 30)))
    series = {(s["host"], s["rank"]): s["decode"]["batches"] for s in doc["series"]}
    assert series == {("sglang-1", ""): 30, ("sglang-2", ""): 30}
    epochs = {e["host"]: e for e in doc["epochs"]}
    assert len(doc["epochs"]) == 2 and set(epochs) == {"sglang-1", "sglang-2"}
    assert epochs["sglang-1"]["label"].startswith("EAGLE") and epochs["sglang-2"]["label"] == "spec off"
    totals = {h: e["host_totals"]["gen_throughput"] for h, e in epochs.items()}
    assert totals == {"sglang-1": pytest.approx(150.0), "sglang-2": pytest.approx(100.0)}
    [service] = doc["services"]
    assert service["service"] == "sglang" and service["concurrent"] and service["comparable"]
    assert [(r["host"], r["epoch"], r["gen_throughput"]) for r in service["replicas"]] == [
        ("sglang-1", 0, totals["sglang-1"]), ("sglang-2", 0, totals["sglang-2"])]
    assert service["gen_throughput"] == pytest.approx(250.0)
    assert service["from"] == epochs["sglang-1"]["start"] == epochs["sglang-2"]["start"] and service["to"] is None


def test_a_replica_that_restarted_gives_the_service_its_last_run():
    """One replica retuned (compose v2's `project-service-N` names): the service sums each replica's
    host total in its last run that decoded, from the latest of those runs' starts, when both ran so."""
    doc = _doc(_replicas(("mtp-sglang-1", "'EAGLE'", 150.0, "00", 40), ("mtp-sglang-2", "None", 100.0, "00", 20),
                         ("mtp-sglang-2", "'EAGLE'", 140.0, "01", 20)))
    runs = {(e["host"], e["index"]): e for e in doc["epochs"]}
    assert set(runs) == {("mtp-sglang-1", 0), ("mtp-sglang-2", 0), ("mtp-sglang-2", 1)}
    [service] = doc["services"]
    assert service["service"] == "mtp-sglang"
    assert [(r["host"], r["epoch"], r["label"]) for r in service["replicas"]] == [
        ("mtp-sglang-1", 0, runs["mtp-sglang-1", 0]["label"]), ("mtp-sglang-2", 1, runs["mtp-sglang-2", 1]["label"])]
    want = runs["mtp-sglang-1", 0]["host_totals"]["gen_throughput"] + runs["mtp-sglang-2", 1]["host_totals"]["gen_throughput"]
    assert service["gen_throughput"] == pytest.approx(want) == pytest.approx(290.0)
    assert service["from"] == runs["mtp-sglang-2", 1]["start"] and service["concurrent"]


def test_replicas_whose_runs_never_ran_at_once_have_no_sum():
    """Replica 1 decoded, then restarted into a run that never decoded, before replica 2 began: the two
    runs that decoded share no span, so the service has no throughput (null), not a sum of two times."""
    doc = _doc(_replicas(("sglang-1", "None", 100.0, "00", 20), ("sglang-1", "None", 0.0, "01", 0),
                         ("sglang-2", "None", 100.0, "02", 20)))
    [service] = doc["services"]
    assert [r["epoch"] for r in service["replicas"]] == [0, 0]
    assert service["to"] < service["from"] and not service["concurrent"]
    assert service["gen_throughput"] is None and not service["comparable"]


def test_hosts_a_journal_names_are_no_service():
    """`gpu-1` and `gpu-2` in a journal are two machines, not replicas a container's prefix named."""
    lines = []
    for host in ("gpu-1", "gpu-2"):
        for i in range(12):
            stamp = f"2026-03-09 16:00:{10 + i:02d}"
            lines.append(f"{stamp.replace(' ', 'T')}+00:00 {host} python3[41]: {_batch(stamp, 100.0)}")
    doc = _doc(lines)
    assert {e["host"] for e in doc["epochs"]} == {"gpu-1", "gpu-2"} and doc["services"] == []


def test_one_replica_is_no_service_and_the_pods_of_a_deployment_are_one():
    """A single `sglang-1` is in the epochs already; two pods of Deployment `sglang` (kubectl --prefix)
    and its compose sidecar `router-1` alone give one service."""
    lines = []
    for i in range(12):
        stamp = f"2026-03-09 16:00:{10 + i:02d}"
        for pod in ("sglang-5d8f7b6c9-x2k4q", "sglang-5d8f7b6c9-bz7wm"):
            lines.append(f"[pod/{pod}/sglang] {_batch(stamp, 120.0)}")
    lines.append("router-1  | [2026-03-09 16:00:30] The server is fired up and ready to roll!")
    [service] = _doc(lines)["services"]
    assert service["service"] == "sglang" and service["gen_throughput"] == pytest.approx(240.0)
    assert [r["host"] for r in service["replicas"]] == ["sglang-5d8f7b6c9-bz7wm", "sglang-5d8f7b6c9-x2k4q"]


@pytest.mark.parametrize("replica,service", [
    ("sglang-1", "sglang"), ("sglang-12", "sglang"),  # compose v2 (`docker compose logs`)
    ("project-sglang-1", "project-sglang"),  # compose v2 naming the container whole
    ("proj_sglang_1", "proj_sglang"),  # compose v1
    ("sglang-0", "sglang"),  # a StatefulSet's pod
    ("vllm-7d9f8c5b6-x2k4q", "vllm"),  # a Deployment's: pod-template-hash, then 5 of SafeEncodeString's
    ("vllm-x2k4q", "vllm"),  # a DaemonSet's
    ("vllm-7d9f", "vllm-7d9f"), ("gpu1", "gpu1"),  # none of these shapes: its own
])
def test_the_service_a_replica_belongs_to(replica, service):
    assert service_of(replica) == service
