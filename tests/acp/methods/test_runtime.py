"""Tested in tests/e2e/test_ready.py: the runtime's method groups, loaded after the first
`session/new` answer, serve a prompt pipelined behind it as they do later."""
