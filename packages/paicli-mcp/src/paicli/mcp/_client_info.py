"""This client's `clientInfo`: its name, and the version of the installed `paicli-mcp`.

The version is read from the distribution's metadata once, when the first session that is
given no `client_info` of its own is created. `importlib.metadata` (about 10 ms) is imported
with this module, which only the session loads (`import paicli.mcp` does not): connecting
imports nothing then, beside a thread that may be importing (gh-91351).
"""

from __future__ import annotations

from functools import cache
from importlib import metadata

from ._transport import JsonObject

__all__ = ["default_client_info"]

NAME = "paicli"
DISTRIBUTION = "paicli-mcp"
# Run from a source tree that is not installed, there is no metadata to read.
UNKNOWN_VERSION = "0+unknown"


@cache
def _version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return UNKNOWN_VERSION


def default_client_info() -> JsonObject:
    """The `clientInfo` a session sends unless it is given another (a fresh dict)."""
    return {"name": NAME, "version": _version()}
