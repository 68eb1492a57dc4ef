"""read_file, write_file and edit_file through an editor that holds the files open (ACP's
`fs/read_text_file` and `fs/write_text_file`, `paicli acp`): the model reads unsaved
buffers, and the editor sees each edit as it is made. Only the content moves: the path is
confined and approved as for the disk, the file on disk is checked as the disk tools check
it (a regular file, not a folder, writable) and the same limits apply. An editor that cannot
read a file (one it does not know) leaves the read to the disk; one that cannot write it
fails the call with its reason.

The editor is the turn's, set by its owner in the turn's task (`EDITOR_FILES`), so every
call the turn makes (its sub-agents' too) inherits it, as `PROGRESS` is inherited."""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from pathlib import Path
from typing import Protocol

from paicli.tools.base import ToolOutcome
from paicli.tools.builtin import files, writes
from paicli.tools.builtin.catalog import BuiltinCall, in_thread

__all__ = ["EDITOR_FILES", "EDITOR_TOOLS", "EditorFiles", "run_in_editor"]

EDITOR_TOOLS = frozenset({"read_file", "write_file", "edit_file"})
# How long a write waits for the editor: it answers at once or is gone.
WRITE_WAIT = 60.0


class EditorFiles(Protocol):
    """An editor's view of the files (paths absolute)."""

    @property
    def writes(self) -> bool:
        """Whether writes go through the editor (else to the disk)."""
        ...

    async def read_text(self, path: Path) -> str | None:
        """The file's text as the editor has it; None: ask the disk."""
        ...

    async def write_text(self, path: Path, text: str) -> None:
        """Write the file through the editor; OSError naming why it could not."""
        ...


EDITOR_FILES: ContextVar[EditorFiles | None] = ContextVar("paicli_editor_files", default=None)


async def run_in_editor(call: BuiltinCall, editor: EditorFiles) -> ToolOutcome:
    """`call` (one of `EDITOR_TOOLS`, its path confined) with `editor`'s content."""
    assert call.path is not None
    loop = asyncio.get_running_loop()
    path = call.path

    def replace(data: bytes) -> None:
        text = data.decode("utf-8", "surrogateescape")
        future = asyncio.run_coroutine_threadsafe(editor.write_text(path, text), loop)
        future.result(timeout=WRITE_WAIT)

    through = replace if editor.writes else None
    if call.name == "write_file":
        write = in_thread(lambda c, p: writes.write_file(c.paths, p, c.arguments, replace=through))
        return await write(call)
    text = await editor.read_text(path)
    source = None if text is None else text.encode("utf-8", "surrogateescape")
    if call.name == "read_file":
        read = in_thread(
            lambda c, p: files.read_file(c.paths, p, c.arguments, c.max_output_chars, source=source)
        )
        return await read(call)
    edit = in_thread(
        lambda c, p: writes.edit_file(c.paths, p, c.arguments, source=source, replace=through)
    )
    return await edit(call)
