"""Tested in tests/tools/test_toolbox.py, tests/tools/test_arguments.py and
tests/tools/test_builtin.py: the interface between the loop and a tool, as every tool uses it."""
