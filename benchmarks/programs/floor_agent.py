"""The floor of `bench startup`: a minimal Python process that answers the handshake with the
standard library's `json` (no ACP library, no event loop), so only the interpreter's own start
and one read/write per request are measured. Not an agent: it answers `initialize` and
`session/new`, -32601 to everything else."""

import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    answer = {"jsonrpc": "2.0", "id": message["id"]}
    if method == "initialize":
        answer["result"] = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
    elif method == "session/new":
        answer["result"] = {"sessionId": "sess_floor"}
    else:
        answer["error"] = {"code": -32601, "message": "Method not found"}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
