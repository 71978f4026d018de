"""Tested in tests/rpc/test_peer.py: the peer raises these to its callers (an error answer, a
malformed answer, no answer in time, the other side gone)."""
