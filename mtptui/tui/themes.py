"""Themes from TOML files (``themes/*.toml``) as Textual themes, and per-host accent colours.

A theme file holds the fields of ``textual.theme.Theme`` (name, primary, background, ...) and a
``[variables]`` table. Files are read from the installed package (``mtptui/_themes``), the source
tree's ``themes/``, and the user's config directory, later ones replacing earlier ones by name.
A broken file is skipped with a reason (shown once on screen), never a crash.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from textual.theme import Theme

from mtptui.config import Config

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

DEFAULT_THEME = "mtptui-dark"
_FIELDS = {f.name for f in dataclasses.fields(Theme)}
# Tags that make a host look different without an explicit accent (k9s #980: "prod = red").
PROD_ACCENT = "#D03B3B"


def theme_dirs() -> list[Path]:
    here = Path(__file__).resolve().parent.parent  # the mtptui package
    dirs = [here / "_themes", here.parent / "themes"]
    try:
        from platformdirs import user_config_dir

        dirs.append(Path(user_config_dir("mtptui")) / "themes")
    except ImportError:
        pass
    return dirs


def load_theme_file(path: Path) -> Theme:
    """Raises ValueError with a one-line reason."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: cannot read ({e})") from None
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: bad TOML ({e})") from None
    unknown = set(data) - _FIELDS
    if unknown:
        raise ValueError(f"{path}: unknown keys {', '.join(sorted(unknown))}")
    if "name" not in data or "primary" not in data:
        raise ValueError(f"{path}: a theme needs at least `name` and `primary`")
    variables = data.get("variables", {})
    if not isinstance(variables, dict):
        raise ValueError(f"{path}: [variables] must be a table")
    data["variables"] = {str(k): str(v) for k, v in variables.items()}
    try:
        theme = Theme(**data)
        theme.to_color_system()  # parses every colour: a typo fails here, not at draw time
    except Exception as e:  # noqa: BLE001 - Textual raises several types for a bad colour
        raise ValueError(f"{path}: {e}") from None
    return theme


def load_themes(dirs: list[Path] | None = None) -> tuple[list[Theme], list[str]]:
    """(themes in name order, problems)."""
    found: dict[str, Theme] = {}
    problems: list[str] = []
    for d in dirs if dirs is not None else theme_dirs():
        if not d.is_dir():
            continue
        for path in sorted(d.glob("*.toml")):
            try:
                t = load_theme_file(path)
            except ValueError as e:
                problems.append(str(e))
                continue
            found[t.name] = t
    order = sorted(found, key=lambda n: (n != DEFAULT_THEME, n))
    return [found[n] for n in order], problems


def install_themes(app, wanted: str | None) -> tuple[list[str], list[str]]:
    """Registers the themes on a Textual app and sets `wanted` (the default when it is None or
    unknown). Returns (mtptui's theme names, problems to show)."""
    themes, problems = load_themes()
    for t in themes:
        app.register_theme(t)
    if wanted and wanted not in app.available_themes:
        problems.append(f"theme {wanted!r} not found; using {DEFAULT_THEME}")
        wanted = None
    app.theme = wanted or (DEFAULT_THEME if DEFAULT_THEME in app.available_themes else "textual-dark")
    return [t.name for t in themes], problems


def host_accent(config: Config, host: str | None) -> str | None:
    """The accent colour for a host: its own `accent`, or red for a host that [control] prod_tags
    guard (the same hosts whose name must be typed to confirm an action)."""
    h = config.host(host)
    if h is None:
        return None
    if h.accent:
        return h.accent
    return PROD_ACCENT if config.control.is_prod(h) else None


def host_tags(config: Config, host: str | None) -> list[str]:
    h = config.host(host)
    return list(h.tags) if h is not None else []
