"""`paicli mcp doctor`'s report: per server a heading, then one line per finding with its fix,
on stdout; or all of it as JSON. Findings quote servers (their output, their tool names), so
every line goes through the escaping output path and is kept to one line."""

from __future__ import annotations

from collections.abc import Sequence

from paicli.doctor import Finding, ServerReport
from paicli.ui.output import QUOTE_MARK, out, out_json

__all__ = ["report_lines", "show_reports"]

SIGNS = {"error": "✗", "warning": "!", "info": "·"}


def show_reports(reports: Sequence[ServerReport], *, as_json: bool) -> None:
    if as_json:
        out_json(
            {
                "healthy": all(report.healthy for report in reports),
                "servers": [report.as_json() for report in reports],
            }
        )
        return
    for report in reports:
        for line in report_lines(report):
            out(line)


def report_lines(report: ServerReport) -> list[str]:
    """The lines shown for one server (not yet escaped: `out` does that)."""
    problems = sum(finding.is_problem for finding in report.findings)
    state = "healthy" if not problems else f"{problems} problem{'s' * (problems > 1)}"
    lines = [f"{'✓' if not problems else '✗'} {report.name} ({report.transport}): {state}"]
    for finding in report.findings:
        lines.append(_one_line(f"  {SIGNS[finding.severity]} {_text(finding)}"))
        lines.extend(
            _one_line(f"      {report.name}{QUOTE_MARK}{line}") for line in finding.excerpt
        )
    return lines


def _text(finding: Finding) -> str:
    return finding.message + (f" — fix: {finding.fix}" if finding.fix else "")


def _one_line(text: str) -> str:
    # A server's words may hold newlines (an error message, a tool name): one finding, one line.
    return text.replace("\r", "\\r").replace("\n", "\\n")
