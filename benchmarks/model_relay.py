"""A counting HTTP relay in front of one model server: every agent of the `small-model` mode
talks to the same llama-server through it, so that each run's model requests are counted the
same way, whoever makes them.

It forwards every request as it is (method, path, headers, body) and streams the answer back
as it arrives, closing the connection after it (no keep-alive: one request, one connection).
A request to a path ending in `/chat/completions` or `/completions` is a model request: its
size is taken from llama-server's own `timings` in the answer (`cache_n + prompt_n`: every
prompt token, whether read now or found in the server's prompt cache).
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

_MODEL_PATHS = ("/chat/completions", "/completions")
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}
_UPSTREAM_TIMEOUT_S = 3600.0  # a loaded machine reads a long prompt for minutes


@dataclass
class ModelRequest:
    """One model request that went through the relay."""

    path: str
    started: float
    seconds: float = 0.0
    prompt_tokens: int | None = None
    """Every token of the prompt (llama-server's `timings`: `cache_n + prompt_n`)."""
    output_tokens: int | None = None
    status: int = 0
    temperature: float | None = None
    """The temperature the request asked for (None: the server's default)."""
    body: bytes = field(default=b"", repr=False)
    """The request as sent (for a look at what each agent sends)."""


def _timings(data: bytes) -> dict[str, Any] | None:
    """The last `timings` object in an answer: an SSE stream (each `data:` line a JSON chunk;
    llama-server puts them in the final one) or one JSON body."""
    found: dict[str, Any] | None = None
    for line in data.splitlines():
        text = line.removeprefix(b"data:").strip()
        if not text.startswith(b"{") or b'"timings"' not in text:
            continue
        try:
            chunk = json.loads(text)
        except ValueError:
            continue
        if isinstance(chunk, dict) and isinstance(chunk.get("timings"), dict):
            found = chunk["timings"]
    return found


def _temperature(body: bytes | None) -> float | None:
    try:
        value = json.loads(body or b"{}").get("temperature")
    except (ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, int | float) else None


class Relay:
    """The relay on 127.0.0.1 (a free port) to the server at `upstream` (`http://host:port`).
    Use as a context manager; `take()` returns the model requests since the last `take()`."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self._host = parts.hostname or "127.0.0.1"
        self._port = parts.port or 80
        self._lock = threading.Lock()
        self._requests: list[ModelRequest] = []
        relay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the benchmark prints its own progress."""

            def do_GET(self) -> None:
                relay._forward(self)

            def do_POST(self) -> None:
                relay._forward(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL the agents are given."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> Relay:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def take(self) -> list[ModelRequest]:
        """The model requests made since the last call, oldest first."""
        with self._lock:
            taken, self._requests = self._requests, []
        return taken

    def _forward(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else None
        path = handler.path
        record = None
        if path.split("?")[0].endswith(_MODEL_PATHS):
            record = ModelRequest(
                path, time.monotonic(), temperature=_temperature(body), body=body or b""
            )
            with self._lock:
                self._requests.append(record)
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in _HOP_BY_HOP}
        upstream = http.client.HTTPConnection(self._host, self._port, timeout=_UPSTREAM_TIMEOUT_S)
        received = bytearray()
        try:
            upstream.request(handler.command, path, body=body, headers=headers)
            answer = upstream.getresponse()
            handler.send_response(answer.status)
            for key, value in answer.getheaders():
                if key.lower() not in _HOP_BY_HOP:
                    handler.send_header(key, value)
            handler.send_header("Connection", "close")
            handler.end_headers()
            while chunk := answer.read1(65536):
                if record is not None:
                    received += chunk
                handler.wfile.write(chunk)
                handler.wfile.flush()
            status = answer.status
        except (OSError, http.client.HTTPException):
            status = 599  # the agent went away (a cancel) or the server failed
        finally:
            upstream.close()
            handler.close_connection = True
        if record is not None:
            record.seconds = time.monotonic() - record.started
            record.status = status
            timings = _timings(bytes(received))
            if timings is not None:
                record.prompt_tokens = int(timings.get("cache_n", 0)) + int(
                    timings.get("prompt_n", 0)
                )
                record.output_tokens = int(timings.get("predicted_n", 0))
