"""The built-in tools as the model sees them: names, kinds, descriptions, argument schemas."""

from __future__ import annotations

from .base import ToolKind, ToolSpec

__all__ = ["BUILTIN_SPECS", "MAX_COMMAND_TIMEOUT", "PATH_ARGUMENTS"]

MAX_COMMAND_TIMEOUT = 600

# Which argument of each tool names a file or directory, and its default when left out.
PATH_ARGUMENTS: dict[str, tuple[str, str | None]] = {
    "read_file": ("path", None),
    "write_file": ("path", None),
    "edit_file": ("path", None),
    "list_dir": ("path", "."),
    "glob": ("path", "."),
    "grep": ("path", "."),
}

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


def _spec(name: str, kind: ToolKind, description: str, schema: dict[str, object]) -> ToolSpec:
    return ToolSpec(name=name, description=description, parameters=schema, kind=kind)


BUILTIN_SPECS: tuple[ToolSpec, ...] = (
    _spec(
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
    ),
    _spec(
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
    ),
    _spec(
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
    ),
    _spec(
        "list_dir",
        "read",
        "List a directory's entries, sorted; directories end with '/'.",
        _object({"path": {**_PATH, "description": "The directory (default: the root)."}}, []),
    ),
    _spec(
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
    ),
    _spec(
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
    ),
    _spec(
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
    ),
)
