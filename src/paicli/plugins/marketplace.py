"""A marketplace: a folder or git repository whose `.claude-plugin/marketplace.json` (or
paicli's `.paicli-plugin/marketplace.json`) lists plugins, in Claude Code's schema: `name`
(kebab-case), `owner`, `plugins` (each `name`, `source`, optional `description`, `version`).

A plugin's `source` is a path inside the marketplace (`./plugins/x`; a bare name under
`metadata.pluginRoot`), `{"source": "github", "repo": "owner/repo", "ref"?}`,
`{"source": "url", "url": ..., "ref"?}` or `{"source": "git-subdir", ...}` is not fetched
(nor `npm`, `archive`, `command`): one line says so. The index is hostile input: bounded,
names checked, paths kept inside the marketplace.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from paicli.escape import one_line
from paicli.plugins.manifest import PluginError, inside_path, plugin_name_problem, read_json

__all__ = ["Listing", "Marketplace", "read_marketplace"]

INDEXES = (
    Path(".paicli-plugin", "marketplace.json"),
    Path(".claude-plugin", "marketplace.json"),
)
MAX_INDEX_BYTES = 1024 * 1024
MAX_PLUGINS = 1000
_REPO = re.compile(r"^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$")


@dataclass(frozen=True)
class Listing:
    """One plugin of a marketplace: where to fetch it (a folder or a git URL, and a ref)."""

    name: str
    source: str
    ref: str | None = None
    description: str = ""


@dataclass(frozen=True)
class Marketplace:
    name: str
    root: Path
    plugins: dict[str, Listing | str]  # a listing, or why it cannot be installed


def read_marketplace(folder: Path) -> Marketplace:
    """The marketplace in `folder`; PluginError in one line when it cannot be used."""
    folder = Path(os.path.realpath(folder))
    for relative in INDEXES:
        shown = relative.as_posix()
        document = read_json(folder / relative, shown, folder, MAX_INDEX_BYTES)
        if document is not None:
            return _marketplace(folder, document, shown)
    raise PluginError(f"{one_line(str(folder), 120)}: no .claude-plugin/marketplace.json")


def _marketplace(folder: Path, document: object, shown: str) -> Marketplace:
    if not isinstance(document, dict):
        raise PluginError(f"{shown}: expected a JSON object")
    name = document.get("name")
    if (problem := plugin_name_problem(name)) is not None:
        raise PluginError(f"{shown}: {problem}")
    entries = document.get("plugins")
    if not isinstance(entries, list) or len(entries) > MAX_PLUGINS:
        raise PluginError(f"{shown}: plugins must be a list (at most {MAX_PLUGINS})")
    metadata = document.get("metadata")
    base = metadata.get("pluginRoot") if isinstance(metadata, dict) else None
    plugins: dict[str, Listing | str] = {}
    for entry in entries:
        if not isinstance(entry, dict) or plugin_name_problem(entry.get("name")) is not None:
            continue  # (no name to say it under)
        plugin = str(entry["name"])
        try:
            plugins[plugin] = _listing(
                folder, plugin, entry, base if isinstance(base, str) else None
            )
        except PluginError as exc:
            plugins[plugin] = str(exc)
    assert isinstance(name, str)
    return Marketplace(name, folder, plugins)


def _listing(folder: Path, name: str, entry: dict[str, object], base: str | None) -> Listing:
    source = entry.get("source")
    description = entry.get("description")
    text = description if isinstance(description, str) else ""
    where = f"plugin {name}"
    if isinstance(source, str):
        if base is not None and not source.startswith("./"):
            source = f"{base.rstrip('/')}/{source}"
        path = inside_path(folder, source, where)
        return Listing(name, str(path), None, text)
    if not isinstance(source, dict):
        raise PluginError(f"{where}: source must be a path or an object")
    kind, ref = source.get("source"), source.get("ref")
    ref = ref if isinstance(ref, str) else None
    if kind == "github" and isinstance(repo := source.get("repo"), str) and _REPO.match(repo):
        return Listing(name, f"https://github.com/{repo}.git", ref, text)
    if kind == "url" and isinstance(url := source.get("url"), str):
        return Listing(name, url, ref, text)
    raise PluginError(f"{where}: source {one_line(repr(kind), 40)} is not one paicli fetches")
