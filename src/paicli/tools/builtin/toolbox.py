"""The built-in tools: files, search and commands in one project directory.

`BuiltinToolbox` confines every path to its root (in `precheck`, again in `call`, and for good
as the file is opened through the root's descriptor), refuses a short list of destructive
commands before anyone is asked (`refusal`), validates arguments against each tool's schema,
and turns every failure into an error outcome: `call` never raises but for cancellation.
`must_ask` names the calls approval must always put to the user: writes to protected paths,
reads of credential stores and secret files (`paicli.tools.protected`), and a command when
the OS sandbox is wanted but nothing here can enforce it (`sandboxing`; with `--sandbox
required` such a command is refused instead); a symlink leading into a protected path from a
name that is not is refused. What an approved read shows of such a file goes to
`learn_secrets` before the result is returned (`secret_files`), so its values are redacted
from it and from everything after. Each tool is one record in `catalog` (spec, path
argument, check, handler); this class only applies them.
File work runs in a thread so the event loop stays free; commands run as subprocesses that
never outlive the call, in the OS sandbox where it holds (`contained`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from paicli.home import PaicliHome
from paicli.llm.schema import validate_arguments
from paicli.mcp import Sandbox
from paicli.tools.base import Preview, ToolOutcome, ToolSpec
from paicli.tools.builtin import writes
from paicli.tools.builtin.catalog import BUILTIN_TOOLS, BuiltinCall, BuiltinTool
from paicli.tools.builtin.command import command_environment
from paicli.tools.builtin.editor_files import EDITOR_FILES, EDITOR_TOOLS, run_in_editor
from paicli.tools.builtin.paths import Confinement, PathRefused
from paicli.tools.builtin.sandboxing import CommandSandbox
from paicli.tools.builtin.secret_files import secrets_shown
from paicli.tools.builtin.walk import SearchLimits
from paicli.tools.protected import ProtectedPaths, project_root_warning

__all__ = ["BuiltinToolbox", "SearchLimits", "project_root_warning"]


class BuiltinToolbox:
    """read_file, write_file, edit_file, list_dir, glob, grep and execute_command, confined
    to `root` and the folders `also` (--add-dir). `home` is paicli's own folder, protected
    like `.paicli` wherever it is.
    Commands get `environ` (default the process's) without the model keys and without any
    variable holding one of `secret_values`. `learn_secrets` is told the values a read of a
    secret file showed (the run's `Redactor.learn`)."""

    def __init__(
        self,
        root: Path,
        *,
        home: PaicliHome | None = None,
        command_timeout: float = 60.0,
        max_output_chars: int = 30_000,
        search_limits: SearchLimits | None = None,
        environ: Mapping[str, str] | None = None,
        secret_values: Iterable[str] = (),
        learn_secrets: Callable[[Iterable[str]], None] | None = None,
        sandbox: CommandSandbox | None = None,
        also: Sequence[Path] = (),
    ) -> None:
        self.paths = Confinement(root, also)
        self.command_env = command_environment(
            os.environ if environ is None else environ, secret_values
        )
        self.protected = ProtectedPaths(home.root if home is not None else None)
        self.command_timeout = command_timeout
        self.max_output_chars = max_output_chars
        self.search_limits = search_limits or SearchLimits()
        self._tools = {tool.spec.name: tool for tool in BUILTIN_TOOLS}
        self._learn_secrets = learn_secrets
        # Where commands run: the OS sandbox (None or mode off: uncontained).
        self.sandbox = sandbox

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
        if spec.name == COMMAND and self._uncontained() and self._required():
            assert self.sandbox is not None
            return ToolOutcome.refused(
                f"the command was not run: --sandbox required, and {self.sandbox.missing()}",
                "refusal",
            )
        try:
            self._path(tool, arguments)
        except PathRefused as exc:
            return ToolOutcome.refused(str(exc), "refusal")
        return None

    def must_ask(self, spec: ToolSpec, arguments: Mapping[str, object]) -> str | None:
        """Why this call must be put to the user whatever was allowed before, or None: it
        writes a protected path, or reads a credential store. Decided on the path as written
        (which does not change under the call); `_path` refuses a link leading into one."""
        tool = self._tools.get(spec.name)
        if spec.name == COMMAND and self._uncontained():
            assert self.sandbox is not None
            return (
                "this command would run outside any sandbox: it could change or read anything "
                f"your user can ({self.sandbox.missing()})"
            )
        if tool is None or tool.path is None:
            return None
        raw = str(_without_nulls(arguments).get(tool.path.name, tool.path.default))
        path = self.paths.lexical(raw)
        writing = spec.kind == "write"
        what = self.protected.reason(path, writing=writing)
        if what is None:
            return None
        verb = "writes" if writing else "reads"
        return f"{spec.name} {verb} {self.paths.display(path)}, which is protected: {what}"

    def preview(self, spec: ToolSpec, arguments: Mapping[str, object]) -> Preview | None:
        """What a write_file or edit_file call would change, for its approval (blocking: file
        reads); None for other tools and for what cannot be shown as text."""
        tool = self._tools.get(spec.name)
        if tool is None or spec.name not in ("write_file", "edit_file"):
            return None
        if self.precheck(spec, arguments) is not None:
            return None
        arguments = _without_nulls(arguments)
        try:
            path = self._path(tool, arguments)
        except PathRefused:
            return None
        assert path is not None
        return writes.preview(self.paths, path, arguments, spec.name)

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
            command_env=self.command_env,
            search_limits=self.search_limits,
            protected=self.protected,
            sandbox=await self._contained_in() if spec.name == COMMAND else None,
        )
        editor = EDITOR_FILES.get() if spec.name in EDITOR_TOOLS else None
        outcome = await (tool.run(call) if editor is None else run_in_editor(call, editor))
        if self._learn_secrets is not None and spec.name in _SHOWS_CONTENT:
            raw = str(arguments.get("path", "."))
            if self.protected.reason(self.paths.lexical(raw), writing=False) is not None:
                self._learn_secrets(secrets_shown(spec.name, outcome.text))
        return outcome

    def contained(self, spec: ToolSpec) -> bool:
        """Whether a call of `spec` runs in the OS sandbox (only commands do)."""
        if spec.name != COMMAND or self.sandbox is None:
            return False
        return self.sandbox.mechanism() is not None  # None when off or none works

    def _uncontained(self) -> bool:
        """The sandbox is wanted (on or required) but nothing here can enforce it."""
        return (
            self.sandbox is not None and not self.sandbox.off and self.sandbox.mechanism() is None
        )

    def _required(self) -> bool:
        return self.sandbox is not None and self.sandbox.settings.mode == "required"

    async def _contained_in(self) -> Sandbox | None:
        """The profile a command runs in now, or None (off, or none works: asked already)."""
        if self.sandbox is None or self.sandbox.off:
            return None
        mechanism = await asyncio.to_thread(self.sandbox.mechanism)  # probes once
        return self.sandbox.profile if mechanism is not None else None

    def _path(self, tool: BuiltinTool, arguments: Mapping[str, object]) -> Path | None:
        if tool.path is None:
            return None
        raw = str(arguments.get(tool.path.name, tool.path.default))
        real = self.paths.resolve(raw)
        writing = tool.spec.kind == "write"
        what = self.protected.reason(real, writing=writing)
        if what is not None and not self.protected.reason(self.paths.lexical(raw), writing=writing):
            # Approval asked about the name as written; the file it reaches must not be a
            # protected one the user was never asked about.
            raise PathRefused(
                f"refused path {raw!r}: it leads through a symlink to "
                f"{self.paths.display(real)}, which is protected ({what}); give that path "
                "itself so the user is asked"
            )
        return real


COMMAND = "execute_command"
# The tools whose result shows a file's content (list_dir and glob show names only).
_SHOWS_CONTENT = ("read_file", "grep")


def _without_nulls(arguments: Mapping[str, object]) -> dict[str, object]:
    # Strict-mode providers send null for an optional argument the model left out.
    return {key: value for key, value in arguments.items() if value is not None}
