"""Tested in tests/e2e/test_sandbox_availability_acp.py: sandboxed mode not offered where it
cannot run, the client told once, and a journaled sandboxed mode not restored there."""
