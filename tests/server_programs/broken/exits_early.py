#!/usr/bin/env python3
"""Dies at startup, as a server with a missing dependency does."""

import sys

sys.stderr.write("Traceback (most recent call last):\n")
sys.stderr.write("ModuleNotFoundError: No module named 'weather_api'\n")
sys.exit(3)
