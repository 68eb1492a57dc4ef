"""What the doctor found about one server: findings, each one line with its fix.

A finding's `message` and `excerpt` may quote the server (its stdout, its stderr, its tool
names): hostile text, bounded here and escaped by the UI when shown. `code` is stable, for
scripts reading `--json`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["EXCERPT_CHARS", "Finding", "ServerReport", "Severity", "excerpt"]

# "error" and "warning" are problems (the doctor exits 1); "info" says what was found.
Severity = Literal["error", "warning", "info"]
# A quoted piece of a server's output is cut to this many characters: enough to recognise
# a log line or an error, never a screenful.
EXCERPT_CHARS = 120


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    severity: Severity
    message: str
    fix: str | None = None
    excerpt: tuple[str, ...] = ()

    @property
    def is_problem(self) -> bool:
        return self.severity != "info"

    def as_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "fix": self.fix,
            "excerpt": list(self.excerpt),
        }


@dataclass(slots=True)
class ServerReport:
    """Every finding about one server, in the order found."""

    name: str
    transport: Literal["stdio", "http"]
    findings: list[Finding] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return not any(finding.is_problem for finding in self.findings)

    def add(
        self,
        code: str,
        severity: Severity,
        message: str,
        fix: str | None = None,
        excerpt: tuple[str, ...] = (),
    ) -> None:
        self.findings.append(Finding(code, severity, message, fix, excerpt))

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "transport": self.transport,
            "healthy": self.healthy,
            "findings": [finding.as_json() for finding in self.findings],
        }


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """`text` cut to `limit` characters, marked when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
