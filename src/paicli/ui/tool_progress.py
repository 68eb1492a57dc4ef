"""A running tool call in one line, the same in the REPL's live lines and one-shot's stderr:
name, elapsed time, a bar when the tool gave a total (else its count), its last message.
Plain text, made safe here; no rich, so one-shot mode does not load it."""

from __future__ import annotations

from paicli.agent.events import ToolProgress
from paicli.escape import one_line, terminal_safe

BAR_WIDTH = 20
MESSAGE_CHARS = 80


def progress_text(event: ToolProgress, seconds: float) -> str:
    """A running call in one line: name, elapsed time, a bar (or a count) and the tool's
    last message, all made safe."""
    parts = [f"{terminal_safe(event.name)}  {seconds:.0f}s"]
    if event.progress is not None:
        total = event.total
        if total is not None and total > 0:
            share = min(max(event.progress / total, 0.0), 1.0)
            filled = round(share * BAR_WIDTH)
            bar = "█" * filled + "░" * (BAR_WIDTH - filled)
            parts.append(f"{bar} {event.progress:g}/{total:g}")
        else:
            parts.append(f"{event.progress:g}")
    if event.message:
        parts.append(one_line(event.message, MESSAGE_CHARS))
    return "  ".join(parts)
