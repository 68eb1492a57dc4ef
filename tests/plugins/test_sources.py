"""An installed plugin's commands, skills, agents, hooks and servers, found where each kind
is found, under the plugin's name; and the plugins a run must not use."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from paicli.custom_commands.files import load_commands
from paicli.hooks.settings import load_hooks
from paicli.plugins.manifest import PluginError, read_plugin
from paicli.plugins.registry import enabled_plugins
from paicli.servers.config import load_config
from paicli.skills.local import local_skills
from paicli.subagents.definitions import load_agents
from tests.plugins.builders import install_as_is, write_plugin


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    (project / ".git").mkdir(parents=True)
    return home, project


def test_each_kind_comes_from_an_enabled_plugin_under_its_name(
    tmp_path: Path, places: tuple[Path, Path]
) -> None:
    home, project = places
    root = install_as_is(home, write_plugin(tmp_path / "src"))
    plugins, problems = enabled_plugins(home, project)
    assert problems == []
    commands = load_commands(home, project, reserved=("/help",), plugins=plugins)
    hello = commands.find("/demo:hello")
    assert hello is not None and hello.scope == "plugin" and hello.from_project
    assert f"from {root}." in hello.body
    skills, _ = local_skills(home, project, plugins)
    assert [(s.name, s.scope) for s in skills] == [("demo:changelog", "plugin")]
    agents = load_agents(project, project, home, plugins)
    assert agents.agents["demo:reviewer"].scope == "plugin"
    hooks = load_hooks(home, project, plugins)
    (handler,) = hooks.handlers
    assert handler.command == f"{root}/scripts/fmt.sh" and handler.scope == "user"
    server = load_config(project, environ={"PAICLI_HOME": str(home)}).servers["plugin_demo_files"]
    assert server.scope == "plugin" and server.error is None
    assert server.spec is not None and server.spec.command == f"{root}/scripts/server.py"  # type: ignore[union-attr]


def test_a_plugin_command_never_takes_one_of_paicli_s_names(
    tmp_path: Path, places: tuple[Path, Path]
) -> None:
    home, project = places
    source = write_plugin(tmp_path / "src", "help")
    (source / "commands" / "help.md").write_text("take over /help")
    install_as_is(home, source, "help")
    commands = load_commands(home, project, reserved=("/help", "/clear"))
    assert commands.find("/help") is None
    assert commands.find("/help:help") is not None


def test_a_plugin_command_in_a_folder_that_cannot_be_a_name_says_so(
    tmp_path: Path, places: tuple[Path, Path]
) -> None:
    home, project = places
    source = write_plugin(tmp_path / "src")
    path = source / "commands" / "two words" / "go.md"
    path.parent.mkdir()
    path.write_text("Go.")
    root = install_as_is(home, source)
    commands = load_commands(home, project, plugins=enabled_plugins(home, project)[0])
    assert commands.find("/go") is None and commands.find("/demo:go") is None
    assert commands.problems == (
        f"{root}/commands/two words/go.md: its folder 'demo:two words' cannot be part of a "
        "command name",
    )  # (it said /go was one of paicli's commands)


def test_a_plugin_whose_hooks_changed_after_the_install_is_not_used(
    tmp_path: Path, places: tuple[Path, Path]
) -> None:
    home, project = places
    root = install_as_is(home, write_plugin(tmp_path / "src"))
    (root / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"Stop": []}}))
    plugins, problems = enabled_plugins(home, project)
    assert plugins == []
    assert "changed since you installed it" in problems[0]
    assert (
        "plugin_demo_files" not in load_config(project, environ={"PAICLI_HOME": str(home)}).servers
    )


def test_disabled_and_other_projects_plugins_are_not_used(
    tmp_path: Path, places: tuple[Path, Path]
) -> None:
    home, project = places
    install_as_is(home, write_plugin(tmp_path / "a", "off"), "off", enabled=False)
    install_as_is(
        home, write_plugin(tmp_path / "b", "theirs"), "theirs", scope="project", project="/else"
    )
    install_as_is(home, write_plugin(tmp_path / "c", "mine"), "mine")
    assert [p.name for p in enabled_plugins(home, project)[0]] == ["mine"]
    (project / ".claude").mkdir()
    settings = {"enabledPlugins": {"mine": False, "off": True, "theirs": True}}
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    # The project turns its choices: off on (installed by the user), mine off; another
    # project's plugin stays in that project.
    assert [p.name for p in enabled_plugins(home, project)[0]] == ["off"]


@pytest.mark.parametrize(
    ("manifest", "words"),
    [
        ({"name": "../evil"}, "not kebab-case"),
        ({"name": "ok", "commands": "../outside"}, "not a path inside the plugin"),
        ({"name": "ok", "agents": ["/etc"]}, "not a path inside the plugin"),
        ({"name": "ok", "description": 5}, "description must be a string"),
        ({"name": "ok", "mcpServers": "./missing.json", "hooks": 3}, "must be a path"),
    ],
)
def test_a_manifest_that_names_things_outside_the_plugin_is_refused(
    tmp_path: Path, manifest: dict[str, object], words: str
) -> None:
    (tmp_path / ".claude-plugin").mkdir()
    (tmp_path / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    with pytest.raises(PluginError, match=words):
        read_plugin(tmp_path)


def test_a_symbolic_link_out_of_the_plugin_and_a_huge_manifest_are_refused(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    plugin = tmp_path / "plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "p", "commands": "./c"}')
    os.symlink(outside, plugin / "c")
    with pytest.raises(PluginError, match="leads out of the plugin"):
        read_plugin(plugin)
    (plugin / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": "p", "description": "x" * 100_000})
    )
    with pytest.raises(PluginError, match=r"plugin\.json"):
        read_plugin(plugin)


def test_paicli_s_own_manifest_is_read_first(tmp_path: Path) -> None:
    for folder, name in ((".claude-plugin", "claude-name"), (".paicli-plugin", "paicli-name")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "plugin.json").write_text(json.dumps({"name": name}))
    assert read_plugin(tmp_path).name == "paicli-name"


def test_a_manifest_s_own_paths_and_inline_hooks_and_servers(tmp_path: Path) -> None:
    (tmp_path / ".claude-plugin").mkdir()
    (tmp_path / "custom" / "cmds").mkdir(parents=True)
    (tmp_path / "commands").mkdir()  # replaced by the manifest's `commands`
    (tmp_path / "extra-skills").mkdir()
    (tmp_path / "skills").mkdir()  # kept: `skills` adds
    manifest = {
        "name": "inline",
        "commands": ["./custom/cmds"],
        "skills": "./extra-skills",
        "agents": "./no-such-folder",
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]},
        "mcpServers": {"db": {"command": "${CLAUDE_PLUGIN_ROOT}/db"}},
    }
    (tmp_path / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest))
    plugin = read_plugin(tmp_path)
    root = tmp_path.resolve()
    assert plugin.commands == (root / "custom" / "cmds",)
    assert plugin.skills == (root / "skills", root / "extra-skills")
    assert plugin.agents == ()
    assert "agents: no-such-folder is not a folder; ignored" in plugin.warnings[0]
    assert plugin.hooks == ((f"{root.name}/.claude-plugin/plugin.json (hooks)", manifest["hooks"]),)
    assert plugin.servers == {"db": {"command": "${CLAUDE_PLUGIN_ROOT}/db"}}
