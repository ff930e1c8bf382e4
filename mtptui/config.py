"""The TOML config: `[defaults]` and `[[hosts]]` for the live layer.

Default path: the user's config dir (``~/.config/mtptui/config.toml`` on Linux, from platformdirs),
or ``--config PATH``. A missing default file is an empty config; a missing ``--config`` file is an
error. Every validation error names the key and, when it can be found, the line:
``config.toml:12: hosts[1].port: must be an integer from 1 to 65535``.

Tables other than ``defaults`` and ``hosts`` (keys, theme, thresholds, ...) belong to other parts of
the program; they are kept as parsed in ``Config.extra`` and not checked here.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HOST_KEY_POLICIES = ("strict", "accept-new", "off")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
_COLOUR = re.compile(r"#[0-9a-fA-F]{6}|#[0-9a-fA-F]{3}|[a-z][a-z_]{1,30}")


class ConfigError(Exception):
    """A one-line, user-facing reason why the config cannot be used."""


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

    @property
    def target(self) -> str:
        return self.address or self.name

    def describe(self) -> str:
        """`user@address:port` as far as the config tells."""
        s = self.target
        if self.user:
            s = f"{self.user}@{s}"
        if self.port:
            s = f"{s}:{self.port}"
        return s


@dataclass
class Config:
    path: str | None = None
    hosts: list[HostConfig] = field(default_factory=list)
    defaults: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def host(self, name: str) -> HostConfig | None:
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


# --- validation -----------------------------------------------------------------------------------

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


def _int_range(lo: int, hi: int):
    def check(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise ValueError(f"must be an integer from {lo} to {hi} (got {_show(v)})")
        return v
    return check


def _seconds(lo: float, hi: float):
    def check(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
            raise ValueError(f"must be a number of seconds from {lo:g} to {hi:g} (got {_show(v)})")
        return float(v)
    return check


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
    return v


def _accent(v: Any) -> str:
    s = _str(v)
    if not _COLOUR.fullmatch(s):
        raise ValueError(f"must be a colour like \"#e5c07b\" or a name like \"orange\" (got {_show(v)})")
    return s


def _show(v: Any) -> str:
    r = repr(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)
    return r if len(r) <= 40 else r[:37] + "..."


CHECKS = {
    "name": _name,
    "address": _nonempty,
    "port": _int_range(1, 65535),
    "user": _nonempty,
    "identity": _path,
    "unit": _nonempty,
    "sudo": _bool,
    "journalctl_args": _str_list,
    "host_key_policy": _policy,
    "known_hosts": _path,
    "ssh_config": _path,
    "tags": _str_list,
    "accent": _accent,
    "http_port": _int_range(1, 65535),
    "lines": _int_range(0, 1_000_000),
    "connect_timeout": _seconds(0.1, 600),
    "keepalive_interval": _seconds(0, 3600),
    "keepalive_count_max": _int_range(1, 100),
    "reconnect_initial": _seconds(0.01, 600),
    "reconnect_max": _seconds(0.01, 3600),
}
assert set(CHECKS) == {f.name for f in fields(HostConfig)}
# Keys that name one host and make no sense as a default for all of them.
NOT_DEFAULTS = {"name", "address"}


class _Lines:
    """Finds the line of `key` inside `[table]` or the n-th `[[array]]` of a TOML text.

    tomllib reports no positions for values, so this scans the text for table headers and `key =`.
    It covers the ordinary layout; a key it cannot place gets its table's line, or no line.
    """

    _HEADER = re.compile(r"\s*(\[\[?)\s*([A-Za-z0-9_.\"' -]+?)\s*\]\]?\s*(#.*)?$")
    _KEY = re.compile(r"\s*([A-Za-z0-9_-]+|\"[^\"]*\")\s*=")

    def __init__(self, text: str) -> None:
        self.where: dict[tuple[str, int, str], int] = {}
        table, index, counts = "", 0, {}
        for no, line in enumerate(text.splitlines(), 1):
            m = self._HEADER.match(line)
            if m:
                table = m.group(2).replace('"', "").replace("'", "")
                if m.group(1) == "[[":
                    counts[table] = counts.get(table, -1) + 1
                    index = counts[table]
                else:
                    index = 0
                self.where.setdefault((table, index, ""), no)
                continue
            k = self._KEY.match(line)
            if k:
                self.where.setdefault((table, index, k.group(1).strip('"')), no)

    def line(self, table: str, index: int, key: str) -> int | None:
        return self.where.get((table, index, key)) or self.where.get((table, index, ""))


def parse_config(text: str, path: str = "config.toml") -> Config:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None
    lines = _Lines(text)

    def fail(table: str, index: int, key: str, label: str, msg: str) -> ConfigError:
        no = lines.line(table, index, key)
        return ConfigError(f"{path}:{no}: {label}: {msg}" if no else f"{path}: {label}: {msg}")

    def check_table(raw: Any, table: str, index: int, label: str, allowed: set[str]) -> dict:
        if not isinstance(raw, dict):
            raise fail(table, index, "", label, "must be a table")
        out = {}
        for key, value in raw.items():
            if key not in allowed:
                hint = " (it names one host: set it in [[hosts]])" if key in NOT_DEFAULTS else ""
                raise fail(table, index, key, f"{label}.{key}" if label else key,
                           f"unknown key{hint}; known: {', '.join(sorted(allowed))}")
            try:
                out[key] = CHECKS[key](value)
            except ValueError as e:
                raise fail(table, index, key, f"{label}.{key}", str(e)) from None
        return out

    defaults = check_table(doc.get("defaults", {}), "defaults", 0, "defaults",
                           set(CHECKS) - NOT_DEFAULTS)
    raw_hosts = doc.get("hosts", [])
    if not isinstance(raw_hosts, list):
        raise fail("hosts", 0, "", "hosts", "must be an array of tables: write [[hosts]]")
    hosts: list[HostConfig] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_hosts):
        label = f"hosts[{i}]"
        values = check_table(raw, "hosts", i, label, set(CHECKS))
        if "name" not in values:
            raise fail("hosts", i, "", label, "needs a name")
        if values["name"] in seen:
            raise fail("hosts", i, "name", f"{label}.name", f"duplicate host name {values['name']!r}")
        seen.add(values["name"])
        merged = {**defaults, **values}
        if not merged.get("unit"):
            raise fail("hosts", i, "", label, "needs a unit (here or in [defaults])")
        if merged.get("reconnect_max", 30.0) < merged.get("reconnect_initial", 0.5):
            raise fail("hosts", i, "reconnect_max", f"{label}.reconnect_max",
                       "must not be less than reconnect_initial")
        hosts.append(HostConfig(**merged))
    extra = {k: v for k, v in doc.items() if k not in ("defaults", "hosts")}
    return Config(path=path, hosts=hosts, defaults=defaults, extra=extra)


def load_config(path: str | os.PathLike | None = None) -> Config:
    """Reads PATH, or the default path when None (then a missing file is an empty config)."""
    explicit = path is not None
    p = Path(path) if explicit else default_config_path()
    try:
        text = p.read_text(encoding="utf-8")
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
