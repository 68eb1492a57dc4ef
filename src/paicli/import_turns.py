"""One thread at a time imports in the background.

Python 3.11's import locks can fail an import made while another thread imports
(gh-91351). The threads paicli starts that import (the model client's loader, the system
keyring's probe) each hold `BACKGROUND_IMPORTS` while they run, so they never import
beside each other; the main thread imports what it will need before they start
(`servers.manager.load_modules`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

__all__ = ["BACKGROUND_IMPORTS", "importing"]

BACKGROUND_IMPORTS = threading.Lock()

T = TypeVar("T")


def importing(work: Callable[[], T]) -> Callable[[], T]:
    """`work`, to run in a thread, holding `BACKGROUND_IMPORTS` while it runs."""

    def turn() -> T:
        with BACKGROUND_IMPORTS:
            return work()

    return turn
