"""ACP v2 wire types as msgspec Structs, beside v1's (`acp_protocol.*`).

The v2 pair of the official TS SDK 2.4.0 (`tests/data/acp/v2/schema.json`, and
`schema.unstable.json` for `session/fork` and the `systemPrompt` capability) is what they are
checked against. Types whose v2 definition has the same properties as v1's (content blocks,
permission options and outcomes, elicitation forms, session listing) are v1's, imported where
used; everything v2 reshaped lives here. Same conventions as v1 (`acp_protocol/base.py`): for a
patch field, `UNSET` (left out) is "unchanged" and `None` (sent as `null`) is "cleared".

Import from the submodules; this package module imports nothing.
"""
