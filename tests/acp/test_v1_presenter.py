"""Tested in tests/acp/test_update_order.py (updates before the answer),
tests/e2e/test_notices.py (notices where the client opted in) and
tests/e2e/test_determinism.py (v1's bytes, unchanged since the presenter)."""
