"""Tested in tests/rpc/test_dispatch.py and tests/rpc/test_peer_framing.py: a handler's `RpcError`
is answered with its code, anything else it raises as -32603 without its text."""
