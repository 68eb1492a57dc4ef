#!/usr/bin/env python3
"""Frames its answers the way LSP does (Content-Length headers), not one JSON line each."""

from broken_base import serve, write_line


def write(text: str) -> None:
    write_line(f"Content-Length: {len(text.encode())}\r\n\r")
    write_line(text)


serve(write=write)
