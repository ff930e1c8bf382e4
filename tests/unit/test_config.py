
import pytest

from mtptui.config import Config, ConfigError, ControlConfig, HostConfig, load_config, parse_config, parse_target
from mtptui.control.profiles import Profile
from mtptui.core.alerts import Thresholds

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
    assert c.keys == {"quit": "q"}


HOST_ERRORS = [
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
]


# Each table: a good value read into its type, a bad type, an unknown key; the line is exact.
TABLES = """\
theme = "mtptui-light"

[thresholds]
accept_rate_min = 0.5
fallback_min_batches = 5
stale_s = 45

[keys]
pause = "z"
seek_back = "left, h"

[profiles.eagle-fast]
algorithm = "eagle3"
num_steps = 3
topk = 4
num_draft_tokens = 8
draft_model_path = "/models/draft"
env = {SGLANG_X = "1", B_2 = "a b"}
extra_args = ["--cuda-graph-max-bs", "64"]

[profiles.plain]
extra_args = ["--enable-metrics"]

[profiles."v2.ngram"]
algorithm = "NGRAM"

[control]
wait_timeout = 1200
verify_batches = 5
lock_stale_after = 3600
prod_tags = ["prod", "live"]
"""


def test_every_table_is_typed():
    c = parse_config(TABLES)
    assert c.theme == "mtptui-light"
    assert c.thresholds == Thresholds(accept_rate_min=0.5, fallback_min_batches=5, stale_s=45.0)
    assert isinstance(c.thresholds.stale_s, float) and isinstance(c.thresholds.fallback_min_batches, int)
    assert c.keys == {"pause": "z", "seek_back": "left,h"}
    assert c.profiles == {
        "eagle-fast": Profile("eagle-fast", algorithm="EAGLE3", num_steps=3, topk=4, num_draft_tokens=8,
                              draft_model_path="/models/draft", env=(("SGLANG_X", "1"), ("B_2", "a b")),
                              extra_args=("--cuda-graph-max-bs", "64")),
        "plain": Profile("plain", extra_args=("--enable-metrics",)),
        "v2.ngram": Profile("v2.ngram", algorithm="NGRAM"),
    }
    assert not c.profiles["plain"].on
    assert c.control == ControlConfig(wait_timeout=1200.0, verify_batches=5, lock_stale_after=3600.0,
                                      prod_tags=("prod", "live"))


def test_empty_config_has_the_defaults():
    c = parse_config("")
    assert c == Config(path="config.toml")
    assert (c.theme, c.keys, c.profiles, c.thresholds) == (None, {}, {}, Thresholds())
    assert c.control == ControlConfig(wait_timeout=900.0, verify_batches=3, lock_stale_after=1800.0,
                                      prod_tags=("prod",))


TABLE_ERRORS = [
    # top level
    ('theme = 3\n', "config.toml:1: theme: must be a string (got 3)"),
    ('[theme]\nname = "x"\n', 'config.toml:1: theme: must be a string: write theme = "NAME" above'),
    ('[defaults]\nunit = "u"\n\n[colours]\nx = 1\n', "config.toml:4: colours: unknown table; known: control, "
     "defaults, hosts, keys, profiles, theme, thresholds"),
    ('unit = "u"\n', "config.toml:1: unit: unknown key (a host field: set it in [defaults] or [[hosts]]); known:"),
    # [thresholds]
    ('[thresholds]\nstale_s = 10\naccept_rate_mn = 0.2\n',
     "config.toml:3: thresholds.accept_rate_mn: unknown key; known: accept_len_one_hold_s, accept_len_one_max, "
     "accept_rate_hold_s, accept_rate_min, baseline_min_s"),
    ('[thresholds]\naccept_rate_min = "0.3"\n', "config.toml:2: thresholds.accept_rate_min: must be a number >= 0 (got '0.3')"),
    ('[thresholds]\n\naccept_rate_min = -1\n', "config.toml:3: thresholds.accept_rate_min: must be a number >= 0 (got -1)"),
    ('[thresholds]\nqueue_hold_s = inf\n', "config.toml:2: thresholds.queue_hold_s: must be a number >= 0 (got inf)"),
    ('[thresholds]\nqueue_hold_s = nan\n', "config.toml:2: thresholds.queue_hold_s: must be a number >= 0 (got nan)"),
    ('[thresholds]\nfallback_min_batches = 2.5\n', "config.toml:2: thresholds.fallback_min_batches: must be an integer >= 0"),
    ('[thresholds]\ncoverage = 1.5\n', "config.toml:2: thresholds.coverage: must be a number from 0 to 1 (got 1.5)"),
    ('[thresholds]\nstale_s = true\n', "config.toml:2: thresholds.stale_s: must be a number of seconds from 0.1 to 86400 (got true)"),
    ('thresholds = 3\n', "config.toml:1: thresholds: must be a table (got 3)"),
    # [keys]
    ('[keys]\npause = "z"\npauze = "x"\n', "config.toml:3: keys.pauze: unknown binding id (did you mean pause?); known: "
     "audit, audit_close, bench, compare, compare_close, confirm_apply,"),
    ('[keys]\npause = 1\n', "config.toml:2: keys.pause: must be a string (got 1)"),
    ('[keys]\ntheme = "mtptui-light"\n', "config.toml:2: keys.theme: must be a key like \"p\""),
    ('[keys]\npause = ""\n', "config.toml:2: keys.pause: must be a key like"),
    ('[keys]\nseek_back = "left,,h"\n', "config.toml:2: keys.seek_back: must be a key like"),
    ('[keys]\nwindow = "lefft"\n', "config.toml:2: keys.window: no such key 'lefft' (a character, or a name: left,"),
    ('[keys]\npause = "p,period"\n', "config.toml:2: keys.pause: no such key 'period'"),
    ('[keys]\npause = "cmd+p"\n', "config.toml:2: keys.pause: no such key 'cmd+p'"),
    # two ids live at once on one key (the others keep their defaults): said at the remapped one
    ('[keys]\npause = "m"\n', "config.toml:2: keys.pause: 'm' is also the key of metric: give each its own key"),
    ('[keys]\nmetric = "z"\n\npause = "z"\n', "config.toml:4: keys.pause: 'z' is also the key of metric "
     "(keys.metric, line 2): give each its own key"),
    ('[keys]\nfleet_sort = "/"\n', "config.toml:2: keys.fleet_sort: 'slash' is also the key of fleet_filter: give"),
    ('[keys]\nlog_up = "m"\n', "config.toml:2: keys.log_up: 'm' is also the key of metric (on the dashboard): give"),
    ('[keys]\npalette = "q"\n', "config.toml:2: keys.palette: 'q' is also the key of quit (on the dashboard), "
     "help_close (on the help screen), compare_close (on the compare screen), results_close (on the benchmark's "
     "results) and audit_close (on the audit log): give each its own key"),
    # [profiles.NAME]
    ('[profiles.fast]\nalgorithm = "NEXTN"\nnum_steps = 0\n', "config.toml:3: profiles.fast.num_steps: must be an integer from 1 to 64 (got 0)"),
    ('[profiles.fast]\nalgorithm = "NEXTN"\ntopk = 1.0\n', "config.toml:3: profiles.fast.topk: must be an integer from 1 to 64 (got 1.0)"),
    ('[profiles.fast]\nalgorithm = 3\n', "config.toml:2: profiles.fast.algorithm: must be a string (got 3)"),
    ('[profiles.fast]\nalgorithm = "next-n"\n', "config.toml:2: profiles.fast.algorithm: must be an algorithm name: EAGLE, EAGLE3"),
    ('[profiles.fast]\nalgorithm = "NEXTN"\nsteps = 3\n', "config.toml:3: profiles.fast.steps: unknown key; known: adaptive, "
     "adaptive_config, algorithm, draft_model_path, env, extra_args, num_draft_tokens, num_steps, schedule, topk"),
    ('[profiles.fast]\nalgorithm = "NEXTN"\nextra_args = "--x"\n', "config.toml:3: profiles.fast.extra_args: must be a list of strings"),
    ('[profiles.fast]\nalgorithm = "NEXTN"\nenv = {"1X" = "a"}\n', "config.toml:3: profiles.fast.env.1X: is not a variable name"),
    ('[profiles.fast]\nalgorithm = "NEXTN"\nenv = {X = 1}\n', "config.toml:3: profiles.fast.env.X: must be a string (got 1)"),
    ('[profiles.fast]\nalgorithm = "NEXTN"\n\n[profiles.fast.env]\nOK = "1"\nBAD = 2\n',
     "config.toml:6: profiles.fast.env.BAD: must be a string (got 2)"),
    ('[profiles.fast]\nalgorithm = "NEXTN"\nenv.OK = "1"\nenv.BAD = 2\n', "config.toml:4: profiles.fast.env.BAD: must be a string"),
    ('[profiles.fast]\nalgorithm = "NEXTN"\nenv = "X=1"\n', "config.toml:3: profiles.fast.env: must be a table of NAME"),
    ('[profiles.fast]\nalgorithm = "NEXTN"\ndraft_model_path = ""\n', "config.toml:3: profiles.fast.draft_model_path: must not be empty"),
    ('[profiles.fast]\nnum_steps = 2\ntopk = 1\n', "config.toml:1: profiles.fast: needs an algorithm (it sets num_steps, topk;"),
    ('[profiles.mtp3]\nalgorithm = "NEXTN"\n', "config.toml:1: profiles.mtp3: is a built-in profile (off, mtp1, mtp2, mtp3)"),
    ('[profiles.off]\n', "config.toml:1: profiles.off: is a built-in profile"),
    ('[profiles."a b"]\nalgorithm = "NEXTN"\n', "config.toml:1: profiles.a b: must be 1-63 letters"),
    ('[profiles]\nfast = 3\n', "config.toml:2: profiles.fast: must be a table: write [profiles.fast]"),
    ('profiles = 3\n', "config.toml:1: profiles: must be tables: write [profiles.NAME]"),
    # [control]
    ('[control]\nwait_timeout = 5\n', "config.toml:2: control.wait_timeout: must be a number of seconds from 10 to 86400 (got 5)"),
    ('[control]\nverify_batches = "3"\n', "config.toml:2: control.verify_batches: must be an integer from 1 to 100 (got '3')"),
    ('[control]\nprod_tags = "prod"\n', "config.toml:2: control.prod_tags: must be a list of strings"),
    ('[control]\nsmoke_promt = "hi"\n', "config.toml:2: control.smoke_promt: unknown key; known: lock_stale_after, "
     "prod_tags, smoke_expect, smoke_prompt, verify_batches, wait_timeout"),
    ('[control]\nsmoke_expect = ""\n', "config.toml:2: control.smoke_expect: must not be empty"),
    ('[control]\nsmoke_prompt = 42\n', "config.toml:2: control.smoke_prompt: must be a string (got 42)"),
    ('[control]\nwait_timeout = 3000\nlock_stale_after = 600\n', "config.toml:3: control.lock_stale_after: must not be less than wait_timeout"),
]


@pytest.mark.parametrize("text,where", HOST_ERRORS + TABLE_ERRORS)
def test_errors_name_key_and_line(text, where):
    with pytest.raises(ConfigError) as e:
        parse_config(text)
    assert str(e.value).startswith(where), str(e.value)
    assert "\n" not in str(e.value)


def test_key_ids_are_the_key_tables():
    """Every binding id of every screen is accepted in [keys]; every default key passes the checks,
    and the defaults clash nowhere."""
    from mtptui.config.keys import BINDING_IDS, TABLE, conflicts

    assert len(set(BINDING_IDS)) == len(BINDING_IDS) == len(TABLE)
    text = "[keys]\n" + "".join(f'{k.id} = "{k.keys}"\n' for k in TABLE)
    assert set(parse_config(text).keys) == set(BINDING_IDS)
    assert conflicts({}) == []


def test_keys_swapped_or_moved_off_do_not_clash():
    """The check is against the keys after the remap: two ids swapping keys, or one taking a key
    that its owner gave up, is fine; so is one key on two screens never live at once."""
    c = parse_config('[keys]\npause = "m"\nmetric = "space"\nlog_up = "p"\nprofiles = "P"\nfleet_sort = "q"\n'
                     'fleet_quit = "ctrl+q"\nconfirm_apply = "m"\n')
    assert c.keys["pause"] == "m" and c.keys["confirm_apply"] == "m"


def test_every_mistake_of_a_config_at_once():
    """An unknown id, a key two ids share, a key Textual cannot bind and a bad value in another
    table: one error, a line each, in the order of the file, each with its line."""
    text = ('[thresholds]\nstale_s = -1\n\n'
            '[keys]\npause = "m"\npauze = "x"\nwindow = "lefft"\n\n'
            '[[hosts]]\nname = "a"\nunit = "u"\nport = 0\n\n'
            '[control]\nverify_batches = 0\n')
    with pytest.raises(ConfigError) as e:
        parse_config(text, "my.toml")
    lines = str(e.value).split("\n")
    assert [line.split(": ", 2)[:2] for line in lines] == [
        ["my.toml:2", "thresholds.stale_s"], ["my.toml:5", "keys.pause"], ["my.toml:6", "keys.pauze"],
        ["my.toml:7", "keys.window"], ["my.toml:12", "hosts[0].port"], ["my.toml:15", "control.verify_batches"]]
    assert "'m' is also the key of metric" in lines[1] and "unknown binding id" in lines[2]
    assert "no such key 'lefft'" in lines[3]


def test_a_mistake_does_not_bring_others_that_only_guess():
    """A table whose own keys are wrong skips the rules across them: a bad name is not also
    "needs a name", a bad [defaults] does not make every host "need a unit"."""
    for text, n in [('[[hosts]]\nname = "a b"\nunit = "u"\n', 1),
                    ('[defaults]\nunit = "u"\nport = 0\n\n[[hosts]]\nname = "a"\n[[hosts]]\nname = "b"\n', 1),
                    ('[[hosts]]\nunit = "u"\nport = 0\n', 2),  # no name at all: that is a mistake of its own
                    ('[control]\nwait_timeout = 5\nlock_stale_after = 3\n', 2)]:
        with pytest.raises(ConfigError) as e:
            parse_config(text)
        assert len(str(e.value).split("\n")) == n, str(e.value)


def test_prod_tags_match_without_case():
    assert ControlConfig().is_prod(HostConfig("a", tags=("PROD",)))
    assert not ControlConfig().is_prod(HostConfig("a", tags=("staging",)))




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


def test_readme_config_examples_are_valid():
    """Every ```toml block of the README and docs/ parses as a config: the documentation cannot drift."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    text = "\n".join(p.read_text() for p in [root / "README.md", *sorted((root / "docs").glob("*.md"))])
    blocks = re.findall(r"```toml\n(.*?)```", text, re.S)
    assert len(blocks) >= 2
    configs = [parse_config(b, "docs") for b in blocks]
    assert any(c.profiles and c.keys and c.theme for c in configs)
