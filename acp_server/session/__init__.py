"""The durable side of a session: msgspec records, the in-memory session log, and the journal
store with its loading, crash repair and listing.

This package never imports `acp_server.acp`, `acp_server.rpc`, `acp_server.agent` or
`protocol`: records describe what happened to a session in the runtime's own vocabulary, and
the bridge translates them to ACP. Import from the submodules (`acp_server.session.records`,
`acp_server.session.log`, `acp_server.session.journal`); this module deliberately imports
nothing.
"""
