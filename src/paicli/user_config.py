"""The user's settings file: `$PAICLI_HOME/config.toml` (or `config.json`).

Read once at the edge into a plain mapping; each consumer (model settings, permissions)
parses its own section into frozen dataclasses. A broken file never stops paicli: it reads
as empty, with one problem line naming the file, line and column.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

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
            text = path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError) as exc:
            return UserConfig(source=path, problems=(f"{path}: cannot read: {exc}",))
        try:
            values = _parse(path, text)
        except ValueError as exc:
            return UserConfig(source=path, problems=(f"{path}: {exc}",))
        return UserConfig(values=values, source=path)
    return UserConfig()


def _parse(path: Path, text: str) -> dict[str, object]:
    if path.suffix == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"invalid TOML: {exc}") from exc
    if not text.strip():
        return {}
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc
    if not isinstance(document, dict):
        raise ValueError("expected a JSON object at the top")
    return document
