"""Checks that a tool's executable can run, made before it is started, each failure saying
what is wrong and how to fix it.

A relative path is resolved against the working directory at creation (not at each start, so
a later `os.chdir` cannot change which program runs); a bare name is looked up on PATH. A
script must start with `#!` and its first line must not end in CR (a file saved with Windows
line endings makes the kernel look for an interpreter named `python3\\r`).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .errors import ExecutableProblem

__all__ = ["resolve_executable"]

# Executable formats the kernel runs without an interpreter line.
_BINARY_MAGIC = (b"\x7fELF", b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe", b"MZ")
# A shebang line longer than this is cut by the kernel (Linux reads 256 bytes).
_SHEBANG_BYTES = 256


def resolve_executable(executable: str | os.PathLike[str], cwd: Path) -> str:
    """The absolute path of `executable`, checked; `ExecutableProblem` otherwise."""
    text = os.fspath(executable)
    if not text:
        raise ExecutableProblem("executable_path is empty: give the path of the tool's program")
    if os.sep not in text and (os.altsep is None or os.altsep not in text):
        found = shutil.which(text)
        if found is None:
            raise ExecutableProblem(
                f"{text!r} was not found on PATH; give its path (./{text} for one in the "
                f"working directory {cwd}) or install it"
            )
        return found
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = cwd / path
    where = f"{text!r} (resolved against the working directory {cwd} to {path})"
    shown = where if not Path(text).expanduser().is_absolute() else repr(text)
    if not path.exists():
        raise ExecutableProblem(f"{shown} does not exist; check the path")
    if not path.is_file():
        raise ExecutableProblem(f"{shown} is not a file; give the program itself")
    if not os.access(path, os.X_OK):
        raise ExecutableProblem(f"{shown} is not executable; run `chmod +x {path}`")
    _check_shebang(path, shown)
    return str(path)


def _check_shebang(path: Path, shown: str) -> None:
    try:
        with path.open("rb") as file:
            head = file.read(_SHEBANG_BYTES)
    except OSError as exc:
        raise ExecutableProblem(f"{shown} cannot be read: {exc.strerror or exc}") from exc
    if head.startswith(_BINARY_MAGIC):
        return
    if not head.startswith(b"#!"):
        raise ExecutableProblem(
            f"{shown} has no shebang line: make its first line `#!/usr/bin/env python3` "
            "(or the interpreter it needs), or pass the interpreter as executable_path "
            "and the script in executable_args"
        )
    first_line = head.split(b"\n", 1)[0]
    if first_line.endswith(b"\r"):
        raise ExecutableProblem(
            f"{shown} has Windows line endings (CRLF) in its shebang line, so the "
            f"interpreter is not found: convert the file with `dos2unix {path}` or "
            "`sed -i 's/\\r$//' FILE`"
        )
