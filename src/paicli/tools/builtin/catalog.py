"""The built-in tools, one record each: what the model sees (name, kind, description, argument
schema), which argument names a path (confined before anyone is asked), any check beyond the
schema, and the handler. `BuiltinToolbox` knows tools only through these records.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from paicli.mcp import Sandbox
from paicli.tools.base import ToolKind, ToolOutcome, ToolSpec
from paicli.tools.builtin import files, look, writes
from paicli.tools.builtin.command import MAX_COMMAND_TIMEOUT, check_command, execute_command
from paicli.tools.builtin.paths import Confinement, PathRefused
from paicli.tools.builtin.walk import SearchLimits
from paicli.tools.errors import ToolError
from paicli.tools.protected import ProtectedPaths

__all__ = ["BUILTIN_TOOLS", "BuiltinCall", "BuiltinTool", "PathArgument", "in_thread"]

Arguments = Mapping[str, object]


@dataclass(frozen=True)
class PathArgument:
    """The argument that names a file or directory, and its value when left out (None: the
    schema requires it)."""

    name: str
    default: str | None = None


@dataclass(frozen=True)
class BuiltinCall:
    """One call as a handler receives it: arguments valid for the schema (nulls dropped), the
    confined path argument (None for a tool without one), and the toolbox's settings."""

    name: str
    arguments: Arguments
    path: Path | None
    paths: Confinement
    max_output_chars: int
    command_timeout: float  # execute_command's default
    command_env: Mapping[str, str]  # execute_command's environment (no model keys)
    search_limits: SearchLimits  # glob's and grep's budget
    protected: ProtectedPaths  # what glob and grep leave out below their path
    sandbox: Sandbox | None = None  # where execute_command runs (None: uncontained)


@dataclass(frozen=True)
class BuiltinTool:
    spec: ToolSpec
    run: Callable[[BuiltinCall], Awaitable[ToolOutcome]]
    path: PathArgument | None = None
    # A refusal before anyone is asked, beyond what the schema says (None: none).
    check: Callable[[Arguments], ToolOutcome | None] | None = None


def in_thread(
    work: Callable[[BuiltinCall, Path], ToolOutcome],
) -> Callable[[BuiltinCall], Awaitable[ToolOutcome]]:
    """A blocking file tool as a handler: run in a thread so the event loop stays free; a
    failure of the file system becomes an error outcome naming the path."""

    async def run(call: BuiltinCall) -> ToolOutcome:
        assert call.path is not None  # every file tool has a path argument
        path = call.path
        try:
            return await asyncio.to_thread(work, call, path)
        except PathRefused as exc:  # a symlink swapped in after the check
            return ToolOutcome.refused(str(exc), "refusal")
        except (OSError, ValueError, ToolError) as exc:
            shown = call.paths.display(path)
            detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            return ToolOutcome(text=f"{call.name} failed on {shown}: {detail}", is_error=True)

    return run


_PATH = {
    "type": "string",
    "description": "A path relative to the project root (or absolute, inside the root).",
}


def _object(properties: dict[str, object], required: list[str]) -> dict[str, object]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _tool(
    name: str,
    kind: ToolKind,
    description: str,
    schema: dict[str, object],
    *,
    run: Callable[[BuiltinCall], Awaitable[ToolOutcome]],
    path: PathArgument | None = None,
    check: Callable[[Arguments], ToolOutcome | None] | None = None,
) -> BuiltinTool:
    spec = ToolSpec(name=name, description=description, parameters=schema, kind=kind)
    return BuiltinTool(spec, run, path, check)


BUILTIN_TOOLS: tuple[BuiltinTool, ...] = (
    _tool(
        "read_file",
        "read",
        "Read a UTF-8 text file in the project. Lines come numbered (number, tab, text). Long "
        "files are shown in pages: the output says which lines it shows and the offset to "
        "read on from. Binary files are refused.",
        _object(
            {
                "path": _PATH,
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "First line to show, 1-based (default 1).",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Most lines to show (default 2000).",
                },
            },
            ["path"],
        ),
        run=in_thread(
            lambda call, path: files.read_file(
                call.paths, path, call.arguments, call.max_output_chars
            )
        ),
        path=PathArgument("path"),
    ),
    _tool(
        "write_file",
        "write",
        "Create a file, or replace a file's whole content, with UTF-8 text (at most 5 MB). "
        "Missing parent directories are created. The write is atomic. To change part of an "
        "existing file, prefer edit_file.",
        _object(
            {
                "path": _PATH,
                "content": {"type": "string", "description": "The file's complete new content."},
            },
            ["path", "content"],
        ),
        run=in_thread(lambda call, path: writes.write_file(call.paths, path, call.arguments)),
        path=PathArgument("path"),
        check=writes.check_write,
    ),
    _tool(
        "edit_file",
        "write",
        "Replace an exact piece of text in a file. old_string must match the file exactly "
        "(whitespace and indentation included) and occur once, unless replace_all is true. "
        "Read the file first.",
        _object(
            {
                "path": _PATH,
                "old_string": {
                    "type": "string",
                    "minLength": 1,
                    "description": "The exact text to replace.",
                },
                "new_string": {"type": "string", "description": "The text to put instead."},
                "replace_all": {
                    "type": "boolean",
                    "description": "Replace every occurrence (default false: exactly one).",
                },
            },
            ["path", "old_string", "new_string"],
        ),
        run=in_thread(lambda call, path: writes.edit_file(call.paths, path, call.arguments)),
        path=PathArgument("path"),
    ),
    _tool(
        "list_dir",
        "read",
        "List a directory's entries, sorted; directories end with '/'.",
        _object({"path": {**_PATH, "description": "The directory (default: the root)."}}, []),
        run=in_thread(lambda call, path: look.list_dir(call.paths, path, call.max_output_chars)),
        path=PathArgument("path", default="."),
    ),
    _tool(
        "glob",
        "read",
        "Find files and directories by name pattern, e.g. '**/*.py' (every Python file) or "
        "'src/*.ts' ('*' stays within one directory, '**/' spans any number). Paths come "
        "relative to the project root, sorted. .git, node_modules, .venv and __pycache__ "
        "are skipped.",
        _object(
            {
                "pattern": {"type": "string", "minLength": 1, "description": "The glob."},
                "path": {**_PATH, "description": "Directory to search below (default: root)."},
            },
            ["pattern"],
        ),
        run=in_thread(
            lambda call, path: look.glob_files(
                call.paths,
                path,
                str(call.arguments["pattern"]),
                call.max_output_chars,
                limits=call.search_limits,
                protected=call.protected,
            )
        ),
        path=PathArgument("path", default="."),
    ),
    _tool(
        "grep",
        "read",
        "Search file contents with a Python regular expression. Prints 'file:line: text' "
        "per matching line. Binary files, .git, node_modules, .venv and __pycache__ are "
        "skipped.",
        _object(
            {
                "pattern": {"type": "string", "minLength": 1, "description": "The regex."},
                "path": {**_PATH, "description": "File or directory to search (default: root)."},
                "glob": {
                    "type": "string",
                    "description": "Only files matching this glob, e.g. '*.py' (matched "
                    "against the file name; with a '/', against the path from the root).",
                },
                "case_insensitive": {
                    "type": "boolean",
                    "description": "Ignore case (default false).",
                },
            },
            ["pattern"],
        ),
        run=in_thread(
            lambda call, path: look.grep(
                call.paths,
                path,
                call.arguments,
                call.max_output_chars,
                limits=call.search_limits,
                protected=call.protected,
            )
        ),
        path=PathArgument("path", default="."),
    ),
    _tool(
        "execute_command",
        "execute",
        "Run a command in the project root and return its output (stdout and stderr merged) "
        "and exit code. Give either `command`, a shell command line run by /bin/sh, or "
        "`argv`, a program and its arguments run without a shell; not both. stdin is empty, "
        "so interactive programs fail. The command and every process it started are killed "
        "at the timeout and when it ends. Long output keeps its beginning and end.",
        _object(
            {
                "command": {"type": "string", "minLength": 1, "description": "Shell command."},
                "argv": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "description": "Program and arguments, without a shell.",
                },
                "timeout": {
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "maximum": MAX_COMMAND_TIMEOUT,
                    "description": f"Seconds before the command is killed (default 60, "
                    f"at most {MAX_COMMAND_TIMEOUT}).",
                },
            },
            [],
        ),
        run=lambda call: execute_command(
            call.arguments,
            cwd=call.paths.root,
            default_timeout=call.command_timeout,
            max_output_chars=call.max_output_chars,
            env=call.command_env,
            sandbox=call.sandbox,
        ),
        check=check_command,
    ),
)
