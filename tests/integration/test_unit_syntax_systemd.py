"""The proof that control.systemd speaks systemd's syntax: units and drop-ins written with it into a
real systemd (252, in a container host), then compared with what systemd made of them.

For each argv: (a) effective_exec_start(`systemctl cat`) gives it back, (b) agrees() with
`systemctl show -p ExecStart`, (c) the process really received it, item for item, and (d) nothing
in it ran: /tmp/x never appears. Hand-written unit files (continuations, comments, quotes, escapes,
prefixes) are read by effective_exec_start and checked against the process in the same way.
"""

from __future__ import annotations

import json
import random
import shlex
import subprocess
import uuid

import pytest

from mtptui.control.launch import apply_profile
from mtptui.control.profiles import Profile
from mtptui.control.systemd import (
    DROPIN_NAME,
    agrees,
    dropin_dir,
    effective_exec_start,
    render_dropin,
    render_exec,
)

pytestmark = pytest.mark.systemd

OUT = "/run/mtpsyn"
# A stand-in for `python3 -m sglang.launch_server` (on PYTHONPATH=OUT): it writes what it received,
# argv and its MTPSYN_ variables, to $MTPSYN_OUT.
FAKE_SERVER = """import json, os, sys
env = {k: v for k, v in os.environ.items() if k.startswith("MTPSYN_") and k != "MTPSYN_OUT"}
json.dump({"argv": sys.argv[1:], "env": env}, open(os.environ["MTPSYN_OUT"], "w"))
"""
SERVER = ["/usr/bin/python3", "-m", "sglang.launch_server"]
HOSTILE = ["; touch /tmp/x", "$(touch /tmp/x)", "`touch /tmp/x`", "a b", "", " lead", "trail ",
           "it's", 'say "hi"', "back\\slash", "a\\", "\\", "\\;", ";", "%n", "%%", "50%", "%", "$HOME",
           "${HOME}", "$$", "$", "a$b", "--x=$(id)", "tab\there", "bell\a", "esc\x1b[0m", "del\x7f",
           "ünïcödé", "日本語", "😀", "\u2028", "\u00a0nbsp", "#not a comment", "-@:+!", "@", "-",
           "'", '"', "{}", "a=b c", "*", "~", "&&", "|", "> /tmp/x"]
HOSTILE_ENV = {"MTPSYN_A": "; touch /tmp/x", "MTPSYN_B": "$(touch /tmp/x) $HOME ${HOME} $$",
               "MTPSYN_C": "50% %n", "MTPSYN_D": "quote\" and ' and \\", "MTPSYN_E": "", "MTPSYN_F": "é\tx"}
SPECIALS = list(" \t\"'\\%$;`{}()#@-:+!*?~&|<>=\a\x1b\x7fé€😀\u2028") + list("abcxyz019/._")


def put(h, path: str, text: str) -> None:
    h.ssh(["mkdir", "-p", path.rsplit("/", 1)[0]])
    subprocess.run(h.ssh_argv(shlex.join(["tee", path])), input=text.encode(), check=True,
                   capture_output=True, timeout=30)


def sh(h, *argv: str) -> str:
    return h.ssh(list(argv)).stdout


@pytest.fixture
def host(cluster):
    h = cluster.hosts[0]
    h.ssh(["mkdir", "-p", f"{OUT}/sglang"])
    put(h, f"{OUT}/sglang/__init__.py", "")
    put(h, f"{OUT}/sglang/launch_server.py", FAKE_SERVER)
    yield h
    h.ssh("rm -rf /run/mtpsyn /etc/systemd/system/mtpsyn-* && systemctl daemon-reload", check=False)


def unit_name(tag: str) -> str:
    return f"mtpsyn-{tag}-{uuid.uuid4().hex[:6]}"


def service(exec_start: str, out: str, env: str = "") -> str:
    return (f"[Unit]\nDescription=mtptui syntax test\n[Service]\nType=oneshot\n"
            f"Environment=PYTHONPATH={OUT} MTPSYN_OUT={out} {env}\nExecStart={exec_start}\n")


def received(h, unit: str, out: str) -> dict:
    h.ssh(["systemctl", "start", f"{unit}.service"])  # Type=oneshot: returns when it has run
    return json.loads(sh(h, "cat", out))


def show(h, unit: str, *value: str) -> str:
    return sh(h, "systemctl", "show", "-p", "ExecStart", *value, f"{unit}.service")


# put_many and read_many: what put, `systemctl cat`, show and received do, for many units over one
# connection each (an SSH connection a step made the 40 random argvs 240 connections: 3 minutes)
_PUT_MANY = "import json, os, sys\nfor p, t in json.load(sys.stdin).items():\n" \
    "    os.makedirs(os.path.dirname(p), exist_ok=True)\n    open(p, 'w').write(t)\n"
_READ_MANY = """import json, subprocess, sys
def run(*a):
    return subprocess.run(a, capture_output=True, text=True, check=True).stdout
out = {}
for unit, path in json.load(sys.stdin).items():
    s = unit + ".service"
    cat, shown = run("systemctl", "cat", s), run("systemctl", "show", "-p", "ExecStart", s)
    run("systemctl", "start", s)
    out[unit] = {"cat": cat, "show": shown, "received": json.load(open(path))}
json.dump(out, sys.stdout)
"""


def _python(h, script: str, data: object) -> str:
    return subprocess.run(h.ssh_argv(shlex.join(["python3", "-c", script])), input=json.dumps(data).encode(),
                          check=True, capture_output=True, timeout=120).stdout.decode()


def put_many(h, files: dict[str, str]) -> None:
    _python(h, _PUT_MANY, files)


def read_many(h, outs: dict[str, str]) -> dict[str, dict]:
    """unit -> its `systemctl cat`, its `systemctl show -p ExecStart`, and what its process received."""
    got: dict[str, dict] = json.loads(_python(h, _READ_MANY, outs))
    return got


def test_hostile_profile_values_reach_the_server_literally(host):
    h = host
    unit = unit_name("hostile")
    out = f"{OUT}/{unit}.json"
    put(h, f"/etc/systemd/system/{unit}.service",
        service(render_exec([*SERVER, "--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "EAGLE"]), out))
    h.ssh(["systemctl", "daemon-reload"])
    base = effective_exec_start(sh(h, "systemctl", "cat", f"{unit}.service"))
    profile = Profile("evil", algorithm="NEXTN", num_steps=1, topk=1, num_draft_tokens=2,
                      draft_model_path="; touch /tmp/x", env=tuple(HOSTILE_ENV.items()), extra_args=tuple(HOSTILE))
    argv = apply_profile(base.argv, profile)
    put(h, f"{dropin_dir(unit)}/{DROPIN_NAME}",
        render_dropin(argv, dict(profile.env), profile="evil\nExecStart=/bin/touch /tmp/x", written_by="t\\"))
    h.ssh(["systemctl", "daemon-reload"])

    e = effective_exec_start(sh(h, "systemctl", "cat", f"{unit}.service"))
    assert (e.prefix, e.argv, e.source) == ("", argv, f"{dropin_dir(unit)}/{DROPIN_NAME}")
    assert e.environment == {"PYTHONPATH": OUT, "MTPSYN_OUT": out, **HOSTILE_ENV}
    assert agrees(e.argv, show(h, unit)) and agrees(e.argv, show(h, unit, "--value"))
    got = received(h, unit, out)
    assert got == {"argv": argv[3:], "env": HOSTILE_ENV}
    assert got["argv"][-len(HOSTILE):] == HOSTILE
    assert "; touch /tmp/x" in got["argv"]
    assert h.ssh(["test", "-e", "/tmp/x"], check=False).returncode == 1
    assert effective_exec_start(sh(h, "systemctl", "cat", f"{unit}.service"),
                                ignore_dropin=DROPIN_NAME).argv == base.argv


def test_random_argvs_round_trip_through_systemd(host):
    """40 seeded random argvs of awkward characters, with the prefixes, in one daemon-reload."""
    h = host
    rng = random.Random(9)
    cases = {}
    files = {}
    for k in range(40):
        words = ["".join(rng.choice(SPECIALS) for _ in range(rng.randint(0, 8))) for _ in range(rng.randint(1, 6))]
        prefix = rng.choice(["", "-", ":", "+", "!!"])
        unit = unit_name(f"r{k}")
        out = f"{OUT}/{unit}.json"
        files[f"/etc/systemd/system/{unit}.service"] = service(render_exec([*SERVER, *words], prefix=prefix), out)
        cases[unit] = (prefix, words, out)
    put_many(h, files)
    h.ssh(["systemctl", "daemon-reload"])
    got = read_many(h, {unit: out for unit, (_, _, out) in cases.items()})
    for unit, (prefix, words, out) in cases.items():
        e = effective_exec_start(got[unit]["cat"])
        assert (e.prefix, e.argv) == (prefix, [*SERVER, *words])
        assert agrees(e.argv, got[unit]["show"], prefix=prefix)
        assert got[unit]["received"]["argv"] == words, (prefix, words)
    assert h.ssh(["test", "-e", "/tmp/x"], check=False).returncode == 1


HAND_WRITTEN = r"""# /etc/systemd/system/mtpsyn.service: written by hand
[Unit]
Description=written by hand, read by effective_exec_start
ExecStart=/bin/not-a-service-setting

[Service]
Type=oneshot
Environment=PYTHONPATH={OUT} MTPSYN_OUT={OUT}/{UNIT}.json
Environment=MTPSYN_X=1 "MTPSYN_Y=two words" MTPSYN_Z=\x41
# ExecStart=/bin/commented-out
ExecStart=/bin/false
ExecStart=
ExecStart=-"/usr/bin/python3" -m sglang.launch_server \
# a comment line inside the continuation
  ; and another
    a"b c"d 'x y' $$HOME %% \x41\101 \u00e9 "\t" a\ b "q\"q" \; ";" '' \\ x\;y \e \
    "%%n" \
    tail\\
"""


def test_hand_written_unit_is_read_as_systemd_reads_it(host):
    h = host
    unit = unit_name("hand")
    put(h, f"/etc/systemd/system/{unit}.service", HAND_WRITTEN.replace("{OUT}", OUT).replace("{UNIT}", unit))
    h.ssh(["systemctl", "daemon-reload"])
    e = effective_exec_start(sh(h, "systemctl", "cat", f"{unit}.service"))
    assert e.prefix == "-"
    assert e.environment == {"PYTHONPATH": OUT, "MTPSYN_OUT": f"{OUT}/{unit}.json", "MTPSYN_X": "1",
                             "MTPSYN_Y": "two words", "MTPSYN_Z": "A"}
    assert agrees(e.argv, show(h, unit), prefix="-")
    got = received(h, unit, f"{OUT}/{unit}.json")
    assert got["argv"] == e.argv[3:] == ["ab cd", "x y", "$HOME", "%", "AA", "é", "\t", "a\\ b", 'q"q', ";",
                                         ";", "", "\\", "x\\;y", "\\e", "%n", "tail\\"]


def test_references_survive_a_profile_change(host):
    """A template unit whose ExecStart uses %i and $VARIABLES: read, a profile applied, written back
    as a drop-in; systemd still fills them in, and the new flags arrive literally."""
    h = host
    template = unit_name("tpl")
    instance = f"{template}@gpu0"
    out = f"{OUT}/%i.json"
    put(h, f"/etc/systemd/system/{template}@.service",
        service(f"{shlex.join(SERVER)} --served-model-name=%i-${{MTPSYN_NAME}} $MTPSYN_OPTS "
                "--speculative-algorithm EAGLE", out, env="MTPSYN_OPTS=--a\\x20--b MTPSYN_NAME=qwen"))
    h.ssh(["systemctl", "daemon-reload"])
    e = effective_exec_start(sh(h, "systemctl", "cat", f"{instance}.service"))
    assert e.references == ["--served-model-name=%i-${MTPSYN_NAME}", "$MTPSYN_OPTS"]
    assert agrees(e.argv, show(h, instance))
    profile = Profile("p", algorithm="NEXTN", num_steps=2, topk=1, num_draft_tokens=3,
                      extra_args=("--note", "50% of $HOME; `id`"))
    new = apply_profile(e.argv, profile)
    put(h, f"{dropin_dir(instance)}/{DROPIN_NAME}", render_dropin(new, {}, profile=profile.name, written_by="test"))
    h.ssh(["systemctl", "daemon-reload"])
    e2 = effective_exec_start(sh(h, "systemctl", "cat", f"{instance}.service"))
    assert e2.argv == new and e2.references == e.references
    assert agrees(new, show(h, instance))
    got = received(h, instance, f"{OUT}/gpu0.json")
    assert got["argv"] == ["--served-model-name=gpu0-qwen", "--a", "--b", "--speculative-algorithm", "NEXTN",
                           "--speculative-num-steps", "2", "--speculative-eagle-topk", "1",
                           "--speculative-num-draft-tokens", "3", "--note", "50% of $HOME; `id`"]
