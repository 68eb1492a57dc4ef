"""git's smart HTTP on 127.0.0.1: `git http-backend` (CGI) behind a tiny threaded HTTP
server, for the tests that clone a plugin or a marketplace over the network."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def bare_repository(folder: Path, into: Path) -> Path:
    """`folder` committed as a git repository and cloned bare into `into` (served)."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for argv in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "plugin"]):
        subprocess.run(["git", *argv], cwd=folder, env=env, check=True, timeout=30)
    subprocess.run(["git", "clone", "-q", "--bare", str(folder), str(into)], check=True, timeout=30)
    return into


def _handler(root: Path) -> type[BaseHTTPRequestHandler]:
    class GitBackend(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._backend()

        def do_POST(self) -> None:
            self._backend()

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _backend(self) -> None:
            path, _, query = self.path.partition("?")
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            env = {
                "PATH": os.environ.get("PATH", ""),
                "GIT_PROJECT_ROOT": str(root),
                "GIT_HTTP_EXPORT_ALL": "1",
                "PATH_INFO": path,
                "QUERY_STRING": query,
                "REQUEST_METHOD": self.command,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(len(body)),
                "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
                "HTTP_GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            }
            done = subprocess.run(
                ["git", "http-backend"],
                input=body,
                env=env,
                capture_output=True,
                timeout=30,
                check=False,
            )
            head, _, rest = done.stdout.partition(b"\r\n\r\n")
            status, headers = 200, []
            for line in head.decode().split("\r\n"):
                key, _, value = line.partition(":")
                if key.lower() == "status":
                    status = int(value.split()[0])
                elif key:
                    headers.append((key, value.strip()))
            self.send_response(status)
            for key, value in headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(rest)))
            self.end_headers()
            self.wfile.write(rest)

    return GitBackend


@contextmanager
def serving(root: Path) -> Iterator[str]:
    """The repositories under `root` served at the URL yielded (`URL/NAME.git`)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(root))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
