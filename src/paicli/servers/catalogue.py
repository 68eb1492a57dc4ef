"""The tool catalogue: what each server offered last time, so a run need not wait for it.

With a catalogue entry for a server, the model is offered that server's tools from the last
run while the server is still starting; a call to one of them waits for the server (bounded
by its startup timeout). When the server is up, its live tool list wins, and the entry is
rewritten if it changed. An entry is keyed by a hash of the server's resolved config (its
name, scope and everything that decides what runs), so a changed config starts as a first
run: nothing is offered before the server has said what it has.

Entries are `$PAICLI_HOME/catalogue/<sha256>.json` (0600 in a 0700 folder; the file name is the
hash, never config text). A broken, oversized or foreign entry reads as no entry. A list an
OAuth server marks `"cacheScope": "private"` (SEP-2549: per authorization, and the next
login may be someone else's) is not recorded, and drops the entry it had. `ttlMs` does not
apply here: an entry is never taken as the live list, only offered until the server lists.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from paicli.config_files import MAX_CONFIG_BYTES, ConfigFileError, parse_json, read_config_text
from paicli.mcp import McpError
from paicli.private_files import write_atomically

if TYPE_CHECKING:
    from paicli.mcp import HttpServer, StdioServer, Tool

__all__ = ["Catalogue", "catalogue_key"]

log = logging.getLogger("paicli.servers")

FORMAT = 1


class _Entry(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def spec(self) -> StdioServer | HttpServer | None: ...


def catalogue_key(entry: _Entry) -> str | None:
    """A hash of everything that decides what `entry` runs; None for an entry with no spec."""
    spec = entry.spec
    if spec is None:
        return None
    fields = dataclasses.asdict(spec)
    fields.pop("stderr_file", None)  # where its log goes changes nothing it offers
    fields.pop("stderr_filter", None)  # nor what its log leaves out
    auth = getattr(spec, "auth", None)
    if dataclasses.is_dataclass(auth):
        # OAuth settings that describe it, not the objects it works with (a token store, a
        # browser step: their text would change every run) nor its secrets.
        fields["auth"] = {
            f.name: getattr(auth, f.name) for f in dataclasses.fields(auth) if f.compare and f.repr
        }
    described = {"name": entry.name, "kind": type(spec).__name__, "spec": fields}
    text = json.dumps(described, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _tool_to_json(tool: Tool) -> dict[str, Any]:
    data: dict[str, Any] = {"name": tool.name, "inputSchema": tool.input_schema}
    for key, value in (
        ("description", tool.description),
        ("title", tool.title),
        ("outputSchema", tool.output_schema),
        ("annotations", tool.annotations),
        ("_meta", tool.meta),
    ):
        if value is not None:
            data[key] = value
    return data


class Catalogue:
    """The catalogue entries in `folder` (see the module docstring)."""

    def __init__(self, folder: Path, *, read: bool = True) -> None:
        self.folder = folder
        self.read = read  # False: record what servers offer, never offer it from here

    def _path(self, key: str) -> Path:
        assert len(key) == 64 and all(c in "0123456789abcdef" for c in key)  # a hash, nothing else
        return self.folder / f"{key}.json"

    def load(self, key: str) -> list[Tool] | None:
        """The tools recorded under `key`, or None (no entry, or one that cannot be used)."""
        from paicli.mcp import Tool  # noqa: PLC0415 - loaded with the session first

        document = self._document(key)
        if document is None or not isinstance(document.get("tools"), list):
            return None
        try:
            return [Tool.from_wire(tool) for tool in document["tools"]]
        except McpError as exc:
            log.info("tool catalogue %s not used: %s", self._path(key).name, exc)
            return None

    def instructions(self, key: str) -> str | None:
        """The server's `instructions` recorded under `key` (None: none, or no entry)."""
        document = self._document(key)
        found = document.get("instructions") if document is not None else None
        return found if isinstance(found, str) else None

    def _document(self, key: str) -> dict[str, Any] | None:
        if not self.read:
            return None
        path = self._path(key)
        try:
            text = read_config_text(path, str(path))
            document = parse_json(text, str(path)) if text is not None else None
        except ConfigFileError as exc:
            log.info("tool catalogue %s not used: %s", path.name, exc)
            return None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            return None
        return document if document.get("key") == key else None

    def save(
        self, key: str, server: str, tools: Sequence[Tool], instructions: str | None = None
    ) -> None:
        """Record `tools` (and the server's `instructions`) under `key`, unless that is what
        is recorded already. Never raises: a catalogue that cannot be written only means
        the next start waits."""
        document: Mapping[str, object] = {
            "format": FORMAT,
            "key": key,
            "server": server,
            "tools": [_tool_to_json(t) for t in tools],
            **({"instructions": instructions} if instructions else {}),
        }
        # Each tool as the server wrote it (key order too): offered from here, it reads as
        # the live list will (the request prefix a provider's prompt cache compares).
        data = json.dumps(document, ensure_ascii=False).encode()
        if len(data) > MAX_CONFIG_BYTES:
            return  # it could not be read back: keep no entry rather than a useless one
        path = self._path(key)
        try:
            if path.read_bytes() == data:
                return
        except OSError:
            pass
        try:
            write_atomically(path, data)
        except OSError as exc:
            log.warning("could not save the tool catalogue of %s: %s", server, exc)

    def forget(self, key: str) -> None:
        """Drop the entry under `key`, if any (never raises)."""
        try:
            self._path(key).unlink(missing_ok=True)
        except OSError as exc:
            log.warning("could not drop a tool catalogue entry: %s", exc)
