#!/usr/bin/env python3
"""Flushes each answer, but never ends one with a newline."""

import sys

from broken_base import serve


def write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


serve(write=write)
