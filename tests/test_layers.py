"""Layers import downward only (house style 1): a walk over every module's imports.

    cli ─► ui ─► runtime ─► run_settings, agent ─► asks ─► permissions, audit, doctor
        ─► tools, observe ─► servers, llm, user_config ─► errors, home, project_root,
        private_files, config_files, secret_names, redact, escape ─► mcp
    langchain (the LangChain bridge, beside the agent) ─► permissions, audit ─► ...

rich and prompt_toolkit belong to the UI; openai (and httpx2, its HTTP library) to the model
client alone; langchain_core (an optional extra) to the bridge alone. Only the UI writes to
the terminal, through its one escaping output path (`paicli.ui.output`).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.imports import APP_SRC, MCP_SRC, imported_modules, python_modules

RANKS = {
    "paicli.mcp": 0,
    "paicli._version": 0,
    "paicli.errors": 1,
    # The lock the threads that import in the background take turns with.
    "paicli.import_turns": 1,
    "paicli.home": 1,
    "paicli.project_root": 1,
    "paicli.answered_projects": 1,
    "paicli.private_files": 1,
    "paicli.config_files": 1,
    # Text on the ground floor: secret names, redaction and terminal escaping.
    "paicli.secret_names": 1,
    "paicli.redact": 1,
    "paicli.escape": 1,
    "paicli.user_config": 2,
    # Plugins: their manifests, the installed ones and which a run uses (read by servers,
    # commands, skills, hooks and agents alike, so below all of them).
    "paicli.plugins": 2,
    "paicli.servers": 2,
    "paicli.llm": 2,
    # Custom slash commands read from Markdown files (user's and project's).
    "paicli.custom_commands": 2,
    "paicli.tools": 3,
    "paicli.observe": 3,
    # Skills (local folders and MCP servers' SEP-2640 skills) and their load_skill tool.
    "paicli.skills": 3,
    "paicli.permissions": 4,
    "paicli.audit": 4,
    "paicli.doctor": 4,
    # Checkpoints: each turn's file changes recorded around the built-in tools, and rewound.
    "paicli.checkpoints": 4,
    "paicli.asks": 5,
    # Hooks: commands run around tool calls and turns (a toolbox wrapper, the turn's seam).
    "paicli.hooks": 5,
    # The composition root's frozen input (flags, environment, config files as one value).
    "paicli.run_settings": 6,
    "paicli.agent": 6,
    # Sub-agents: their definitions (read with the settings) and the Agent tool, which runs
    # an agent of its own.
    "paicli.subagents": 6,
    # The LangChain bridge uses paicli's approval and audit; nothing imports it.
    "paicli.langchain": 6,
    "paicli.runtime": 7,
    # Headless runs (-p as programs read it): messages, stdin turns, the prompt tool.
    "paicli.headless": 7,
    "paicli.ui": 8,
    "paicli.cli": 9,
    # `paicli acp`: paicli as an Agent Client Protocol agent, for editors (beside the cli).
    "paicli.acp": 9,
    # `paicli batch`: tasks run as full paicli runs in worker processes (local or Ray).
    "paicli.batch": 9,
}
UI_LIBRARIES = ("rich", "prompt_toolkit")
STREAMS = ("stdout", "stderr", "__stdout__", "__stderr__")
# A program of its own (`python -I -S _reaper.py -- ARGV`, standard library only): it cannot
# import paicli, and what it writes is the command's stderr, which paicli reads as tool output.
# The sandbox's forwarder (`python -I -S forward.py ...`) is one too: it runs inside the
# sandbox, and what it writes is the sandboxed command's stderr.
OWN_PROGRAMS = {"paicli.tools.builtin._reaper", "paicli.mcp._sandbox.forward"}


def layer(module: str) -> str | None:
    for name in RANKS:
        if module == name or module.startswith(name + "."):
            return name
    return None


def modules() -> list[tuple[Path, Path, str]]:
    return list(python_modules(APP_SRC, MCP_SRC))


def test_every_module_belongs_to_a_layer() -> None:
    for _, _, module in modules():
        assert module == "paicli" or layer(module), module


def test_no_module_imports_a_layer_above_its_own() -> None:
    upward = []
    for root, path, module in modules():
        own = layer(module)
        if own is None:
            continue
        for imported in imported_modules(root, path):
            target = layer(imported)
            if target is not None and RANKS[target] > RANKS[own]:
                upward.append(f"{module} imports {imported}")
    assert upward == []


def test_terminal_libraries_openai_and_langchain_each_stay_in_their_layer() -> None:
    wrong = []
    for root, path, module in modules():
        for imported in imported_modules(root, path):
            if imported.startswith(UI_LIBRARIES) and layer(module) != "paicli.ui":
                wrong.append(f"{module} imports {imported}")
            # _assembly imports openai for type annotations only.
            allowed = ("paicli.llm.client", "paicli.llm._assembly")
            if imported.startswith(("openai", "httpx")) and module not in allowed:
                wrong.append(f"{module} imports {imported}")
            # langchain-core is an optional extra: only the bridge may need it.
            bridge = layer(module) == "paicli.langchain"
            if imported.startswith(("langchain", "pydantic")) and not bridge:
                wrong.append(f"{module} imports {imported}")
            # agent-client-protocol is an optional extra: only `paicli acp` may need it.
            if (imported == "acp" or imported.startswith("acp.")) and layer(module) != "paicli.acp":
                wrong.append(f"{module} imports {imported}")
    assert wrong == []


def terminal_writes(path: Path) -> list[str]:
    """Where `path` writes to the terminal itself: `print(...)`, any use of `sys.stdout` or
    `sys.stderr` but asking `isatty()` (`.write`, `.buffer`, `file=`), `os.write` to fd 1 or 2,
    and a rich `Console` of its own."""
    tree = ast.parse(path.read_text(), filename=str(path))
    asking = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "isatty"
    }
    found = []
    for node in ast.walk(tree):
        where = f"{path.name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("print", "Console"):
                found.append(f"{where} {node.func.id}(...)")
        elif isinstance(node, ast.Attribute) and node.attr in STREAMS and id(node) not in asking:
            if isinstance(node.value, ast.Name) and node.value.id == "sys":
                found.append(f"{where} sys.{node.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            fd = node.args[0] if node.args else None
            if node.func.attr == "write" and isinstance(fd, ast.Constant) and fd.value in (1, 2):
                found.append(f"{where} write to fd {fd.value}")
    return found


def test_only_the_ui_s_output_path_writes_to_the_terminal() -> None:
    writes = []
    for _, path, module in modules():
        # output.py writes the streams; console.py is the one rich Console (SafeConsole);
        # above_prompt.py is the stream they write to while a prompt is on the screen;
        # ray_stderr.py keeps Ray's fd-2 lines off the screen while it connects.
        writers = (
            "paicli.ui.output",
            "paicli.ui.console",
            "paicli.ui.above_prompt",
            "paicli.ui.ray_stderr",
        )
        if module in writers or module in OWN_PROGRAMS:
            continue
        writes += [f"{module}: {where}" for where in terminal_writes(path)]
    assert writes == []


def test_no_modules_import_each_other_in_a_circle() -> None:
    """Every import counts, lazy and type-only ones too: a circle is two modules that cannot
    be understood (or split) apart."""
    graph: dict[str, set[str]] = {}
    for root, path, module in modules():
        graph[module] = {m for m in imported_modules(root, path) if m.startswith("paicli")}
    circles = [sorted(group) for group in _strongly_connected(graph) if len(group) > 1]
    assert circles == []


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iteratively: the groups of modules that reach one another."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for start, targets in graph.items():
        if start in index:
            continue
        work = [(start, iter(sorted(targets & graph.keys())))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step] & graph.keys()))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                groups.append(group)
    return groups
