"""acp-server: an Agent Client Protocol agent over stdio."""

__version__ = "0.1.0"
