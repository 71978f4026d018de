"""Tested in
tests/tools/test_command_sandbox.py::test_the_config_file_sets_network_and_extra_writable_paths
and tests/tools/test_web_fetch_policy.py (`[sandbox] network` in sandboxed mode)."""
