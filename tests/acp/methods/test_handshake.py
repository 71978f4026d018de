"""Tested in tests/e2e/test_handshake.py (initialize, authenticate) and
tests/e2e/test_protocol_order.py (`initialize` first, a repeated one answered the same)."""
