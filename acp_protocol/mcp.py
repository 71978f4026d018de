"""MCP server configurations passed to `session/new`, `session/load` and `session/resume`."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from .base import Wire

__all__ = ["EnvVariable", "HttpHeader", "McpServer", "McpServerType"]


class EnvVariable(Wire, frozen=True, kw_only=True):
    """An environment variable for an MCP server or a terminal command."""

    name: str
    value: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


class HttpHeader(Wire, frozen=True, kw_only=True):
    """An HTTP header sent to an HTTP or SSE MCP server."""

    name: str
    value: str
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")


McpServerType: TypeAlias = Literal["http", "sse"]
"""The `type` values of the stable schema; a stdio server has no `type`."""


# One Struct for the schema's `McpServerHttp | McpServerSse | McpServerStdio`: the stdio variant
# has no `type` tag, which msgspec's tagged unions cannot express. `type` is an open string so a
# newer transport (e.g. unstable "acp") decodes instead of failing the whole request.
class McpServer(Wire, frozen=True, kw_only=True):
    """An MCP server: stdio (`type` unset: `command`, `args`, `env`) or http/sse (`url`, ...)."""

    name: str
    type: McpServerType | str | UnsetType = UNSET
    command: str | UnsetType = UNSET
    args: list[str] | UnsetType = UNSET
    env: list[EnvVariable] | UnsetType = UNSET
    url: str | UnsetType = UNSET
    headers: list[HttpHeader] | UnsetType = UNSET
    meta: dict[str, Any] | UnsetType | None = msgspec.field(default=UNSET, name="_meta")

    def __post_init__(self) -> None:
        if self.type is UNSET:
            if self.command is UNSET or self.args is UNSET or self.env is UNSET:
                raise ValueError("a stdio MCP server needs `command`, `args` and `env`")
        elif self.type in ("http", "sse") and (self.url is UNSET or self.headers is UNSET):
            raise ValueError(f"an {self.type} MCP server needs `url` and `headers`")

    @property
    def is_stdio(self) -> bool:
        return self.type is UNSET
