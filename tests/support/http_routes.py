"""A tiny JSON HTTP server on 127.0.0.1 answering GETs by path, for the context-window
discovery tests (llama.cpp's `/props`, vLLM's `/v1/models`).

Each route is a `Route` (status, JSON body, a `Location`, or `hang` to answer only when the
server closes);
unknown paths answer 404. Every request's path is recorded in `seen`, its headers in `headers`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tests.support.local_http import QuietHandler, local_server, serving, url_of


@dataclass(frozen=True)
class Route:
    body: Any = None
    status: int = 200
    hang: bool = False
    """Answer nothing until the server is closed."""
    raw: bytes | None = None
    """Send these bytes instead of `body` as JSON."""
    location: str | None = None
    """Send this `Location` header (with a 3xx `status`: a redirect)."""


class RouteServer:
    def __init__(self, routes: Mapping[str, Route]) -> None:
        self.routes = dict(routes)
        self.seen: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.arrived = threading.Event()
        """Set by the first request."""
        self.closing = threading.Event()
        server = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                server.seen.append(self.path)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                server.arrived.set()
                route = server.routes.get(self.path, Route(status=404, body={"error": "no"}))
                if route.hang:
                    server.closing.wait()
                    return
                data = route.raw if route.raw is not None else json.dumps(route.body).encode()
                self.send_response(route.status)
                self.send_header("content-type", "application/json")
                if route.location is not None:
                    self.send_header("location", route.location)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = local_server(Handler)

    @property
    def url(self) -> str:
        return url_of(self.httpd)


@contextmanager
def serve_routes(routes: Mapping[str, Route]) -> Iterator[RouteServer]:
    """Serve `routes` in a background thread for the duration of the block."""
    server = RouteServer(routes)
    with serving(server.httpd, before_stop=server.closing.set):
        yield server
