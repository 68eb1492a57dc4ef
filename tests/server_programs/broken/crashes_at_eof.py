#!/usr/bin/env python3
"""Works, but reads past the end of its input and dies there with a traceback."""

import json
import sys

from broken_base import ECHO, answer, write_line

while True:
    message = json.loads(sys.stdin.readline())  # "" at end of input: JSONDecodeError
    reply = answer(message, [ECHO], "broken-example")
    if reply is not None:
        write_line(json.dumps(reply))
