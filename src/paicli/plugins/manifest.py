"""A plugin folder read: its manifest and what it bundles (Claude Code's plugin format).

A plugin is a folder with an optional manifest, `.paicli-plugin/plugin.json` (paicli's own,
read first) or `.claude-plugin/plugin.json` (Claude Code's), in the same schema: `name`
(kebab-case, the namespace of what it adds), `version`, `description`, `author`, and the
component paths `commands`, `agents`, `skills` (a path or a list of them), `hooks` and
`mcpServers` (a path, a list of paths, or the value inline). Without a manifest the name is
the folder's. Defaults: `commands/`, `agents/`, `skills/`, `hooks/hooks.json`, `.mcp.json`;
`commands` and `agents` replace their default folder, `skills`, `hooks` and `mcpServers` add
to it, as Claude Code reads them.

A plugin is hostile input until the user installed it: the manifest is bounded, every path
in it must be relative and stay inside the plugin (a `..` or a symbolic link out is one
problem line), and nothing it names becomes a file name unchecked. Unknown keys are ignored;
a wrong type on a known key fails the load, in one line naming the file and the key.
`${CLAUDE_PLUGIN_ROOT}` (and paicli's `${PAICLI_PLUGIN_ROOT}`) is the plugin's folder.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from paicli.config_files import ConfigFileError, parse_json, read_config_text
from paicli.errors import PaicliError
from paicli.escape import one_line

__all__ = [
    "MANIFESTS",
    "Plugin",
    "PluginError",
    "expand_root",
    "inside_path",
    "plugin_name_problem",
    "read_json",
    "read_plugin",
]

# paicli's own manifest first: a plugin written for both may say more to paicli.
MANIFESTS = (Path(".paicli-plugin", "plugin.json"), Path(".claude-plugin", "plugin.json"))
# A manifest is a page of JSON; the cap stops a huge one before it is parsed.
MAX_MANIFEST_BYTES = 64 * 1024
MAX_DESCRIPTION = 500
MAX_PATHS = 20  # per component key
_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
ROOT_VARIABLES = ("${CLAUDE_PLUGIN_ROOT}", "${PAICLI_PLUGIN_ROOT}")


class PluginError(PaicliError):
    """A plugin that cannot be used; the message names it (or its file), on one line."""


@dataclass(frozen=True)
class Plugin:
    """One plugin folder, read: the folders its commands, agents and skills are in, its
    hooks and servers as written (file shown → value), and what of it was ignored."""

    name: str
    root: Path
    version: str = ""
    description: str = ""
    commands: tuple[Path, ...] = ()
    agents: tuple[Path, ...] = ()
    skills: tuple[Path, ...] = ()
    hooks: tuple[tuple[str, object], ...] = ()
    servers: dict[str, object] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def digest(self) -> str:
        """What installing it approved: its name, its hooks and servers as written. A
        change to any of them is a plugin the user has not agreed to."""
        what = repr((self.name, self.hooks, sorted(self.servers.items(), key=lambda i: i[0])))
        return hashlib.sha256(what.encode("utf-8", "surrogateescape")).hexdigest()


def plugin_name_problem(name: object) -> str | None:
    """Why `name` cannot be a plugin's (or a marketplace's) name, or None."""
    if not isinstance(name, str) or not _NAME.match(name):
        return f"the name {one_line(repr(name), 60)} is not kebab-case (a-z, 0-9, -; at most 64)"
    return None


def expand_root(text: str, root: Path) -> str:
    """`text` with the plugin root's placeholders replaced by `root`."""
    for variable in ROOT_VARIABLES:
        text = text.replace(variable, str(root))
    return text


def read_plugin(folder: Path, *, name: str | None = None, default: str | None = None) -> Plugin:
    """The plugin in `folder`; `name` is the name it must have (an installed plugin's),
    `default` the one it has without a manifest (else the folder's). PluginError when it
    cannot be used."""
    root = Path(os.path.realpath(folder))
    if not root.is_dir():
        raise PluginError(f"{one_line(str(folder), 200)}: not a folder")
    manifest, shown = _manifest(root)
    fallback = name or default or root.name
    found = manifest.get("name", fallback) if manifest is not None else fallback
    if (problem := plugin_name_problem(found)) is not None:
        raise PluginError(f"{shown}: {problem}")
    assert isinstance(found, str)  # (checked just above)
    if name is not None and found != name:
        raise PluginError(f"{shown}: the plugin is named {found}, not {name}")
    values = manifest or {}
    warnings: list[str] = []
    text = {key: _text(values, key, shown) for key in ("version", "description")}
    hooks = _documents(root, values, "hooks", "hooks/hooks.json", shown=shown, warnings=warnings)
    servers: dict[str, object] = {}
    for where, document in _documents(
        root, values, "mcpServers", ".mcp.json", shown=shown, warnings=warnings
    ):
        table = document.get("mcpServers", document) if isinstance(document, dict) else None
        if not isinstance(table, dict):
            raise PluginError(f"{where}: mcpServers must be an object of servers")
        servers.update(table)
    return Plugin(
        name=found,
        root=root,
        version=text["version"],
        description=" ".join(text["description"].split())[:MAX_DESCRIPTION],
        commands=tuple(_folders(root, values, "commands", shown, warnings, replace=True)),
        agents=tuple(_folders(root, values, "agents", shown, warnings, replace=True)),
        skills=tuple(_folders(root, values, "skills", shown, warnings, replace=False)),
        hooks=tuple(
            (where, document.get("hooks") if isinstance(document, dict) else document)
            for where, document in hooks
        ),
        servers=servers,
        warnings=tuple(warnings),
    )


def read_json(path: Path, shown: str, root: Path, max_bytes: int = MAX_MANIFEST_BYTES) -> object:
    """The JSON file at `path` inside `root` (None when there is none), bounded; a problem
    is a PluginError naming it as `shown`."""
    try:
        text = read_config_text(path, shown, inside=root, max_bytes=max_bytes)
        return parse_json(text, shown) if text is not None else None
    except ConfigFileError as exc:
        raise PluginError(one_line(str(exc), 300)) from exc


def _manifest(root: Path) -> tuple[dict[str, object] | None, str]:
    for relative in MANIFESTS:
        shown = f"{root.name}/{relative.as_posix()}"
        document = read_json(root / relative, shown, root)
        if document is None:
            continue
        if not isinstance(document, dict):
            raise PluginError(f"{shown}: expected a JSON object")
        return document, shown
    return None, root.name


def _text(values: dict[str, object], key: str, shown: str) -> str:
    value = values.get(key, "")
    if not isinstance(value, str):
        raise PluginError(f"{shown}: {key} must be a string")
    return value


def _paths(values: dict[str, object], key: str, shown: str) -> list[str]:
    value = values.get(key)
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PluginError(f"{shown}: {key} must be a path or a list of paths")
    if len(value) > MAX_PATHS:
        raise PluginError(f"{shown}: {key} lists more than {MAX_PATHS} paths")
    return list(value)


def inside_path(root: Path, written: str, shown: str) -> Path:
    """`written` (a relative path of the plugin's, `./x` or `x`) as a path inside `root`;
    PluginError when it is absolute, has `..`, or leads out through a symbolic link."""
    parts = written.replace("\\", "/").split("/")
    if written.startswith("/") or ".." in parts or not written.strip() or "\x00" in written:
        raise PluginError(f"{shown}: {one_line(repr(written), 80)} is not a path inside the plugin")
    path = root.joinpath(*[p for p in parts if p not in ("", ".")])
    if not Path(os.path.realpath(path)).is_relative_to(root):
        raise PluginError(f"{shown}: {one_line(repr(written), 80)} leads out of the plugin")
    return path


def _folders(
    root: Path,
    values: dict[str, object],
    key: str,
    shown: str,
    warnings: list[str],
    *,
    replace: bool,
) -> list[Path]:
    listed = [inside_path(root, p, shown) for p in _paths(values, key, shown)]
    default = inside_path(root, key, shown)
    folders = listed if listed and replace else [default, *listed]
    found: list[Path] = []
    for folder in folders:
        if folder.is_dir():
            found.append(folder)
        elif folder in listed:
            warnings.append(f"{shown}: {key}: {folder.relative_to(root)} is not a folder; ignored")
    return found


def _documents(
    root: Path,
    values: dict[str, object],
    key: str,
    default: str,
    *,
    shown: str,
    warnings: list[str],
) -> list[tuple[str, object]]:
    """The JSON documents of `key`: the default file if there is one, then the manifest's
    (inline: the value itself; else each file it names)."""
    value = values.get(key)
    inline = isinstance(value, dict)
    paths = [default, *([] if inline or value is None else _paths(values, key, shown))]
    found: list[tuple[str, object]] = []
    for written in dict.fromkeys(paths):
        path = inside_path(root, written, shown)
        where = f"{root.name}/{path.relative_to(root).as_posix()}"
        document = read_json(path, where, root)
        if document is not None:
            found.append((where, document))
        elif written != default:
            warnings.append(f"{shown}: {key}: {written} does not exist; ignored")
    if inline:
        found.append((f"{shown} ({key})", {key: value} if key == "hooks" else value))
    return found
