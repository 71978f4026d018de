"""Tested through the presenter's two implementations: tests/acp/test_update_order.py and
tests/e2e/test_notices.py (v1's), tests/acp/v2/test_view.py and tests/e2e/test_v2_turns.py
(v2's); acp/presenter.py itself holds only their protocol."""
