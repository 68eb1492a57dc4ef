"""Reading a `WWW-Authenticate` header (RFC 9110 §11.6.1): schemes and their parameters.

A header may hold several challenges (`DPoP algs="ES256", Bearer realm="x"`); each is a
scheme followed by comma-separated `name=value` pairs whose values are tokens or quoted
strings (which may hold commas and escaped quotes). Malformed input yields what could be
read, never an exception: the header comes from the server.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Challenge", "parse_challenges"]

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_PIECE = re.compile(
    rf"""\s*(?:
        (?P<name>{_TOKEN})\s*=\s*(?:"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<bare>[^\s,]*))
      | (?P<scheme>{_TOKEN})(?:\s+(?P<token68>[A-Za-z0-9\-._~+/]+=*)(?=\s*(?:,|$)))?
      | (?P<comma>,)
      | (?P<junk>.)
    )""",
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class Challenge:
    """One authentication challenge: its scheme (lower case) and parameters (names lower
    case, values unquoted)."""

    scheme: str
    params: dict[str, str] = field(default_factory=dict)

    @property
    def scopes(self) -> tuple[str, ...]:
        return tuple(self.params.get("scope", "").split())


def parse_challenges(header: str | None) -> list[Challenge]:
    """Every challenge in `header`, in order."""
    challenges: list[Challenge] = []
    current: Challenge | None = None
    for match in _PIECE.finditer(header or ""):
        if match["name"] is not None and current is not None:
            quoted = match["quoted"]
            value = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else match["bare"]
            current.params.setdefault(match["name"].lower(), value)
        elif match["scheme"] is not None:
            current = Challenge(match["scheme"].lower())
            challenges.append(current)
    return challenges
