"""jsonrpcserver's dispatch core, imported without the package `__init__`: it dispatches as the
package does, loads neither jsonschema nor http.server, and leaves a later plain
`import jsonrpcserver` working. Each check runs in a fresh interpreter (sys.modules is the
subject). See acp_server/rpc/jsonrpcserver_core.py."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

PROGRAM = textwrap.dedent(
    """
    import asyncio, json, sys
    from acp_server.rpc import jsonrpcserver_core

    core = jsonrpcserver_core.load()

    async def add(context, params):
        return core.Success(params["a"] + params["b"])

    async def refuse(context, params):
        return core.Error(-32002, "no such session", {"sessionId": params["s"]})

    methods = {"add": add, "refuse": refuse}

    async def call(method, params, request_id=1):
        return await core.async_dispatch_to_response(
            {"jsonrpc": "2.0", "method": method, "params": [params], "id": request_id},
            methods, context="ctx", deserializer=lambda r: r, validator=lambda r: None,
        )

    async def main():
        responses = {
            "ok": await call("add", {"a": 2, "b": 3}),
            "error": await call("refuse", {"s": "x"}, "r"),
            "unknown": await call("nope", {}),
        }
        out = {}
        out["loaded"] = sorted(
            m for m in ("jsonschema", "attrs", "http.server", "jsonrpcserver", "jsonrpcserver.main")
            if m in sys.modules
        )
        import jsonrpcserver  # the real package, __init__ and all, still imports afterwards
        out["late_import"] = [jsonrpcserver.Success is core.Success, "jsonschema" in sys.modules]
        # The package's own serializer, as a check that the core's answers are the package's.
        from jsonrpcserver.response import to_serializable
        out.update({name: to_serializable(r) for name, r in responses.items()})
        out["ok_result"] = responses["ok"]._value.result  # what rpc/engine.py reads
        print(json.dumps(out))

    asyncio.run(main())
    """
)


def test_the_core_dispatches_without_jsonschema_or_http_server_and_the_package_still_imports() -> (
    None
):
    done = subprocess.run(
        [sys.executable, "-W", "ignore::DeprecationWarning", "-c", PROGRAM],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    out = json.loads(done.stdout)
    assert out["ok"] == {"jsonrpc": "2.0", "result": 5, "id": 1}
    assert out["error"] == {
        "jsonrpc": "2.0",
        "error": {"code": -32002, "message": "no such session", "data": {"sessionId": "x"}},
        "id": "r",
    }
    assert out["unknown"]["error"]["code"] == -32601
    assert out["ok_result"] == 5
    assert out["loaded"] == []
    assert out["late_import"] == [True, True]
