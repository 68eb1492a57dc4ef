"""`CheckpointingToolbox`: the built-in tools, each change to a file recorded first.

It wraps the built-in toolbox only (inside approval: a call that is denied never gets here).
Before write_file or edit_file runs, the file it names (confined as the tool confines it,
read without following a symlink) is handed to `Checkpoints` with its content, or as absent;
after, its new content. Around execute_command, the project is looked at before and after.
Outside a turn everything passes straight through.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from pathlib import Path

from paicli.checkpoints.recorder import Checkpoints
from paicli.checkpoints.store import UNKNOWN
from paicli.tools.base import Toolbox, ToolboxWrapper, ToolOutcome, ToolSpec
from paicli.tools.builtin.files import NotRegularFile, open_regular_at
from paicli.tools.builtin.paths import Confinement, PathRefused
from paicli.tools.errors import ToolError

__all__ = ["WRITE_TOOLS", "CheckpointingToolbox", "NotAFile", "TooLarge", "read_current"]

log = logging.getLogger("paicli.checkpoints")

WRITE_TOOLS = ("write_file", "edit_file")
COMMAND_TOOL = "execute_command"


class NotAFile(ToolError):
    """The path names a folder, a link or a device: nothing a file tool writes."""


class TooLarge(NotAFile):
    """A file over the checkpoints' size cap: changed, but its content is not kept."""


def read_current(paths: Confinement, path: Path, limit: int) -> bytes | None:
    """The content of `path` now (None: there is no file), reached without following a
    symlink; `NotAFile` for anything but a regular file, or one over `limit` bytes."""
    try:
        with paths.open_parent(path) as folder, open_regular_at(paths, folder, path) as file:
            data = file.read(limit + 1)
    except FileNotFoundError:
        return None
    except (OSError, NotRegularFile, PathRefused) as exc:
        raise NotAFile from exc
    if len(data) > limit:
        raise TooLarge
    return data


def _logged(work: Callable[..., object], *arguments: object) -> object:
    """`work(*arguments)`; a failure to record (a full disk) is logged, never the call's."""
    try:
        return work(*arguments)
    except OSError as exc:
        log.warning("a checkpoint could not be recorded: %s", exc)
        return False


class CheckpointingToolbox(ToolboxWrapper):
    """`inner` (the built-in tools, confined by `paths`) with its changes recorded."""

    def __init__(self, inner: Toolbox, checkpoints: Checkpoints, paths: Confinement) -> None:
        super().__init__(inner)
        self.checkpoints = checkpoints
        self._paths = paths

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        if not self.checkpoints.recording:
            return await self._inner.call(spec, arguments)
        if spec.name == COMMAND_TOOL:
            return await self._command(spec, arguments)
        path = self._written(spec, arguments)
        if path is None:
            return await self._inner.call(spec, arguments)
        if not await asyncio.to_thread(_logged, self._before, path, spec.name):
            return await self._inner.call(spec, arguments)
        try:
            return await self._inner.call(spec, arguments)
        finally:
            await asyncio.to_thread(_logged, self._after, path)

    async def _command(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        if self._inner.precheck(spec, arguments) is not None:  # refused: it will not run
            return await self._inner.call(spec, arguments)
        await asyncio.to_thread(_logged, self.checkpoints.before_command)
        try:
            return await self._inner.call(spec, arguments)
        finally:
            argv = arguments.get("argv")
            shown = " ".join(map(str, argv)) if isinstance(argv, list) else arguments.get("command")
            await asyncio.to_thread(_logged, self.checkpoints.after_command, str(shown or ""))

    def _written(self, spec: ToolSpec, arguments: Mapping[str, object]) -> Path | None:
        raw = arguments.get("path")
        if spec.name not in WRITE_TOOLS or not isinstance(raw, str):
            return None
        try:
            return self._paths.resolve(raw)
        except PathRefused:
            return None  # the tool refuses it too

    def _before(self, path: Path, tool: str) -> bool:
        data = self._content(path)
        if isinstance(data, bool):
            return False
        self.checkpoints.changing(path, data, tool)
        return True

    def _after(self, path: Path) -> None:
        data = self._content(path)
        if not isinstance(data, bool):
            self.checkpoints.changed(path, data)

    def _content(self, path: Path) -> bytes | str | bool | None:  # (bool: always False)
        """The file's content (None: absent; UNKNOWN: too large to keep; False: not a file
        a tool writes, so nothing is recorded)."""
        try:
            return read_current(self._paths, path, self.checkpoints.limits.blob_bytes)
        except TooLarge:
            return UNKNOWN
        except NotAFile:
            return False
