import pytest

from mtptui.config import ConfigError, load_config, parse_config, parse_target

GOOD = """\
[defaults]
unit = "sglang-qwen"
keepalive_interval = 10

[[hosts]]
name = "gpu1"
address = "10.0.0.5"
port = 2222
user = "ops"
identity = "~/.ssh/gpu_ed25519"
sudo = true
journalctl_args = ["--boot"]
host_key_policy = "accept-new"
tags = ["prod", "h100"]
accent = "#e5c07b"
http_port = 30000

[[hosts]]
name = "gpu2"
unit = "sglang-llama"

[keys]
quit = "q"
"""


def test_good_config_with_defaults():
    c = parse_config(GOOD)
    g1, g2 = c.hosts
    assert (g1.name, g1.address, g1.port, g1.user, g1.sudo) == ("gpu1", "10.0.0.5", 2222, "ops", True)
    assert g1.identity.endswith("/.ssh/gpu_ed25519") and not g1.identity.startswith("~")
    assert g1.journalctl_args == ("--boot",) and g1.tags == ("prod", "h100")
    assert g1.unit == "sglang-qwen" and g1.keepalive_interval == 10.0
    assert g2.unit == "sglang-llama" and g2.target == "gpu2" and g2.host_key_policy == "strict"
    assert c.extra == {"keys": {"quit": "q"}}


@pytest.mark.parametrize("text,where", [
    ('[[hosts]]\nname = "a"\nunit = "u"\nport = 70000\n', "config.toml:4: hosts[0].port: must be an integer from 1 to 65535"),
    ('[[hosts]]\nname = "a"\nunit = "u"\n\n[[hosts]]\nname = "b"\nunit = "u"\nsudo = "yes"\n', "config.toml:8: hosts[1].sudo: must be true or false"),
    ('[defaults]\nunit = "u"\nprot = 22\n', "config.toml:3: defaults.prot: unknown key"),
    ('[[hosts]]\nname = "a"\nunit = "u"\nhost_key_policy = "yolo"\n', "config.toml:4: hosts[0].host_key_policy: must be one of strict, accept-new, off"),
    ('[[hosts]]\nname = "a b"\nunit = "u"\n', "config.toml:2: hosts[0].name: must be"),
    ('[[hosts]]\nname = "a"\n', "config.toml:1: hosts[0]: needs a unit"),
    ('[[hosts]]\nname = "a"\nunit = "u"\n[[hosts]]\nname = "a"\nunit = "u"\n', "config.toml:5: hosts[1].name: duplicate host name 'a'"),
    ('[[hosts]]\nname = "a"\nunit = "u"\naccent = "not a colour!"\n', "config.toml:4: hosts[0].accent"),
    ('[defaults]\nname = "x"\n', "config.toml:2: defaults.name: unknown key (it names one host"),
    ('[[hosts]]\nname = "a"\nunit = "u"\njournalctl_args = "--boot"\n', "config.toml:4: hosts[0].journalctl_args: must be a list of strings"),
])
def test_errors_name_key_and_line(text, where):
    with pytest.raises(ConfigError) as e:
        parse_config(text)
    assert str(e.value).startswith(where), str(e.value)
    assert "\n" not in str(e.value)


def test_bad_toml_names_the_line():
    with pytest.raises(ConfigError, match=r"not valid TOML: .*line 2"):
        parse_config('[defaults]\nunit = \n')


def test_missing_files(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "nope.toml")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert load_config().hosts == []  # the default path may be absent
    (tmp_path / "mtptui").mkdir()
    (tmp_path / "mtptui" / "config.toml").write_text('[[hosts]]\nname = "x"\nunit = "u"\n')
    assert load_config().hosts[0].name == "x"


def test_new_host_takes_defaults():
    c = parse_config('[defaults]\nunit = "u"\nsudo = true\n')
    h = c.new_host("box", address="box", user="ops", port=None)
    assert (h.unit, h.sudo, h.user, h.port) == ("u", True, "ops", None)


@pytest.mark.parametrize("spec,want", [
    ("gpu1", (None, "gpu1", None)),
    ("ops@gpu1", ("ops", "gpu1", None)),
    ("ops@10.0.0.1:2222", ("ops", "10.0.0.1", 2222)),
    ("root@[::1]:22", ("root", "::1", 22)),
])
def test_parse_target(spec, want):
    assert parse_target(spec) == want


@pytest.mark.parametrize("spec", ["a@b@c", "host:99999", "h;rm -rf /", "", "a b"])
def test_parse_target_rejects(spec):
    with pytest.raises(ConfigError):
        parse_target(spec)
