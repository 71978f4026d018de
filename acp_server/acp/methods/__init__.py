"""The ACP method handlers, one module per group: handshake (`initialize`, `authenticate`),
lifecycle (`session/load`, `resume`, `fork`, `close`, `delete`), listing (`session/list`),
config options (`session/set_mode`, `session/set_config_option`), prompts (`session/prompt`,
`session/cancel`); `runtime` composes the groups that need the runtime.

Imports nothing: `handshake` is answered before the runtime is loaded (acp/connection.py).
"""
