"""Tested in tests/protocol/test_protocol_v2.py::test_the_table_is_the_stable_schemas_methods
and tests/protocol/test_protocol_v2.py::test_the_unstable_methods_are_the_unstable_schemas."""
