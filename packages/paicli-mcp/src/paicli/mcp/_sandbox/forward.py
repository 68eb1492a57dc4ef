"""Inside a bubblewrap sandbox with an allow-list: serve 127.0.0.1:PORT, carry each
connection to the proxy's Unix socket, and run the command.

    python -I -S forward.py SOCKET PORT -- COMMAND ARGS...

The port is listening before the command starts, so its first request cannot come too
early. The forwarding runs in a forked child and the command replaces this process, so it
keeps its pid, its pipes and its exit status; the child needs no signal to stop, since the
command is the sandbox's main process and the kernel ends every other process of the PID
namespace when it exits. Standard library only, one thread (threads would count against
the server's process limit), so it starts in milliseconds. Run as a program, never imported
by paicli.
"""

from __future__ import annotations

import os
import selectors
import socket
import sys

CHUNK = 64 * 1024
# Stop reading one side while this much waits to be written to the other.
BACKLOG = 4 * CHUNK


class Link:
    """Both directions of one forwarded connection."""

    def __init__(self, selector: selectors.BaseSelector, a: socket.socket, b: socket.socket):
        self.selector = selector
        self.peer = {a: b, b: a}
        self.pending = {a: b"", b: b""}  # bytes waiting to be written to each socket
        self.ended: set[socket.socket] = set()  # sockets that reached end of file
        self.shut: set[socket.socket] = set()  # sockets told the end of file
        self.watched: set[socket.socket] = set()
        for sock in (a, b):
            sock.setblocking(False)
            self._watch(sock, selectors.EVENT_READ)

    def ready(self, sock: socket.socket, mask: int) -> None:
        try:
            if mask & selectors.EVENT_READ:
                data = sock.recv(CHUNK)
                if data:
                    self.pending[self.peer[sock]] += data
                else:
                    self.ended.add(sock)
            if mask & selectors.EVENT_WRITE and self.pending[sock]:
                sent = sock.send(self.pending[sock])
                self.pending[sock] = self.pending[sock][sent:]
            self._update()
        except OSError:
            self.close()

    def _update(self) -> None:
        if len(self.ended) == 2 and not any(self.pending.values()):
            self.close()
            return
        for sock, peer in self.peer.items():
            if sock in self.ended and not self.pending[peer] and peer not in self.shut:
                self.shut.add(peer)
                peer.shutdown(socket.SHUT_WR)  # pass the end of file on
            events = 0
            if sock not in self.ended and len(self.pending[peer]) < BACKLOG:
                events |= selectors.EVENT_READ
            if self.pending[sock]:
                events |= selectors.EVENT_WRITE
            self._watch(sock, events)

    def _watch(self, sock: socket.socket, events: int) -> None:
        if events and sock in self.watched:
            self.selector.modify(sock, events, self)
        elif events:
            self.selector.register(sock, events, self)
            self.watched.add(sock)
        elif sock in self.watched:
            self.selector.unregister(sock)
            self.watched.discard(sock)

    def close(self) -> None:
        for sock in self.peer:
            self._watch(sock, 0)
            sock.close()


def serve(listener: socket.socket, path: str) -> None:
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, None)
    while True:
        for key, mask in selector.select():
            if key.data is None:
                client, _ = listener.accept()
                upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    upstream.connect(path)
                except OSError:
                    client.close()
                    upstream.close()
                    continue
                Link(selector, client, upstream)
            else:
                key.data.ready(key.fileobj, mask)


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: forward.py SOCKET PORT -- COMMAND ARGS...\n")
        return 2
    path, port, _, *command = argv
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", int(port)))
    listener.listen(64)
    if os.fork() == 0:
        # The forwarder keeps none of the command's pipes open: their ends are the command's.
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        try:
            serve(listener, path)
        finally:
            os._exit(0)
    listener.close()
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.stderr.write(f"cannot run {command[0]!r}: {exc.strerror}\n")
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
