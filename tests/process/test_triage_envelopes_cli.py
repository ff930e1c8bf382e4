"""`mtptui summary --json` (the real command, on files) reads the same server lines in each container
envelope as it reads them raw: the same events, epochs and runs, apart from the host the envelope
names (issue 43; tests/unit/test_triage_envelopes.py holds the same in process, envelope by envelope).

The process tier: these start child processes (tests/unit starts none)."""

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from test_triage_envelopes import ENVELOPES, _server_lines, _without_hosts  # noqa: E402


def summary_json(path: Path) -> dict:
    r = subprocess.run([sys.executable, "-m", "mtptui", "summary", "--json", str(path)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_summary_json_reads_each_envelope_as_the_raw_lines(tmp_path):
    server = _server_lines()
    docs = {}
    for name, wrap in ENVELOPES.items():
        path = tmp_path / (name.replace(" ", "_").replace("-", "") + ".log")
        path.write_text("".join(wrap(stamp, text) + "\n" for stamp, text in server))
        docs[name] = summary_json(path)
    want = _without_hosts(docs["raw"])
    assert [e["ended"]["how"] for e in want["epochs"]] == ["stopped", "crashed"]
    for name, doc in docs.items():
        assert _without_hosts(doc) == want, name
    assert {e["host"] for e in docs["compose -t"]["epochs"]} == {"sglang-1"}


def test_summary_sums_a_compose_service_in_its_table_and_its_json(tmp_path, monkeypatch):
    """Two interleaved replicas read by the real command: the table's services line and `services`;
    the same when the file is read in parallel parts (each part's replicas merged)."""
    from mtptui.sources import parallel
    from test_triage_envelopes import _replicas  # noqa: E402

    log = tmp_path / "compose.log"
    log.write_text("\n".join(_replicas(("sglang-1", "'EAGLE'", 150.0, "00", 30),
                                       ("sglang-2", "None", 100.0, "00", 30))) + "\n")
    [service] = summary_json(log)["services"]
    assert (service["service"], service["gen_throughput"]) == ("sglang", 250.0)
    r = subprocess.run([sys.executable, "-m", "mtptui", "summary", str(log)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("services ("))
    assert lines[at + 2].split() == ["sglang", "2", "2026-03-09", "16:00:00", "250.0", "sglang-1", "150.0", "+",
                                     "sglang-2", "100.0"]
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 1)
    summary, counts = parallel.summarise([str(log)], jobs=3)
    assert summary.to_json(counts.to_json(), counts.replicas)["services"] == [service]
