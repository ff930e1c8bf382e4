"""The TOML config, the program's one reader of it: every table checked and typed here.

Default path: the user's config dir (``~/.config/mtptui/config.toml`` on Linux, from platformdirs),
or ``--config PATH``. A missing default file is an empty config; a missing ``--config`` file is an
error. Every validation error names the key and, when it can be found, the line:
``config.toml:12: hosts[1].port: must be an integer from 1 to 65535``.

Tables: ``theme = "name"`` (top level), ``[defaults]``, ``[[hosts]]``, ``[thresholds]`` (alerts),
``[keys]`` (binding id = key), ``[profiles.NAME]`` (speculation profiles), ``[control]`` (restart
settings). Anything else is refused with the list of known ones. The types only are checked here:
whether SGLang accepts a profile's combination of values is control/profiles.py's business.

Every mistake of a file is reported at once, one line each, in the order of their lines (a table
whose keys are wrong skips the rules across its keys, which would only guess).
"""

from __future__ import annotations

import difflib
import math
import os
import re
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Callable

from mtptui.config import ranges
from mtptui.config.keys import BINDING_IDS, KEY_HINT, bindable, conflicts, where
from mtptui.errors import UsageError
from mtptui.files import MIB, TooLarge, read_bounded
from mtptui.config.profile import BUILTINS, Profile
from mtptui.config.thresholds import Thresholds

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_LIMIT = 1 * MIB  # a config file: past it, refused (--config /dev/zero)
HOST_KEY_POLICIES = ("strict", "accept-new", "off")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
_COLOUR = re.compile(r"#[0-9a-fA-F]{6}|#[0-9a-fA-F]{3}|[a-z][a-z_]{1,30}")
_ALGORITHM = re.compile(r"[A-Z][A-Z0-9_]{0,31}")  # EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM, newer ones
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A Textual key name, or several with commas: `p`, `ctrl+x`, `left`, `question_mark`, `left,h`;
# whether Textual knows the name: config/keys.py's bindable, Textual's table without Textual.
_KEY = re.compile(r"(?:[a-z]+\+)*(?:[a-z0-9_]{2,}|\S)")


class ConfigError(UsageError):
    """A user-facing reason why the config cannot be used: one line, or a line for each mistake of a file."""


class _Mistake(ConfigError):
    """One mistake of a file, with its line (None: not found) for the order of the report."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


class _Inner(ValueError):
    """A check's complaint about one key inside the value (a table), so the error can name it."""

    def __init__(self, key: str, why: str) -> None:
        super().__init__(why)
        self.key = key


@dataclass(frozen=True)
class HostConfig:
    """One journald stream to follow: where, as whom, which unit."""

    name: str
    address: str = ""  # host name, IP, or a Host alias of ~/.ssh/config; empty: the name
    port: int | None = None  # None: from ~/.ssh/config, else 22
    user: str | None = None  # None: from ~/.ssh/config, else the local user
    identity: str | None = None  # a private key file; None: ~/.ssh/config, the agent, default keys
    unit: str = ""
    sudo: bool = False  # run journalctl as `sudo -n journalctl`
    journalctl_args: tuple[str, ...] = ()
    host_key_policy: str = "strict"
    known_hosts: str | None = None  # None: ~/.ssh/known_hosts (and UserKnownHostsFile)
    ssh_config: str | None = None  # None: ~/.ssh/config
    tags: tuple[str, ...] = ()
    accent: str | None = None
    http_port: int | None = None
    lines: int = 200  # history entries shown on the first connect (journalctl -n)
    connect_timeout: float = 10.0
    keepalive_interval: float = 5.0
    keepalive_count_max: int = 3
    reconnect_initial: float = 0.5
    reconnect_max: float = 30.0
    # A container host (instead of a unit): the runtime, and a container or a compose service
    runtime: str = ""  # the container runtime of a container host: docker (the default) or podman
    container: str = ""  # a container host: the container's name (`docker run --name`), instead of a unit
    compose: str = ""  # a compose host: the project's directory or compose file on the host (with service)
    service: str = ""  # a compose host: the service; each of its replicas is an engine, HOST-N
    local: bool = False  # a container host on this machine, reached without SSH

    @property
    def target(self) -> str:
        return self.address or self.name

    @property
    def kind(self) -> str:
        """What the host runs the server as: a systemd unit, a container, a compose service."""
        return "compose" if self.service else "container" if self.container else "systemd"

    @property
    def runtime_name(self) -> str:
        return self.runtime or "docker"

    def describe(self) -> str:
        """`user@address:port` as far as the config tells."""
        s = self.target
        if self.user:
            s = f"{self.user}@{s}"
        if self.port:
            s = f"{s}:{self.port}"
        return s


@dataclass(frozen=True)
class ControlConfig:
    """`[control]`: how restarts with a new profile are run and judged."""

    wait_timeout: float = 900.0  # seconds from restart to ready before it counts as failed
    verify_batches: int = 3  # decode batches of the new run read before speculation counts as verified
    lock_stale_after: float = 1800.0  # seconds after which another console's lock may be broken
    prod_tags: tuple[str, ...] = ("prod",)  # a host with one of these tags: type its name to confirm
    smoke_prompt: str = "What is 15*23? Answer with the number only."  # `x` / `mtptui smoke` asks this
    smoke_expect: str = "345"  # ... and passes when the answer holds this

    def is_prod(self, host: HostConfig) -> bool:
        return bool({t.lower() for t in host.tags} & {t.lower() for t in self.prod_tags})


@dataclass(frozen=True)
class Config:
    path: str | None = None
    hosts: list[HostConfig] = field(default_factory=list)
    defaults: dict[str, Any] = field(default_factory=dict)
    theme: str | None = None
    thresholds: Thresholds = field(default_factory=Thresholds)
    keys: dict[str, str] = field(default_factory=dict)  # binding id -> key(s), as in [keys]
    profiles: dict[str, Profile] = field(default_factory=dict)  # the user's; built-ins: control.profiles
    control: ControlConfig = field(default_factory=ControlConfig)

    def host(self, name: str | None) -> HostConfig | None:
        for h in self.hosts:
            if h.name == name:
                return h
        return None

    def new_host(self, name: str, **values: Any) -> HostConfig:
        """An ad hoc host (not in the file) that still takes the file's [defaults]."""
        merged = {**self.defaults, **{k: v for k, v in values.items() if v is not None}}
        return replace(HostConfig(name=name), **merged)


def default_config_path() -> Path:
    try:
        from platformdirs import user_config_dir
    except ImportError:  # a bare python3 on a GPU host (mtptui local from a checkout)
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
        return Path(base) / "mtptui" / "config.toml"
    return Path(user_config_dir("mtptui", appauthor=False)) / "config.toml"


# --- value checks: each returns the typed value or raises ValueError(why) ------------------------

def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise ValueError(f"must be a string (got {_show(v)})")
    return v


def _nonempty(v: Any) -> str:
    s = _str(v)
    if not s.strip():
        raise ValueError("must not be empty")
    return s


def _path(v: Any) -> str:
    return os.path.expanduser(_nonempty(v))


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise ValueError(f"must be true or false (got {_show(v)})")
    return v


def _number(integer: bool, hi: float = math.inf) -> Callable[[Any], float | int]:
    """A finite number >= 0 (at most `hi`); an integer when `integer`."""
    kind = "an integer" if integer else "a number"
    bound = f"from 0 to {hi:g}" if hi < math.inf else ">= 0"

    def check(v: Any) -> float | int:
        ok = isinstance(v, int) if integer else isinstance(v, (int, float))
        if isinstance(v, bool) or not ok or not math.isfinite(v) or not 0 <= v <= hi:
            raise ValueError(f"must be {kind} {bound} (got {_show(v)})")
        return v if integer else float(v)
    return check


# A unit as systemd names one (letters, digits, ":-_.\\", "@" of a template instance) or a glob of
# them, as journalctl --unit takes: never NUL, a space or a newline (`--unit $'\\0'` was a traceback)
_UNIT = re.compile(r"[A-Za-z0-9:_.\\@*?\[\]-]{1,256}")


def _matching(pattern: re.Pattern[str], like: str) -> Callable[[Any], str]:
    """A string check: the whole value matches pattern, else `must be LIKE`."""
    def check(v: Any) -> str:
        s = _str(v)
        if not pattern.fullmatch(s):
            raise ValueError(f"must be {like} (got {_show(v)})")
        return s
    return check


# The config's `unit` and every --unit (argparse's type=, through unit_arg): one check
unit_name = _matching(_UNIT, "a unit name like \"sglang\" or \"sglang@a.service\"")


def as_arg(check: Callable[[Any], str]) -> Callable[[str], str]:
    """A config key's check as argparse's type= for the flag that sets the same thing."""
    import argparse

    def arg(text: str) -> str:
        try:
            return check(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    return arg


unit_arg = as_arg(unit_name)
RUNTIMES = ("docker", "podman")  # the container runtimes: the same verbs (sources/runtime.py)
# A container's or a compose service's name, as Docker and compose take them
_CONTAINER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


_container = _matching(_CONTAINER, "a name like \"sglang\" (letters, digits, '_', '.', '-')")


container_arg = as_arg(_container)


def _one_of(v: Any, allowed: tuple[str, ...]) -> str:
    if v not in allowed:
        raise ValueError(f"must be one of {', '.join(allowed)} (got {_show(v)})")
    return str(v)


def _str_list(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ValueError(f"must be a list of strings (got {_show(v)})")
    return tuple(v)


def _name(v: Any) -> str:
    s = _str(v)
    if not _NAME.fullmatch(s):
        raise ValueError(f"must be 1-63 letters, digits, '.', '_' or '-' (got {_show(v)})")
    return s


def _policy(v: Any) -> str:
    if v not in HOST_KEY_POLICIES:
        raise ValueError(f"must be one of {', '.join(HOST_KEY_POLICIES)} (got {_show(v)})")
    return str(v)


def _accent(v: Any) -> str:
    s = _str(v)
    if not _COLOUR.fullmatch(s):
        raise ValueError(f"must be a colour like \"#e5c07b\" or a name like \"orange\" (got {_show(v)})")
    return s


def _theme(v: Any) -> str:
    if isinstance(v, dict):
        raise ValueError("must be a string: write theme = \"NAME\" above the first [table]")
    return _nonempty(v)


def _key(v: Any) -> str:
    s = _str(v)
    parts = [p.strip() for p in s.split(",")]
    if not all(_KEY.fullmatch(p) for p in parts):
        raise ValueError(f"must be a key like \"p\", \"ctrl+x\", \"left\", or several: \"left,h\" "
                         f"(got {_show(v)})")
    bad = [p for p in parts if not bindable(p)]
    if bad:
        raise ValueError(f"no such key {', '.join(map(repr, bad))} ({KEY_HINT})")
    return ",".join(parts)


def _algorithm(v: Any) -> str:
    s = _str(v).strip().upper()
    if not _ALGORITHM.fullmatch(s):
        raise ValueError(f"must be an algorithm name: EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM ... "
                         f"(got {_show(v)})")
    return s


def _env(v: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(v, dict):
        raise ValueError(f"must be a table of NAME = \"value\" (got {_show(v)})")
    for name, value in v.items():
        if not _ENV_NAME.fullmatch(name):
            raise _Inner(name, "is not a variable name (letters, digits, '_'; no digit first)")
        if not isinstance(value, str):
            raise _Inner(name, f"must be a string (got {_show(value)})")
    return tuple(v.items())


def _schedule(v: Any) -> tuple[tuple[int, int, int], ...]:
    """vLLM's num_speculative_tokens_per_batch_size: [[first batch size, last, K], ...]; whether
    vLLM takes the ranges is control/profiles.py's (its version's rules)."""
    if not isinstance(v, list) or not v:
        raise ValueError(f"must be a list of [first batch size, last batch size, K] (got {_show(v)})")
    out = []
    for entry in v:
        if not (isinstance(entry, list) and len(entry) == 3
                and all(isinstance(x, int) and not isinstance(x, bool) for x in entry)):
            raise ValueError(f"each entry must be [first batch size, last batch size, K], whole numbers "
                             f"(got {_show(entry)})")
        out.append((entry[0], entry[1], ranges.SCHEDULE_K.check(entry[2])))
    return tuple(out)


def _show(v: Any) -> str:
    if isinstance(v, dict):
        return "a table"
    r = repr(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)
    return r if len(r) <= 40 else r[:37] + "..."


Check = Callable[[Any], Any]

CHECKS: dict[str, Check] = {
    "name": _name,
    "address": _nonempty,
    "port": ranges.PORT.check,
    "user": _nonempty,
    "identity": _path,
    "unit": unit_name,
    "sudo": _bool,
    "journalctl_args": _str_list,
    "host_key_policy": _policy,
    "known_hosts": _path,
    "ssh_config": _path,
    "tags": _str_list,
    "accent": _accent,
    "http_port": ranges.PORT.check,
    "lines": ranges.LINES.check,
    "connect_timeout": ranges.CONNECT_TIMEOUT.check,
    "keepalive_interval": ranges.KEEPALIVE_INTERVAL.check,
    "keepalive_count_max": ranges.KEEPALIVE_COUNT_MAX.check,
    "reconnect_initial": ranges.RECONNECT_INITIAL.check,
    "reconnect_max": ranges.RECONNECT_MAX.check,
    "runtime": lambda v: _one_of(v, RUNTIMES),
    "container": _container,
    "compose": _path,
    "service": _container,
    "local": _bool,
}
assert set(CHECKS) == {f.name for f in fields(HostConfig)}
# Keys that name one host and make no sense as a default for all of them.
NOT_DEFAULTS = {"name", "address", "container", "compose", "service"}

THRESHOLD_CHECKS: dict[str, Check] = {
    f.name: _number(isinstance(f.default, int), hi=1.0 if f.name == "coverage" else math.inf)
    for f in fields(Thresholds)
}
THRESHOLD_CHECKS["stale_s"] = ranges.STALE_AFTER.check  # export --stale-after's too

CONTROL_CHECKS: dict[str, Check] = {
    "wait_timeout": ranges.WAIT_TIMEOUT.check,
    "verify_batches": ranges.VERIFY_BATCHES.check,
    "lock_stale_after": ranges.LOCK_STALE_AFTER.check,
    "prod_tags": _str_list,
    "smoke_prompt": _nonempty,
    "smoke_expect": _nonempty,
}
assert set(CONTROL_CHECKS) == {f.name for f in fields(ControlConfig)}

PROFILE_CHECKS: dict[str, Check] = {
    "algorithm": _algorithm,
    "num_steps": ranges.NUM_STEPS.check,
    "topk": ranges.TOPK.check,
    "num_draft_tokens": ranges.NUM_DRAFT_TOKENS.check,
    "draft_model_path": _nonempty,
    "adaptive": _bool,
    "adaptive_config": _nonempty,
    "schedule": _schedule,
    "env": _env,
    "extra_args": _str_list,
}
assert set(PROFILE_CHECKS) == {f.name for f in fields(Profile)} - {"name"}
# What makes a profile speculative: without an algorithm, none of these may be set.
SPEC_FIELDS = ("num_steps", "topk", "num_draft_tokens", "draft_model_path", "adaptive", "adaptive_config", "schedule")

TOP_LEVEL = ("control", "defaults", "hosts", "keys", "profiles", "theme", "thresholds")


# --- where a key is written -----------------------------------------------------------------------

_PART = r"[A-Za-z0-9_-]+|\"[^\"\n]*\"|'[^'\n]*'"
_DOTTED = rf"(?:{_PART})(?:\s*\.\s*(?:{_PART}))*"


def _parts(dotted: str) -> tuple[str, ...]:
    return tuple(p[1:-1] if p[0] in "\"'" else p for p in re.findall(_PART, dotted))


class _Lines:
    """Finds the line of a key by its table's path (``("profiles", "fast")``), the index of an
    ``[[array]]`` entry, and the key, in a TOML text.

    tomllib reports no positions for values, so this scans the text for table headers and
    ``key =`` (dotted keys too). It covers the ordinary layout; a key it cannot place gets the line
    of its table or of an enclosing one (an inline table's key: the line of the table's key), or none.
    """

    _HEADER = re.compile(rf"\s*(\[\[?)\s*({_DOTTED})\s*\]\]?\s*(#.*)?$")
    _KEY = re.compile(rf"\s*({_DOTTED})\s*=")

    def __init__(self, text: str) -> None:
        self.where: dict[tuple[tuple[str, ...], int, str], int] = {}
        table: tuple[str, ...] = ()
        index = 0
        counts: dict[tuple[str, ...], int] = {}  # an array of tables' entries so far
        for no, line in enumerate(text.splitlines(), 1):
            m = self._HEADER.match(line)
            if m:
                table = _parts(m.group(2))
                if m.group(1) == "[[":
                    counts[table] = counts.get(table, -1) + 1
                    index = counts[table]
                else:
                    index = 0
                self.where.setdefault((table, index, ""), no)
                continue
            k = self._KEY.match(line)
            if k:
                parts = _parts(k.group(1))
                for i, key in enumerate(parts):
                    self.where.setdefault((table + parts[:i], index, key), no)

    def line(self, table: tuple[str, ...], index: int, key: str) -> int | None:
        while True:
            no = (self.where.get((table, index, key))
                  or (key and self.where.get((table + (key,), 0, "")))  # the key is a [table]
                  or self.where.get((table, index, "")))
            if no or not table:
                return no or None
            table, index, key = table[:-1], 0, table[-1]


# --- the reader -----------------------------------------------------------------------------------

def parse_config(text: str, path: str = "config.toml") -> Config:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    return _Reader(text, path).config(doc)


class _Reader:
    """Checks a parsed document table by table. Each mistake is a ConfigError with its line, noted
    and the reading goes on; `config` raises them all at once, one line each."""

    def __init__(self, text: str, path: str) -> None:
        self.lines = _Lines(text)
        self.path = path
        self.mistakes: list[_Mistake] = []

    def fail(self, table: tuple[str, ...], index: int, key: str, label: str, msg: str) -> _Mistake:
        no = self.lines.line(table, index, key)
        return _Mistake(f"{self.path}:{no}: {label}: {msg}" if no else f"{self.path}: {label}: {msg}", no)

    def note(self, e: ConfigError) -> None:
        self.mistakes.append(e if isinstance(e, _Mistake) else _Mistake(str(e), None))

    def attempt(self, read: Callable[[], Any], fallback: Any) -> Any:
        """read(), or (its mistake noted) the fallback."""
        try:
            return read()
        except ConfigError as e:
            self.note(e)
            return fallback

    def check(self, table: tuple[str, ...], index: int, key: str, label: str, fn: Check, value: Any) -> Any:
        try:
            return fn(value)
        except _Inner as e:
            raise self.fail(table + (key,), index, e.key, f"{label}.{e.key}", str(e)) from None
        except ValueError as e:
            raise self.fail(table, index, key, label, str(e)) from None

    def table(self, raw: Any, table: tuple[str, ...], index: int, label: str, checks: dict[str, Check],
              what: str = "key", hint: Callable[[str], str] = lambda key: "") -> dict:
        """The keys that pass their checks; each that does not is noted. Raises when raw is no table."""
        if not isinstance(raw, dict):
            raise self.fail(table, index, "", label, f"must be a table (got {_show(raw)})")
        out = {}
        for key, value in raw.items():
            if key not in checks:
                self.note(self.fail(table, index, key, f"{label}.{key}",
                                    f"unknown {what}{hint(key)}; known: {', '.join(sorted(checks))}"))
                continue
            try:
                out[key] = self.check(table, index, key, f"{label}.{key}", checks[key], value)
            except ConfigError as e:
                self.note(e)
        return out

    def config(self, doc: dict) -> Config:
        for key, value in doc.items():
            if key not in TOP_LEVEL:
                kind = "table" if isinstance(value, (dict, list)) else "key"
                hint = " (a host field: set it in [defaults] or [[hosts]])" if key in CHECKS else ""
                self.note(self.fail((), 0, key, key, f"unknown {kind}{hint}; known: {', '.join(TOP_LEVEL)}"))
        theme = self.attempt(lambda: self.check((), 0, "theme", "theme", _theme, doc["theme"]), None) \
            if "theme" in doc else None
        before = len(self.mistakes)
        defaults = self.attempt(lambda: self.table(
            doc.get("defaults", {}), ("defaults",), 0, "defaults", {k: v for k, v in CHECKS.items() if k not in NOT_DEFAULTS},
            hint=lambda k: " (it names one host: set it in [[hosts]])" if k in NOT_DEFAULTS else ""), {})
        defaults_read = len(self.mistakes) == before
        thresholds = self.attempt(lambda: self.table(doc.get("thresholds", {}), ("thresholds",), 0, "thresholds",
                                                     THRESHOLD_CHECKS), {})
        keys = self.keys(doc.get("keys", {}))
        hosts = self.attempt(lambda: self.hosts(doc.get("hosts", []), defaults, defaults_read), [])
        profiles = self.attempt(lambda: self.profiles(doc.get("profiles", {})), {})
        control = self.attempt(lambda: self.control(doc.get("control", {})), ControlConfig())
        if self.mistakes:
            raise ConfigError("\n".join(str(e) for e in sorted(self.mistakes, key=lambda e: e.line or 0)))
        return Config(path=self.path, hosts=hosts, defaults=defaults, theme=theme, thresholds=Thresholds(**thresholds),
                      keys=keys, profiles=profiles, control=control)

    def keys(self, raw: Any) -> dict[str, str]:
        """`[keys]`: every id one of the key table's, every key one that Textual binds, and no key
        shared by two ids live at the same time (the remap over the others' defaults)."""
        def near(bid: str) -> str:
            close = difflib.get_close_matches(bid, BINDING_IDS, n=1)
            return f" (did you mean {close[0]}?)" if close else ""

        try:
            keys = self.table(raw, ("keys",), 0, "keys", dict.fromkeys(BINDING_IDS, _key), what="binding id", hint=near)
        except ConfigError as e:
            self.note(e)
            return {}
        shared: dict[tuple[str, str], list[str]] = {}  # (id remapped, key) -> the ids it clashes with
        for clash in conflicts(keys):
            # said at the id remapped; of two remapped, at the later line
            line = {b: self.lines.line(("keys",), 0, b) or 0 for b in (clash.first, clash.second) if b in keys}
            ours = max(line, key=line.__getitem__)
            shared.setdefault((ours, clash.key), []).append(clash.second if ours == clash.first else clash.first)
        for (ours, key), others in shared.items():
            def said(other: str) -> str:
                notes = [f"keys.{other}, line {self.lines.line(('keys',), 0, other)}"] if other in keys else []
                notes += [f"on {where(other)}"] if where(other) != where(ours) else []
                return other + (f" ({', '.join(notes)})" if notes else "")

            names = [said(o) for o in others]
            listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
            self.note(self.fail(("keys",), 0, ours, f"keys.{ours}",
                                f"{key!r} is also the key of {listed}: give each its own key"))
        return keys

    def hosts(self, raw_hosts: Any, defaults: dict, defaults_read: bool = True) -> list[HostConfig]:
        if not isinstance(raw_hosts, list):
            raise self.fail(("hosts",), 0, "", "hosts", "must be an array of tables: write [[hosts]]")
        hosts: list[HostConfig] = []
        seen: set[str] = set()
        for i, raw in enumerate(raw_hosts):
            label = f"hosts[{i}]"
            before = len(self.mistakes)
            try:
                values = self.table(raw, ("hosts",), i, label, CHECKS)
            except ConfigError as e:
                self.note(e)
                continue
            if "name" not in raw:
                self.note(self.fail(("hosts",), i, "", label, "needs a name"))
            elif "name" in values:
                if values["name"] in seen:
                    self.note(self.fail(("hosts",), i, "name", f"{label}.name",
                                        f"duplicate host name {values['name']!r}"))
                seen.add(values["name"])
            if len(self.mistakes) != before or not defaults_read:
                continue  # the rules below would guess
            merged = {**defaults, **values}
            why = target_mistake(merged, values)
            if why:
                self.note(self.fail(("hosts",), i, "", label, why))
            elif merged.get("reconnect_max", 30.0) < merged.get("reconnect_initial", 0.5):
                self.note(self.fail(("hosts",), i, "reconnect_max", f"{label}.reconnect_max",
                                    "must not be less than reconnect_initial"))
            else:
                hosts.append(HostConfig(**merged))
        return hosts

    def profiles(self, raw_profiles: Any) -> dict[str, Profile]:
        if not isinstance(raw_profiles, dict):
            raise self.fail((), 0, "profiles", "profiles", "must be tables: write [profiles.NAME]")
        profiles: dict[str, Profile] = {}
        for name, raw in raw_profiles.items():
            label = f"profiles.{name}"
            try:
                self.check(("profiles",), 0, name, label, _name, name)
                if name in BUILTINS:
                    raise self.fail(("profiles",), 0, name, label,
                                    f"is a built-in profile ({', '.join(BUILTINS)}); give yours another name")
                if not isinstance(raw, dict):
                    raise self.fail(("profiles",), 0, name, label, f"must be a table: write [profiles.{name}]")
            except ConfigError as e:
                self.note(e)
                continue
            before = len(self.mistakes)
            values = self.table(raw, ("profiles", name), 0, label, PROFILE_CHECKS)
            if len(self.mistakes) != before:
                continue
            spec = [k for k in SPEC_FIELDS if k in values]
            if "algorithm" not in values and spec:
                self.note(self.fail(("profiles", name), 0, "", label,
                                    f"needs an algorithm (it sets {', '.join(spec)}; without one a profile "
                                    "turns speculation off)"))
                continue
            profiles[name] = Profile(name=name, **values)
        return profiles

    def control(self, raw: Any) -> ControlConfig:
        before = len(self.mistakes)
        control = ControlConfig(**self.table(raw, ("control",), 0, "control", CONTROL_CHECKS))
        if len(self.mistakes) == before and control.lock_stale_after < control.wait_timeout:
            self.note(self.fail(("control",), 0, "lock_stale_after", "control.lock_stale_after",
                                "must not be less than wait_timeout (the lock is held while the restart "
                                "is awaited)"))
        return control


def target_mistake(merged: dict[str, Any], own: dict[str, Any]) -> str | None:
    """What is wrong with the host's target (a unit, a container, or a compose service), or None.
    A host that names a container or a service is a container host: a default unit is not its."""
    container, service = merged.get("container"), merged.get("service")
    if (container or service) and not own.get("unit"):
        merged.pop("unit", None)
    if (container or service) and merged.get("unit"):
        return "names both a unit and a container or service: one target per host"
    if container and (service or merged.get("compose")):
        return "names both a container and a compose service: one target per host"
    if bool(service) != bool(merged.get("compose")):
        return "a compose service needs both compose (the project's directory or file) and service"
    if merged.get("local") and not (container or service):
        return "local = true is for a container host (a unit on this machine: mtptui local, spec --local)"
    if not (merged.get("unit") or container or service):
        return "needs a unit, a container, or compose and service (here or in [defaults])"
    return None


def load_config(path: str | os.PathLike | None = None) -> Config:
    """Reads PATH, or the default path when None (then a missing file is an empty config)."""
    p = Path(path) if path is not None else default_config_path()
    explicit = path is not None
    try:
        text = read_bounded(p, CONFIG_LIMIT, "a config").decode("utf-8")
    except TooLarge as e:
        raise ConfigError(str(e)) from None
    except FileNotFoundError:
        if explicit:
            raise ConfigError(f"{p}: no such config file") from None
        return Config(path=None)
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{p}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    return parse_config(text, str(p))


_ADHOC = re.compile(r"(?:(?P<user>[^@\s]+)@)?(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[^@:\s\[\]]+))"
                    r"(?::(?P<port>\d{1,5}))?")


def parse_target(spec: str) -> tuple[str | None, str, int | None]:
    """`user@host[:port]` (IPv6 as `[addr]:port`) -> (user, host, port). Raises ConfigError."""
    m = _ADHOC.fullmatch(spec)
    if not m:
        raise ConfigError(f"{spec!r}: not a host (use a config name or user@host[:port])")
    port = int(m.group("port")) if m.group("port") else None
    if port is not None and not 1 <= port <= 65535:
        raise ConfigError(f"{spec!r}: port must be from 1 to 65535")
    return m.group("user"), m.group("v6") or m.group("host"), port


def not_in_config(config: Config) -> str:
    """Why a name is no host of the config, in words: which file was read and what it names."""
    if config.path is None:
        return (f"not a host in any config: none was read ({default_config_path()} does not exist; "
                "--config FILE names another)")
    names = [h.name for h in config.hosts]
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    return f"not a host in {config.path} " + (f"(its hosts: {shown})" if names else "(it has no [[hosts]])")


def resolve_hosts(names: list[str], config: Config, *, unit: str | None = None,
                  sudo: bool | None = None, identity: str | None = None,
                  target: dict[str, Any] | None = None) -> list[HostConfig]:
    """Config names and ad hoc `user@host[:port]` specs -> hosts. Raises ConfigError."""
    hosts, named = _hosts_named(names, config)
    changes = _command_line_overrides(unit, sudo, identity, target)
    out = []
    seen = set()
    for h in hosts:
        h = replace(h, **changes) if changes else h
        _check_target(h, named, config)
        if h.name in seen:
            raise ConfigError(f"{h.name}: named twice")
        seen.add(h.name)
        out.append(h)
    return out


def _hosts_named(names: list[str], config: Config) -> tuple[list[HostConfig], set[str]]:
    """The hosts the names mean (every host of the config when none is named), and which names were
    bare words that are not in the config: mistyped, or the config not given."""
    named: set[str] = set()
    if not names:
        if not config.hosts:
            where = config.path or "the config file"
            raise ConfigError(f"no hosts: name one (user@host[:port] --unit U) or add [[hosts]] "
                              f"to {where}")
        return list(config.hosts), named
    hosts = []
    for spec in names:
        h = config.host(spec)
        if h is None:
            user, addr, port = parse_target(spec)
            h = config.new_host(spec if (user or port) else addr, address=addr, user=user,
                                port=port)
            if not (user or port or "." in addr or ":" in addr):  # a bare name, not an address
                named.add(h.name)
        hosts.append(h)
    return hosts, named


def _command_line_overrides(unit: str | None, sudo: bool | None, identity: str | None,
                            target: dict[str, Any] | None) -> dict[str, Any]:
    """What the command line sets on every host: --unit, --sudo, --identity, and a target
    (--container, --compose/--service, --runtime) that replaces the host's unit."""
    changes: dict = {}
    if unit:
        changes["unit"] = unit
    if sudo:
        changes["sudo"] = True
    if identity:
        changes["identity"] = os.path.expanduser(identity)
    if target:
        changes.update({k: v for k, v in target.items() if v})
        if target.get("container") or target.get("service"):
            changes.setdefault("unit", "")
            changes.update({k: "" for k in ("container", "service", "compose") if not target.get(k)})
    return changes


def _check_target(h: HostConfig, named: set[str], config: Config) -> None:
    """Raises ConfigError when the host has no target or a muddled one. With none at all, a bare
    name not in the config is most often a mistyped name, or a config not given: that is said first."""
    why = target_mistake(vars(h).copy(), {"unit": h.unit})
    if why and not (h.unit or h.container or h.service):
        if h.name in named:
            raise ConfigError(f"{h.name}: {not_in_config(config)}; for a host outside the config give "
                              "--unit, --container, or --compose and --service")
        raise ConfigError(f"{h.name}: which unit? give --unit, --container, or --compose and --service "
                          "(or unit = ... in the config)")
    if why:
        raise ConfigError(f"{h.name}: {why}")
