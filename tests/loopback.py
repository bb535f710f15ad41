"""What the tests' fake servers share: an HTTP server on 127.0.0.1 in a daemon thread that
knows its open connections, so that stopping it also ends keep-alive connections."""

from __future__ import annotations

import contextlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler], port: int = 0) -> None:
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        super().__init__(("127.0.0.1", port), handler)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def start(self, name: str) -> str:
        self._thread = threading.Thread(
            target=self.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"{name}-{self.server_address[1]}",
            daemon=True,
        )
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        self.shutdown()
        # Keep-alive connections would otherwise go on being served after stop().
        with self.connections_lock:
            for conn in list(self.connections):
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        self.server_close()
        if self._thread is not None:
            self._thread.join(timeout=1)
            self._thread = None


class TrackedHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    sys_version = ""
    server: LoopbackServer

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes; without this, Nagle plus delayed ACK
        # adds ~40 ms to many keep-alive requests.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def finish(self) -> None:
        with self.server.connections_lock:
            self.server.connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()
