"""This client's `clientInfo`: its name, and the version of the installed `paicli-mcp`.

The version is read from the distribution's metadata once, when this module is imported,
which only the session does (`import paicli.mcp` does not). Reading it imports more
(`importlib.metadata` parses the metadata with `email.parser`, about 10 ms in all), so it is
done then, by whoever imports the session, and not when the first session is created:
connecting imports nothing, beside a thread that may be importing (gh-91351).
"""

from __future__ import annotations

from importlib import metadata

from ._transport import JsonObject

__all__ = ["default_client_info"]

NAME = "paicli"
DISTRIBUTION = "paicli-mcp"
# Run from a source tree that is not installed, there is no metadata to read.
UNKNOWN_VERSION = "0+unknown"


def _version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return UNKNOWN_VERSION


VERSION = _version()


def default_client_info() -> JsonObject:
    """The `clientInfo` a session sends unless it is given another (a fresh dict)."""
    return {"name": NAME, "version": VERSION}
