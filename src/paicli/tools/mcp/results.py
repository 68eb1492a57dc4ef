"""Tool results for the model: a `CallToolResult` rendered as text plus kept attachments.

Content blocks are rendered in order, one per line: text as is, everything else as a short
`[bracketed placeholder]` (never base64). The binary data stays in `ModelResult.attachments` for
multimodal models. Text over `max_chars` is capped: the full text goes to a private file in the
caller's results folder (`PaicliHome.tool_results_dir`) and the model gets the head plus a note
naming that file.
"""

from __future__ import annotations

import json
import re
import secrets
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from paicli.private_files import write_atomically
from paicli.tools.base import ToolOutcome

if TYPE_CHECKING:
    from paicli.mcp import CallToolResult

__all__ = [
    "DEFAULT_MAX_CHARS",
    "RESULT_TAG",
    "WEB_TAG",
    "Attachment",
    "ModelResult",
    "for_model",
    "to_model_result",
    "write_full_output",
]

# The element a server's output is fenced in for the model (see `for_model`).
RESULT_TAG = "mcp-result"
# The element a web page or search result is fenced in (web_fetch, web_search).
WEB_TAG = "web-content"
_TRUNCATION_NOTE = "\n\n[Output truncated: "

# About 25k tokens at the usual rough estimate of 4 characters per token.
DEFAULT_MAX_CHARS = 100_000

# A line break this far into the head is worth cutting at; earlier would waste too much budget.
_MIN_LINE_CUT_FRACTION = 0.5
# Back off at most this far to avoid splitting a grapheme (combining marks, ZWJ emoji).
_MAX_GRAPHEME_BACKOFF = 32


@dataclass(frozen=True)
class Attachment:
    """Non-text data from a result, kept for multimodal models: base64 `data` or a `uri`."""

    kind: Literal["image", "audio", "resource", "resource_link"]
    mime_type: str | None
    data: str | None = None
    uri: str | None = None


@dataclass(frozen=True)
class ModelResult:
    """What the model reads for one tool call.

    `text` is at most `max_chars` plus a short truncation note when `truncated`;
    `full_output_path` is the file holding the whole text, or None when not truncated or
    when writing it failed (the note then says so).
    """

    text: str
    is_error: bool
    attachments: tuple[Attachment, ...] = ()
    truncated: bool = False
    full_output_path: Path | None = None

    def text_with_error_prefix(self) -> str:
        """The text for providers with no error flag on tool results (OpenAI's `tool` role).

        Error results start with `Error: `, unless the server's text already starts with
        "error" (FastMCP sends "Error executing tool ..."), to avoid "Error: Error ...".
        """
        if not self.is_error:
            return self.text
        if not self.text.strip():
            return "Error: the tool failed without a message."
        if self.text.lstrip().lower().startswith("error"):
            return self.text
        return f"Error: {self.text}"


def to_model_result(
    result: CallToolResult,
    *,
    server: str,
    tool: str,
    results_dir: Path,
    max_chars: int = DEFAULT_MAX_CHARS,
) -> ModelResult:
    """Render `result` for the model, capping text longer than `max_chars` (the whole text
    is then saved in `results_dir`).

    Blocking: when the text is over the cap this writes a file, so async callers should run
    it with `asyncio.to_thread` (rendering itself is cheap CPU work).
    """
    if max_chars <= 0:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    text, attachments = _render(result)
    if len(text) <= max_chars:
        return ModelResult(text, result.is_error, attachments)
    head = text[: _cut_point(text, max_chars)]
    omitted = len(text) - len(head)
    path: Path | None
    try:
        path = write_full_output(text, directory=results_dir, server=server, tool=tool)
        where = f"The full output was saved to {path}"
    except OSError as exc:
        path = None
        where = f"The full output could not be saved ({type(exc).__name__}: {exc})"
    note = (
        f"{_TRUNCATION_NOTE}showing the first {len(head):,} of {len(text):,} characters; "
        f"{omitted:,} characters omitted. {where}.]"
    )
    return ModelResult(head + note, result.is_error, attachments, True, path)


def for_model(outcome: ToolOutcome) -> str:
    """The tool message the model reads for `outcome`: an MCP server's output goes inside a
    `<mcp-result>` element that names the server and tool and says it is untrusted data, a
    web page's or search's (`origin`) inside a `<web-content>` element naming its source;
    paicli's own text (built-in tools, refusals, paicli's errors) as it is.

    Each result gets a fresh random block id, repeated on the closing tag: a server cannot
    end the element early to pose as the user or paicli, since it never sees the id (the
    system prompt says a closing tag with another id is part of the data). paicli's
    truncation note stays after the element, and an error result starts with `Error:`.
    """
    if outcome.origin is not None:
        source = json.dumps(outcome.origin, ensure_ascii=False)
        return _fenced(outcome, WEB_TAG, f"source={source}", "untrusted data from the web")
    if outcome.source is None:
        return outcome.text
    server, tool = outcome.source
    names = f"server={json.dumps(server)} tool={json.dumps(tool, ensure_ascii=False)}"
    return _fenced(outcome, RESULT_TAG, names, "untrusted data from the server")


def _fenced(outcome: ToolOutcome, tag: str, names: str, content: str) -> str:
    body, note, error = outcome.text, "", ""
    if outcome.truncated and (at := body.rfind(_TRUNCATION_NOTE)) >= 0:
        body, note = body[:at], body[at:]
    if outcome.is_error:
        error = "Error:\n"
        body = body.removeprefix("Error: ")
    block = secrets.token_hex(6)
    opening = f'<{tag} {names} block="{block}" content="{content}">'
    return f'{error}{opening}\n{body}\n</{tag} block="{block}">{note}'


def write_full_output(text: str, *, directory: Path, server: str, tool: str) -> Path:
    """Write `text` to a new private file in `directory` (created 0700 if needed); return
    its path.

    Synchronous and self-contained so an async caller can hand it to a thread. The name is
    unique (a microsecond stamp and random digits), and the write atomic, so a reader never
    sees half a result. Raises `OSError` when the directory or file cannot be created.
    """
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    name = f"{stamp}-{_safe_name(server)}-{_safe_name(tool)}-{secrets.token_hex(3)}.txt"
    path = directory / name
    # JSON escapes can yield lone surrogates that UTF-8 cannot encode; keep them visible.
    write_atomically(path, text.encode("utf-8", errors="backslashreplace"))
    return path


def _render(result: CallToolResult) -> tuple[str, tuple[Attachment, ...]]:
    # Loaded with the session, first: only a server's answer comes here.
    from paicli.mcp import (  # noqa: PLC0415
        AudioContent,
        BlobResourceContents,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
        UnknownContent,
    )

    parts: list[str] = []
    attachments: list[Attachment] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent | AudioContent):
            parts.append(f"[{block.type}: {block.mime_type}, {_size(block.data)}]")
            attachments.append(Attachment(block.type, block.mime_type, data=block.data))
        elif isinstance(block, ResourceLink):
            mime = f" ({block.mime_type})" if block.mime_type else ""
            parts.append(f"[resource link: {block.name} <{block.uri}>{mime}]")
            attachments.append(Attachment("resource_link", block.mime_type, uri=block.uri))
        elif isinstance(block, EmbeddedResource):
            res = block.resource
            mime = f" ({res.mime_type})" if res.mime_type else ""
            if isinstance(res, BlobResourceContents):
                parts.append(f"[resource: {res.uri}{mime}, {_size(res.blob)}]")
                attachments.append(Attachment("resource", res.mime_type, res.blob, res.uri))
            else:
                parts.append(f"[resource: {res.uri}{mime}]\n{res.text}")
        elif isinstance(block, UnknownContent):
            parts.append(f"[unsupported content: {block.type}]")
    # SDK servers put the same JSON in a text block and in structuredContent: text wins.
    has_text = any(isinstance(b, TextContent) for b in result.content)
    if result.structured_content is not None and not has_text:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, default=str))
    return "\n".join(parts), tuple(attachments)


def _cut_point(text: str, limit: int) -> int:
    """Where to cut `text` to at most `limit` characters: a line end, else a grapheme edge."""
    newline = text.rfind("\n", 0, limit)
    if newline >= limit * _MIN_LINE_CUT_FRACTION:
        return newline
    cut = limit
    # Python slices whole code points, but a cut before a combining mark or around a
    # zero-width joiner would split what the reader sees as one character.
    floor = max(1, limit - _MAX_GRAPHEME_BACKOFF)
    while cut > floor and _joins_previous(text, cut):
        cut -= 1
    return cut


def _joins_previous(text: str, index: int) -> bool:
    char, before = text[index], text[index - 1]
    return (
        unicodedata.combining(char) != 0
        or char in "\u200d\ufe0e\ufe0f"
        or before == "\u200d"
        or 0x1F3FB <= ord(char) <= 0x1F3FF  # skin-tone modifiers
    )


def _size(base64_data: str) -> str:
    """Decoded size of base64 data, human-readable, without decoding it."""
    n = len(base64_data) * 3 // 4 - base64_data[-2:].count("=")
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def _safe_name(name: str) -> str:
    """A file-name-safe, bounded version of a server or tool name."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_")[:40] or "unnamed"
