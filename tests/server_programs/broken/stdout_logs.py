#!/usr/bin/env python3
"""Works, but logs on stdout: paicli skips the lines, stricter clients stop at the first."""

from broken_base import serve, write_line

write_line("Starting broken-example server on stdio...")
serve(write=lambda text: (write_line("INFO handling a request"), write_line(text)))
