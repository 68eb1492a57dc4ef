"""The installed plugins and known marketplaces, and which plugins a run uses.

`$PAICLI_HOME/plugins.json` (0600 in a 0700 folder) records each installed plugin: where it
came from, its scope (`user`, or `project` with the project's folder), whether it is enabled
at user scope, and the digest of what the user agreed to when installing it
(`Plugin.digest`: its hooks and servers as written). Its files are in
`$PAICLI_HOME/plugins/NAME/`; a marketplace's in `$PAICLI_HOME/marketplaces/NAME/`.

A project turns plugins on or off in Claude Code's way, `"enabledPlugins": {"NAME": true}`
(or `NAME@MARKETPLACE`) in `.paicli/settings.json` or `.claude/settings.json`; it can only
name plugins the user installed (a repository never brings a plugin of its own). A plugin
installed at project scope is used in its project only. A plugin whose hooks or servers
differ from what was agreed to (files changed after the install) is not used at all; one
line says so and how to agree again (`paicli plugin add` once more).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from paicli.config_files import ConfigFileError, parse_json, read_config_text
from paicli.escape import one_line
from paicli.plugins.manifest import Plugin, PluginError, plugin_name_problem, read_plugin
from paicli.private_files import write_atomically

__all__ = [
    "Installed",
    "Registry",
    "enabled_plugins",
    "project_choices",
    "registry_path",
]

log = logging.getLogger("paicli.plugins")
_VERSION = 1
SETTINGS_FILES = (Path(".paicli", "settings.json"), Path(".claude", "settings.json"))


def registry_path(home: Path) -> Path:
    return home / "plugins.json"


@dataclass(frozen=True)
class Installed:
    """One installed plugin's record."""

    name: str
    source: str
    scope: str = "user"
    project: str | None = None
    enabled: bool = True
    digest: str = ""
    marketplace: str | None = None
    version: str = ""

    @property
    def key(self) -> str:
        """How settings name it: `NAME@MARKETPLACE`, or `NAME`."""
        return f"{self.name}@{self.marketplace}" if self.marketplace else self.name

    def as_json(self) -> dict[str, object]:
        return {
            "source": self.source,
            "scope": self.scope,
            "project": self.project,
            "enabled": self.enabled,
            "digest": self.digest,
            "marketplace": self.marketplace,
            "version": self.version,
        }


class Registry:
    """`plugins.json` at `home`: plugins by name, marketplaces by name (→ their source)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.path = registry_path(home)

    def plugin_folder(self, name: str) -> Path:
        if plugin_name_problem(name) is not None:  # never a path from an unchecked name
            raise PluginError(f"{one_line(repr(name), 60)} is not a plugin name")
        return self.home / "plugins" / name

    def marketplace_folder(self, name: str) -> Path:
        if plugin_name_problem(name) is not None:
            raise PluginError(f"{one_line(repr(name), 60)} is not a marketplace name")
        return self.home / "marketplaces" / name

    def _read(self) -> dict[str, dict[str, dict[str, object]]]:
        try:
            text = read_config_text(self.path, str(self.path))
            document = parse_json(text, str(self.path)) if text is not None else {}
        except ConfigFileError as exc:
            log.warning("%s; no plugin is used", exc)
            return {"plugins": {}, "marketplaces": {}}
        document = document if isinstance(document, dict) else {}
        found: dict[str, dict[str, dict[str, object]]] = {}
        for key in ("plugins", "marketplaces"):
            value = document.get(key)
            found[key] = (
                {str(k): dict(v) for k, v in value.items() if isinstance(v, dict)}
                if isinstance(value, dict)
                else {}
            )
        return found

    def _write(self, document: Mapping[str, object]) -> None:
        text = json.dumps({"version": _VERSION, **document}, indent=2, sort_keys=True) + "\n"
        write_atomically(self.path, text.encode())

    def plugins(self) -> list[Installed]:
        found = []
        for name, record in sorted(self._read()["plugins"].items()):
            if plugin_name_problem(name) is None:
                found.append(_installed(name, record))
        return found

    def find(self, name: str) -> Installed | None:
        return next((p for p in self.plugins() if p.name == name), None)

    def keep(self, plugin: Installed) -> None:
        document = self._read()
        document["plugins"][plugin.name] = plugin.as_json()
        self._write(document)

    def forget(self, name: str) -> None:
        document = self._read()
        document["plugins"].pop(name, None)
        self._write(document)

    def marketplaces(self) -> dict[str, str]:
        """Each known marketplace's name and source."""
        return {
            name: str(record.get("source", ""))
            for name, record in sorted(self._read()["marketplaces"].items())
            if plugin_name_problem(name) is None
        }

    def keep_marketplace(self, name: str, source: str) -> None:
        document = self._read()
        document["marketplaces"][name] = {"source": source}
        self._write(document)

    def forget_marketplace(self, name: str) -> None:
        document = self._read()
        document["marketplaces"].pop(name, None)
        self._write(document)


def _installed(name: str, record: Mapping[str, object]) -> Installed:
    def text(key: str) -> str | None:
        value = record.get(key)
        return value if isinstance(value, str) else None

    return Installed(
        name=name,
        source=text("source") or "",
        scope="project" if record.get("scope") == "project" else "user",
        project=text("project"),
        enabled=record.get("enabled") is not False,
        digest=text("digest") or "",
        marketplace=text("marketplace"),
        version=text("version") or "",
    )


def project_choices(project: Path | None) -> tuple[dict[str, bool], list[str]]:
    """The project's `enabledPlugins` (key → on or off; `.paicli`'s over `.claude`'s) and
    one line per file that could not be read."""
    choices: dict[str, bool] = {}
    problems: list[str] = []
    if project is None:
        return choices, problems
    for relative in reversed(SETTINGS_FILES):
        path = project / relative
        shown = relative.as_posix()
        try:
            text = read_config_text(path, shown, inside=project)
            document = parse_json(text, shown) if text is not None else None
        except ConfigFileError as exc:
            problems.append(f"{one_line(str(exc), 300)}; its enabledPlugins are ignored")
            continue
        value = document.get("enabledPlugins") if isinstance(document, dict) else None
        if isinstance(value, dict):
            choices.update({str(k): v for k, v in value.items() if isinstance(v, bool)})
    return choices, problems


def is_enabled(plugin: Installed, project: Path | None, choices: Mapping[str, bool]) -> bool:
    """Whether `plugin` is on in `project`: the project's choice (by `NAME@MARKETPLACE` or
    `NAME`) first; else a user-scope plugin's own state; a project-scope plugin only in its
    project, when that project's settings turn it on."""
    for key in (plugin.key, plugin.name):
        if key in choices:
            mine = plugin.scope == "user" or (
                project is not None and plugin.project == str(project.resolve())
            )
            return choices[key] and mine
    return plugin.scope == "user" and plugin.enabled


def enabled_plugins(home: Path, project: Path | None) -> tuple[list[Plugin], list[str]]:
    """The plugins a run in `project` uses (`home`: paicli's folder), read, and one line
    per plugin that could not be (or is no longer what the user agreed to)."""
    registry = Registry(home)
    choices, problems = project_choices(project)
    plugins: list[Plugin] = []
    for installed in registry.plugins():
        if not is_enabled(installed, project, choices):
            continue
        try:
            plugin = read_plugin(registry.plugin_folder(installed.name), name=installed.name)
        except PluginError as exc:
            problems.append(f"plugin {installed.name} not used: {exc}")
            continue
        if plugin.digest() != installed.digest:
            problems.append(
                f"plugin {installed.name} not used: its hooks or servers changed since you "
                f"installed it (review them: paicli plugin add {installed.source or 'PATH'})"
            )
            continue
        plugins.append(plugin)
    return plugins, problems
