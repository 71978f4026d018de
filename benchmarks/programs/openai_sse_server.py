"""A fake OpenAI-compatible Chat Completions server for `benchmarks provider`.

Serves HTTP/1.1 on 127.0.0.1 (a free port) with one thread per connection (keep-alive: a
connection may carry several requests). It is driven over its own stdin/stdout by the bench:

- on start it prints `{"port": N, "clock": "..."}` (the implementation of time.perf_counter,
  which must be CLOCK_MONOTONIC: a system-wide clock, so its readings compare with the
  bench's across processes);
- each line `{"tag": T, "chunks": N, "interval_ms": X}` on stdin queues a plan; every
  `POST .../chat/completions` takes the next plan and answers it with a streamed (chunked)
  `text/event-stream`: N chunks whose `delta.content` is `"T.i "` (i = 0..N-1), one every X ms
  (the first X ms after the headers), then a `finish_reason: "stop"` chunk, a usage chunk and
  `data: [DONE]`;
- after each answer it prints one report line: `{"tag", "path", "model", "sent": [t_send of
  chunk i, ...], "complete": bool, "closed_at": t | null}`, where t_send is time.perf_counter()
  right before the chunk's `send` and `closed_at` is when the server saw the client close the
  connection mid-answer (the socket turned readable and `recv` returned EOF or failed; the
  client sends nothing while an answer is in progress, so readability means a close).

Between chunks the server waits in `select` on the socket, so a close is seen when it happens,
not at the next write. Stdin closed: the server exits.

Run: `python benchmarks/programs/openai_sse_server.py` (stdlib only).
"""

from __future__ import annotations

import json
import queue
import select
import socket
import sys
import threading
import time
from typing import Any

PLAN_TIMEOUT_S = 30.0
_out_lock = threading.Lock()
_plans: queue.Queue[dict[str, Any]] = queue.Queue()


def emit(message: dict[str, Any]) -> None:
    with _out_lock:
        sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
        sys.stdout.flush()


def frame(data: bytes) -> bytes:
    """One HTTP/1.1 chunk."""
    return b"%x\r\n%s\r\n" % (len(data), data)


def event(payload: dict[str, Any] | str) -> bytes:
    text = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    return frame(f"data: {text}\n\n".encode())


def chunk(content: str | None, finish: str | None = None) -> dict[str, Any]:
    delta = {} if content is None else {"content": content}
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "bench",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


class Closed(Exception):
    """The client closed the connection mid-answer."""

    def __init__(self, at: float) -> None:
        self.at = at


def wait_until(sock: socket.socket, deadline: float) -> None:
    """Sleep until `deadline` (perf_counter), raising Closed as soon as the client closes."""
    while True:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            return
        readable, _, _ = select.select([sock], [], [], remaining)
        if readable:
            try:
                data = sock.recv(4096)
            except OSError:
                data = b""
            if not data:
                raise Closed(time.perf_counter())


def read_request(
    sock: socket.socket, buffer: bytes
) -> tuple[str, dict[str, str], bytes, bytes] | None:
    """(path, headers, body, rest of the buffer), or None when the client closed."""
    while b"\r\n\r\n" not in buffer:
        data = sock.recv(65536)
        if not data:
            return None
        buffer += data
    head, _, buffer = buffer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    _, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(buffer) < length:
        data = sock.recv(65536)
        if not data:
            return None
        buffer += data
    return path, headers, buffer[:length], buffer[length:]


def answer(sock: socket.socket, path: str, body: bytes) -> None:
    try:
        model = json.loads(body).get("model")
    except ValueError:
        model = None
    plan = _plans.get(timeout=PLAN_TIMEOUT_S)
    tag, count, interval = plan["tag"], plan["chunks"], plan["interval_ms"] / 1000
    report = {"tag": tag, "path": path, "model": model, "sent": [], "complete": False}
    report["closed_at"] = None
    sent: list[float] = report["sent"]
    try:
        sock.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\ncache-control: no-cache\r\n\r\n"
        )
        due = time.perf_counter()
        for i in range(count):
            due += interval
            wait_until(sock, due)
            data = event(chunk(f"{tag}.{i} "))
            sent.append(time.perf_counter())
            sock.sendall(data)
        usage = {"prompt_tokens": 1, "completion_tokens": count, "total_tokens": count + 1}
        tail = event(chunk(None, "stop")) + event(
            {"id": "chatcmpl-bench", "choices": [], "usage": usage}
        )
        sock.sendall(tail + event("[DONE]") + b"0\r\n\r\n")
        report["complete"] = True
    except Closed as closed:
        report["closed_at"] = closed.at
    except OSError:  # a failed write: the client is gone
        report["closed_at"] = time.perf_counter()
    emit(report)
    if not report["complete"]:
        raise Closed(report["closed_at"])


def serve_connection(sock: socket.socket) -> None:
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buffer = b""
    with sock:
        try:
            while True:
                parsed = read_request(sock, buffer)
                if parsed is None:
                    return
                path, _, body, buffer = parsed
                if not path.endswith("/chat/completions"):
                    sock.sendall(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                    continue
                answer(sock, path, body)
        except (Closed, OSError):
            return


def main() -> None:
    clock = time.get_clock_info("perf_counter").implementation
    listener = socket.create_server(("127.0.0.1", 0))
    emit({"port": listener.getsockname()[1], "clock": clock})

    def accept() -> None:
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=serve_connection, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    for line in sys.stdin:
        if line.strip():
            _plans.put(json.loads(line))


if __name__ == "__main__":
    main()
