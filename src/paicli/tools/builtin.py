"""The built-in tools: files, search and commands in one project directory.

`BuiltinToolbox` confines every path to its root (in `precheck`, again in `call`, and for good
as the file is opened through the root's descriptor), refuses a short list of destructive
commands before anyone is asked, validates arguments against each tool's schema, and turns
every failure into an error outcome: `call` never raises but for cancellation. Each tool is
one record in `_catalog` (spec, path argument, check, handler); this class only applies them.
File work runs in a thread so the event loop stays free; commands run as subprocesses that
never outlive the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from paicli.llm.schema import validate_arguments

from ._catalog import BUILTIN_TOOLS, BuiltinCall, BuiltinTool
from ._paths import Confinement, PathRefused
from ._walk import SearchLimits
from .base import ToolOutcome, ToolSpec

__all__ = ["BuiltinToolbox"]


class BuiltinToolbox:
    """read_file, write_file, edit_file, list_dir, glob, grep and execute_command, confined
    to `root`."""

    def __init__(
        self,
        root: Path,
        *,
        command_timeout: float = 60.0,
        max_output_chars: int = 30_000,
        search_limits: SearchLimits | None = None,
    ) -> None:
        self.paths = Confinement(root)
        self.command_timeout = command_timeout
        self.max_output_chars = max_output_chars
        self.search_limits = search_limits or SearchLimits()
        self._tools = {tool.spec.name: tool for tool in BUILTIN_TOOLS}

    def specs(self) -> list[ToolSpec]:
        return [tool.spec for tool in self._tools.values()]

    def precheck(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome | None:
        tool = self._tools.get(spec.name)
        if tool is None:
            return ToolOutcome.refused(f"unknown built-in tool {spec.name!r}")
        arguments = _without_nulls(arguments)
        problem = validate_arguments(tool.spec.parameters, arguments)
        if problem:
            return ToolOutcome.refused(problem)
        if tool.check is not None and (refusal := tool.check(arguments)) is not None:
            return refusal
        try:
            self._path(tool, arguments)
        except PathRefused as exc:
            return ToolOutcome.refused(str(exc), "refusal")
        return None

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        early = self.precheck(spec, arguments)
        if early is not None:
            return early
        tool = self._tools[spec.name]
        arguments = _without_nulls(arguments)
        try:
            # Confined again right before the use: the tree may have changed since precheck.
            path = self._path(tool, arguments)
        except PathRefused as exc:
            return ToolOutcome.refused(str(exc), "refusal")
        call = BuiltinCall(
            name=spec.name,
            arguments=arguments,
            path=path,
            paths=self.paths,
            max_output_chars=self.max_output_chars,
            command_timeout=self.command_timeout,
            search_limits=self.search_limits,
        )
        return await tool.run(call)

    def _path(self, tool: BuiltinTool, arguments: Mapping[str, object]) -> Path | None:
        if tool.path is None:
            return None
        raw = arguments.get(tool.path.name, tool.path.default)
        return self.paths.resolve(str(raw))


def _without_nulls(arguments: Mapping[str, object]) -> dict[str, object]:
    # Strict-mode providers send null for an optional argument the model left out.
    return {key: value for key, value in arguments.items() if value is not None}
