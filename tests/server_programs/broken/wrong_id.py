#!/usr/bin/env python3
"""Answers every request with its id turned into a string: 1 becomes "1", which is no match."""

from broken_base import serve

serve(shape=lambda reply: {**reply, "id": str(reply["id"])})
