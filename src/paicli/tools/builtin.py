"""The built-in tools: files, search and commands in one project directory.

`BuiltinToolbox` confines every path to its root (in `precheck` and again in `call`), refuses a
short list of destructive commands before anyone is asked, validates arguments against each
tool's schema, and turns every failure into an error outcome. File work runs in a thread so the
event loop stays free; commands run as subprocesses that never outlive the call.
"""

from __future__ import annotations

import asyncio
import math
import shlex
from collections.abc import Mapping
from pathlib import Path

from paicli.llm.schema import validate_arguments

from . import _files, _search
from ._command import outcome_for, run_command
from ._paths import Confinement, PathRefused
from ._refusal import refusal_reason
from ._specs import BUILTIN_SPECS, MAX_COMMAND_TIMEOUT, PATH_ARGUMENTS
from .base import ToolOutcome, ToolSpec

__all__ = ["BuiltinToolbox"]


def _refused(reason: str) -> ToolOutcome:
    return ToolOutcome(text=reason, is_error=True, decision="refused", decided_by="refusal")


def _invalid(reason: str) -> ToolOutcome:
    return ToolOutcome(text=reason, is_error=True, decision="refused", decided_by="validation")


class BuiltinToolbox:
    """read_file, write_file, edit_file, list_dir, glob, grep and execute_command, confined
    to `root`."""

    def __init__(
        self, root: Path, *, command_timeout: float = 60.0, max_output_chars: int = 30_000
    ) -> None:
        self.paths = Confinement(root)
        self.command_timeout = command_timeout
        self.max_output_chars = max_output_chars
        self._specs = {spec.name: spec for spec in BUILTIN_SPECS}

    def specs(self) -> list[ToolSpec]:
        return list(self._specs.values())

    def precheck(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome | None:
        own = self._specs.get(spec.name)
        if own is None:
            return _invalid(f"unknown built-in tool {spec.name!r}")
        arguments = _without_nulls(arguments)
        problem = validate_arguments(own.parameters, arguments)
        if problem:
            return _invalid(problem)
        if spec.name == "write_file":
            size = len(str(arguments["content"]).encode("utf-8", errors="surrogatepass"))
            if size > _files.MAX_WRITE_BYTES:
                return _invalid(_files.too_large(size))
        if spec.name == "execute_command":
            return self._precheck_command(arguments)
        try:
            self._path(spec.name, arguments)
        except PathRefused as exc:
            return _refused(str(exc))
        return None

    def _precheck_command(self, arguments: Mapping[str, object]) -> ToolOutcome | None:
        command, argv = arguments.get("command"), arguments.get("argv")
        if (command is None) == (argv is None):
            return _invalid(
                "give exactly one of `command` (a shell command line) or `argv` (a list)"
            )
        timeout = arguments.get("timeout")
        # JSON allows NaN here (Python's json module accepts it) and NaN passes the schema's
        # bounds, since every comparison with it is false; it would disable the timeout.
        if isinstance(timeout, float) and not (
            math.isfinite(timeout) and 0 < timeout <= MAX_COMMAND_TIMEOUT
        ):
            return _invalid(
                f"timeout must be a number of seconds above 0 and at most "
                f"{MAX_COMMAND_TIMEOUT}, not {timeout!r}"
            )
        reason = refusal_reason(
            command if isinstance(command, str) else None,
            [str(a) for a in argv] if isinstance(argv, list) else None,
        )
        return _refused(reason) if reason else None

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        early = self.precheck(spec, arguments)
        if early is not None:
            return early
        arguments = _without_nulls(arguments)
        if spec.name == "execute_command":
            return await self._execute(arguments)
        path = self._path(spec.name, arguments)
        try:
            return await asyncio.to_thread(self._run_file_tool, spec.name, path, arguments)
        except (OSError, ValueError) as exc:
            shown = self.paths.display(path)
            detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            return ToolOutcome(text=f"{spec.name} failed on {shown}: {detail}", is_error=True)

    def _path(self, name: str, arguments: Mapping[str, object]) -> Path:
        key, default = PATH_ARGUMENTS[name]
        raw = arguments.get(key, default)
        return self.paths.resolve(str(raw))

    def _run_file_tool(self, name: str, path: Path, arguments: Mapping[str, object]) -> ToolOutcome:
        limit = self.max_output_chars
        if name == "read_file":
            return _files.read_file(self.paths, path, arguments, limit)
        if name == "write_file":
            return _files.write_file(self.paths, path, arguments)
        if name == "edit_file":
            return _files.edit_file(self.paths, path, arguments)
        if name == "list_dir":
            return _search.list_dir(self.paths, path, limit)
        if name == "glob":
            return _search.glob_files(self.paths, path, str(arguments["pattern"]), limit)
        return _search.grep(self.paths, path, arguments, limit)

    async def _execute(self, arguments: Mapping[str, object]) -> ToolOutcome:
        command, argv = arguments.get("command"), arguments.get("argv")
        if isinstance(command, str):
            full, shown = ["/bin/sh", "-c", command], command
        else:
            assert isinstance(argv, list)
            full = [str(a) for a in argv]
            shown = shlex.join(full)
        timeout_arg = arguments.get("timeout")
        timeout = (
            float(timeout_arg)
            if isinstance(timeout_arg, int | float) and not isinstance(timeout_arg, bool)
            else self.command_timeout
        )
        try:
            result = await run_command(
                full,
                cwd=self.paths.root,
                timeout=timeout,
                max_output_chars=self.max_output_chars,
            )
        except OSError as exc:
            return ToolOutcome(
                text=f"could not start {full[0]!r}: {exc.strerror or exc}",
                is_error=True,
                details={"command": shown, "exit_code": None},
            )
        return outcome_for(shown, result, timeout)


def _without_nulls(arguments: Mapping[str, object]) -> dict[str, object]:
    # Strict-mode providers send null for an optional argument the model left out.
    return {key: value for key, value in arguments.items() if value is not None}
