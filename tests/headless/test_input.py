"""Stdin's user messages (`--input-format stream-json`), each line hostile input."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from paicli.headless.input import LINE_LIMIT, BadInputLine, StdinLines, user_turn


def line(value: object) -> bytes:
    return json.dumps(value).encode() + b"\n"


def test_a_user_message_as_claude_code_sends_it_is_its_text() -> None:
    message = {
        "role": "user",
        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
    }
    assert user_turn(line({"type": "user", "message": message}), 1) == "a\n\nb"
    short = {"type": "user", "message": {"content": "hi"}, "session_id": "x"}
    assert user_turn(line(short), 1) == "hi"
    assert user_turn(b"  \n", 3) is None


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (b"{oops\n", "stdin line 7: not JSON (Expecting property name"),
        (b"[" * 50_000 + b"\n", "stdin line 7: not JSON (nested too deeply)"),
        (b'{"type": "user\xff"}\n', "stdin line 7: not UTF-8 (byte 15)"),
        (line("user"), "stdin line 7: expected a JSON object, got str"),
        (
            line({"type": "assistant"}),
            "stdin line 7: expected a message of type 'user', got 'assistant'",
        ),
        (line({"type": "user", "message": "hi"}), 'stdin line 7: "message" must be an object'),
        (
            line({"type": "user", "message": {"role": "assistant", "content": "x"}}),
            '"role": "user"',
        ),
        (line({"type": "user", "message": {"content": 5}}), '"content" must be a string'),
        (line({"type": "user", "message": {"content": [{"type": "image"}]}}), "block 0 is 'image'"),
        (line({"type": "user", "message": {"content": [{"type": "text"}]}}), 'has no "text"'),
        (line({"type": "user", "message": {"content": "  "}}), "the message has no text"),
    ],
)
def test_anything_else_is_one_error_naming_the_line(raw: bytes, said: str) -> None:
    with pytest.raises(BadInputLine) as raised:
        user_turn(raw, 7)
    assert said in str(raised.value)


async def test_stdin_lines_are_numbered_and_a_line_too_long_is_an_error(tmp_path: Path) -> None:
    data = tmp_path / "stdin"
    data.write_bytes(b"one\n\ntwo\n" + b"x" * (LINE_LIMIT + 10) + b"\nafter\n")
    fd = os.open(data, os.O_RDONLY)
    try:
        lines = StdinLines(fd)
        async with asyncio.timeout(10):
            assert await lines.next() == b"one\n"
            assert await lines.next() == b"\n"
            assert await lines.next() == b"two\n"
            with pytest.raises(BadInputLine, match="stdin line 4: longer than 4 MiB"):
                await lines.next()
            assert await lines.next() is None  # it stopped reading there
            assert await lines.next() is None
    finally:
        os.close(fd)


async def test_a_last_line_without_its_newline_is_still_a_line(tmp_path: Path) -> None:
    data = tmp_path / "stdin"
    data.write_bytes(b"a\nb\nlast")
    fd = os.open(data, os.O_RDONLY)
    try:
        lines = StdinLines(fd)
        async with asyncio.timeout(10):
            got = [await lines.next() for _ in range(4)]
    finally:
        os.close(fd)
    assert got == [b"a\n", b"b\n", b"last", None]
