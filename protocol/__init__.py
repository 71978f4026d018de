"""ACP v1 wire types as msgspec Structs.

Import from the submodules (`protocol.session`, `protocol.session_update`, ...); this package
module deliberately imports nothing, so `import protocol.jsonrpc` stays cheap.
"""
