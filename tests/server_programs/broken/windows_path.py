#!/usr/bin/env python3
"""Writes its JSON by hand, with a Windows path whose backslashes are not escaped."""

from broken_base import serve, write_line

serve(write=lambda text: write_line(text.replace('"1.0"', '"1.0", "home": "C:\\Users\\me"')))
