"""The ready MCP servers' tools as one toolbox: model-facing names, provider-clean schemas,
arguments checked against the server's own schema, results rendered (and capped) for the model.

The tool list is read from the `ServerManager` on every `specs()`, so a server that crashes,
is disabled or relists its tools changes what the model is offered on its next turn. Cleaning a
schema is cached per tool object (a relist makes new objects).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from paicli.llm.schema import (
    CleanedSchema,
    Profile,
    clean_schema,
    validate_arguments,
    validate_output,
)
from paicli.servers.catalogue import catalogue_key
from paicli.servers.errors import ServerCallFailed, ServerError, ServerNotReady
from paicli.servers.manager import ServerManager
from paicli.servers.tool_definition import definition, definition_hash
from paicli.servers.tool_pins import PinReview, ToolChange, ToolPins, from_project
from paicli.tools.base import PROGRESS, DecidedBy, ProgressUpdate, ToolOutcome, ToolSpec
from paicli.tools.mcp.jobs import JobBoard
from paicli.tools.mcp.naming import ToolNameCollision, ToolNameRegistry
from paicli.tools.mcp.results import DEFAULT_MAX_CHARS, to_model_result

if TYPE_CHECKING:
    from paicli.mcp import CallToolResult, Progress, Tool

__all__ = ["McpToolbox"]

log = logging.getLogger("paicli.tools.mcp")

# Tool descriptions often carry usage guidance worth more room than a schema field's (1,000);
# 2,000 keeps a runaway description from eating the context.
TOOL_DESCRIPTION_CAP = 2000
# How long checking a result against the tool's output schema may take before it is let
# through unchecked (a hostile schema's pattern can backtrack for ever).
OUTPUT_CHECK_SECONDS = 2.0


class ChangeRecorder(Protocol):
    """Where an answer about a changed tool is recorded (`paicli.audit.log.AuditLog`)."""

    def tool_changed(
        self, change: ToolChange, *, session: str, accepted: bool, decided_by: DecidedBy
    ) -> None: ...


class McpToolbox:
    """Every ready server's tools, as `mcp__{server}__{tool}` (and the catalogue's for a
    server still starting: `ServerManager.offered_tools`)."""

    def __init__(
        self,
        manager: ServerManager,
        *,
        results_dir: Path,  # where capped results are saved whole
        profile: Profile = "default",
        max_result_chars: int = DEFAULT_MAX_CHARS,
        pins: ToolPins | None = None,
        audit: ChangeRecorder | None = None,
        session_id: str = "",
    ) -> None:
        self._manager = manager
        # Pinned definitions (servers.tool_pins): a changed tool is held back until accepted.
        self.pins = pins
        # Where each answer about a changed tool is recorded (with the run's session id).
        self._audit = audit
        self._session_id = session_id
        self._reviews: dict[str, tuple[tuple[int, ...], PinReview]] = {}
        # Tool changes waiting for the user, and lines about added or removed tools (each
        # said once); the REPL and one-shot mode read and clear them between turns.
        self.pending: list[ToolChange] = []
        self.notices: list[str] = []
        self.profile: Profile = profile  # may change with the model (`use_profile`)
        self._max_result_chars = max_result_chars
        self._results_dir = results_dir
        self._cleaned: dict[tuple[str, str, Profile], tuple[Tool, CleanedSchema]] = {}
        # Each tool's definition and hash, computed once per tool object (a relist makes new).
        self._definitions: dict[tuple[str, str], tuple[Tool, dict[str, object], str]] = {}
        self._originals: dict[str, Tool] = {}
        # Every model-facing name offered this session and its server, so a call to a tool
        # that is gone (its server crashed, was disabled, relisted) is told why.
        self._offered_by: dict[str, str] = {}
        # Collisions already reported, so each is logged once, not every turn.
        self._reported: set[str] = set()
        self.problems: list[str] = []
        # Calls the servers run as MCP tasks, waited for in the background.
        self.jobs = JobBoard()

    def specs(self) -> list[ToolSpec]:
        names = ToolNameRegistry()
        specs: list[ToolSpec] = []
        originals: dict[str, Tool] = {}
        pending: list[ToolChange] = []
        for server, live in self._manager.offered_tools().items():
            trusted = self._manager.get(server).entry.trust
            tools = self._pinned(server, live, pending)
            for tool in tools:
                try:
                    name = names.add(server, tool.name)
                except ToolNameCollision as exc:
                    if str(exc) not in self._reported:
                        self._reported.add(str(exc))
                        self.problems.append(str(exc))
                        log.warning("%s", exc)
                    continue
                originals[name] = tool
                self._offered_by[name] = server
                annotations = tool.annotations or {}
                defined, hashed = self._definition(server, tool)
                specs.append(
                    ToolSpec(
                        name=name,
                        description=_cap(tool.description or tool.title or tool.name),
                        parameters=self._clean(server, tool).schema,
                        kind="mcp",
                        server=server,
                        tool=tool.name,
                        read_only_hint=annotations.get("readOnlyHint") is True,
                        trusted_server=trusted,
                        definition=defined,
                        definition_hash=hashed,
                    )
                )
        self._originals = originals
        self.pending = pending
        return specs

    def accept(self, changes: list[ToolChange], *, decided_by: DecidedBy = "user") -> None:
        """Pin these changed tools as they are now: they are offered from the next request."""
        if self.pins is not None:
            self.pins.accept(changes)
        self._reviews.clear()
        for change in changes:
            self._record(change, accepted=True, decided_by=decided_by)

    def use_profile(self, profile: Profile) -> None:
        """The schema profile of the model in use from now on (`/model` switched it)."""
        self.profile = profile

    def decline(self, change: ToolChange, *, decided_by: DecidedBy = "user") -> None:
        """Keep this changed tool from the model; not asked about again this session."""
        if self.pins is not None:
            self.pins.decline(change)
        self._record(change, accepted=False, decided_by=decided_by)

    def _record(self, change: ToolChange, *, accepted: bool, decided_by: DecidedBy) -> None:
        if self._audit is not None:
            self._audit.tool_changed(
                change, session=self._session_id, accepted=accepted, decided_by=decided_by
            )

    def _pinned(self, server: str, tools: list[Tool], pending: list[ToolChange]) -> list[Tool]:
        """`tools` less those whose definition changed since it was pinned (collected into
        `pending` unless the user declined them this session)."""
        entry = self._manager.get(server).entry
        key = catalogue_key(entry)
        if self.pins is None or key is None:
            return tools
        identity = tuple(id(t) for t in tools)
        seen = self._reviews.get(server)
        if seen is not None and seen[0] == identity:
            review = seen[1]
        else:
            review = self.pins.review(key, server, tools, project=from_project(entry))
            self._reviews[server] = (identity, review)
            if review.added:
                self.notices.append(f"{server}: new tools offered: {', '.join(review.added)}")
            if review.removed:
                self.notices.append(
                    f"{server}: tools no longer offered: {', '.join(review.removed)}"
                )
        pending += [c for c in review.changed if not self.pins.was_declined(c)]
        return review.offered

    def precheck(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome | None:
        tool = self._originals.get(spec.name)
        if tool is None or spec.server is None:
            return ToolOutcome.refused(
                f"Error: the tool {spec.name} is not available now. " + self._why_gone(spec)
            )
        cleaned = self._clean(spec.server, tool)
        problem = validate_arguments(tool.input_schema, cleaned.arguments_for_server(arguments))
        if problem is None:
            return None
        return ToolOutcome.refused(
            f"Error: the arguments do not match the tool's input schema; nothing was sent to "
            f"the server. {problem}"
        )

    def must_ask(self, spec: ToolSpec, arguments: Mapping[str, object]) -> str | None:
        # A server's arguments mean what the server makes of them: trust and approval rules
        # decide (docs/security.md), not paths paicli would have to guess at.
        return None

    async def call(self, spec: ToolSpec, arguments: Mapping[str, object]) -> ToolOutcome:
        refused = self.precheck(spec, arguments)
        if refused is not None:
            return refused
        assert spec.server is not None and spec.tool is not None
        server, tool = spec.server, self._originals[spec.name]
        payload = self._clean(server, tool).arguments_for_server(arguments)
        sink = PROGRESS.get()
        on_progress = None
        if sink is not None:
            sink(ProgressUpdate())  # approved: it runs now

            def on_progress(update: Progress) -> None:
                sink(ProgressUpdate(update.progress, update.total, update.message))

        payload = payload if isinstance(payload, Mapping) else {}
        try:
            if self._manager.may_run_as_task(server, tool.name):
                return await self._start_job(spec, tool, payload)
            # Only the definition the model was offered (and the user approved) is called: a
            # server that came up, or relisted, with another one is not (the next `specs()`
            # holds the change back until it is accepted).
            result = await self._manager.call_tool(
                server, tool.name, payload, on_progress=on_progress, offered=spec.definition_hash
            )
        except ServerNotReady:
            return ToolOutcome("Error: " + self._manager.get(server).unavailable(), True)
        except ServerError as exc:
            # Text the server wrote into the error (an error page, say) reaches the model
            # fenced as the server's data, like its results, never as paicli's words.
            quotes = isinstance(exc, ServerCallFailed) and exc.server_text is not None
            source = (server, tool.name) if quotes else None
            return ToolOutcome(f"Error: MCP server {server!r}: {exc}", True, source=source)
        return await self._rendered(server, tool, result)

    async def _start_job(
        self, spec: ToolSpec, tool: Tool, payload: Mapping[str, object]
    ) -> ToolOutcome:
        """Call a tool the server may run as a task: a task not done at once becomes a
        background job (`jobs`), and the model is told so."""
        assert spec.server is not None
        server = spec.server
        handle, limit = await self._manager.start_tool(
            server, tool.name, payload, offered=spec.definition_hash
        )
        if handle.done:
            return await self._rendered(server, tool, await handle.result())

        async def render(result: CallToolResult) -> ToolOutcome:
            return await self._rendered(server, tool, result)

        job = self.jobs.start(handle, server, tool.name, limit, render)
        return ToolOutcome(
            f"The server runs this call as a background job: job {job.number} (MCP task "
            f"{job.task_id!r:.120}). Its result will be given to you in a later message when "
            "it is ready; go on with other work meanwhile, and do not call the tool again "
            "for the same thing.",
        )

    async def _rendered(self, server: str, tool: Tool, result: CallToolResult) -> ToolOutcome:
        """A tool's result as the model reads it: rendered, capped, checked."""
        rendered = await asyncio.to_thread(
            to_model_result,
            result,
            server=server,
            tool=tool.name,
            max_chars=self._max_result_chars,
            results_dir=self._results_dir,
        )
        text, is_error = rendered.text_with_error_prefix(), rendered.is_error
        problem = await _output_problem(tool, result)
        if problem is not None:
            text, is_error = f"Error: the tool {tool.name!r} failed: {problem}.\n{text}", True
        return ToolOutcome(
            text,
            is_error,
            truncated=rendered.truncated,
            saved_path=rendered.full_output_path,
            source=(server, tool.name),
            images=tuple(
                (a.mime_type or "", a.data)
                for a in rendered.attachments
                if a.kind == "image" and a.data is not None
            ),
        )

    def _why_gone(self, spec: ToolSpec) -> str:
        server = spec.server or self._offered_by.get(spec.name)
        if server is None:
            return "No MCP server offers it."
        try:
            return self._manager.get(server).unavailable()
        except ServerError:  # a server no longer configured
            return f"MCP server {server!r} is no longer configured."

    def _definition(self, server: str, tool: Tool) -> tuple[dict[str, object], str]:
        cached = self._definitions.get((server, tool.name))
        if cached is not None and cached[0] is tool:
            return cached[1], cached[2]
        defined = definition(tool)
        hashed = definition_hash(defined)
        self._definitions[(server, tool.name)] = (tool, defined, hashed)
        return defined, hashed

    def _clean(self, server: str, tool: Tool) -> CleanedSchema:
        key = (server, tool.name, self.profile)
        cached = self._cleaned.get(key)
        if cached is not None and cached[0] is tool:
            return cached[1]
        cleaned = clean_schema(tool.input_schema, self.profile)
        self._cleaned[key] = (tool, cleaned)
        return cleaned


async def _output_problem(tool: Tool, result: CallToolResult) -> str | None:
    """Why a successful result breaks the tool's declared `outputSchema` (the spec has
    clients check it), or None. A schema too costly to check (a pathological pattern, say)
    lets the result through after `OUTPUT_CHECK_SECONDS`, with a warning."""
    schema = tool.output_schema
    if schema is None or result.is_error:
        return None
    if result.structured_content is None:
        return "it declares an output schema but returned no structured result"
    try:
        async with asyncio.timeout(OUTPUT_CHECK_SECONDS):
            return await asyncio.to_thread(validate_output, schema, result.structured_content)
    except TimeoutError:
        log.warning(
            "%s: its output schema took over %ss to check; the result was not checked",
            tool.name,
            OUTPUT_CHECK_SECONDS,
        )
        return None


def _cap(description: str) -> str:
    if len(description) <= TOOL_DESCRIPTION_CAP:
        return description
    return description[: TOOL_DESCRIPTION_CAP - 1] + "…"
