"""The hooks of a session and of a turn, outside tool calls: `SessionStart` (its context
joins the system prompt), `UserPromptSubmit` (may block the prompt or add context),
`Stop` (may send the model on, at most `MAX_CONTINUATIONS` times in a row), `Notification`
(before paicli asks the user about a tool call) and `SessionEnd`. The agent and the runtime
call these through the agent's `TurnHooks` seam."""

from __future__ import annotations

from paicli.escape import one_line
from paicli.hooks.engine import MAX_TEXT, HookAnswer, HookEngine
from paicli.permissions.request import Answer, ApprovalRequest, Approver

__all__ = ["MAX_CONTINUATIONS", "SessionHooks"]

# Claude Code forces a stop after 8 continuations in a row; so does paicli.
MAX_CONTINUATIONS = 8
# What the user is shown of why a hook blocked the prompt (the model never sees it).
MAX_SHOWN_REASON = 200


class SessionHooks:
    """The session-level events of one `HookEngine`."""

    def __init__(self, engine: HookEngine) -> None:
        self.engine = engine
        self.context = ""  # what SessionStart hooks added (the system prompt carries it)

    async def session_start(self, source: str = "startup") -> None:
        answers = await self.engine.fire("SessionStart", {"source": source}, [source])
        self.context = _context(answers, "SessionStart")

    async def session_end(self, reason: str = "other") -> None:
        await self.engine.fire("SessionEnd", {"reason": reason}, [reason])

    async def prompt_submitted(self, prompt: str) -> tuple[str | None, str]:
        """(why the prompt is blocked, or None; context to add to it). The reason is for
        the user's screen: one line, made safe (a hook's stderr could otherwise print lines
        that pass for paicli's own)."""
        answers = await self.engine.fire("UserPromptSubmit", {"prompt": prompt})
        for answer in answers:
            output = answer.output or {}
            if (
                answer.blocked
                or output.get("decision") == "block"
                or output.get("continue") is False
            ):
                why = answer.reason or answer.field("stopReason") or "no reason given"
                return one_line(why, MAX_SHOWN_REASON), ""
        return None, _context(answers, "UserPromptSubmit")

    async def stopping(self, answer: str, active: bool) -> str | None:
        """Why the model must go on instead of stopping (None: it stops)."""
        fields = {"stop_hook_active": active, "last_assistant_message": answer}
        for reply in await self.engine.fire("Stop", fields):
            output = reply.output or {}
            if output.get("continue") is False:
                return None
            if reply.blocked or output.get("decision") == "block":
                return reply.reason or "a Stop hook asks you to go on"
        return None

    async def notify(self, message: str, kind: str) -> None:
        fields = {"message": message, "title": "paicli", "notification_type": kind}
        await self.engine.fire("Notification", fields, [kind])

    def notifying(self, approver: Approver) -> Approver:
        """`approver`, with the Notification hooks run before each question."""

        async def asking(request: ApprovalRequest) -> Answer:
            await self.notify(
                f"paicli needs your permission to use {request.spec.name}", "permission_prompt"
            )
            return await approver(request)

        return asking


def _context(answers: list[HookAnswer], event: str) -> str:
    """What the hooks add to the model's context: `additionalContext`, or plain stdout."""
    parts = []
    for answer in answers:
        extra = answer.specific(event).get("additionalContext")
        if isinstance(extra, str) and extra.strip():
            parts.append(extra[:MAX_TEXT])
        elif answer.text:
            parts.append(answer.text)
    return "\n".join(parts)
