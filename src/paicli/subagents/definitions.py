"""Sub-agent definitions: Markdown files whose YAML front matter names and describes an agent,
whose body is its system prompt (Claude Code's format, `.claude/agents/*.md`).

Where they are read, the first definition of a name winning (Claude Code's order: a project's
over the user's, the folder closest to where paicli started over those above it):

    .paicli/agents/, then .claude/agents/    in the folder paicli started in, then each folder
                                              above it up to the project root
    $PAICLI_HOME/agents/                      the user's (~/.paicli/agents/)
    general-purpose                           built in, unless a file defines that name

Folders are read recursively (a subfolder does not change a name). A file without front matter
or without `name` is documentation and is skipped; any other problem is one line naming the
file, and the other files still load. Keys read: `name`, `description`, `tools` and
`disallowedTools` (comma-separated or a list; Claude Code's tool names are understood),
`model`, `maxTurns`, `mcpServers` (names of configured servers: only their MCP tools).

A project's definitions are repository content: their words go to the model, but they decide
nothing about permissions. Whatever they say, a sub-agent's tools are among the main agent's,
its calls pass the same rules and questions, and a project's agent cannot switch provider
(`model` may only name another model of the provider in use).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal

from paicli.config_files import ConfigFileError, read_config_text
from paicli.errors import PaicliError
from paicli.escape import one_line
from paicli.llm.presets import PRESETS
from paicli.plugins.manifest import Plugin, expand_root
from paicli.subagents.front_matter import FrontMatterError, split_front_matter
from paicli.tools.claude_names import CLAUDE_TOOL_NAMES
from paicli.tools.search.offer import SEARCH_TOOL

__all__ = [
    "AGENT_TOOL",
    "DEFAULT_AGENT",
    "AgentCatalog",
    "AgentDefinition",
    "load_agents",
]

AGENT_TOOL = "Agent"
DEFAULT_AGENT = "general-purpose"
# A system prompt is a few KiB; the cap only stops a file that is no definition.
MAX_DEFINITION_BYTES = 256 * 1024
MAX_FILES = 200  # per folder: agent folders hold a handful
MAX_AGENTS = 100  # their descriptions all go into the Agent tool's description
MAX_FOLDER_DEPTH = 5
MAX_STEPS = 200
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_MODEL = re.compile(r"^[\w.:/@+-]{1,200}$")
_TOOL = re.compile(r"^[A-Za-z0-9_*?\[\]-]{1,128}$")
# Claude Code's names of the tools paicli has under names of its own.
CLAUDE_TOOLS = {
    **CLAUDE_TOOL_NAMES,
    "TodoWrite": "todo_write",
    "Task": AGENT_TOOL,
}
# Claude Code's model aliases name Anthropic's families, which no OpenAI-compatible preset
# serves: such an agent runs on the main agent's model.
CLAUDE_MODELS = frozenset({"sonnet", "opus", "haiku", "opusplan", "inherit"})
# Never a sub-agent's: one level of sub-agents, and tool search works on the main agent's
# offer (a sub-agent is offered all its tools).
_NEVER_GIVEN = frozenset({AGENT_TOOL, SEARCH_TOOL})

Scope = Literal["built-in", "user", "project", "plugin"]

GENERAL_PURPOSE_PROMPT = """You are a general-purpose agent: you research questions, search \
and read code, and carry out multi-step tasks with the tools you have. Search broadly when \
you do not know where something lives; read before you change; verify what you did. Be \
thorough, but do only what the task asks."""


@dataclass(frozen=True)
class AgentDefinition:
    """One sub-agent: `prompt` is its system prompt; `tools` the patterns of the main
    agent's tools it is given (None: all of them), `disallowed` those it never is,
    `servers` the MCP servers whose tools it may have (None: any); `model` None runs it on
    the main agent's model."""

    name: str
    description: str
    prompt: str
    tools: tuple[str, ...] | None = None
    disallowed: tuple[str, ...] = ()
    servers: tuple[str, ...] | None = None
    model: str | None = None
    max_steps: int | None = None
    source: str = "built-in"  # the file, as shown
    scope: Scope = "built-in"
    notes: tuple[str, ...] = ()  # what of the file was left out, for `/agents`

    def allows(self, tool: str) -> bool:
        """Whether the main agent's tool `tool` is given to this sub-agent."""
        if tool in _NEVER_GIVEN or any(fnmatchcase(tool, p) for p in self.disallowed):
            return False
        servers = self.servers
        if servers is not None and tool.startswith("mcp__"):
            return any(tool.startswith(f"mcp__{s}__") for s in servers) and self._listed(tool)
        return self._listed(tool)

    def _listed(self, tool: str) -> bool:
        return self.tools is None or any(fnmatchcase(tool, p) for p in self.tools)


GENERAL_PURPOSE = AgentDefinition(
    DEFAULT_AGENT,
    "General-purpose agent for researching complex questions, searching for code and "
    "carrying out multi-step tasks. Use it when a search may take several tries, or to keep "
    "the details of a side task out of your own conversation.",
    GENERAL_PURPOSE_PROMPT,
)


@dataclass(frozen=True)
class AgentCatalog:
    """The sub-agents a run offers, by name (the built-in `general-purpose` among them), and
    the problems met reading their files, one line each."""

    agents: Mapping[str, AgentDefinition] = field(
        default_factory=lambda: {DEFAULT_AGENT: GENERAL_PURPOSE}
    )
    problems: tuple[str, ...] = ()


class DefinitionError(PaicliError, ValueError):
    """A definition that cannot be used; the message says why (without the file's name).
    It never leaves `load_agents`, which makes it a problem line naming the file."""


def load_agents(
    root: Path, project: Path, home: Path, plugins: Sequence[Plugin] = ()
) -> AgentCatalog:
    """The definitions for a run started in `root` (inside `project`), the user's in
    `home` (`$PAICLI_HOME`), then the enabled `plugins`' (`PLUGIN:NAME`, a subfolder
    another segment, as Claude Code names them)."""
    found: dict[str, AgentDefinition] = {}
    problems: list[str] = []
    folders = [
        (f, s, project if s == "project" else None, "") for f, s in _folders(root, project, home)
    ]
    folders += [(f, "plugin", p.root, p.name) for p in plugins for f in p.agents]
    for folder, scope, inside, namespace in folders:
        tier: dict[str, AgentDefinition] = {}
        for path in _markdown_files(folder, inside, problems):
            shown = str(path)
            refused: list[str] = []
            try:
                definition = _definition(path, shown, scope, inside, refused)
            except ConfigFileError as exc:
                problems.append(str(exc))
                continue
            except (DefinitionError, FrontMatterError) as exc:
                problems.append(f"{shown}: {exc}")
                continue
            if definition is None:
                continue
            if namespace:
                segments = path.parent.relative_to(folder).parts
                if not all(_NAME.match(segment) for segment in segments):
                    problems.append(f"{shown}: a subfolder's name is not usable; ignored")
                    continue
                name = ":".join((namespace, *segments, definition.name))
                definition = replace(
                    definition, name=name, prompt=expand_root(definition.prompt, inside or folder)
                )
            if definition.name in tier:
                problems.append(
                    f"{shown}: the agent {definition.name} is also defined in "
                    f"{tier[definition.name].source}; this file is ignored"
                )
                continue
            tier[definition.name] = definition
            problems += [f"{shown}: {why}" for why in refused]
        for name, definition in tier.items():
            found.setdefault(name, definition)
    if len(found) > MAX_AGENTS:
        problems.append(f"more than {MAX_AGENTS} agent definitions: only the first are offered")
    kept = dict(list(found.items())[:MAX_AGENTS])
    agents = {DEFAULT_AGENT: kept.pop(DEFAULT_AGENT, GENERAL_PURPOSE)}
    agents.update(sorted(kept.items()))
    return AgentCatalog(agents, tuple(problems))


def _folders(root: Path, project: Path, home: Path) -> list[tuple[Path, Scope]]:
    """The agent folders, the first of a name's definitions winning; each folder once."""
    chain = [root]
    if root.is_relative_to(project):
        while chain[-1] != project and chain[-1].parent != chain[-1]:
            chain.append(chain[-1].parent)
    else:
        chain = [project]
    folders: list[tuple[Path, Scope]] = [
        (base / name / "agents", "project") for base in chain for name in (".paicli", ".claude")
    ]
    folders.append((home / "agents", "user"))
    seen: set[str] = set()
    unique: list[tuple[Path, Scope]] = []
    for folder, scope in folders:
        real = os.path.realpath(folder)
        if real not in seen:
            seen.add(real)
            unique.append((folder, scope))
    return unique


def _markdown_files(folder: Path, inside: Path | None, problems: list[str]) -> list[Path]:
    """The `.md` files under `folder`, sorted, at most `MAX_FILES` and `MAX_FOLDER_DEPTH`
    folders deep; a project's folder must really be inside the project."""
    if not folder.is_dir():
        return []
    if inside is not None and not Path(os.path.realpath(folder)).is_relative_to(
        os.path.realpath(inside)
    ):
        problems.append(f"{folder}: not read: a symbolic link out of the project")
        return []
    files: list[Path] = []
    for current, folders, names in os.walk(folder):
        depth = len(Path(current).relative_to(folder).parts)
        folders[:] = sorted(folders) if depth < MAX_FOLDER_DEPTH else []
        files += [Path(current) / name for name in sorted(names) if name.endswith(".md")]
        if len(files) > MAX_FILES:
            problems.append(f"{folder}: more than {MAX_FILES} files: only the first are read")
            return files[:MAX_FILES]
    return files


def _definition(
    path: Path, shown: str, scope: Scope, inside: Path | None, refused: list[str]
) -> AgentDefinition | None:
    """The definition in the file at `path`, None for documentation; what it asks that
    paicli refuses goes to `refused` (and the definition loads without it)."""
    text = read_config_text(path, shown, inside=inside, max_bytes=MAX_DEFINITION_BYTES)
    split = split_front_matter(text or "")
    if split is None:
        return None  # no front matter: documentation beside the definitions
    meta, body = split
    name = meta.get("name")
    if name is None:
        return None  # Claude Code skips a file without a name too
    if not isinstance(name, str) or not _NAME.match(name):
        raise DefinitionError(
            f"name {_shown(name)}: use lowercase letters, digits, '-' and '_' (at most 64)"
        )
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        raise DefinitionError(f"the agent {name} has no description (it tells when to use it)")
    notes: list[str] = []
    model = _model(meta.get("model"), scope, notes, refused)
    return AgentDefinition(
        name,
        description.strip(),
        body.strip(),
        tools=_tools(meta.get("tools"), "tools", notes),
        disallowed=_tools(meta.get("disallowedTools"), "disallowedTools", notes) or (),
        servers=_servers(meta.get("mcpServers"), notes),
        model=model,
        max_steps=_steps(meta.get("maxTurns")),
        source=shown,
        scope=scope,
        notes=tuple(notes),
    )


def _tools(value: object, key: str, notes: list[str]) -> tuple[str, ...] | None:
    """A tool list as patterns of paicli's tool names; None when the key is absent."""
    if value is None:
        return None
    if isinstance(value, str):
        entries = [entry.strip() for entry in value.split(",")]
    elif isinstance(value, list) and all(isinstance(entry, str) for entry in value):
        entries = [entry.strip() for entry in value]
    else:
        raise DefinitionError(f"{key} must be a comma-separated text or a list of tool names")
    patterns: list[str] = []
    for written in filter(None, entries):
        if not _TOOL.match(written):
            notes.append(f"{key}: {_shown(written)} is not a tool name and is left out")
            continue
        entry = CLAUDE_TOOLS.get(written, written)
        if entry.startswith("mcp__") and "__" not in entry[5:] and "*" not in entry:
            entry += "__*"  # a whole server, as in permission rules
        patterns.append(entry)
    return tuple(patterns)


def _servers(value: object, notes: list[str]) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise DefinitionError("mcpServers must be a list of configured servers' names")
    names = tuple(entry for entry in value if isinstance(entry, str))
    if len(names) < len(value):
        notes.append("mcpServers: a server written out in full is never started from here")
    return names


def _model(value: object, scope: Scope, notes: list[str], refused: list[str]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _MODEL.match(value):
        raise DefinitionError(f"model {_shown(value)} is not a model name")
    if value in CLAUDE_MODELS:
        if value != "inherit":
            notes.append(f"model {value} is Claude Code's: it runs on the main agent's model")
        return None
    if value in PRESETS and scope in ("project", "plugin"):
        refused.append(
            f"model {value} would switch provider, which a project's agent may not do: it "
            "runs on the main agent's model"
        )
        return None
    return value


def _steps(value: object) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_STEPS:
        raise DefinitionError(f"maxTurns must be a whole number from 1 to {MAX_STEPS}")
    return value


def _shown(value: object) -> str:
    return one_line(repr(value), 60)
