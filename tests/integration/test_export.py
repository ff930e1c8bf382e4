"""`mtptui export` as an operator runs it: a process following a server's growing log file,
scraped over HTTP and read with prometheus_client's parser. The expected figures come from the
lines themselves (the last batch line of each rank, the counts), so the test knows the answers
without asking the exporter's code.

The exporter is waited for (it reads the file every 0.2 s), never timed."""

from __future__ import annotations

import socket
import time

import pytest
from exportproc import Exporter, expected
from hosts.helpers import two_writer_hosts
from hosts.linewriter import line

from mtptui.core.parse import LineParser
from mtptui.sim import scenario

HALF_CENT = 0.005 + 1e-9  # a `:.2f` field is within half a cent of the value, a float's hair aside
ARGV = ["--model-path", "Qwen/Qwen3-8B", "--tp", "2", "--enable-metrics-for-all-schedulers", "--sim-version",
        "0.5.8", "--sim-startup-seconds", "5"] + scenario.nextn(3)


@pytest.fixture
def exporter(children):
    return lambda args: children(Exporter, args)


def check(m: dict, want: dict, host: str) -> None:
    for rank, r in want["ranks"].items():
        key = (("host", host), ("rank", rank))
        assert m[("mtptui_running_requests", key)] == r["running"]
        assert m[("mtptui_queued_requests", key)] == r["queue"]
        assert m[("mtptui_token_usage_ratio", key)] == pytest.approx(r["usage"], abs=HALF_CENT)
        assert m[("mtptui_spec_accept_length", key)] == pytest.approx(r["accept_len"], abs=HALF_CENT)
        assert m[("mtptui_spec_accept_ratio", key)] == pytest.approx(r["accept_rate"], abs=HALF_CENT)
        assert m[("mtptui_gen_throughput_tokens_per_second", key)] == pytest.approx(r["gen"], abs=HALF_CENT)
        assert m[("mtptui_decode_batches_total", key)] == r["decode"]
        assert m[("mtptui_decode_batches_without_cuda_graph_total", key)] == r["graph_off"]
    h = (("host", host),)
    for name, n in want["counts"].items():
        assert m[(f"mtptui_lines_{name}_total", h)] == n


def append(path, lines: list[str]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write("".join(x + "\n" for x in lines))


def test_export_follows_a_growing_log_file(exporter, tmp_path):
    log = tmp_path / "sglang.log"
    log.write_text("")
    lines = [x.text for x in scenario.render_argv(ARGV, duration=40, envelope="cat", systemd=False)]
    assert sum("Decode batch" in x for x in lines) > 20
    e = exporter(["--file", str(log), "--host", "box1", "--listen", "127.0.0.1:0", "--stale-after", "5"])
    e.wait_serving()
    host = (("host", "box1"),)
    e.scrape_when(lambda m: m.get(("mtptui_source_connected", host)) == 1, "the file to be open")

    half = len(lines) // 2
    for new, sofar in ((lines[:half], lines[:half]), (lines[half:], lines)):
        append(log, new)
        m = e.scrape_when(lambda m, n=len(sofar): m.get(("mtptui_lines_read_total", host)) == n, "the lines")
        check(m, expected(sofar), "box1")
    assert set(expected(lines)["ranks"]) == {"TP0", "TP1"}
    info = [k for k in m if k[0] == "mtptui_spec_info"]
    assert info == [("mtptui_spec_info", (("algorithm", "EAGLE"), ("draft_tokens", "4"), ("host", "box1"),
                                          ("settings", "EAGLE steps=3 topk=1 draft=4"), ("steps", "3"),
                                          ("topk", "1")))]
    assert m[("mtptui_events_total", (("host", "box1"), ("kind", "ready")))] == 1

    # Silent ranks go stale: their gauges leave, their counters stay.
    tp0 = (("host", "box1"), ("rank", "TP0"))
    m = e.scrape_when(lambda m: ("mtptui_spec_accept_length", tp0) not in m, "TP0 to go stale")
    assert not [k for k in m if k[0] == "mtptui_running_requests"]
    assert m[("mtptui_decode_batches_total", tp0)] == expected(lines)["ranks"]["TP0"]["decode"]
    # A rank that logs again is served again.
    last_tp0 = [x for x in lines if "TP0] Decode batch" in x][-1]
    append(log, [last_tp0])
    m = e.scrape_when(lambda m: ("mtptui_spec_accept_length", tp0) in m, "TP0 to be fresh again")
    assert ("mtptui_spec_accept_length", (("host", "box1"), ("rank", "TP1"))) not in m
    assert e.stop() == 0


def test_port_in_use_is_one_line_and_exit_1(exporter, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        e = exporter(["--file", str(tmp_path / "x.log"), "--listen", f"127.0.0.1:{port}"])
        assert e.proc.wait(20) == 1
    e._reader.join(5)
    assert e.err == [f"mtptui export: cannot listen on 127.0.0.1:{port}: Address already in use"]


@pytest.mark.parametrize("args,message", [
    (["--listen", "9464"], "mtptui export: --listen '9464': give ADDR:PORT, e.g. 127.0.0.1:9464 or [::1]:9464"),
    (["--listen", "127.0.0.1:99999"], "mtptui export: --listen '127.0.0.1:99999': give ADDR:PORT, e.g. "
                                      "127.0.0.1:9464 or [::1]:9464"),
    (["--stale-after", "0"],  # checked where it is parsed, with its range (config/ranges.py)
     "mtptui export: error: argument --stale-after: '0': give a number of seconds from 0.1 to 86400"),
    (["--host", "x"], "mtptui export: --host names the machine of --local or --file: give one of them"),
])
def test_bad_arguments_are_one_line_and_exit_2(exporter, tmp_path, args, message):
    e = exporter(["--file", str(tmp_path / "x.log"), *args] if "--host" not in args else args)
    assert e.proc.wait(20) == 2
    e._reader.join(5)
    # one line, after argparse's usage where argparse itself refused the value
    assert e.err[-1] == message and all(x.startswith(("usage:", " ")) for x in e.err[:-1]), e.err


@pytest.mark.systemd
def test_export_two_container_hosts_over_ssh(cluster, exporter, tmp_path):
    """Real systemd + journald hosts over SSH, as the service example runs it."""
    conf = two_writer_hosts(cluster, tmp_path, "exp", rate=50, count=100)
    e = exporter(["--config", str(conf), "--listen", "127.0.0.1:0"])  # the later --config wins
    e.wait_serving()
    last = LineParser().parse(line(99, time.time(), "TP0")).record.fields
    for host in ("gpu-a", "gpu-b"):
        key = (("host", host), ("rank", "TP0"))
        # the history can bring all 100 lines before the follower is up (connected 1 from then on)
        connected = ("mtptui_source_connected", (("host", host),))
        m = e.scrape_when(lambda m, k=key: m.get(("mtptui_decode_batches_total", k)) == 100 and m.get(connected) == 1,
                          f"{host}'s lines, and its stream following", timeout=60)
        assert m[("mtptui_running_requests", key)] == last["running_req"]
        assert m[("mtptui_spec_accept_length", key)] == last["accept_len"]
        assert m[("mtptui_spec_accept_ratio", key)] == last["accept_rate"]
        assert m[("mtptui_gen_throughput_tokens_per_second", key)] == last["gen_throughput"]
        assert m[("mtptui_events_total", (("host", host), ("kind", "restart")))] == 1  # systemd's Started
    assert any("gpu-a: streaming" in x for x in e.err)
