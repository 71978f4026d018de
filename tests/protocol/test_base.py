"""Tested in tests/protocol/test_protocol_leniency.py::test_wire_types_are_frozen and the
leniency tests beside it (unknown fields ignored, UNSET kept apart from null, camelCase names)."""
