"""Reading one mcp.json document, shared by loading (`config`) and editing (`_config_edit`).

A missing or empty file reads as `{}` ("no servers yet"); anything unusable raises
`InvalidConfig` naming the file. The file itself is read by `paicli.config_files`: regular
files only, at most 1 MiB, strict JSON (no repeated keys, nesting bounded). `InvalidConfig`
never escapes the config modules: loading turns it into a `ConfigProblem` or a server's
`error`, editing into a `ConfigWriteError`.
"""

from __future__ import annotations

from pathlib import Path

from paicli.config_files import ConfigFileError, parse_json, read_config_text
from paicli.servers.errors import ConfigError

__all__ = ["InvalidConfig", "kind", "read_document"]


class InvalidConfig(ConfigError):
    """A file or server is unusable; never escapes the config modules."""


def read_document(path: Path, shown: str, *, inside: Path | None = None) -> dict[str, object]:
    """The JSON object in the file at `path`; `inside` is the project folder a project's
    file must really be in (see `read_config_text`)."""
    try:
        text = read_config_text(path, shown, inside=inside)
        if text is None or not text.strip():  # a file just made with `touch`: no servers yet
            return {}
        document = parse_json(text, shown)
    except ConfigFileError as exc:
        raise InvalidConfig(str(exc)) from exc
    if not isinstance(document, dict):
        raise InvalidConfig(f"{shown}: expected a JSON object at the top, got {kind(document)}")
    return document


def kind(value: object) -> str:
    """The JSON name of a parsed value's type, for messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    names = {dict: "an object", list: "an array", str: "a string", type(None): "null"}
    return names.get(type(value), "a number")
