"""Tested in tests/acp/test_v2_view.py: runtime events in, v2 updates out, in order, each valid v2
(named for the v2 wire before tests mirrored acp/v2/)."""
