#!/usr/bin/env python3
"""Starts a helper that leaves its process group and never stops; writes the helper's pid
to the file named by its first argument. Otherwise a correct server."""

import subprocess
import sys

from broken_base import serve

helper = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(600)"],
    start_new_session=True,
    stdin=subprocess.DEVNULL,
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
)
with open(sys.argv[1], "w") as file:
    file.write(str(helper.pid))
serve()
