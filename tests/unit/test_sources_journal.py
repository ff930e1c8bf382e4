import json
import random
import shlex

import pytest

from mtptui.sources.backoff import Backoff
from mtptui.sources.journal import LineSplitter, cursor_of, diagnose, journalctl_argv, since_arg
from mtptui.sources.record import with_hostname
from mtptui.transport.ssh import wrapped_command


def test_argv_first_connect_and_resume():
    assert journalctl_argv("sglang") == [
        "journalctl", "--unit=sglang", "--follow", "--output=json", "--all", "--no-pager", "--lines=10"]
    a = journalctl_argv("sglang", cursor="s=1;i=2", sudo=True, resumed=True)
    assert a[:3] == ["sudo", "-n", "--"] and a[-1] == "--after-cursor=s=1;i=2"
    assert not any(x.startswith("--lines") for x in a)
    assert journalctl_argv("u", since="10min")[-1] == "--since=-10min"
    # a resume with no cursor yet: the first window was empty, ask for all of it
    assert journalctl_argv("u", lines=5, resumed=True)[-1] == "--lines=all"
    assert journalctl_argv("u", since="1h", resumed=True)[-1] == "--since=-1h"
    assert journalctl_argv("u", lines=0, resumed=True, started_at=1000.0)[-1] == "--since=@995"


def test_since_arg():
    assert since_arg("10min") == "-10min"
    assert since_arg("2 h") == "-2 h"
    assert since_arg("2026-03-09 16:00") == "2026-03-09 16:00"


HOSTILE = ["x; rm -rf /tmp/pwn", "$(touch /tmp/pwn)", "`id`", "a'b\"c", "--output=cat", "a\nb", "*"]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_values_stay_single_argv_items(value):
    argv = journalctl_argv(value, extra=[value], sudo=True)
    cmd = wrapped_command(argv)
    # what the remote login shell will see: the same argv, item for item
    assert shlex.split(cmd)[4:] == argv
    assert f"--unit={value}" in argv  # never a separate item that journalctl could read as an option


def test_cursor_of():
    line = json.dumps({"__CURSOR": "s=ab;i=3;b=cd", "MESSAGE": "x"})
    assert cursor_of(line) == "s=ab;i=3;b=cd"
    assert cursor_of('{"MESSAGE":"x","__CURSOR":"late"}') == "late"
    assert cursor_of('{"MESSAGE":"x"}') is None


def test_splitter_keeps_tails_and_bounds_lines():
    s = LineSplitter(max_line=100)
    assert s.push(b'{"a":1}\n{"b"') == ['{"a":1}']
    assert s.push(b':2}\r\n\n-- No entries --\n') == ['{"b":2}\r']
    assert s.push(b"x" * 150) == [] and s.too_long == 1
    assert s.push(b"y" * 10 + b"\n{ok}\n") == ["{ok}"]
    assert s.push(b"cut") == [] and s.discard() is True and s.push(b"\n") == []


def test_splitter_utf8_split_across_chunks():
    data = '{"m":"é€😀"}\n'.encode()
    s = LineSplitter()
    out = []
    for i in range(len(data)):
        out += s.push(data[i:i + 1])
    assert out == ['{"m":"é€😀"}']


def test_backoff_grows_caps_jitters_and_resets():
    b = Backoff(0.5, 8.0, jitter=0.5, rng=random.Random(1))
    delays = [b.next() for _ in range(10)]
    for n, d in enumerate(delays):
        base = min(8.0, 0.5 * 2 ** n)
        assert base * 0.5 <= d <= base
    assert max(delays) <= 8.0 and len(set(delays)) == len(delays)
    b.reset()
    assert b.next() <= 0.5
    with pytest.raises(ValueError):
        Backoff(0, 1)


@pytest.mark.parametrize("stderr,rc,needle", [
    ("No journal files were opened due to insufficient permissions.", 1, "systemd-journal group"),
    ("Hint: You are currently not seeing messages from other users and the system.", None, "no rights"),
    ("sudo: a password is required", 1, "NOPASSWD"),
    ("sh: 1: journalctl: not found", 127, "journalctl not found"),
    ("journalctl: unrecognized option '--bogus'", 1, "rejected its arguments"),
])
def test_diagnose_permanent(stderr, rc, needle):
    e = diagnose(stderr, rc, who="ops", where="gpu1", sudo=False, local=False)
    assert e is not None and e.permanent and needle in e.message and "\n" not in e.message


def test_diagnose_local_suggests_sudo_or_group():
    e = diagnose("No journal files were opened due to insufficient permissions.", 1, who="me",
                 where="this machine", sudo=False, local=True)
    assert "sudo" in e.message and "systemd-journal" in e.message


def test_diagnose_transient():
    assert diagnose("", None, who="x", where="y", sudo=False, local=False) is None
    assert diagnose("Connection reset", 255, who="x", where="y", sudo=False, local=False) is None


def test_with_hostname():
    line = '{"__CURSOR":"c","_HOSTNAME":"box7","MESSAGE":"hi"}'
    assert json.loads(with_hostname(line, "gpu1")) == {"__CURSOR": "c", "_HOSTNAME": "gpu1", "MESSAGE": "hi"}
    assert with_hostname(line, None) == line
    assert json.loads(with_hostname('{"MESSAGE":"x"}', "g")) == {"_HOSTNAME": "g", "MESSAGE": "x"}
    assert json.loads(with_hostname('{}', "g")) == {"_HOSTNAME": "g"}
    assert json.loads(with_hostname("raw text", "g")) == {"_HOSTNAME": "g", "MESSAGE": "raw text"}
    odd = json.dumps({"_HOSTNAME": 'we"ird', "MESSAGE": [1, 2]})
    assert json.loads(with_hostname(odd, "g")) == {"_HOSTNAME": "g", "MESSAGE": [1, 2]}
