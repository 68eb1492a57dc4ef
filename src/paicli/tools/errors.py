"""The root of the tools layer's exceptions (the whole tree is drawn in `paicli.errors`).

A `ToolError` never leaves the tools layer: a toolbox turns it into an error `ToolOutcome`
the model reads (or, for a name collision at listing time, a problem line and a left-out tool).
"""

from __future__ import annotations

from paicli.errors import PaicliError

__all__ = ["ToolError"]


class ToolError(PaicliError):
    """Something inside a tool call or a tool listing went wrong; the message says what."""
