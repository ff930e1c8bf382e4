import argparse

import pytest

from mtptui.commands.live import build_sources
from mtptui.config import resolve_hosts
from mtptui.config import ConfigError, parse_config

CONF = parse_config('[defaults]\nunit = "sglang"\n\n[[hosts]]\nname = "gpu1"\naddress = "10.0.0.1"\n'
                    '\n[[hosts]]\nname = "gpu2"\nsudo = true\n')


def test_all_config_hosts_by_default():
    assert [h.name for h in resolve_hosts([], CONF)] == ["gpu1", "gpu2"]


def test_names_ad_hoc_and_overrides():
    hs = resolve_hosts(["gpu2", "ops@box:2222"], CONF, unit="other", identity="~/k")
    assert [(h.name, h.target, h.user, h.port, h.unit) for h in hs] == [
        ("gpu2", "gpu2", None, None, "other"), ("ops@box:2222", "box", "ops", 2222, "other")]
    assert hs[0].sudo and not hs[0].identity.startswith("~")


def test_errors():
    with pytest.raises(ConfigError, match="no hosts"):
        resolve_hosts([], parse_config(""))
    with pytest.raises(ConfigError, match="which unit"):
        resolve_hosts(["box"], parse_config(""))
    with pytest.raises(ConfigError, match="named twice"):
        resolve_hosts(["gpu1", "gpu1"], CONF)


def test_build_sources():
    args = argparse.Namespace(hosts=["gpu1"], unit=None, sudo=None, identity=None, since="5min",
                              lines=None)
    (s,) = build_sources(args, CONF)
    assert s.host == "gpu1" and s.unit == "sglang" and s.since == "5min" and s.lines == 200
    assert s.argv()[-1] == "--since=-5min"
