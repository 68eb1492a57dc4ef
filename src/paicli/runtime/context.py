"""What the system prompt adds to each request beyond the project's memory, and the schema
profile a model takes: small functions of a run's state, shared by `open_runtime` and
`/model`."""

from __future__ import annotations

from paicli.llm.schema import Profile
from paicli.llm.settings import ModelSettings
from paicli.permissions.approval import Mode
from paicli.servers.manager import ServerManager, ServerState

__all__ = ["mode_note", "schema_profile", "server_instructions"]


def schema_profile(settings: ModelSettings) -> Profile:
    """Gemini models (through Google's or a router's OpenAI-compatible endpoint) take only
    an OpenAPI subset of JSON Schema; every other provider takes the default profile."""
    where = f"{settings.model or ''} {settings.base_url or ''}".lower()
    return "gemini" if "gemini" in where or "generativelanguage" in where else "default"


def mode_note(mode: Mode) -> str:
    """What the system prompt says about the permission mode (nothing for the default)."""
    if mode is Mode.PLAN:
        return (
            "Permission mode: plan. Only read-only tools run; every other call is refused. "
            "Explore and read what you need, then answer with a concrete plan (files to change, "
            "commands to run) and wait: the user approves it and leaves plan mode."
        )
    if mode is Mode.ACCEPT_EDITS:
        return "Permission mode: accept-edits. File edits in the project run without asking."
    return ""


def server_instructions(manager: ServerManager) -> dict[str, str]:
    """The `instructions` of every server that is up (what it says of its own tools), and
    of those still starting, as the catalogue recorded them."""
    found: dict[str, str] = {}
    for server in manager.servers():
        session = server.session
        if server.state is ServerState.READY and session is not None and session.instructions:
            found[server.name] = session.instructions
        elif server.cached_instructions:  # still starting: what it said last time
            found[server.name] = server.cached_instructions
    return found
