"""The doctor's judgement without processes: what a stdout byte stream shows, what is wrong
with a tool list, and how a report is shown (server text escaped, one line per finding)."""

from __future__ import annotations

import pytest

from paicli.doctor import ServerReport
from paicli.doctor._stdout import MAX_LINE, StdoutWatch
from paicli.doctor._tools import check_tools
from paicli.mcp import Tool
from paicli.ui import doctor_view

OBJECT = {"type": "object"}


def watched(*chunks: bytes) -> StdoutWatch:
    watch = StdoutWatch()
    for chunk in chunks:
        watch.feed(chunk)
    return watch


def test_lines_split_across_reads_are_judged_whole() -> None:
    watch = watched(b'{"jsonrpc":"2.0","id":1,', b'"result":{}}\r\nStarting', b" up\n")
    assert (watch.messages, watch.answer_ids, watch.not_json) == (1, [1], ["Starting up"])
    assert watch.pending == 0


def test_a_line_without_its_newline_is_pending() -> None:
    watch = watched(b'{"jsonrpc":"2.0","id":1,"result":{}}')
    assert (watch.messages, watch.pending) == (0, 36)


def test_lines_are_sorted_by_what_they_look_like() -> None:
    watch = watched(
        b'{"path": "C:\\Users"}\n',  # one backslash on the wire: not JSON
        b"Content-Length: 12\r\n\r\n",
        b"{\n",
        b'  "jsonrpc": "2.0",\n',
        b"Listening on stdio\n",
    )
    assert (watch.broken_json, watch.content_length, watch.fragments) == (1, 1, 2)
    assert watch.not_json_count == 4
    assert watch.not_json == ["Content-Length: 12", "{", '  "jsonrpc": "2.0",']


def test_invalid_utf8_is_found_and_shown_escaped() -> None:
    watch = watched(b'{"name": "caf\xe9"}\n')
    assert watch.bad_utf8_count == 1
    assert "\\xe9" in watch.bad_utf8[0]


def test_json_that_is_not_json_rpc_and_batches() -> None:
    watch = watched(b'{"id": 1, "result": {}}\n', b'[{"jsonrpc":"2.0","id":2,"result":{}}]\n')
    assert (watch.not_rpc_count, watch.messages, watch.answer_ids) == (1, 1, [2])


def test_memory_stays_bounded_on_a_stream_without_newlines() -> None:
    watch = StdoutWatch()
    chunk = b"x" * (1024 * 1024)
    for _ in range(MAX_LINE // len(chunk) + 4):
        watch.feed(chunk)
    assert watch.pending == MAX_LINE + 4 * len(chunk)
    assert len(watch._partial) <= MAX_LINE
    watch.feed(b"\n")
    assert watch.not_json_count == 0  # too long to judge, counted as a line only
    assert watch.lines == 1


def test_samples_are_few_and_short() -> None:
    watch = watched(*(b"log " + b"y" * 500 + b"\n" for _ in range(100)))
    assert watch.not_json_count == 100
    assert len(watch.not_json) == 3
    assert all(len(sample) <= 120 for sample in watch.not_json)


def test_bytes_after_close_are_counted_apart() -> None:
    watch = StdoutWatch()
    watch.close()
    watch.feed(b'{"jsonrpc":"2.0","id":1,"result":{}}\n')
    assert (watch.total_bytes, watch.late_bytes, watch.messages) == (0, 37, 0)


def tool(name: str, description: str | None = "Does a thing.", **schema: object) -> Tool:
    return Tool(name=name, input_schema={**OBJECT, **schema}, description=description)


def codes(tools: list[Tool], server: str = "srv") -> dict[str, str]:
    report = ServerReport(server, "stdio")
    check_tools(report, server, tools)
    return {finding.code: finding.message for finding in report.findings}


def test_a_good_tool_list_has_no_problem() -> None:
    assert codes([tool("echo"), tool("read-file", properties={})]) == {"tools": "2 tools"}


@pytest.mark.parametrize(
    ("tools", "code", "says"),
    [
        ([tool("a"), tool("a")], "tool-duplicate", "'a'"),
        ([tool("a.b")], "tool-name", "'a.b' → 'mcp__srv__a_b'"),
        ([tool("x" * 80)], "tool-name", "'mcp__srv__xxx"),
        ([tool("a.b"), tool("a_b")], "tool-name-clash", "'mcp__srv__a_b'"),
        ([tool("a", type="objekt")], "tool-schema", "'objekt' is not valid"),
        ([tool("a", type="string")], "tool-schema", '"type" is \'string\', not "object"'),
        ([tool("a", None)], "tool-description-missing", "'a'"),
        ([tool("a", " ")], "tool-description-missing", "'a'"),
        ([tool("a", "x" * 2001)], "tool-description-long", "over 2000 characters"),
    ],
)
def test_each_tool_problem_is_found(tools: list[Tool], code: str, says: str) -> None:
    assert says in codes(tools)[code]


def test_the_server_part_of_a_model_name_is_not_the_tools_fault() -> None:
    assert "tool-name" not in codes([tool("echo")], server="my.server")


def test_a_report_line_escapes_server_text_and_stays_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = ServerReport("srv", "stdio")
    report.add("exited", "error", "exited: \x1b]0;title\x07", "fix\nit", ("\x1b[31mred\r",))
    doctor_view.show_reports([report], as_json=False)
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and "\x07" not in shown
    assert shown.splitlines() == [
        "✗ srv (stdio): 1 problem",
        "  ✗ exited: \\x1b]0;title\\x07 — fix: fix\\nit",
        "      srv │ \\x1b[31mred\\r",
    ]
