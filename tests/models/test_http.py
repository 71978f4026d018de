"""Tested in tests/models/test_openai.py (retries, retry-after, error bodies, timeouts, the SSE
reading) and tests/models/test_anthropic.py: what the HTTP providers share, on local servers."""
