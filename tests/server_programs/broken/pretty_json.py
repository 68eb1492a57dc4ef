#!/usr/bin/env python3
"""Answers in pretty-printed JSON: one message over many lines, none of them a message."""

import json

from broken_base import serve, write_line

serve(write=lambda text: write_line(json.dumps(json.loads(text), indent=2)))
