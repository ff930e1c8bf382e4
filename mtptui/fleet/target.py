"""Which SSH host a fleet row opens in the live dashboard: the config host whose name or address
is the row's host (for SGLang's metrics, the address of the target's `instance`, without the
port), else that address as an ad hoc host, with the config's [defaults] (the unit, the user)."""

from __future__ import annotations

import urllib.parse

from mtptui.config import Config, HostConfig, resolve_hosts
from mtptui.fleet.query import SGLANG, Host


def address(host: Host) -> str:
    """The machine of a row: SGLang's `instance` without its port; mtptui's host label as is."""
    if host.source != SGLANG:
        return host.host
    try:
        return urllib.parse.urlsplit(f"//{host.host}").hostname or host.host
    except ValueError:  # an instance label that is not ADDR:PORT
        return host.host


def live_spec(host: Host, config: Config) -> str:
    """The HOST argument `mtptui live` takes for the row: a config name, or an address."""
    addr = address(host)
    for h in config.hosts:
        if addr in (h.name, h.address):
            return h.name
    return f"[{addr}]" if ":" in addr else addr


def live_host(host: Host, config: Config, **overrides) -> HostConfig:
    """The row's host, resolved as `mtptui live` resolves it (`overrides`: its unit, sudo and
    identity options). Raises ConfigError (no unit, a label that is no host name)."""
    return resolve_hosts([live_spec(host, config)], config, **overrides)[0]
