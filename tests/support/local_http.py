"""What the thread-based fake HTTP servers of the tests share (`web_server`, `http_routes`,
`fake_provider`): a quiet handler base, a server on 127.0.0.1 on a free port, its URL, and a
block that serves in a background thread and stops, closes and joins it afterwards.

The provider tests' server (`sse_server`) runs on anyio in the test's own event loop instead:
it must cut, delay and watch one connection at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class QuietHandler(BaseHTTPRequestHandler):
    """A handler that logs nothing: tests read what the server recorded, not its log."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


def local_server(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """A server on 127.0.0.1, on a port the system picks; its handler threads never keep the
    test process alive."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    return httpd


def url_of(httpd: ThreadingHTTPServer) -> str:
    host, port = httpd.server_address[:2]
    return f"http://{host!s}:{port}"


@contextmanager
def serving(
    httpd: ThreadingHTTPServer, before_stop: Callable[[], None] | None = None
) -> Iterator[None]:
    """Serve in a background thread for the duration of the block; then `before_stop` (which
    lets held requests go), shut down, close and join."""
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield
    finally:
        if before_stop is not None:
            before_stop()
        httpd.shutdown()
        httpd.server_close()
        thread.join()
