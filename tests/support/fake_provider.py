"""A model server on 127.0.0.1 speaking both the OpenAI and the Anthropic model-list and chat
APIs, for the first-run commands (`acp-server setup`, `acp-server doctor`) run as real processes.

- `GET /v1/models` lists `MODELS` (OpenAI form `{"data": [{"id"}]}`, which Anthropic's list
  also has);
- `POST /v1/chat/completions` and `POST /v1/messages` stream the recorded answers
  tests/data/streams/openai_text.sse and anthropic_text.sse, or answer 404 for a model not in
  `MODELS`.
Every route answers 401 unless the request carries `KEY` (`authorization: Bearer KEY` or
`x-api-key: KEY`), or the server was made with `needs_key=False` (a local server). Each
request's method, path and model is recorded in `seen`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.local_http import QuietHandler, local_server, serving, url_of

KEY = "sk-test-good-key-0123456789"
MODELS = ["tiny-model", "other-model"]
STREAMS = Path(__file__).resolve().parents[1] / "data" / "streams"


class FakeProvider:
    def __init__(self, *, needs_key: bool = True) -> None:
        self.seen: list[tuple[str, str, str | None]] = []
        owner = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def _authorized(self) -> bool:
                if not needs_key:
                    return True
                bearer = self.headers.get("authorization", "")
                return bearer == f"Bearer {KEY}" or self.headers.get("x-api-key") == KEY

            def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _error(self, status: int, message: str) -> None:
                self._send(status, json.dumps({"error": {"message": message}}).encode())

            def do_GET(self) -> None:
                owner.seen.append(("GET", self.path, None))
                if self.path != "/v1/models":
                    return self._error(404, "not found")
                if not self._authorized():
                    return self._error(401, "invalid api key")
                body = {"object": "list", "data": [{"id": m, "object": "model"} for m in MODELS]}
                self._send(200, json.dumps(body).encode())

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                request: Any = json.loads(self.rfile.read(length) or b"{}")
                model = request.get("model") if isinstance(request, dict) else None
                owner.seen.append(("POST", self.path, model))
                stream = {
                    "/v1/chat/completions": "openai_text.sse",
                    "/v1/messages": "anthropic_text.sse",
                }.get(self.path)
                if stream is None:
                    return self._error(404, "not found")
                if not self._authorized():
                    return self._error(401, "invalid api key")
                if model not in MODELS:
                    return self._error(404, f"model {model!r} not found")
                data = (STREAMS / stream).read_bytes()
                self._send(200, data, "text/event-stream")

        self.httpd = local_server(Handler)

    @property
    def url(self) -> str:
        return url_of(self.httpd)


@contextmanager
def fake_provider(*, needs_key: bool = True) -> Iterator[FakeProvider]:
    """Serve in a background thread for the duration of the block."""
    server = FakeProvider(needs_key=needs_key)
    with serving(server.httpd):
        yield server
