"""Tested in tests/acp/test_update_order.py and the other bridge tests (tests/support/bridge.py
builds it): the state the method groups of one connection share, with no behaviour of its own."""
