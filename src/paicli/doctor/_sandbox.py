"""How a configured stdio server is contained, as the doctor says it: the mechanism and the
profile, or why it runs unsandboxed (info, not a problem: the user's config chose it); a
sandbox that cannot be had here is an error with its fix, and the server is not started.
"""

from __future__ import annotations

from paicli.doctor.findings import ServerReport
from paicli.servers.containment import (
    Containment,
    contained_line,
    sandbox_support,
    unavailable,
)

__all__ = ["note_sandbox"]


async def note_sandbox(report: ServerReport, containment: Containment) -> bool:
    """Add the finding; False when the server cannot start here for want of its sandbox."""
    if containment.sandbox is None:
        fix = None
        if containment.origin == "not-asked":
            fix = 'add "sandbox": true to its entry (or a profile: write, read, network)'
        report.add("unsandboxed", "info", contained_line(containment, None), fix)
        return True
    support = await sandbox_support()
    missing = unavailable(containment, support)
    if missing is not None:
        what, fix = missing
        report.add("sandbox-unavailable", "error", f"its sandbox cannot be had here: {what}", fix)
        return False
    report.add("sandbox", "info", contained_line(containment, support))
    return True
