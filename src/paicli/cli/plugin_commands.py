"""`paicli plugin add|list|remove|enable|disable` and `paicli plugin marketplace add|list|
remove`: installing is fetching (`plugins.install`), reading (`plugins.manifest`), showing
everything the plugin adds and asking (`ui.plugin_prompt`), then recording it
(`plugins.registry`) with the digest of its hooks and servers as written: that yes is their
approval, and a plugin whose hooks or servers change afterwards is not used until it is
added (and agreed to) again. Without a terminal and without `--yes`, nothing is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from dataclasses import replace
from pathlib import Path

from paicli.config_files import ConfigFileError, parse_json, read_config_text
from paicli.home import PaicliHome
from paicli.plugins.install import check_source, fetch_source, is_git_url, place
from paicli.plugins.manifest import PluginError, read_plugin
from paicli.plugins.marketplace import Listing, read_marketplace
from paicli.plugins.registry import Installed, Registry, project_choices
from paicli.private_files import write_atomically
from paicli.project_root import project_root
from paicli.ui.output import err, out
from paicli.ui.plugin_prompt import ask_install, definition_names, show_plugin

_FROM_MARKETPLACE = re.compile(r"^([a-z0-9-]{1,64})@([a-z0-9-]{1,64})$")


def run(options: argparse.Namespace) -> int:
    home = PaicliHome.from_environ().root
    registry = Registry(home)
    command = options.plugin_command
    try:
        if command == "add":
            return add(options, registry)
        if command == "list":
            return listing(registry)
        if command == "remove":
            return remove(options.name, registry)
        if command in ("enable", "disable"):
            return switch(options.name, command == "enable", options.scope, registry)
        return marketplace(options, registry)
    except PluginError as exc:
        err(f"paicli plugin {command}: {exc}")
        return 1
    except OSError as exc:
        err(f"paicli plugin {command}: {exc.strerror or exc}: {exc.filename or ''}")
        return 1


def add(options: argparse.Namespace, registry: Registry) -> int:
    source, ref, market = _where(options.source, options.ref, registry)
    staging = registry.home / "plugins" / ".staging"
    fetched = fetch_source(source, staging, ref=ref)
    try:
        plugin = read_plugin(fetched, default=_default_name(source))
    except PluginError:
        shutil.rmtree(fetched.parent, ignore_errors=True)
        raise
    before = registry.find(plugin.name)
    show_plugin(plugin, options.source, before.source if before is not None else None)
    if not options.yes:
        if not sys.stdin.isatty():
            shutil.rmtree(fetched.parent, ignore_errors=True)
            err(f"paicli plugin add: {plugin.name} not installed: no terminal to ask (pass --yes)")
            return 1
        if not ask_install(plugin):
            shutil.rmtree(fetched.parent, ignore_errors=True)
            err(f"{plugin.name} not installed")
            return 1
    destination = registry.plugin_folder(plugin.name)
    place(fetched, destination)
    placed = read_plugin(destination, name=plugin.name)
    project = project_root(Path.cwd()) if options.scope == "project" else None
    installed = Installed(
        name=plugin.name,
        source=source,
        scope=options.scope,
        project=str(project.resolve()) if project is not None else None,
        digest=placed.digest(),
        marketplace=market,
        version=placed.version,
    )
    registry.keep(installed)
    if project is not None:
        _choose(project, installed.key, on=True)
    counts = {k: len(definition_names(placed, k)) for k in ("commands", "agents", "skills")}
    what = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    extra = f", {len(placed.servers)} servers" if placed.servers else ""
    out(
        f"Installed plugin {placed.name} ({options.scope} scope{': ' if what else ''}{what}{extra})"
    )
    return 0


def _where(written: str, ref: str | None, registry: Registry) -> tuple[str, str | None, str | None]:
    """(source to fetch, ref, marketplace) of what `paicli plugin add` was given."""
    check_source(written)
    found = _FROM_MARKETPLACE.match(written)
    if found is None or is_git_url(written) or os.path.exists(written):
        source = written if is_git_url(written) else str(Path(written).expanduser().resolve())
        return source, ref, None
    name, market = found.groups()
    if market not in registry.marketplaces():
        raise PluginError(f"no marketplace named {market} (paicli plugin marketplace add ...)")
    index = read_marketplace(registry.marketplace_folder(market))
    entry = index.plugins.get(name)
    if entry is None:
        raise PluginError(f"marketplace {market} lists no plugin {name}")
    if not isinstance(entry, Listing):
        raise PluginError(entry)
    return entry.source, entry.ref or ref, market


def _default_name(source: str) -> str:
    tail = source.rstrip("/").replace(":", "/").rsplit("/", 1)[-1]
    return tail.removesuffix(".git")


def listing(registry: Registry) -> int:
    plugins = registry.plugins()
    choices, _ = project_choices(project_root(Path.cwd()))
    if not plugins:
        out("No plugins installed. Add one with: paicli plugin add PATH|GIT-URL")
    for plugin in plugins:
        state = choices.get(plugin.key, choices.get(plugin.name, plugin.enabled))
        version = f" {plugin.version}" if plugin.version else ""
        where = f" ({plugin.project})" if plugin.project else ""
        out(
            f"{plugin.key}{version}  {plugin.scope}{where}  "
            f"{'enabled' if state else 'disabled'}  {plugin.source}"
        )
    for name, source in registry.marketplaces().items():
        out(f"marketplace {name}  {source}")
    return 0


def remove(name: str, registry: Registry) -> int:
    if registry.find(name) is None:
        err(f"paicli plugin remove: no plugin named {name!r} is installed")
        return 1
    shutil.rmtree(registry.plugin_folder(name), ignore_errors=True)
    registry.forget(name)
    out(f"Removed plugin {name}")
    return 0


def switch(name: str, on: bool, scope: str, registry: Registry) -> int:
    installed = registry.find(name)
    if installed is None:
        err(f"paicli plugin {'enable' if on else 'disable'}: no plugin named {name!r}")
        return 1
    if scope == "project":
        _choose(project_root(Path.cwd()), installed.key, on=on)
    else:
        registry.keep(replace(installed, enabled=on))
    out(f"{'Enabled' if on else 'Disabled'} plugin {name} ({scope} scope)")
    return 0


def _choose(project: Path, key: str, *, on: bool) -> None:
    """`enabledPlugins[key] = on` in the project's `.paicli/settings.json`, the rest kept."""
    path = project / ".paicli" / "settings.json"
    try:
        text = read_config_text(path, ".paicli/settings.json", inside=project)
        document = parse_json(text, ".paicli/settings.json") if text is not None else {}
    except ConfigFileError as exc:
        raise PluginError(str(exc)) from exc
    if not isinstance(document, dict):
        raise PluginError(".paicli/settings.json: expected a JSON object")
    chosen = document.get("enabledPlugins")
    document["enabledPlugins"] = {**(chosen if isinstance(chosen, dict) else {}), key: on}
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    write_atomically(path, text.encode(), mode=0o644, keep_mode=True)


def marketplace(options: argparse.Namespace, registry: Registry) -> int:
    command = options.marketplace_command
    if command == "add":
        written = options.source
        check_source(written)
        source = written if is_git_url(written) else str(Path(written).expanduser().resolve())
        fetched = fetch_source(source, registry.home / "marketplaces" / ".staging", ref=options.ref)
        try:
            index = read_marketplace(fetched)
        except PluginError:
            shutil.rmtree(fetched.parent, ignore_errors=True)
            raise
        place(fetched, registry.marketplace_folder(index.name))
        registry.keep_marketplace(index.name, source)
        out(f"Added marketplace {index.name} ({len(index.plugins)} plugins)")
        return 0
    if command == "remove":
        if options.name not in registry.marketplaces():
            err(f"paicli plugin marketplace remove: no marketplace named {options.name!r}")
            return 1
        shutil.rmtree(registry.marketplace_folder(options.name), ignore_errors=True)
        registry.forget_marketplace(options.name)
        out(f"Removed marketplace {options.name}")
        return 0
    for name, source in registry.marketplaces().items():
        out(f"{name}  {source}")
        try:
            index = read_marketplace(registry.marketplace_folder(name))
        except PluginError as exc:
            out(f"  {exc}")
            continue
        for plugin, entry in sorted(index.plugins.items()):
            said = entry.description if isinstance(entry, Listing) else entry
            out(f"  {plugin}@{name}  {said}")
    return 0
