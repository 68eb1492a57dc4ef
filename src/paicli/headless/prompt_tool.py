"""`--permission-prompt-tool mcp__SERVER__TOOL`: an MCP tool that answers a headless run's
approval questions, as Claude Code's flag of that name does.

It is asked only about a call that rules, flags and the mode neither allow nor deny (and
about a protected path, which nothing else can allow). It is called with `{"tool_name",
"input"}` and answers with a text block holding JSON: `{"behavior": "allow",
"updatedInput": {...}}` or `{"behavior": "deny", "message": "why"}`. Its answer is hostile
input: anything but those shapes is a denial naming what was wrong, and an `updatedInput`
other than the call's own input is refused (paicli runs exactly the call that was asked
about). The tool's own server must be ready before the run starts (`check`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from paicli.errors import PaicliError
from paicli.permissions.request import Answer, ApprovalRequest, Choice
from paicli.servers.manager import ServerManager, ServerState
from paicli.tools.mcp.naming import model_tool_name

__all__ = ["PROMPT_TOOL_WAIT", "PromptTool", "PromptToolError"]

# How long the run waits for the tool's server to start (Claude Code waits MCP_TIMEOUT, 30 s).
PROMPT_TOOL_WAIT = 30.0
# An answer longer than this is no decision anyone meant.
ANSWER_LIMIT = 64 * 1024
MESSAGE_LIMIT = 2000


class PromptToolError(PaicliError):
    """The permission prompt tool cannot be used, or gave no decision (names why)."""


class PromptTool:
    """The approver of a headless run: asks the MCP tool `name` (`mcp__server__tool`)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._manager: ServerManager | None = None
        self._target: tuple[str, str] | None = None  # (server, tool), once found

    async def check(self, manager: ServerManager) -> None:
        """Find the tool among `manager`'s servers, starting and waiting for its server;
        `PromptToolError` when it is not there."""
        self._manager = manager
        flag = f"--permission-prompt-tool {self.name}"
        candidates = [
            s.name for s in manager.servers() if self.name.startswith(model_tool_name(s.name, ""))
        ]
        if not candidates:
            raise PromptToolError(f"{flag}: no configured MCP server has that tool")
        await manager.wait_ready(candidates, timeout=PROMPT_TOOL_WAIT)
        for server in candidates:
            record = manager.get(server)
            for tool in record.tools:
                if model_tool_name(server, tool.name) == self.name:
                    self._target = (server, tool.name)
                    return
        states = ", ".join(f"{s}: {_state(manager, s)}" for s in candidates)
        raise PromptToolError(f"{flag}: no such tool ({states})")

    async def __call__(self, request: ApprovalRequest) -> Answer:
        if self._manager is None or self._target is None:
            raise PromptToolError("the permission prompt tool was not checked")
        server, tool = self._target
        arguments = {"tool_name": request.spec.name, "input": dict(request.arguments)}
        result = await self._manager.call_tool(server, tool, arguments)
        if result.is_error:
            raise PromptToolError(f"{self.name} failed: {result.text[:MESSAGE_LIMIT]}")
        return decision(result.text, request.arguments)


def decision(text: str, arguments: Mapping[str, object]) -> Answer:
    """The answer the tool's `text` gives about a call with `arguments`."""
    if len(text) > ANSWER_LIMIT:
        raise PromptToolError(f"the answer is longer than {ANSWER_LIMIT // 1024} KiB")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise PromptToolError("the answer is not JSON") from None
    if not isinstance(value, dict):
        raise PromptToolError("the answer is not a JSON object")
    behavior = value.get("behavior")
    if behavior == "deny":
        message = value.get("message")
        said = message[:MESSAGE_LIMIT] if isinstance(message, str) else ""
        return Answer(Choice.DENY_WITH_MESSAGE, said or "denied by the permission prompt tool")
    if behavior != "allow":
        raise PromptToolError('the answer\'s "behavior" is neither "allow" nor "deny"')
    updated = value.get("updatedInput")
    if updated is not None and updated != dict(arguments):
        return Answer(
            Choice.DENY_WITH_MESSAGE,
            "the permission prompt tool changed the call's input, which paicli does not run",
        )
    return Answer(Choice.ALLOW_ONCE)


def _state(manager: ServerManager, name: str) -> str:
    record = manager.get(name)
    if record.state is ServerState.ERROR:
        return f"failed: {record.failure() or 'unknown'}"
    return str(record.state.value)
