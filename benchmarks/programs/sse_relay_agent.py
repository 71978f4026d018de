"""The floor of `benchmarks provider`: a trivial pipe relay from SSE to ACP stdout lines.

Speaks just enough ACP over stdin/stdout for the bench's raw-pipe client (`initialize`,
`session/new`, `session/prompt`), blocking and single-threaded, stdlib only. On
`session/prompt` it POSTs to `$OPENAI_BASE_URL/chat/completions` over a plain socket, and for
every `data:` event of the chunked `text/event-stream` answer that carries `delta.content`
writes one `session/update` `agent_message_chunk` line to stdout (one `os.write` each); at
`data: [DONE]` it answers `{"stopReason": "end_turn"}`. No model layer, no session state, no
journal: what is left is the TCP hop, one Python process parsing and re-encoding, the stdout
pipe and the bench's reader, i.e. what the bench's figure includes besides the agent itself.

Run: `OPENAI_BASE_URL=http://127.0.0.1:PORT/v1 python benchmarks/programs/sse_relay_agent.py`.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from typing import Any
from urllib.parse import urlsplit


def send(message: dict[str, Any]) -> None:
    os.write(1, json.dumps(message, separators=(",", ":")).encode() + b"\n")


def relay(session_id: str) -> None:
    url = urlsplit(os.environ["OPENAI_BASE_URL"])
    body = json.dumps({"model": "relay", "messages": [], "stream": True}).encode()
    sock = socket.create_connection((url.hostname, url.port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with sock:
        sock.sendall(
            f"POST {url.path.rstrip('/')}/chat/completions HTTP/1.1\r\n"
            f"host: {url.netloc}\r\ncontent-type: application/json\r\n"
            f"accept: text/event-stream\r\nconnection: close\r\n"
            f"content-length: {len(body)}\r\n\r\n".encode()
            + body
        )
        raw = b""  # bytes as received: the head, then chunk framing
        while b"\r\n\r\n" not in raw:
            raw += sock.recv(65536)
        _, _, raw = raw.partition(b"\r\n\r\n")
        text = b""  # the body with the chunk framing removed
        ended = False  # the last chunk (size 0) arrived
        while True:
            # Unframe every complete chunk in `raw`.
            while not ended:
                size_end = raw.find(b"\r\n")
                if size_end < 0:
                    break
                size = int(raw[:size_end], 16)
                if len(raw) < size_end + 2 + size + 2:
                    break
                ended = size == 0
                text += raw[size_end + 2 : size_end + 2 + size]
                raw = raw[size_end + 2 + size + 2 :]
            # Relay every complete event.
            while b"\n\n" in text:
                event, _, text = text.partition(b"\n\n")
                if not event.startswith(b"data: "):
                    continue
                data = event[6:]
                if data == b"[DONE]":
                    return
                for choice in json.loads(data).get("choices") or ():
                    content = (choice.get("delta") or {}).get("content")
                    if content:
                        block = {"type": "text", "text": content}
                        update = {"sessionUpdate": "agent_message_chunk", "content": block}
                        send(
                            {
                                "jsonrpc": "2.0",
                                "method": "session/update",
                                "params": {"sessionId": session_id, "update": update},
                            }
                        )
            data = b"" if ended else sock.recv(65536)
            if not data:
                return
            raw += data


def main() -> None:
    sessions = 0
    for line in sys.stdin.buffer:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue  # notifications (session/cancel): nothing to stop, the relay blocks
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": 1,
                "agentCapabilities": {},
                "authMethods": [],
            }
        elif method == "session/new":
            sessions += 1
            result = {"sessionId": f"relay-{sessions}"}
        elif method == "session/prompt":
            relay(message["params"]["sessionId"])
            result = {"stopReason": "end_turn"}
        else:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32601, "message": "Method not found"},
                }
            )
            continue
        send({"jsonrpc": "2.0", "id": request_id, "result": result})


if __name__ == "__main__":
    main()
