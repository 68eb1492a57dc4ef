"""Protocol revisions this client speaks, oldest first, grouped by era.

Versions are an enumerated set, never compared as dates: an unknown string is simply
unsupported.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

HandshakeVersion = Literal["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
ModernVersion = Literal["2026-07-28"]
HANDSHAKE_VERSIONS: Final[tuple[HandshakeVersion, ...]] = get_args(HandshakeVersion)
MODERN_VERSIONS: Final[tuple[ModernVersion, ...]] = get_args(ModernVersion)
KNOWN_VERSIONS: Final[tuple[str, ...]] = HANDSHAKE_VERSIONS + MODERN_VERSIONS
LATEST_HANDSHAKE: Final = HANDSHAKE_VERSIONS[-1]
LATEST_MODERN: Final = MODERN_VERSIONS[-1]
#: What a server's `protocol` setting may pin: an era, an exact version, or "auto" (probe,
#: then remember the verdict).
ProtocolChoice = Literal["auto", "legacy", "modern", HandshakeVersion, ModernVersion]

Era = Literal["legacy", "modern"]


def newest_mutual(offered: object, ours: tuple[str, ...]) -> str | None:
    """The newest of `ours` that the peer listed in `offered`, if any."""
    if not isinstance(offered, list):
        return None
    for version in reversed(ours):
        if version in offered:
            return version
    return None
