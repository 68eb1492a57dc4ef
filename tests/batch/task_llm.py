"""A scripted model for batches, where several runs talk to it at once: each reply is decided
from the conversation it answers (its task's prompt and how many tool results it holds),
not from the order requests arrive in. Everything else is `ScriptedLlm`'s."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.llm_server import Json, Reply, ScriptedLlm, _answer

Decide = Callable[[str, int], Json]


def prompt_of(body: Json) -> str:
    users = [m for m in body["messages"] if m.get("role") == "user"]
    content = users[0]["content"] if users else ""
    return content if isinstance(content, str) else json.dumps(content)


class TaskLlm(ScriptedLlm):
    """`decide(prompt, tool_results)` is the reply to each request."""

    def __init__(self, decide: Decide, **kwargs: Any) -> None:
        super().__init__([], **kwargs)
        self.decide = decide

    def reply_to(self, raw: bytes, authorization: str | None) -> Reply:
        body = json.loads(raw)
        self.requests.append(body)
        self._arrived.set()
        results = sum(1 for m in body["messages"] if m.get("role") == "tool")
        return _answer(body, self.decide(prompt_of(body), results))

    def prompts(self) -> list[str]:
        """The prompt of each request, in order."""
        return [prompt_of(body) for body in self.requests]


def write_file(path: str, content: str) -> Json:
    """A reply calling `write_file`."""
    arguments = json.dumps({"path": path, "content": content})
    return {"tool_calls": [{"name": "write_file", "arguments": arguments}]}


def command(line: str) -> Json:
    """A reply calling `execute_command`."""
    return {"tool_calls": [{"name": "execute_command", "arguments": json.dumps({"command": line})}]}
