"""A fake OpenAI-compatible server that enforces a context window the way llama.cpp does.

`ContextWindowServer` runs in a thread on 127.0.0.1 and plays a small coding agent's model:

- a request whose last message is the user's asks for `read_file` on `file`;
- a request whose last message is a tool result (or the images that follow one) answers a
  short text;
- a request without tools (a compaction's summary request) answers a summary, or, with
  `hold_summaries`, holds the response open until the client goes away.

It counts a request's tokens as its JSON body's bytes / `bytes_per_token` (reported as usage
unless `report_usage` is off); a request over
`n_ctx` gets llama.cpp's answer: HTTP 400 with `error.type` `exceed_context_size_error`,
`n_prompt_tokens` and `n_ctx`. `GET /props` reports `n_ctx` as llama.cpp's server does (and
`modalities.vision` when `vision` is set). Every
request is recorded (`Seen`) with its size and what was answered. Used by the tests and by
`benchmarks long-session`.
"""

from __future__ import annotations

import json
import select
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SUMMARY = (
    "Goal: the user asks to read a file each turn and report on it. "
    "Files touched: {file}. Decisions: none. Errors: none. Open work: continue reading."
)


@dataclass
class Seen:
    """One chat request: its size in the server's count, and what it got."""

    tokens: int
    tools: bool
    answer: str  # "tool_call", "text", "summary", "held", "exceeded"
    body: dict[str, Any]


@dataclass
class ContextWindowServer:
    """See the module docstring. Use as a context manager; `base_url` ends in `/v1`."""

    n_ctx: int
    file: str = "big.txt"
    bytes_per_token: int = 4
    hold_summaries: bool = False
    report_usage: bool = True
    """Whether answers carry `usage` (without it the agent can only estimate)."""
    vision: bool | None = None
    """Reported in `/props` as `modalities.vision` (None: no `modalities`, as older servers)."""
    props_asked: int = 0
    """How many `GET /props` came."""
    seen: list[Seen] = field(default_factory=list)
    held: threading.Event = field(default_factory=threading.Event)
    """Set when a summary request is being held open."""
    released: threading.Event = field(default_factory=threading.Event)
    """Set when the client closed a held summary request."""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, format: str, *args: Any) -> None:
                return  # quiet: stderr belongs to the test's output

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/props":
                    with server._lock:
                        server.props_asked += 1
                    props: dict[str, Any] = {"default_generation_settings": {"n_ctx": server.n_ctx}}
                    if server.vision is not None:
                        props["modalities"] = {"vision": server.vision}
                    self._json(200, props)
                elif self.path.rstrip("/") == "/v1/models":
                    self._json(200, {"data": [{"id": "fake", "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(length)
                body = json.loads(raw)
                server._answer(self, raw, body)

            def _json(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> ContextWindowServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def chats(self, answer: str | None = None) -> list[Seen]:
        """The chat requests seen so far (only those given `answer`, if set)."""
        with self._lock:
            return [s for s in self.seen if answer is None or s.answer == answer]

    def _record(self, seen: Seen) -> None:
        with self._lock:
            self.seen.append(seen)

    def _answer(self, handler: BaseHTTPRequestHandler, raw: bytes, body: dict[str, Any]) -> None:
        tokens = len(raw) // self.bytes_per_token
        tools = bool(body.get("tools"))
        if tokens > self.n_ctx:
            self._record(Seen(tokens, tools, "exceeded", body))
            error = {
                "error": {
                    "code": 400,
                    "message": "the request exceeds the available context size, try increasing it",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": tokens,
                    "n_ctx": self.n_ctx,
                }
            }
            data = json.dumps(error).encode()
            handler.send_response(400)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
            return
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.end_headers()
        if not tools:
            if self.hold_summaries:
                self._record(Seen(tokens, tools, "held", body))
                self._hold(handler)
                return
            self._record(Seen(tokens, tools, "summary", body))
            self._send_text(handler, SUMMARY.format(file=self.file), tokens)
            return
        messages = body["messages"]
        last = messages[-1]
        # A tool's images follow its result as a user message: that still answers the call.
        images_after_tool = last.get("role") == "user" and messages[-2].get("role") == "tool"
        if last.get("role") == "tool" or images_after_tool:
            self._record(Seen(tokens, tools, "text", body))
            self._send_text(handler, f"I read {self.file}.", tokens)
            return
        self._record(Seen(tokens, tools, "tool_call", body))
        call = {
            "index": 0,
            "id": f"call_{len(self.seen)}",
            "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": self.file})},
        }
        self._event(handler, {"tool_calls": [call]}, None)
        self._event(handler, {}, "tool_calls", usage=tokens)
        handler.wfile.write(b"data: [DONE]\n\n")

    def _send_text(self, handler: BaseHTTPRequestHandler, text: str, tokens: int) -> None:
        self._event(handler, {"role": "assistant", "content": text}, None)
        self._event(handler, {}, "stop", usage=tokens)
        handler.wfile.write(b"data: [DONE]\n\n")

    def _event(
        self,
        handler: BaseHTTPRequestHandler,
        delta: dict[str, Any],
        finish: str | None,
        usage: int | None = None,
    ) -> None:
        chunk: dict[str, Any] = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "model": "fake",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        if usage is not None and self.report_usage:
            chunk["usage"] = {
                "prompt_tokens": usage,
                "completion_tokens": 10,
                "total_tokens": usage + 10,
            }
        handler.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        handler.wfile.flush()

    def _hold(self, handler: BaseHTTPRequestHandler) -> None:
        """Keep the response open, sending nothing, until the client closes the connection."""
        handler.wfile.flush()
        self.held.set()
        connection = handler.connection
        for _ in range(120):  # at most two minutes: a test that forgets it must not hang on it
            readable, _, _ = select.select([connection], [], [], 1)
            if not readable:
                continue
            try:
                if not connection.recv(1024):
                    break
            except OSError:
                break
        self.released.set()
