"""Every value has a range, one home for each (issue 42, item 4; mtptui/config/ranges.py): a flag
and the config key that set the same value share one Range, the message says the range, and NaN,
the infinities, zero or a negative where none is meant are refused where the value is parsed."""

from __future__ import annotations

import argparse

import pytest

from mtptui.config import CHECKS, CONTROL_CHECKS, PROFILE_CHECKS, THRESHOLD_CHECKS, ranges


def _flag(module: str, *argv: str) -> argparse.Namespace:
    import importlib

    return importlib.import_module(f"mtptui.commands.{module}").build_parser().parse_args(list(argv))


@pytest.mark.parametrize("command, argv, said", [
    ("spec", ["gpu1", "--timeout", "-1"], "a number of seconds from 10 to 86400"),
    ("spec", ["gpu1", "--timeout", "nan"], "a number of seconds from 10 to 86400"),
    ("bench", ["gpu1", "--timeout", "inf"], "a number of seconds from 10 to 86400"),
    ("tune", ["gpu1", "--timeout", "0"], "a number of seconds from 10 to 86400"),
    ("smoke", ["gpu1", "--timeout", "nan"], "a number of seconds from 1 to 3600"),
    ("bench", ["gpu1", "--concurrency", "1,1000000000"], "an integer from 1 to 4096"),
    ("bench", ["gpu1", "--concurrency", ","], "an integer from 1 to 4096"),
    ("bench", ["gpu1", "--requests", "0"], "an integer from 1 to 1000000"),
    ("tune", ["gpu1", "--max-tokens", "-5"], "an integer from 1 to 1000000"),
    ("summary", ["--jobs", "0", "x.log"], "an integer from 1 to 256"),
    ("record", ["gpu1", "--out", "r", "--duration", "nan"], "a number of seconds from 0.01 to"),
    ("live", ["gpu1", "--lines", "-1"], "an integer from 0 to 1000000"),
    ("live", ["gpu1", "--give-up-after", "inf"], "a number of seconds from 0.1 to"),
    ("export", ["gpu1", "--stale-after", "0"], "a number of seconds from 0.1 to 86400"),
    ("fleet", ["--prometheus", "http://p:9090", "--interval", "nan"], "a number of seconds from 0.1 to 3600"),
    ("fleet", ["--prometheus", "http://p:9090", "--timeout", "inf"], "a number of seconds from 0.1 to 600"),
])
def test_a_flag_out_of_its_range_is_refused_as_it_is_parsed(command, argv, said, capsys):
    with pytest.raises(SystemExit) as e:
        _flag(command, *argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err, err


def test_audit_last_is_ranged(capsys, monkeypatch, tmp_path):
    from mtptui.commands import audit

    monkeypatch.setenv("MTPTUI_AUDIT_LOG", str(tmp_path / "a.jsonl"))
    with pytest.raises(SystemExit):
        audit.main(["-n", "0"])
    assert "an integer from 1 to 1000000000" in capsys.readouterr().err


def test_the_config_and_the_flags_share_one_range():
    assert _flag("spec", "gpu1", "--timeout", "600").timeout == 600.0 == CONTROL_CHECKS["wait_timeout"](600)
    pairs = [(CONTROL_CHECKS["wait_timeout"], ranges.WAIT_TIMEOUT), (CHECKS["lines"], ranges.LINES),
             (THRESHOLD_CHECKS["stale_s"], ranges.STALE_AFTER), (CHECKS["port"], ranges.PORT),
             (PROFILE_CHECKS["num_steps"], ranges.NUM_STEPS)]
    for check, r in pairs:
        assert check == r.check
    with pytest.raises(ValueError, match=r"must be a number of seconds from 10 to 86400 \(got -1\)"):
        CONTROL_CHECKS["wait_timeout"](-1)


def test_an_absurd_profile_is_refused_with_its_line():
    from mtptui.config import ConfigError, parse_config

    with pytest.raises(ConfigError, match=r"config.toml:3: profiles.big.num_steps: must be an integer from 1 to 64 "
                                          r"\(got 1000000000\)"):
        parse_config('[profiles.big]\nalgorithm = "EAGLE"\nnum_steps = 1_000_000_000\ntopk = 1\n'
                     'num_draft_tokens = 2\n')


@pytest.mark.parametrize("v", [float("nan"), float("inf"), -1, True, "5", 10**400])
def test_a_range_refuses_what_is_no_number_in_it(v):
    assert v not in ranges.WAIT_TIMEOUT
    with pytest.raises(ValueError):
        ranges.WAIT_TIMEOUT.check(v)
