#!/usr/bin/env python3
"""Writes its output in Latin-1: the é in its name is not UTF-8, so its answer is unreadable."""

import sys

from broken_base import serve

sys.stdout.reconfigure(encoding="latin-1")  # type: ignore[union-attr]
serve(name="broken-café")
