"""Reading one mcp.json document, shared by loading (`config`) and editing (`_config_edit`).

A missing or empty file reads as `{}` ("no servers yet"); anything unusable raises
`InvalidConfig` naming the file. It never escapes the config modules: loading turns it into
a `ConfigProblem` or a server's `error`, editing into a `ConfigWriteError`.
"""

from __future__ import annotations

import json
from pathlib import Path

from .errors import ConfigError

__all__ = ["InvalidConfig", "kind", "read_document"]


class InvalidConfig(ConfigError):
    """A file or server is unusable; never escapes the config modules."""


def read_document(path: Path, shown: str) -> dict[str, object]:
    try:
        # utf-8-sig: editors on Windows like to start JSON files with a BOM.
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise InvalidConfig(f"{shown}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise InvalidConfig(f"{shown}: not UTF-8 text") from exc
    if not text.strip():  # a file just created with `touch` means "no servers yet"
        return {}
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidConfig(
            f"{shown}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc
    except ValueError as exc:  # e.g. an integer beyond Python's digit limit
        raise InvalidConfig(f"{shown}: invalid JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise InvalidConfig(f"{shown}: expected a JSON object at the top, got {kind(document)}")
    return document


def kind(value: object) -> str:
    """The JSON name of a parsed value's type, for messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    names = {dict: "an object", list: "an array", str: "a string", type(None): "null"}
    return names.get(type(value), "a number")
