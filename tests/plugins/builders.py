"""Plugin folders written the way Claude Code's plugin docs show them, for the tests."""

from __future__ import annotations

import json
from pathlib import Path

from paicli.plugins.manifest import read_plugin
from paicli.plugins.registry import Installed, Registry

HOOKS = {
    "hooks": {
        "PostToolUse": [
            {
                "matcher": "Write|Edit",
                "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/fmt.sh"}],
            }
        ]
    }
}


def write_plugin(folder: Path, name: str = "demo", *, server: list[str] | None = None) -> Path:
    """A plugin with one of each: command, agent, skill, hook and MCP server."""
    (folder / ".claude-plugin").mkdir(parents=True)
    manifest = {"name": name, "version": "1.0.0", "description": "A demo plugin"}
    (folder / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    (folder / "commands").mkdir()
    (folder / "commands" / "hello.md").write_text(
        "---\ndescription: Greet someone\n---\nSay hello to $ARGUMENTS from "
        "${CLAUDE_PLUGIN_ROOT}.\n"
    )
    (folder / "agents").mkdir()
    (folder / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews code\n---\nYou review code.\n"
    )
    (folder / "skills" / "changelog").mkdir(parents=True)
    (folder / "skills" / "changelog" / "SKILL.md").write_text(
        "---\nname: changelog\ndescription: Write changelog entries\n---\nUse Keep a Changelog.\n"
    )
    (folder / "hooks").mkdir()
    (folder / "hooks" / "hooks.json").write_text(json.dumps(HOOKS))
    (folder / "scripts").mkdir()
    (folder / "scripts" / "fmt.sh").write_text("#!/bin/sh\nexit 0\n")
    (folder / "scripts" / "fmt.sh").chmod(0o755)
    command = server or [
        "${CLAUDE_PLUGIN_ROOT}/scripts/server.py",
        "--root",
        "${CLAUDE_PLUGIN_ROOT}",
    ]
    servers = {"mcpServers": {"files": {"command": command[0], "args": command[1:]}}}
    (folder / ".mcp.json").write_text(json.dumps(servers))
    return folder


def install_as_is(home: Path, source: Path, name: str = "demo", **record: object) -> Path:
    """`source` copied into `home`'s plugins folder and recorded as agreed to."""
    import shutil  # noqa: PLC0415

    target = home / "plugins" / name
    shutil.copytree(source, target, symlinks=True)
    digest = read_plugin(target, name=name).digest()
    Registry(home).keep(Installed(name=name, source=str(source), digest=digest, **record))  # type: ignore[arg-type]
    return target
