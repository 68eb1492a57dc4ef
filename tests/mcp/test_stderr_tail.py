"""The stderr ring buffer of stdio servers, fed bytes directly (no process): long lines are
cut into marked pieces."""

from __future__ import annotations

import pytest

from paicli.mcp._stderr import STDERR_MAX_LINE, StderrTail

LONG = b"a" * STDERR_MAX_LINE + b"b" * STDERR_MAX_LINE + b"c" * 100


def pieces(tail: StderrTail) -> list[str]:
    return list(tail.lines)


@pytest.mark.parametrize("chunk", [len(LONG) + 1, 1000], ids=["one-read", "many-reads"])
async def test_a_line_over_the_limit_is_cut_into_marked_pieces(chunk: int) -> None:
    tail = StderrTail(None)
    data = b"before\n" + LONG + b"\nafter\n"
    for start in range(0, len(data), chunk):
        tail.feed(data[start : start + chunk])
    tail.eof()
    assert pieces(tail) == [
        "before",
        "a" * STDERR_MAX_LINE + " …[cut]",
        "[cont] " + "b" * STDERR_MAX_LINE + " …[cut]",
        "[cont] " + "c" * 100,
        "after",
    ]


async def test_a_line_cut_at_the_end_of_the_output_is_still_marked() -> None:
    tail = StderrTail(None)
    tail.feed(LONG)
    tail.eof()
    assert [line[-7:] for line in pieces(tail)] == [" …[cut]", " …[cut]", "c" * 7]
    assert pieces(tail)[-1].startswith("[cont] ")


async def test_a_cut_never_splits_a_character() -> None:
    tail = StderrTail(None)
    tail.feed(b"x" + "é".encode() * STDERR_MAX_LINE + b"\n")
    tail.eof()
    text = "".join(line.removeprefix("[cont] ").removesuffix(" …[cut]") for line in pieces(tail))
    assert text == "x" + "é" * STDERR_MAX_LINE
