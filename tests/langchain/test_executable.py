"""`MCPTool.from_executable` refuses an executable that cannot run before starting anything,
saying which problem it is and how to fix it."""

from __future__ import annotations

from pathlib import Path

import pytest

from paicli.langchain import ExecutableProblem, MCPTool
from paicli.langchain.tool import resolve_executable


def make(path: Path, text: bytes, mode: int = 0o755) -> Path:
    path.write_bytes(text)
    path.chmod(mode)
    return path


def refusal(executable: str | Path) -> str:
    with pytest.raises(ExecutableProblem) as caught:
        MCPTool.from_executable(name="echo", executable_path=executable)
    assert isinstance(caught.value, ValueError)
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_a_missing_path_names_the_folder_it_was_resolved_against(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    said = refusal("tools/echo.py")
    assert f"'tools/echo.py' (resolved against {tmp_path})" in said
    assert "no such file" in said


def test_a_bare_name_not_on_path_says_to_give_a_path(tmp_path: Path) -> None:
    said = refusal("no-such-tool-anywhere")
    assert "not on PATH" in said and "give its full path" in said


def test_a_file_without_the_execute_bit_says_chmod(tmp_path: Path) -> None:
    script = make(tmp_path / "tool.py", b"#!/usr/bin/env python3\n", mode=0o644)
    said = refusal(script)
    assert "not executable" in said and f"chmod +x {script}" in said


def test_a_script_without_a_shebang_says_to_add_one(tmp_path: Path) -> None:
    said = refusal(make(tmp_path / "tool.py", b"import sys\n"))
    assert "without a '#!' first line" in said and "#!/usr/bin/env python3" in said


def test_a_crlf_shebang_says_to_convert_the_line_endings(tmp_path: Path) -> None:
    said = refusal(make(tmp_path / "tool.py", b"#!/usr/bin/env python3\r\nimport sys\r\n"))
    assert "carriage return (Windows line ends)" in said and "dos2unix" in said


def test_a_folder_is_not_a_program(tmp_path: Path) -> None:
    assert "is a folder, not a program" in refusal(tmp_path)


def test_a_compiled_program_needs_no_shebang(tmp_path: Path) -> None:
    # An ELF header is enough to pass the check; running it is another matter, so only the
    # check is exercised here.
    program = make(tmp_path / "tool", b"\x7fELF\x02\x01\x01" + b"\0" * 64)
    assert resolve_executable(program) == str(program)
