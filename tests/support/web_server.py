"""A small web server on 127.0.0.1 for the web_fetch tests: pages by path, each request's
headers recorded, and pages that stream slowly or hang until the test lets them go.

A `Page` is a status, headers and a body; `stream` sends `body` and then waits on `release`
(a hung download) before ending; `redirect` answers 302 with that Location. Unknown paths
answer 404 with a short HTML page. Every request's path and headers land in `requests`, and
`sent_part` is set once a streaming page has sent its first bytes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

from tests.support.local_http import QuietHandler, local_server, serving, url_of


@dataclass(frozen=True)
class Page:
    body: bytes = b""
    content_type: str | None = "text/html; charset=utf-8"
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    redirect: str | None = None
    """Answer 302 with this Location (relative or absolute)."""
    stream: bool = False
    """Send `body` without a length, then wait for `release` (or the server closing)."""
    repeat: int = 1
    """Send `body` this many times (a large answer without building it in memory)."""


@dataclass(frozen=True)
class Request:
    path: str
    headers: dict[str, str]
    """Header names in lower case."""


class WebServer:
    def __init__(self, pages: Mapping[str, Page]) -> None:
        self.pages = dict(pages)
        self.requests: list[Request] = []
        self.sent_part = threading.Event()
        self.release = threading.Event()
        self.finished_sending = threading.Event()
        """Set when a streaming page ends (released, or its client went away)."""
        server = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                headers = {k.lower(): v for k, v in self.headers.items()}
                server.requests.append(Request(self.path, headers))
                page = server.pages.get(
                    self.path, Page(b"<html><body><p>not here</p></body></html>", status=404)
                )
                if page.redirect is not None:
                    self.send_response(302)
                    self.send_header("location", page.redirect)
                    self.send_header("content-length", "0")
                    for name, value in page.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    return
                self.send_response(page.status)
                if page.content_type is not None:
                    self.send_header("content-type", page.content_type)
                for name, value in page.headers.items():
                    self.send_header(name, value)
                if page.stream:
                    self.send_header("connection", "close")
                    self.end_headers()
                    try:
                        self.wfile.write(page.body)
                        self.wfile.flush()
                        server.sent_part.set()
                        while not server.release.wait(0.05):
                            self.wfile.write(b" ")  # fails once the client has gone
                            self.wfile.flush()
                    except OSError:
                        pass
                    finally:
                        server.finished_sending.set()
                    self.close_connection = True
                    return
                self.send_header("content-length", str(len(page.body) * page.repeat))
                self.end_headers()
                try:
                    for _ in range(page.repeat):
                        self.wfile.write(page.body)
                except OSError:
                    pass  # the client stopped reading (the size cap)

        self.httpd = local_server(Handler)

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        return url_of(self.httpd)


@contextmanager
def serve_pages(pages: Mapping[str, Page]) -> Iterator[WebServer]:
    """Serve `pages` in a background thread for the duration of the block."""
    server = WebServer(pages)
    with serving(server.httpd, before_stop=server.release.set):
        yield server
