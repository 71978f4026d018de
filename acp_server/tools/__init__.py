"""Tools the agent can call, and the interface every tool implements."""
