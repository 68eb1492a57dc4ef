"""What Ray's own client writes while it joins a cluster, kept off the screen.

Ray's C++ client writes straight to file descriptor 2, beside Python's `sys.stderr`: a
cluster that refuses this machine's auth token gets one raw `gcs_client.cc` line a second
for about twenty seconds before `ray.init` gives up with a vaguer message. While Ray
connects, fd 2 goes to a private temporary file (read back to find such a refusal) and
`sys.stderr` to a copy of the real one, so paicli's own lines and progress bar still
reach the terminal.
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import IO, TextIO

__all__ = ["RayStderr"]

# Enough to find a refusal in; Ray writes about a line a second while it retries.
READ_LIMIT = 64 * 1024
REFUSALS = ("InvalidAuthToken", "Unauthenticated")


class RayStderr:
    """fd 2 diverted from `open()` until `restore()` (or for good with `keep_diverted()`:
    Ray's thread may still be retrying while paicli says why and exits)."""

    def __init__(self) -> None:
        self._capture: IO[bytes] | None = None
        self._real = -1
        self._saved: TextIO = sys.stderr

    def open(self) -> None:
        sys.stderr.flush()
        self._capture = tempfile.TemporaryFile()  # noqa: SIM115 - 0600, unlinked at once
        self._real = os.dup(2)
        self._saved = sys.stderr
        if _on_fd2(sys.stderr):  # (embedded, sys.stderr may be something else: left alone)
            sys.stderr = open(  # noqa: SIM115 - lives as long as the diversion
                os.dup(self._real), "w", encoding="utf-8", errors="replace", closefd=True
            )
        os.dup2(self._capture.fileno(), 2)

    def refused(self) -> bool:
        """Whether Ray has written that the cluster refused its auth token."""
        if self._capture is None:
            return False
        said = os.pread(self._capture.fileno(), READ_LIMIT, 0).decode("utf-8", "replace")
        return any(word in said for word in REFUSALS)

    def restore(self) -> None:
        """fd 2 and `sys.stderr` as they were."""
        if self._capture is None:
            return
        sys.stderr.flush()
        os.dup2(self._real, 2)
        os.close(self._real)
        diverted, sys.stderr = sys.stderr, self._saved
        if diverted is not self._saved:
            diverted.close()
        self._capture.close()
        self._capture = None

    def keep_diverted(self) -> None:
        """Leave fd 2 where it is (Ray's retries keep going nowhere visible) and
        `sys.stderr` on the real one, for the rest of the process."""
        if self._capture is not None:
            os.close(self._real)
            self._capture.close()  # fd 2 keeps its own copy of the file
            self._capture = None


def _on_fd2(stream: TextIO) -> bool:
    try:
        return stream.fileno() == 2
    except (AttributeError, OSError, ValueError):
        return False
