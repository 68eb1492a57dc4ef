"""The stdio framing decoder fed bytes directly (no process): one parser and one set of
limits for every message size, and batches only where the protocol has them."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from paicli.mcp._ndjson import NdjsonDecoder

MB = 1024 * 1024
ANSWER = b'{"jsonrpc":"2.0","id":7,"result":{}}\n'
# Over 1 MiB: before, such lines took another parser with other limits.
PAD = b'"pad":"' + b"x" * MB + b'",'


def line(value: bytes, *, pad: bool) -> bytes:
    params = (PAD if pad else b"") + b'"data":' + value
    return b'{"jsonrpc":"2.0","method":"notifications/message","params":{' + params + b"}}\n"


def decoder(**options: Any) -> tuple[NdjsonDecoder, list[dict[str, Any]]]:
    delivered: list[dict[str, Any]] = []
    return NdjsonDecoder(64 * MB, delivered.append, label="srv", **options), delivered


@pytest.mark.parametrize("pad", [False, True], ids=["small", "over-1MiB"])
@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (b"[" * 1025 + b"]" * 1025, "depth limit exceeded"),
        (b"[" * 100_000 + b"]" * 100_000, "depth limit exceeded"),
        (b"9" * 5000, "number is infinity"),
        (b"NaN", "unexpected character"),
    ],
    ids=["depth-1025", "depth-100000", "5000-digits", "nan"],
)
def test_a_line_refused_at_any_size_is_skipped_and_the_rest_of_the_read_delivered(
    pad: bool, value: bytes, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    decode, delivered = decoder()
    with caplog.at_level(logging.WARNING, logger="paicli.mcp"):
        # One read: the bad line spans it (as a large one spans many) and the answer follows.
        bad = line(value, pad=pad)
        decode.feed(bad[:-100])
        decode.feed(bad[-100:] + ANSWER)
    assert delivered == [{"jsonrpc": "2.0", "id": 7, "result": {}}]
    [warning] = [r.getMessage() for r in caplog.records]
    assert warning.startswith("srv: stdout: skipping text that is not valid JSON")
    assert reason in warning


@pytest.mark.parametrize("pad", [False, True], ids=["small", "over-1MiB"])
def test_what_one_size_accepts_every_size_accepts(pad: bool) -> None:
    decode, delivered = decoder()
    # 1024 levels in all: the message, its params, and 1022 arrays; each line spans reads.
    for text in (line(b"[" * 1022 + b"]" * 1022, pad=pad), line(b"9" * 30, pad=pad)):
        decode.feed(text[:-100])
        decode.feed(text[-100:])
    assert [type(m["params"]["data"]) for m in delivered] == [list, float]


@pytest.mark.parametrize("batches", [False, True])
def test_an_array_is_a_batch_only_once_2025_03_26_is_agreed(
    batches: bool, caplog: pytest.LogCaptureFixture
) -> None:
    decode, delivered = decoder()
    decode.batches = batches
    with caplog.at_level(logging.WARNING, logger="paicli.mcp"):
        decode.feed(b"[" + ANSWER.strip() + b"]\n" + ANSWER)
    assert len(delivered) == (2 if batches else 1)
    if not batches:
        [warning] = [r.getMessage() for r in caplog.records]
        assert "batches exist only in protocol 2025-03-26" in warning


def test_a_json_object_without_jsonrpc_is_skipped_as_a_log_line() -> None:
    """What pino or structlog write on stdout is skipped like a banner; an object that says
    it is JSON-RPC is still delivered, whatever else is wrong with it (the session judges)."""
    skipped: list[str] = []
    decode, delivered = decoder(skipped=skipped.append)
    wrong_version = b'{"jsonrpc":"1.0","id":8,"result":{}}\n'
    decode.feed(b'{"level":30,"msg":"listening"}\n' + wrong_version + ANSWER)
    assert [m["id"] for m in delivered] == [8, 7]
    assert skipped == [
        "srv: stdout: skipping a JSON object that is not JSON-RPC: "
        + repr(b'{"level":30,"msg":"listening"}')
    ]


@pytest.mark.parametrize("start", [150, 180, 199])
def test_the_quoted_start_of_a_skipped_line_never_ends_inside_a_word(
    start: int, caplog: pytest.LogCaptureFixture
) -> None:
    # The warning quotes 200 characters: cut inside a key, it showed the key's first part,
    # which the application's redactor (knowing the whole key) no longer recognised.
    secret = "tok-0123456789abcdefghijkl"
    decode, _ = decoder()
    with caplog.at_level(logging.WARNING, logger="paicli.mcp"):
        decode.feed(b"x" * (start - 1) + b" " + secret.encode() + b" rest\n")
        decode.feed(b"a short line, quoted whole\n")
    first, second = [r.getMessage() for r in caplog.records]
    quoted = first.rsplit(": ", 1)[1]
    if start + len(secret) <= 200:  # wholly inside: quoted whole, for the redactor to find
        assert secret in quoted
    else:
        assert quoted == repr(b"x" * (start - 1) + b" ")
    assert second.endswith(": b'a short line, quoted whole'")
