"""One error path: every mistake a user can make is a UserError (mtptui/errors.py), raised where it
is found and printed once, by `mtptui.cli.main`, as one line with the command's name; the exit code
is the error's (2: the command line or the config, 1: the host, the file, the server)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mtptui.errors import USAGE, UsageError, UserError

# each command's arguments that get as far as reading the config
NEEDS_CONFIG = {
    "replay": ["x.log"], "open": ["x.log"], "live": ["gpu1"], "local": ["--unit", "x"], "record": ["gpu1", "--out", "r.json"],
    "export": ["gpu1"], "fleet": ["--once", "--prometheus", "http://127.0.0.1:9"], "spec": ["gpu1"], "smoke": ["gpu1"], "bench": ["gpu1"], "demo": [],
}


def mtptui(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mtptui", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("cmd", sorted(NEEDS_CONFIG))
def test_a_bad_config_is_one_line_and_exit_2_for_every_command(cmd, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[nosuchtable]\nx = 1\n")
    r = mtptui(cmd, "--config", str(bad), *NEEDS_CONFIG[cmd], cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"mtptui {cmd}: "), r.stderr
    assert "nosuchtable" in lines[0] and "Traceback" not in r.stderr


def test_runtime_errors_exit_1_with_the_commands_name(tmp_path):
    r = mtptui("summary", str(tmp_path / "missing.log"))
    assert r.returncode == 1 and r.stderr.startswith("mtptui summary: ") and len(r.stderr.splitlines()) == 1, r.stderr
    d = tmp_path / "audit-is-a-dir"
    d.mkdir()
    r = subprocess.run([sys.executable, "-m", "mtptui", "audit"], capture_output=True, text=True, timeout=60,
                       env={"MTPTUI_AUDIT_LOG": str(d), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 1 and r.stderr.startswith("mtptui audit: ") and len(r.stderr.splitlines()) == 1, r.stderr


def test_every_error_a_user_can_cause_is_a_user_error():
    from mtptui.config import ConfigError
    from mtptui.control.audit import AuditError
    from mtptui.control.errors import BadProfile, ControlError, LockedError
    from mtptui.fleet.prom import PromError
    from mtptui.fleet.query import SelectorError
    from mtptui.sources.file import InputError
    from mtptui.transport.errors import TransportError

    for cls in (ConfigError, AuditError, ControlError, LockedError, BadProfile, PromError, SelectorError, InputError,
                TransportError):
        assert issubclass(cls, UserError), cls
    assert {c: c("x").exit_code for c in (ConfigError, BadProfile, SelectorError)} == dict.fromkeys(
        (ConfigError, BadProfile, SelectorError), USAGE)
    assert ControlError("x").exit_code == InputError("x").exit_code == 1
    assert UserError("x", exit_code=2).exit_code == 2 and UsageError("x").exit_code == 2


def test_cli_prints_a_user_error_once_and_returns_its_code(monkeypatch, capsys):
    import types

    from mtptui import cli

    mod = types.ModuleType("fake_cmd")

    def main(argv):
        raise UserError("the host said no", exit_code=3)

    mod.main = main
    monkeypatch.setitem(sys.modules, "fake_cmd", mod)
    monkeypatch.setitem(cli.COMMANDS, "fake", ("fake_cmd", "a test"))
    assert cli.main(["fake"]) == 3
    assert capsys.readouterr().err == "mtptui fake: the host said no\n"
