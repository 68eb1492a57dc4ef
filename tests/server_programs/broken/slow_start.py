#!/usr/bin/env python3
"""Sets itself up for SECONDS (default 1) before it reads its input: a slow start."""

import sys
import time

from broken_base import serve

time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
serve()
