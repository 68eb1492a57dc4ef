#!/usr/bin/env python3
"""Answers, but never flushes: stdout is a pipe, so the answers wait in Python's buffer."""

import sys

from broken_base import serve

serve(write=lambda text: sys.stdout.write(text + "\n"))
