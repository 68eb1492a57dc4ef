"""What the stdio transport tells about a server that will not run or talks badly:
`check_command` (where a command leads, why exec refuses it) and the raw stdout tap."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from pathlib import Path

import pytest

from paicli.mcp import ConnectionClosed, StdioTransport, check_command

SCRIPT = "#!/usr/bin/env python3\nprint('hi')\n"


def script(folder: Path, name: str, text: str = SCRIPT, *, executable: bool = True) -> Path:
    path = folder / name
    path.write_bytes(text.encode())
    if executable:
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_relative_command_is_resolved_against_the_given_folder(tmp_path: Path) -> None:
    script(tmp_path, "server.py")
    check = check_command("./server.py", cwd=tmp_path)
    assert (check.resolved_by, check.folder, check.problem) == ("relative", str(tmp_path), None)
    assert check.path == str(tmp_path / "server.py")


def test_a_relative_command_missing_from_that_folder_says_where_it_looked(tmp_path: Path) -> None:
    check = check_command("./server.py", cwd=tmp_path)
    assert check.problem == "not-found"
    assert check.message is not None and f"resolved against {tmp_path}" in check.message


def test_a_file_without_the_execute_bit_says_chmod(tmp_path: Path) -> None:
    path = script(tmp_path, "server.py", executable=False)
    check = check_command(str(path))
    assert check.problem == "not-executable"
    assert check.message is not None and f"chmod +x {path}" in check.message


def test_a_folder_is_not_a_program(tmp_path: Path) -> None:
    assert check_command(str(tmp_path)).problem == "directory"


def test_a_script_without_a_shebang_is_named_as_such(tmp_path: Path) -> None:
    path = script(tmp_path, "server.py", "import sys\nprint('hi')\n")
    check = check_command(str(path))
    assert check.problem == "no-shebang"
    assert check.message is not None and "#!/usr/bin/env python3" in check.message


def test_a_shebang_with_a_carriage_return_names_windows_line_ends(tmp_path: Path) -> None:
    path = script(tmp_path, "server.py", SCRIPT.replace("\n", "\r\n"))
    check = check_command(str(path))
    assert check.problem == "crlf-shebang"
    assert check.message is not None and "dos2unix" in check.message


def test_a_shebang_naming_a_missing_interpreter_names_it(tmp_path: Path) -> None:
    path = script(tmp_path, "server.py", "#!/no/such/python3\nprint('hi')\n")
    check = check_command(str(path))
    assert check.problem == "interpreter-not-found"
    assert check.message is not None and "'/no/such/python3'" in check.message


def test_a_binary_and_a_good_script_pass(tmp_path: Path) -> None:
    assert check_command(sys.executable).problem is None
    assert check_command(str(script(tmp_path, "server.py"))).problem is None


def test_a_bare_name_is_found_on_the_given_path_skipping_non_executables(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    script(first, "tool", "#!/bin/sh\n", executable=False)
    found = script(second, "tool", "#!/bin/sh\n")
    check = check_command("tool", search_path=f"{first}{os.pathsep}{second}")
    assert (check.resolved_by, check.path, check.problem) == ("PATH", str(found), None)
    assert check_command("tool", search_path=str(first)).problem == "not-executable"


def test_a_bare_name_on_no_path_entry_is_not_found() -> None:
    check = check_command("no-such-mcp-server", search_path="/nonexistent")
    assert check.problem == "not-found"
    assert check.message is not None and "not on PATH (/nonexistent)" in check.message


@pytest.mark.real
@pytest.mark.parametrize(
    ("text", "executable", "says"),
    [
        (SCRIPT, False, "chmod +x"),
        ("print('hi')\n", True, "without a '#!' first line"),
        ("#!/bin/sh\r\necho hi\r\n", True, "carriage return"),
    ],
)
async def test_a_start_that_exec_refuses_says_why_and_how_to_fix_it(
    tmp_path: Path, text: str, executable: bool, says: str
) -> None:
    path = script(tmp_path, "server.py", text, executable=executable)
    with pytest.raises(ConnectionClosed, match="cannot start") as info:
        await StdioTransport.start(str(path))
    assert says in str(info.value)


@pytest.mark.real
async def test_the_stdout_tap_sees_every_byte_before_framing() -> None:
    seen = bytearray()
    code = (
        "import sys; sys.stdout.buffer.write(b'log line\\n\\xff\\xfe\\n"
        '{"jsonrpc":"2.0","method":"x"}\\n'
        "no newline'); sys.stdout.flush()"
    )
    transport = await StdioTransport.start(sys.executable, ["-c", code], stdout_tap=seen.extend)
    async with asyncio.timeout(10):
        message = await transport.receive()  # the one JSON-RPC line, the rest skipped
        with pytest.raises(ConnectionClosed):
            await transport.receive()
    await transport.aclose()
    assert message == {"jsonrpc": "2.0", "method": "x"}
    assert bytes(seen) == b'log line\n\xff\xfe\n{"jsonrpc":"2.0","method":"x"}\nno newline'
