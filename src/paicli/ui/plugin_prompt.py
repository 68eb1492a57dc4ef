"""What installing a plugin adds, shown before the user agrees: its commands, agents and
skills by name, its hooks as written (escaped JSON) and its servers' command lines; then the
question (y/N). The answer is the approval of those hooks and servers (`paicli.plugins`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from paicli.escape import json_for_terminal
from paicli.plugins.manifest import Plugin
from paicli.servers.trust import target_line
from paicli.ui.output import err

# The keys the command line shows; the others are shown as written after it.
TARGET_KEYS = ("type", "command", "args", "env", "cwd", "url", "headers")
# A plugin's listing on the screen: enough to see what it is, bounded for a huge one.
MAX_SHOWN = 50


def show_plugin(plugin: Plugin, source: str, replaces: str | None = None) -> None:
    """Everything `plugin` (fetched from `source`) would add, on stderr; `replaces`: where
    the installed plugin of that name came from."""
    version = f" {plugin.version}" if plugin.version else ""
    err(f"Plugin {plugin.name}{version} from {source}")
    if replaces is not None:
        err(f"  (it replaces the installed {plugin.name}, from {replaces})")
    if plugin.description:
        err(f"  {plugin.description}")
    _names("Commands", [f"/{n}" for n in definition_names(plugin, "commands")])
    _names("Agents", definition_names(plugin, "agents"))
    _names("Skills", definition_names(plugin, "skills"))
    if plugin.servers:
        err(f"MCP servers (they run as you, outside any sandbox; {plugin.root} is the plugin):")
        for name, entry in sorted(plugin.servers.items()):
            line = target_line(entry, mask=False) if isinstance(entry, dict) else repr(entry)
            err(f"  plugin_{plugin.name}_{name}: {line}")
            others = (
                {k: v for k, v in entry.items() if k not in TARGET_KEYS}
                if isinstance(entry, dict)
                else {}
            )
            if others:  # what else the entry sets (a sandbox, trust, limits), as written
                err(f"    also: {json_for_terminal(others, indent=None)}")
    if plugin.hooks:
        err("Hooks (commands paicli runs by itself around tool calls, prompts and sessions):")
        for where, value in plugin.hooks:
            err(f"  {where}:")
            for line in json_for_terminal({"hooks": value}).splitlines():
                err(f"    {line}")
    for warning in plugin.warnings:
        err(f"warning: {warning}")


def ask_install(plugin: Plugin) -> bool:
    err(
        f"Install {plugin.name}? Its hooks and servers run from now on without another "
        "question, until its files change. [y/N] "
    )
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def definition_names(plugin: Plugin, kind: str) -> list[str]:
    """The names `plugin` gives its commands, agents or skills (`PLUGIN:NAME`), bounded."""
    names: list[str] = []
    for folder in getattr(plugin, kind):
        for top, folders, files in os.walk(folder):
            folders.sort()
            here = Path(top).relative_to(folder).parts
            if kind == "skills":
                if "SKILL.md" in files and here:
                    names.append(":".join((plugin.name, *here)))
                continue
            for file in sorted(files):
                if file.endswith(".md"):
                    names.append(":".join((plugin.name, *here, file[:-3])))
            if len(names) > MAX_SHOWN:
                return names
    return names


def _names(title: str, names: list[str]) -> None:
    if not names:
        return
    shown = ", ".join(names[:MAX_SHOWN])
    more = f" and {len(names) - MAX_SHOWN} more" if len(names) > MAX_SHOWN else ""
    err(f"{title}: {shown}{more}")
