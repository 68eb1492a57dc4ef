"""The editor answers paicli's approval questions: an `ApprovalRequest` becomes
`session/request_permission` with the four ACP options, and the option chosen becomes
paicli's `Answer` (allow_always: saved for this project, as the REPL's "a"; reject_always: a
denial the model is told not to retry, since paicli saves no denials). A cancelled turn, an
answer that names no option offered, or a client that fails: the call is denied."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp import RequestError, tool_diff_content
from acp.interfaces import Client
from acp.schema import AllowedOutcome, PermissionOption, ToolCallLocation, ToolCallUpdate

from paicli.acp.updates import redact_values, tool_kind
from paicli.agent.events import CALL_EVENTS, ToolProgress
from paicli.permissions.request import Answer, ApprovalRequest, Choice

__all__ = ["OPTIONS", "EditorApprover"]

OPTIONS = (
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    PermissionOption(option_id="reject_always", name="Always reject", kind="reject_always"),
)
_ANSWERS = {
    "allow_once": Answer(Choice.ALLOW_ONCE),
    "allow_always": Answer(Choice.ALLOW_PROJECT),
    "reject_once": Answer(Choice.DENY),
    "reject_always": Answer(
        Choice.DENY_WITH_MESSAGE, "The user rejected this tool; do not call it again."
    ),
}
# A call the user was asked about must say so, whatever else is known (a protected path:
# saved answers never cover it, so "always" allows this call only).
_PROTECTED_ALWAYS = Answer(Choice.ALLOW_ONCE)


class EditorApprover:
    """The `Approver` of one ACP session: asks the editor through `client`."""

    def __init__(self, client: Client, root: Path) -> None:
        self._client = client
        self._root = root
        # Both known once the session's runtime is open (before any turn can ask).
        self.session_id = ""
        self.redact: Callable[[str], str] = lambda text: text
        self.call_prefix: Callable[[], str] = lambda: ""  # the session's (`event_updates`)

    async def __call__(self, request: ApprovalRequest) -> Answer:
        spec = request.spec
        content: list[Any] | None = None
        locations = None
        if request.preview is not None:
            where = str((self._root / request.preview.path).resolve())
            after, before = request.preview.after, request.preview.before
            redact = self.redact
            content = [
                tool_diff_content(where, redact(after), None if before is None else redact(before))
            ]
            locations = [ToolCallLocation(path=where)]
        title = request.headline() or spec.name
        if request.protected is not None:
            title = f"{title} ({request.protected})"
        # Asked in the call's own task: the question belongs to the tool call shown.
        call = CALL_EVENTS.get()
        tool_call = ToolCallUpdate(
            tool_call_id=self.call_prefix() + call.call_id
            if call is not None
            else f"ask-{id(request)}",
            title=self.redact(title),
            kind=tool_kind(spec.name),
            status="pending",
            content=content,
            locations=locations,
            raw_input=redact_values(dict(request.arguments), self.redact),
        )
        try:
            response = await self._client.request_permission(
                session_id=self.session_id, tool_call=tool_call, options=list(OPTIONS)
            )
        except (RequestError, ConnectionError) as exc:
            return Answer(Choice.DENY_WITH_MESSAGE, f"The editor did not answer: {exc}")
        outcome = response.outcome
        if not isinstance(outcome, AllowedOutcome) or outcome.option_id not in _ANSWERS:
            return Answer(Choice.DENY)
        answer = _ANSWERS[outcome.option_id]
        if request.protected is not None and answer.choice is Choice.ALLOW_PROJECT:
            answer = _PROTECTED_ALWAYS
        if call is not None and answer.choice in (Choice.ALLOW_ONCE, Choice.ALLOW_PROJECT):
            # Through the turn's own events, so the editor hears it after the call's start.
            call.emit(ToolProgress(call.call_id, spec.name, 0.0))
        return answer
