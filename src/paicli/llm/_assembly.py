"""Turns streamed `chat.completion.chunk`s into deltas and one final `Completion`.

Tool calls arrive as fragments keyed by `index`: the first carries the id and name, the rest
pieces of the arguments text, which is kept raw (never parsed here). Providers differ in
small ways this tolerates: a repeated id or name on every fragment, a new id reusing an
index, no id at all, usage in a separate last chunk or on every chunk, or none.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from paicli.llm.events import Completion, ReasoningDelta, TextDelta, ToolCallRequest, Usage
from paicli.llm.messages import whole_text

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionChunk
    from openai.types.chat.chat_completion_chunk import ChoiceDelta, ChoiceDeltaToolCall


@dataclass
class _PartialCall:
    id: str
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ChunkAssembler:
    """Feed it each chunk in order; `started` says whether any delta was handed out."""

    def __init__(self) -> None:
        self.started = False
        self.chunks = 0  # how many were fed (none at all: the endpoint sent no answer)
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: list[_PartialCall] = []
        self._by_index: dict[int, _PartialCall] = {}
        self._finish_reason: str | None = None
        self._usage: Usage | None = None

    def feed(self, chunk: ChatCompletionChunk) -> list[TextDelta | ReasoningDelta]:
        self.chunks += 1
        if chunk.usage is not None:
            self._usage = Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
        deltas: list[TextDelta | ReasoningDelta] = []
        # n=1 is all we ask for; a second choice would be a server bug, so read the first.
        for choice in chunk.choices[:1]:
            reasoning = _reasoning_text(choice.delta)
            if reasoning:
                self._reasoning.append(reasoning)
                deltas.append(ReasoningDelta(reasoning))
            if choice.delta.content:
                self._text.append(choice.delta.content)
                deltas.append(TextDelta(choice.delta.content))
            for fragment in choice.delta.tool_calls or ():
                self._add_fragment(fragment)
            if choice.finish_reason is not None:
                self._finish_reason = choice.finish_reason
        if deltas:
            self.started = True
        return deltas

    def completion(self) -> Completion:
        calls = tuple(
            ToolCallRequest(call.id, call.name, "".join(call.arguments)) for call in self._calls
        )
        return Completion(
            text=whole_text("".join(self._text)),
            reasoning=whole_text("".join(self._reasoning)),
            tool_calls=calls,
            finish_reason=self._finish_reason,
            usage=self._usage,
        )

    def _add_fragment(self, fragment: ChoiceDeltaToolCall) -> None:
        call = self._by_index.get(fragment.index)
        # A different id at a known index is a new call (servers that send each call whole
        # with index 0); the same id repeated, or none, continues the call.
        if call is None or (fragment.id and call.id != fragment.id and call.name):
            # No id from the server (some local ones): make one unique in the conversation,
            # since each tool message must answer exactly one call.
            call = _PartialCall(id=fragment.id or f"call_{uuid.uuid4().hex[:16]}")
            self._by_index[fragment.index] = call
            self._calls.append(call)
        function = fragment.function
        if function is None:
            return
        # Some servers repeat the whole name on every fragment; others stream it in pieces.
        if function.name and function.name != call.name:
            call.name += function.name
        if function.arguments:
            call.arguments.append(function.arguments)


def _reasoning_text(delta: ChoiceDelta) -> str:
    """DeepSeek, Qwen, GLM and Kimi send `reasoning_content`; Ollama and OpenRouter send
    `reasoning`. Some servers send both with the same text, so take only the first."""
    for name in ("reasoning_content", "reasoning"):
        value = getattr(delta, name, None)  # extra fields the SDK's model keeps as-is
        if isinstance(value, str) and value:
            return value
    return ""
