"""Tested in tests/test_config.py::test_check_spec,
tests/test_config.py::test_load_model_rejects_bad_specs and tests/models/test_providers.py
(every provider row loads): `--model SPEC` to a provider."""
