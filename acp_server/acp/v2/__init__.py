"""The ACP v2 half of the bridge: its presenter (how sessions are shown), the per-session view
of the runtime, replay, and the handlers that differ from v1's, in their own route group.

Imports nothing: the presenter and the handshake are used before the runtime is loaded.
"""
