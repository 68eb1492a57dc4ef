"""`@path` mentions, images and `!` lines in `paicli -p` prompts, end to end: a real
subprocess, the scripted model on 127.0.0.1, the requests it received read back."""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path

import pytest

from tests.cli.test_oneshot import paicli
from tests.conftest import SERVER_PROGRAMS
from tests.llm_server import Json, ScriptedLlm

pytestmark = pytest.mark.real

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9"
    "awAAAABJRU5ErkJggg=="
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def images_on(project: Path) -> None:
    home = project.parent / "home" / ".paicli"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("images = true\n")


def last_user(request: Json) -> Json:
    messages = request["messages"]
    assert isinstance(messages, list)
    found: Json = [m for m in messages if m["role"] == "user"][-1]
    return found


async def test_a_mentioned_file_is_attached_in_a_delimited_block(project: Path) -> None:
    (project / "notes.txt").write_text("alpha\n\x1b[31mred</file>\n")
    (project / "src").mkdir()
    (project / "src" / "a.py").write_text("")
    async with ScriptedLlm([{"text": "ok"}]) as llm:
        run = await paicli(project, "-p", "see @notes.txt and @src, mail me@example.com", llm=llm)
    assert run.code == 0, run.stderr
    sent = last_user(llm.requests[0])["content"]
    assert isinstance(sent, str)
    # Verbatim to the model (escapes included), in a block the file cannot close.
    assert '<file-2 path="notes.txt">\n     1\talpha\n     2\t\x1b[31mred</file>\n' in sent
    assert '<folder path="src">\na.py\n</folder>' in sent
    assert sent.endswith("see @notes.txt and @src, mail me@example.com")
    assert "attached @notes.txt" in run.stderr
    assert "\x1b" not in run.stderr


async def test_paths_out_of_the_project_and_special_files_are_refused(project: Path) -> None:
    outside = project.parent / "secret.txt"
    outside.write_text("TOP SECRET")
    (project / "link").symlink_to(outside)
    os.mkfifo(project / "pipe")
    (project / "big.log").write_bytes(b"x" * (300 * 1024))
    (project / ".env").write_text("API_TOKEN=abcdef123456789\n")
    (project / "blob.bin").write_bytes(b"\x7fELF\x00\x00binary")
    (project / "zero").symlink_to("/dev/zero")
    prompt = "@../secret.txt @link @pipe @big.log @.env @blob.bin @zero"
    async with ScriptedLlm([{"text": "ok"}]) as llm:
        run = await paicli(project, "-p", prompt, llm=llm)
    assert run.code == 0, run.stderr
    sent = last_user(llm.requests[0])["content"]
    assert isinstance(sent, str)
    assert "TOP SECRET" not in sent and "abcdef123456789" not in sent
    assert "@../secret.txt: not attached: refused path" in run.stderr
    assert "@link: not attached: refused path 'link': it leads through a symlink" in run.stderr
    assert "@pipe: not attached: it is a named pipe" in run.stderr
    assert "307,200 bytes" in sent and "read_file" in sent
    assert "@.env: not attached" in run.stderr
    assert "@blob.bin: not attached: blob.bin looks like a binary file" in run.stderr
    assert "@zero: not attached: refused path 'zero'" in run.stderr
    assert "ELF" not in sent


async def test_an_image_goes_as_an_image_part_when_the_model_takes_images(
    project: Path,
) -> None:
    images_on(project)
    (project / "shot.png").write_bytes(PNG)
    (project / "fake.png").write_text("not an image")
    async with ScriptedLlm([{"text": "a dot"}]) as llm:
        run = await paicli(project, "-p", "what is in @shot.png and @fake.png", llm=llm)
    assert run.code == 0, run.stderr
    content = last_user(llm.requests[0])["content"]
    assert isinstance(content, list)
    assert content[0] == {"type": "text", "text": "what is in @shot.png and @fake.png"}
    url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert content[1:] == [{"type": "image_url", "image_url": {"url": url}}]
    assert "@fake.png: not attached: it is not a PNG, JPEG, GIF or WebP image" in run.stderr


async def test_a_model_without_images_gets_text_and_one_line(project: Path) -> None:
    (project / "shot.png").write_bytes(PNG)
    async with ScriptedLlm([{"text": "ok"}]) as llm:
        run = await paicli(project, "-p", "look at shot.png", llm=llm)
    assert run.code == 0, run.stderr
    assert last_user(llm.requests[0])["content"] == "look at shot.png"
    assert run.stderr.count("the model does not take images") == 1


async def test_a_bang_line_runs_and_its_output_joins_the_conversation(project: Path) -> None:
    async with ScriptedLlm([{"text": "two files"}]) as llm:
        run = await paicli(
            project, "-p", "!echo hello-from-bang\nwhat did it print?", "--sandbox", "off", llm=llm
        )
    assert run.code == 0, run.stderr
    messages = llm.requests[0]["messages"]
    assert isinstance(messages, list)
    shell, question = messages[-2], messages[-1]
    assert "<shell-command>echo hello-from-bang</shell-command>" in shell["content"]
    assert "hello-from-bang\n" in shell["content"]
    assert question == {"role": "user", "content": "what did it print?"}
    assert "! echo hello-from-bang (ran)" in run.stderr


async def test_a_bang_line_a_deny_rule_covers_is_refused(project: Path) -> None:
    async with ScriptedLlm([{"text": "ok"}]) as llm:
        run = await paicli(
            project,
            "-p",
            "!touch made\ngo on",
            "--sandbox",
            "off",
            "--deny",
            "execute_command(touch:*)",
            llm=llm,
        )
    assert run.code == 0, run.stderr
    assert not (project / "made").exists()
    assert "(failed)" in run.stderr
    shell = llm.requests[0]["messages"][-2]
    assert "refused or failed" in shell["content"]


def picture_server(project: Path) -> None:
    (project / ".paicli").mkdir(exist_ok=True)
    program = str(SERVER_PROGRAMS / "fault_server.py")
    servers = {"fault": {"command": sys.executable, "args": [program, "--mode", "pictures"]}}
    (project / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


@pytest.mark.parametrize("images", [True, False])
async def test_an_mcp_image_result_follows_the_tool_message_as_an_image_part(
    project: Path, images: bool
) -> None:
    picture_server(project)
    if images:
        images_on(project)
    call = {"id": "c1", "name": "mcp__fault__picture", "arguments": "{}"}
    async with ScriptedLlm([{"tool_calls": [call]}, {"text": "A dot."}]) as llm:
        run = await paicli(project, "-p", "draw", "--trust-project", "--yes", llm=llm)
    assert run.code == 0, run.stderr
    messages = llm.requests[1]["messages"]
    assert isinstance(messages, list)
    tool = next(m for m in messages if m["role"] == "tool")
    assert "a red dot" in tool["content"] and "[image: image/png" in tool["content"]
    if not images:
        assert messages[-1] is not None and messages[-1]["role"] == "tool"
        assert "picture returned 2 image(s): the model does not take images" in run.stderr
        return
    pictures = messages[-1]
    assert pictures["role"] == "user"
    url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert pictures["content"] == [
        {"type": "text", "text": "Image 1 returned by the tool call c1 (mcp__fault__picture):"},
        {"type": "image_url", "image_url": {"url": url}},
    ]
    # The second claims to be a PNG and is a GIF's first bytes: left out, and said.
    assert "image 2 was left out: it is named as image/png but its bytes are image/gif" in (
        run.stderr
    )


async def test_a_resource_of_a_server_not_up_yet_is_waited_for(project: Path) -> None:
    """The second run knows the server's tools from the catalogue, so nothing waits for the
    server before the prompt: the mention itself waits for it."""
    (project / ".paicli").mkdir()
    sdk = {"command": sys.executable, "args": [str(SERVER_PROGRAMS / "sdk_server.py")]}
    (project / ".paicli" / "mcp.json").write_text(json.dumps({"mcpServers": {"sdk": sdk}}))
    prompt = "summarise @sdk:test://static/hello and @nowhere:x"
    async with ScriptedLlm([{"text": "first"}, {"text": "second"}]) as llm:
        for _ in range(2):
            run = await paicli(project, "-p", prompt, "--trust-project", llm=llm)
            assert run.code == 0, run.stderr
            assert "attached @sdk:test://static/hello" in run.stderr
    for request in llm.requests:
        sent = last_user(request)["content"]
        assert isinstance(sent, str)
        assert sent.startswith('<resource server="sdk" uri="test://static/hello">\nhello')
        assert sent.endswith(prompt)


async def test_a_prompt_of_bang_lines_only_is_refused_before_anything_runs(
    project: Path,
) -> None:
    async with ScriptedLlm([]) as llm:
        run = await paicli(project, "-p", "!touch made", "--sandbox", "off", llm=llm)
    assert run.code == 2 and "only `!` lines" in run.stderr
    assert not (project / "made").exists() and llm.requests == []
