"""Where paicli's source lives and what each module imports, for the layering tests.

`paicli` is a namespace package spread over two distributions: the application in `src/`
and the standalone MCP library in `packages/paicli-mcp/src/`.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).parent.parent
APP_SRC = REPO / "src"
MCP_SRC = REPO / "packages" / "paicli-mcp" / "src"
SOURCE_ROOTS = (APP_SRC, MCP_SRC)


def python_modules(*roots: Path) -> Iterator[tuple[Path, Path, str]]:
    """(root, path, dotted module name) of every module under `roots` (default: both)."""
    for root in roots or SOURCE_ROOTS:
        for path in sorted((root / "paicli").rglob("*.py")):
            dotted = ".".join(path.relative_to(root).with_suffix("").parts)
            yield root, path, dotted.removesuffix(".__init__")


@functools.cache  # several tests ask of every module; parsing them all once is enough
def imported_modules(root: Path, path: Path) -> frozenset[str]:
    """The absolute names of the modules `path` (a file under `root`) imports."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    package = ".".join(path.relative_to(root).with_suffix("").parts[:-1])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                found.add(".".join([*base, node.module or ""]).rstrip("."))
            elif node.module:
                found.add(node.module)
    return frozenset(found)


def fresh_python(code: str, cwd: Path | None = None, timeout: float = 60) -> str:
    """`code` run by a fresh interpreter, which must end well; what it printed."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout
