"""Probes for hostile-input tests: a socket that counts connections, a check that a named pipe
was opened. A test that must prove the process opened no URL and no file uses them."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path


class CountingListener:
    """A TCP socket on 127.0.0.1 that counts the connections made to it."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


def opened(fifo: Path) -> bool:
    """Whether some reader has ``fifo`` open (opening the write end without blocking fails
    with ENXIO when no one reads it)."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return False
    os.close(fd)
    return True
