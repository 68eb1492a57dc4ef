"""`paicli mcp trace FILE`: a recorded session as a readable timeline, then a latency
summary per method.

Every request is paired with its response (its latency shown on the response line) or its
cancellation; errors are red, timeouts, slow requests (`--slow MS`) and requests never
answered yellow. Everything quoted from the trace (methods, errors, stderr, URLs) is cut to
one line and escaped: a trace may come from anyone.
"""

from __future__ import annotations

import statistics
from typing import Any

from rich.table import Table
from rich.text import Text

from paicli.escape import one_line
from paicli.servers.traces import Exchange, Record, Trace, label_of, pair
from paicli.ui.output import show

QUOTE_LIMIT = 160
ARROWS = {"out": "→", "in": "←"}


def show_trace(trace: Trace, *, slow_ms: float | None = None) -> None:
    if not trace.records:
        show(Text("The trace holds no records" + _skipped(trace), "yellow"))
        return
    exchanges, ended = pair(trace.records)
    started = {id(e.sent): e for e in exchanges}
    start = trace.records[0].t
    numbers = _connection_numbers(trace.records)
    several = len(numbers) > len({server for server, _ in numbers})
    for index, record in enumerate(trace.records):
        who = record.server
        if several:
            who += f"#{numbers[record.server, record.conn]}"
        line = Text(f"{record.t - start:9.3f}s  ", "dim")
        line.append(one_line(who, 24) + "  ", "cyan")
        line.append_text(_describe(record, started.get(id(record)), ended.get(index), slow_ms))
        show(line, soft_wrap=True)
    for exchange in exchanges:
        if exchange.outcome == "unanswered":
            show(Text(f"never answered: {_name(exchange)}", "yellow"))
    show(summary_table(exchanges))
    if trace.skipped:
        show(Text(f"{trace.skipped} lines were not trace records and were skipped", "yellow"))


def _connection_numbers(records: list[Record]) -> dict[tuple[str, str], int]:
    """Each server's connections numbered 1, 2, ... in order of appearance."""
    numbers: dict[tuple[str, str], int] = {}
    counts: dict[str, int] = {}
    for record in records:
        if (record.server, record.conn) not in numbers:
            counts[record.server] = counts.get(record.server, 0) + 1
            numbers[record.server, record.conn] = counts[record.server]
    return numbers


def _skipped(trace: Trace) -> str:
    return f" ({trace.skipped} lines were not trace records)" if trace.skipped else ""


def _name(exchange: Exchange) -> str:
    return f"{one_line(exchange.label, 80)} #{one_line(str(exchange.id), 20)}"


def _describe(
    record: Record, began: Exchange | None, finished: Exchange | None, slow_ms: float | None
) -> Text:
    message = record.message
    if message is not None:
        return _message_text(record, message, began, finished, slow_ms)
    fields = record.fields
    if record.dir == "stderr":
        return Text("stderr │ " + one_line(str(fields.get("text", "")), QUOTE_LIMIT), "dim")
    if record.dir == "http":
        status = fields.get("status")
        style = "red" if not isinstance(status, int) or status >= 400 else ""
        method = one_line(str(fields.get("method", "")), 10)
        url = one_line(str(fields.get("url", "")), 80)
        text = Text(f"HTTP {method} {url} → {one_line(str(status), 5)}", style)
        headers = fields.get("headers")
        if isinstance(headers, dict) and headers:
            text.append("  " + one_line(", ".join(f"{k}: {v}" for k, v in headers.items())), "dim")
        return text
    return _event_text(record)


def _event_text(record: Record) -> Text:
    fields = record.fields
    event = str(fields.get("event", "?"))
    if event == "open":
        return Text(f"● connected (pid {one_line(str(fields.get('pid')), 12)})", "dim")
    if event == "negotiated":
        version = one_line(str(fields.get("version")), 20)
        return Text(f"● protocol {version} ({one_line(str(record.era), 10)} era)", "dim")
    if event == "cancel":
        return Text(f"⊘ cancelled #{one_line(str(fields.get('id')), 20)}", "yellow")
    if event == "closed":
        reason = one_line(str(fields.get("reason", "")), QUOTE_LIMIT)
        code = fields.get("exit_code")
        clean = reason == "closed by the client"
        text = Text(f"● closed: {reason}", "dim" if clean else "red")
        if code is not None:
            text.append(f" (exit code {one_line(str(code), 6)})")
        return text
    return Text(f"● {one_line(event, 40)}", "dim")


def _message_text(
    record: Record,
    message: dict[str, Any],
    began: Exchange | None,
    finished: Exchange | None,
    slow_ms: float | None,
) -> Text:
    arrow = ARROWS.get(record.dir, "?")
    size = record.fields.get("size")
    weight = f"  {size} B" if isinstance(size, int) else ""
    if began is not None:
        return Text(f"{arrow} {_name(began)}{weight}")
    if finished is not None:
        latency = finished.latency or 0.0
        text = Text(f"{arrow} {_name(finished)}{weight}  {latency * 1000:.1f} ms")
        if finished.outcome == "error":
            text.append(f"  ✗ {one_line(finished.error or '', QUOTE_LIMIT)}", "red")
            text.stylize("red")
        elif finished.outcome in ("timeout", "cancelled"):
            text.append(f"  ⏱ {finished.outcome}", "yellow")
            text.stylize("yellow")
        elif slow_ms is not None and latency * 1000 >= slow_ms:
            text.append("  slow", "yellow")
            text.stylize("yellow")
        return text
    if "method" in message:
        return Text(f"{arrow} {one_line(label_of(message), 80)}", "dim")
    return Text(f"{arrow} response to an unknown request{weight}", "yellow")


def summary_table(exchanges: list[Exchange]) -> Table:
    """Per method (and tool, prompt or resource): calls, errors, timeouts and latencies."""
    groups: dict[str, list[Exchange]] = {}
    for exchange in exchanges:
        groups.setdefault(exchange.label, []).append(exchange)
    grid = Table(show_edge=False, header_style="bold", title="latency per method")
    for column in ("METHOD", "CALLS", "ERRORS", "TIMEOUTS", "P50 ms", "P95 ms", "MAX ms"):
        grid.add_column(column, justify="left" if column == "METHOD" else "right")
    for label, group in sorted(groups.items()):
        times = sorted(
            e.latency * 1000 for e in group if e.reply is not None and e.latency is not None
        )
        errors = sum(e.outcome == "error" for e in group)
        stuck = sum(e.outcome in ("timeout", "unanswered") for e in group)
        grid.add_row(
            Text(one_line(label, 60)),
            str(len(group)),
            Text(str(errors), "red" if errors else ""),
            Text(str(stuck), "yellow" if stuck else ""),
            _ms(statistics.median(times)) if times else "-",
            _ms(_percentile(times, 0.95)) if times else "-",
            _ms(times[-1]) if times else "-",
        )
    return grid


def _percentile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _ms(value: float) -> str:
    return f"{value:.1f}"
