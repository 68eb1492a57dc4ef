"""`paicli mcp doctor`: start each server alone and say what is wrong with it, and how to fix it.

`examine(name, spec, limits)` gives a `ServerReport`: one `Finding` per thing found, each a
line with its fix. The UI shows them (`paicli.ui.doctor_view`); nothing here prints.
"""

from paicli.doctor._settings import SLOW_START, Limits
from paicli.doctor.examine import examine
from paicli.doctor.findings import Finding, ServerReport, Severity

__all__ = ["SLOW_START", "Finding", "Limits", "ServerReport", "Severity", "examine"]
