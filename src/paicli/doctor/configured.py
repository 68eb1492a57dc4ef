"""The doctor over configured servers: each chosen entry examined alone, one after another
(so one server's load cannot make another look slow), as `paicli mcp doctor` and the REPL's
`/doctor` do. An entry runs as it is allowed to (`running`: approved, a secret withheld);
one not allowed gets the finding that says why, and is not started."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from paicli.doctor._settings import Limits
from paicli.doctor.examine import examine
from paicli.doctor.findings import ServerReport
from paicli.servers.config import ServerEntry
from paicli.servers.trust import TrustStore, skip_reason, withheld_reason


async def examine_configured(
    chosen: Sequence[ServerEntry],
    running: Mapping[str, ServerEntry],
    skipped: Sequence[str],
    limits: Limits,
    *,
    project: Path,
    store: TrustStore,
) -> list[ServerReport]:
    """A report per entry of `chosen`, in order."""
    reports = []
    for entry in chosen:
        runs = running.get(entry.name)
        if runs is not None and runs.spec is not None:
            report = await examine(runs.name, runs.spec, limits, runs.containment)
            if runs.withheld:
                report.add("secrets-withheld", "warning", withheld_reason(runs))
            reports.append(report)
            continue
        report = ServerReport(entry.name, "http" if "url" in entry.raw else "stdio")
        if entry.name in skipped:
            report.add("not-approved", "warning", skip_reason(entry, project, store))
        else:
            report.add("config", "error", entry.error or "the entry cannot be used")
        reports.append(report)
    return reports
