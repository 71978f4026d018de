"""The agent and cancellation suites run on both anyio backends (see tests/support/backends.py)."""

from tests.support.backends import anyio_backend

__all__ = ["anyio_backend"]
