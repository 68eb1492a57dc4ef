#!/usr/bin/env python3
"""Starts fine, but its tools are a mess: every tool problem the doctor knows, once."""

from broken_base import ECHO, serve

OBJECT = {"type": "object"}
serve(
    tools=[
        ECHO,
        ECHO,
        {
            "name": "bad_schema",
            "description": "Schema with a typo.",
            "inputSchema": {"type": "objekt"},
        },
        {"name": "get weather!", "description": "Weather by city.", "inputSchema": OBJECT},
        {"name": "undocumented", "inputSchema": OBJECT},
        {"name": "chatty", "description": "Does things. " * 200, "inputSchema": OBJECT},
    ]
)
