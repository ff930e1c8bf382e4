import argparse

import pytest

from mtptui.commands.live import build_sources
from mtptui.config import resolve_hosts
from mtptui.config import Config, ConfigError, parse_config

CONF = parse_config('[defaults]\nunit = "sglang"\n\n[[hosts]]\nname = "gpu1"\naddress = "10.0.0.1"\n'
                    '\n[[hosts]]\nname = "gpu2"\nsudo = true\n')


def test_all_config_hosts_by_default():
    assert [h.name for h in resolve_hosts([], CONF)] == ["gpu1", "gpu2"]


def test_names_ad_hoc_and_overrides():
    hs = resolve_hosts(["gpu2", "ops@box:2222"], CONF, unit="other", identity="~/k")
    assert [(h.name, h.target, h.user, h.port, h.unit) for h in hs] == [
        ("gpu2", "gpu2", None, None, "other"), ("ops@box:2222", "box", "ops", 2222, "other")]
    assert hs[0].sudo and not hs[0].identity.startswith("~")


def test_a_mistyped_host_or_a_forgotten_config_is_said_so_not_which_unit():
    # issue 42: both got "which unit?"
    two = parse_config('[[hosts]]\nname = "gpu1"\nunit = "a"\n[[hosts]]\nname = "gpu2"\nunit = "b"\n', "cfg.toml")
    with pytest.raises(ConfigError) as e:
        resolve_hosts(["gpu3"], two)
    assert str(e.value).startswith("gpu3: not a host in cfg.toml (its hosts: gpu1, gpu2); for a host outside the "
                                   "config give --unit"), e.value
    with pytest.raises(ConfigError) as e:
        resolve_hosts(["gpu1"], Config(path=None))  # no config file was read (the default does not exist)
    assert str(e.value).startswith("gpu1: not a host in any config: none was read (") and "--config FILE" in str(e.value)
    with pytest.raises(ConfigError, match=r"box: not a host in config.toml \(it has no \[\[hosts\]\]\)"):
        resolve_hosts(["box"], parse_config(""))


def test_errors():
    with pytest.raises(ConfigError, match="no hosts"):
        resolve_hosts([], parse_config(""))
    with pytest.raises(ConfigError, match="which unit"):
        resolve_hosts(["ops@box"], parse_config(""))  # an address of its own: which unit there?
    with pytest.raises(ConfigError, match="which unit"):
        resolve_hosts(["10.0.0.7"], parse_config(""))
    with pytest.raises(ConfigError, match="named twice"):
        resolve_hosts(["gpu1", "gpu1"], CONF)


def test_build_sources():
    args = argparse.Namespace(hosts=["gpu1"], unit=None, sudo=None, identity=None, since="5min",
                              lines=None)
    (s,) = build_sources(args, CONF)
    assert s.host == "gpu1" and s.unit == "sglang" and s.since == "5min" and s.lines == 200
    assert s.argv()[-1] == "--since=-5min"
