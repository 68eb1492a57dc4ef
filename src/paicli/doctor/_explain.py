"""Findings that explain a server's failure (or its bad habits) from what it wrote.

A handshake with no answer looks the same from the session's side whatever the cause; the
bytes on stdout tell the causes apart: nothing at all (output buffered), a line without its
newline, text that is not JSON (logs on stdout), text that is not UTF-8, JSON that is not
JSON-RPC, or answers carrying ids that were never sent.
"""

from __future__ import annotations

from collections.abc import Iterable

from paicli.doctor._stdout import MAX_IDS, StdoutWatch
from paicli.doctor.findings import ServerReport, excerpt
from paicli.mcp import ClientSession, ClosedOnProbe, ConnectionClosed, RequestTimeout

__all__ = [
    "explain_agreement",
    "explain_exit",
    "explain_silence",
    "explain_stdout",
    "explain_unanswered",
    "note_probe_exit",
]

STDERR_LINES = 5


def explain_silence(report: ServerReport, exc: RequestTimeout, watch: StdoutWatch) -> None:
    """The server did not answer in time: say so, and what stdout shows about why."""
    report.add("no-answer", "error", f"no answer to {exc.method} within {exc.seconds:g} s")
    if watch.total_bytes == 0:
        late = (
            f"; {watch.late_bytes} bytes came out only when it was stopped"
            if watch.late_bytes
            else ""
        )
        report.add(
            "stdout-silent",
            "error",
            f"nothing at all on stdout{late}: its output is buffered (stdout is a pipe, not "
            "a terminal), or it reads all of its input before answering",
            "flush stdout after each message (Python: print(..., flush=True) or python -u; "
            "C: fflush(stdout)); answer each line as it arrives",
        )
    if watch.pending:
        report.add(
            "no-newline",
            "error",
            f"{watch.pending} bytes on stdout without a newline: {watch.pending_excerpt()!r}",
            'end every message with "\\n" and flush stdout after it',
        )


def explain_exit(report: ServerReport, exc: ConnectionClosed, phase: str) -> None:
    """The server exited (or closed its stdout) before it could be used."""
    if exc.exit_code is not None:
        what = f"exited during {phase} with exit code {exc.exit_code}"
    else:
        what = f"closed its stdout during {phase}"
    tail = tuple(excerpt(line) for line in exc.stderr_tail[-STDERR_LINES:])
    report.add(
        "exited",
        "error",
        what + (": its last stderr lines follow" if tail else " and wrote nothing on stderr"),
        "run the command by hand to see why; a server must keep running until its stdin closes",
        tail,
    )


def note_probe_exit(report: ServerReport, exc: ClosedOnProbe) -> None:
    """The server exited on the 2026 discovery probe and worked when started again with
    `initialize` first: an SDK older than the 2026 revision (the Rust SDK before rmcp 3.0)."""
    code = f" with exit code {exc.exit_code}" if exc.exit_code is not None else ""
    tail = tuple(excerpt(line) for line in exc.stderr_tail[-STDERR_LINES:])
    report.add(
        "exits-on-probe",
        "warning",
        f"exited{code} on the 2026 discovery probe (server/discover), as servers built on "
        "an SDK older than the 2026 revision do (the Rust SDK before rmcp 3.0); with "
        "initialize first it works, so paicli starts it twice on its first start",
        'set "protocol": "legacy" in its entry (paicli mcp add --protocol legacy) to skip '
        "the probe, or update the server's MCP SDK",
        tail,
    )


def explain_stdout(
    report: ServerReport, watch: StdoutWatch, sent: Iterable[object], *, failed: bool
) -> None:
    """What stdout carried that it must not: a problem even when the server works with
    paicli (which skips such lines), since other clients stop at the first one."""
    if watch.bad_utf8_count:
        report.add(
            "invalid-utf8",
            "error",
            f"{watch.bad_utf8_count} lines on stdout are not valid UTF-8 "
            f"(first at {watch.bad_utf8[0]})",
            "write JSON as UTF-8 (Python: sys.stdout.reconfigure(encoding='utf-8'); "
            "escape or drop raw bytes)",
        )
    if watch.broken_json:
        report.add(
            "invalid-json",
            "error",
            f"{watch.broken_json} lines on stdout look like JSON messages but are not valid "
            f"JSON, e.g. {watch.broken[0]!r}",
            "write messages with a JSON serialiser, not by hand (a backslash in a string, as "
            "in a Windows path, must be doubled)",
        )
    if watch.content_length:
        report.add(
            "content-length-framing",
            "error",
            f"{watch.content_length} 'Content-Length:' header lines on stdout: that is the "
            "framing of LSP, not of MCP",
            "write each message as one line of JSON ending in a newline, with no headers",
        )
    elif watch.fragments:
        report.add(
            "multiline-json",
            "error",
            f"JSON spread over several lines on stdout (pretty-printed), e.g. "
            f"{watch.not_json[0]!r}",
            "write each message on one line (no indent: json.dumps(message))",
        )
    elif watch.not_json_count:
        report.add(
            "stdout-logs",
            "error" if failed else "warning",
            f"{watch.not_json_count} lines on stdout are not JSON, e.g. {watch.not_json[0]!r}",
            "stdout is for JSON-RPC messages only: write logs to stderr",
            tuple(watch.not_json[1:]),
        )
    if watch.not_rpc_count:
        report.add(
            "not-jsonrpc",
            "error",
            f"{watch.not_rpc_count} JSON lines on stdout are not JSON-RPC 2.0 messages (an "
            f'object with "jsonrpc": "2.0"), e.g. {watch.not_rpc[0]!r}',
            'send each message as one JSON object with "jsonrpc": "2.0"',
        )
    sent_ids = list(sent)
    wrong = [i for i in watch.answer_ids if i is not None and not _among(i, sent_ids)]
    if wrong:
        shown = ", ".join(excerpt(repr(i), 40) for i in wrong[:5])
        asked = ", ".join(repr(i) for i in sent_ids[:5])
        report.add(
            "wrong-id",
            "error",
            f"answers carry ids no request had: {shown} (requests sent: {asked})",
            'answer with the request\'s id exactly as received (1 and "1" differ)',
        )


def explain_unanswered(
    report: ServerReport, watch: StdoutWatch, sent: list[tuple[object, str]]
) -> None:
    """A server that works but left a request unanswered: a method it does not know must
    get an error (-32601), or a client that asks (as paicli's discovery probe does) waits
    out its timeout on every start."""
    unanswered = [method for request_id, method in sent if not _among(request_id, watch.answer_ids)]
    if unanswered and len(watch.answer_ids) < MAX_IDS:
        report.add(
            "unanswered",
            "warning",
            f"never answered {', '.join(repr(method) for method in unanswered[:3])}: every "
            "start waits for it to time out",
            'answer every request; an unknown method with error {"code": -32601}',
        )


def _among(answer_id: object, ids: list[object]) -> bool:
    # JSON-RPC ids match by type and value: 1 is not "1", and true is not 1.
    return any(type(answer_id) is type(i) and answer_id == i for i in ids)


def explain_agreement(
    report: ServerReport, session: ClientSession, seconds: float, slow: float
) -> None:
    """What was agreed (protocol and era, or the minimal dialect), and a slow start."""
    info = session.server_info
    if session.dialect == "minimal":
        what = (
            "the minimal JSON-RPC dialect (its first answer carries server_info and "
            "capabilities.tools; it gets tool calls only)"
        )
    elif session.era == "legacy":
        what = f"protocol {session.protocol_version} (initialize handshake)"
    else:
        what = f"protocol {session.protocol_version} (2026 discovery, stateless)"
    report.add(
        "protocol", "info", f"{info.name} {info.version}: {what}, answered in {seconds:.2f} s"
    )
    if seconds > slow:
        report.add(
            "slow-start",
            "warning",
            f"the handshake took {seconds:.1f} s (over {slow:g} s)",
            "answer the handshake first and do slow setup afterwards or on the first call",
        )
