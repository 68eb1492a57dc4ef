"""Small modules and small functions (house style 13): no module in the application or the
library over 450 lines, no function over 80 (from its `def` line to its last, docstring and
nested functions included; decorators not)."""

from __future__ import annotations

import ast

from tests.imports import python_modules

MODULE_LINES = 450
FUNCTION_LINES = 80


def test_no_module_is_over_450_lines() -> None:
    long = []
    for _, path, module in python_modules():
        lines = len(path.read_text().splitlines())
        if lines > MODULE_LINES:
            long.append(f"{module}: {lines} lines")
    assert long == []


def test_no_function_is_over_80_lines() -> None:
    long = []
    for _, path, module in python_modules():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > FUNCTION_LINES:
                    long.append(f"{module}.{node.name} (line {node.lineno}): {lines} lines")
    assert long == []
