"""The one stack of wrappers every tool call of paicli passes: `Audit( Redact( inner ) )`,
where `inner` is usually the approving wrapper. Audit is outermost so that denials are
recorded; redaction sits inside it so that neither the model nor the log sees a known secret.
The REPL, `-p` and the LangChain bridge build their toolbox through `guard`."""

from __future__ import annotations

from paicli.audit.log import AuditingToolbox, AuditLog
from paicli.redact import Redactor
from paicli.tools.base import Toolbox
from paicli.tools.redacting import RedactingToolbox

__all__ = ["guard"]


def guard(
    inner: Toolbox, *, redactor: Redactor, audit: AuditLog | None, session_id: str
) -> Toolbox:
    """`inner` with what reaches the model redacted and, with an `audit` log, every call
    recorded (allowed or not) under `session_id`."""
    redacted: Toolbox = RedactingToolbox(inner, redactor)
    if audit is None:
        return redacted
    return AuditingToolbox(redacted, audit, session_id=session_id)
