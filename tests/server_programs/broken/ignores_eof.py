#!/usr/bin/env python3
"""Works, but keeps running after its input ends: only a signal stops it."""

import time

from broken_base import serve

serve()
while True:
    time.sleep(60)
