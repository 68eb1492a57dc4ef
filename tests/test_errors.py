"""One root exception (house style 6): every exception class the application defines is a
`PaicliError`, so the tree drawn in `paicli.errors` is the whole tree."""

from __future__ import annotations

import importlib
import inspect

from paicli.errors import PaicliError
from tests.imports import APP_SRC, python_modules

# Run as programs, never imported: `python -m paicli.cli` and the command reaper.
SCRIPTS = {"paicli.cli.__main__", "paicli.tools.builtin._reaper"}


def test_every_application_exception_is_a_paicli_error() -> None:
    strays = []
    for _, _, name in python_modules(APP_SRC):
        if name in SCRIPTS:
            continue
        module = importlib.import_module(name)
        for value in vars(module).values():
            if not (inspect.isclass(value) and value.__module__ == name):
                continue
            if issubclass(value, BaseException) and not issubclass(value, PaicliError):
                strays.append(f"{name}.{value.__name__}")
    assert strays == []
