"""Tested in
tests/protocol/test_protocol_v2.py::test_the_stable_rows_are_the_stable_schemas_methods,
tests/protocol/test_protocol_v2.py::test_the_other_rows_are_the_unstable_schemas_or_extensions and
tests/protocol/test_protocol_v2.py::test_a_method_that_kept_v1s_types_is_v1s_row."""
