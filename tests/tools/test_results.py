"""Tool results rendered for the model, built from wire JSON shaped as in the MCP spec."""

from __future__ import annotations

import base64
import json
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from paicli.mcp import CallToolResult
from paicli.tools.mcp.results import (
    DEFAULT_MAX_CHARS,
    Attachment,
    ModelResult,
    to_model_result,
    write_full_output,
)

PNG = base64.b64encode(b"\x89PNG" + bytes(12_596)).decode()  # 12,600 bytes = 12.3 KB
WAV = base64.b64encode(bytes(1_258_291)).decode()  # 1.2 MB


def render(wire: dict[str, Any], tmp_path: Path, **options: Any) -> ModelResult:
    result = CallToolResult.from_wire(wire)
    return to_model_result(
        result, server="files", tool="read", results_dir=tmp_path / "results", **options
    )


def test_text_blocks_are_joined_by_newlines(tmp_path: Path) -> None:
    wire = {"content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}
    out = render(wire, tmp_path)
    assert out == ModelResult("one\ntwo", is_error=False)


def test_image_and_audio_become_placeholders_and_keep_their_data(tmp_path: Path) -> None:
    wire = {
        "content": [
            {"type": "text", "text": "Here is the chart:"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "audio", "data": WAV, "mimeType": "audio/wav"},
        ]
    }
    out = render(wire, tmp_path)
    assert out.text == "Here is the chart:\n[image: image/png, 12.3 KB]\n[audio: audio/wav, 1.2 MB]"
    assert PNG[:20] not in out.text
    assert out.attachments == (
        Attachment("image", "image/png", data=PNG),
        Attachment("audio", "audio/wav", data=WAV),
    )


def test_resource_link_is_named_with_uri_and_mime(tmp_path: Path) -> None:
    wire = {
        "content": [
            {
                "type": "resource_link",
                "uri": "file:///project/src/main.rs",
                "name": "main.rs",
                "description": "Primary application entry point",
                "mimeType": "text/x-rust",
            },
            {"type": "resource_link", "uri": "https://example.com/a", "name": "a"},
        ]
    }
    out = render(wire, tmp_path)
    assert out.text == (
        "[resource link: main.rs <file:///project/src/main.rs> (text/x-rust)]\n"
        "[resource link: a <https://example.com/a>]"
    )
    assert out.attachments[0] == Attachment(
        "resource_link", "text/x-rust", uri="file:///project/src/main.rs"
    )


def test_embedded_text_resource_shows_uri_and_text(tmp_path: Path) -> None:
    wire = {
        "content": [
            {
                "type": "resource",
                "resource": {
                    "uri": "file:///project/README.md",
                    "mimeType": "text/markdown",
                    "text": "# Project\nHello",
                },
            }
        ]
    }
    out = render(wire, tmp_path)
    assert out.text == "[resource: file:///project/README.md (text/markdown)]\n# Project\nHello"
    assert out.attachments == ()


def test_embedded_blob_resource_is_a_placeholder_with_size(tmp_path: Path) -> None:
    blob = base64.b64encode(b"x" * 100).decode()
    wire = {
        "content": [
            {
                "type": "resource",
                "resource": {
                    "uri": "file:///a.bin",
                    "mimeType": "application/octet-stream",
                    "blob": blob,
                },
            }
        ]
    }
    out = render(wire, tmp_path)
    assert out.text == "[resource: file:///a.bin (application/octet-stream), 100 B]"
    assert out.attachments == (
        Attachment("resource", "application/octet-stream", data=blob, uri="file:///a.bin"),
    )


def test_unknown_block_is_named(tmp_path: Path) -> None:
    wire = {"content": [{"type": "hologram", "data": "..."}, {"type": "text", "text": "ok"}]}
    assert render(wire, tmp_path).text == "[unsupported content: hologram]\nok"


def test_structured_only_result_is_rendered_as_json(tmp_path: Path) -> None:
    wire = {"content": [], "structuredContent": {"temperature": 22.5, "city": "Zürich"}}
    out = render(wire, tmp_path)
    assert out.text == '{"temperature": 22.5, "city": "Zürich"}'
    assert json.loads(out.text) == wire["structuredContent"]


def test_text_wins_over_the_same_structured_content(tmp_path: Path) -> None:
    data = {"temperature": 22.5}
    wire = {"content": [{"type": "text", "text": json.dumps(data)}], "structuredContent": data}
    assert render(wire, tmp_path).text == '{"temperature": 22.5}'


def test_structured_content_follows_placeholders_when_there_is_no_text(tmp_path: Path) -> None:
    wire = {
        "content": [{"type": "image", "data": PNG, "mimeType": "image/png"}],
        "structuredContent": {"width": 10},
    }
    assert render(wire, tmp_path).text == '[image: image/png, 12.3 KB]\n{"width": 10}'


def test_empty_result_is_empty_text(tmp_path: Path) -> None:
    assert render({"content": []}, tmp_path) == ModelResult("", is_error=False)


def test_is_error_is_preserved_and_can_be_prefixed(tmp_path: Path) -> None:
    wire = {"content": [{"type": "text", "text": "file not found"}], "isError": True}
    out = render(wire, tmp_path)
    assert out.is_error
    assert out.text == "file not found"
    assert out.text_with_error_prefix() == "Error: file not found"


def test_error_prefix_is_not_doubled_or_added_to_successes() -> None:
    fastmcp = ModelResult("Error executing tool read: boom", is_error=True)
    assert fastmcp.text_with_error_prefix() == "Error executing tool read: boom"
    assert ModelResult("", is_error=True).text_with_error_prefix().startswith("Error: ")
    assert ModelResult("fine", is_error=False).text_with_error_prefix() == "fine"


def test_megabyte_result_is_capped_and_saved_in_full(tmp_path: Path) -> None:
    line = "0123456789" * 9 + "abcdefghi\n"  # 100 characters per line
    big = line * 10_486  # about 1 MB
    wire = {"content": [{"type": "text", "text": big}], "isError": True}
    out = render(wire, tmp_path)

    assert out.truncated and out.is_error
    assert out.full_output_path is not None
    assert out.full_output_path.read_text(encoding="utf-8") == big
    assert stat.S_IMODE(out.full_output_path.stat().st_mode) == 0o600
    assert out.full_output_path.parent == tmp_path / "results"
    assert "-files-read-" in out.full_output_path.name

    head, note = out.text.split("\n\n[Output truncated", 1)
    assert len(head) <= DEFAULT_MAX_CHARS
    assert big.startswith(head)
    assert head.endswith("abcdefghi")  # cut at a line boundary
    assert f"{len(big) - len(head):,} characters omitted" in note
    assert str(out.full_output_path) in note


def test_long_line_is_cut_at_the_limit(tmp_path: Path) -> None:
    out = render({"content": [{"type": "text", "text": "x" * 500}]}, tmp_path, max_chars=100)
    assert out.text.startswith("x" * 100 + "\n\n[Output truncated")
    assert "400 characters omitted" in out.text


def test_cut_does_not_split_combining_marks_or_emoji(tmp_path: Path) -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # one emoji, five code points
    text = "a" * 97 + family + "e\u0301" * 10
    out = render({"content": [{"type": "text", "text": text}]}, tmp_path, max_chars=100)
    head = out.text.split("\n\n[Output truncated", 1)[0]
    assert head == "a" * 97
    assert out.full_output_path is not None
    assert out.full_output_path.read_text(encoding="utf-8") == text

    accents = "e\u0301" * 80
    out = render({"content": [{"type": "text", "text": accents}]}, tmp_path, max_chars=101)
    head = out.text.split("\n\n[Output truncated", 1)[0]
    assert head == "e\u0301" * 50


def test_unwritable_directory_is_reported_in_the_note(tmp_path: Path) -> None:
    # We may run as root, where chmod does not stop writes: a path under a file always fails.
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    result = CallToolResult.from_wire({"content": [{"type": "text", "text": "y" * 300}]})
    out = to_model_result(
        result, server="s", tool="t", max_chars=100, results_dir=blocker / "results"
    )
    assert out.truncated
    assert out.full_output_path is None
    assert out.text.startswith("y" * 100)
    assert "could not be saved" in out.text
    assert "200 characters omitted" in out.text


def test_attachments_survive_capping(tmp_path: Path) -> None:
    wire = {
        "content": [
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "text", "text": "z" * 1_000},
        ]
    }
    out = render(wire, tmp_path, max_chars=100)
    assert out.truncated
    assert out.attachments == (Attachment("image", "image/png", data=PNG),)


def test_file_names_are_sanitised_and_unique(tmp_path: Path) -> None:
    first = write_full_output("a", directory=tmp_path / "new", server="../evil srv", tool="a/b")
    second = write_full_output("b", directory=tmp_path / "new", server="../evil srv", tool="a/b")
    assert first != second
    assert first.parent == second.parent == tmp_path / "new"
    assert re.fullmatch(r"\d{8}T\d{12}Z-evil_srv-a_b-[0-9a-f]{6}\.txt", first.name)


def test_lone_surrogates_from_json_escapes_are_written(tmp_path: Path) -> None:
    text = json.loads('"bad \\ud800 pair"') * 10
    out = render({"content": [{"type": "text", "text": text}]}, tmp_path, max_chars=20)
    assert out.full_output_path is not None
    assert "\\ud800" in out.full_output_path.read_text(encoding="utf-8")


def test_max_chars_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_chars"):
        render({"content": []}, tmp_path, max_chars=0)
