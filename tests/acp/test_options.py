"""Tested in tests/test_config.py (what the file decides) and tests/acp/test_update_order.py
(tests/support/bridge.py builds the options): `ServerOptions` holds values only."""
