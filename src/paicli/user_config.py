"""The user's settings file: `$PAICLI_HOME/config.toml` (or `config.json`).

Read once at the edge into a plain mapping; each consumer (model settings, permissions,
per-project rules) parses its own section into frozen dataclasses. A broken file never stops
paicli: it reads as empty, with one problem line naming the file (and line and column). The
file is read as `paicli.config_files` reads every config: a regular file, at most 1 MiB,
nested at most 64 levels, JSON without repeated keys.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from paicli.config_files import ConfigFileError, check_depth, parse_json, read_config_text
from paicli.home import PaicliHome


@dataclass(frozen=True)
class UserConfig:
    """The parsed settings document, where it came from, and what was wrong with it."""

    values: dict[str, object] = field(default_factory=dict)
    source: Path | None = None
    problems: tuple[str, ...] = ()

    def section(self, name: str) -> dict[str, object]:
        """A `[name]` table; a non-table value is reported by the caller's parser."""
        value = self.values.get(name)
        return value if isinstance(value, dict) else {}


def load_user_config(home: PaicliHome) -> UserConfig:
    """`config.toml` wins over `config.json` when both exist (the json form is for people
    who keep every setting in JSON, like mcp.json)."""
    for path in home.settings_files:
        try:
            text = read_config_text(path, str(path))
            if text is None:
                continue
            values = _parse(path, text)
        except ConfigFileError as exc:
            return UserConfig(source=path, problems=(str(exc),))
        return UserConfig(values=values, source=path)
    return UserConfig()


def _parse(path: Path, text: str) -> dict[str, object]:
    if path.suffix == ".toml":
        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigFileError(f"{path}: invalid TOML: {exc}") from exc
        except RecursionError as exc:  # arrays nested thousands deep
            raise ConfigFileError(f"{path}: invalid TOML: nested too deeply") from exc
        check_depth(document, str(path))
        return document
    if not text.strip():
        return {}
    parsed = parse_json(text, str(path))
    if not isinstance(parsed, dict):
        raise ConfigFileError(f"{path}: expected a JSON object at the top")
    return parsed
