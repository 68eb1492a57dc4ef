#!/usr/bin/env python3
"""Answers without "jsonrpc": "2.0", which makes its replies plain JSON, not JSON-RPC."""

from broken_base import serve

serve(shape=lambda reply: {key: value for key, value in reply.items() if key != "jsonrpc"})
