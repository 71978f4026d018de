"""ACP v1 wire types as msgspec Structs.

Import from the submodules (`acp_protocol.session`, `acp_protocol.session_update`, ...); this
package module deliberately imports nothing, so `import acp_protocol.jsonrpc` stays cheap.
"""
