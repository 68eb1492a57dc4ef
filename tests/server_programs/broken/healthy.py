#!/usr/bin/env python3
"""A correct server: the doctor finds nothing wrong with it."""

from broken_base import serve

serve()
