#!/usr/bin/env python3
"""Never answers a method it does not know (paicli's discovery probe included)."""

from broken_base import serve

serve(shape=lambda reply: None if "error" in reply else reply)
