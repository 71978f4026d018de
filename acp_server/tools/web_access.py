"""What `web_fetch` may reach: its `[web_fetch]` settings, the URLs it accepts, the host an
"allow always" answer covers, and the addresses it refuses.

Kept apart from the tool (acp_server/tools/builtin/web.py) so that the config reader and the
permission rules use the same parsing without importing httpx. See
docs/rfc/implemented/feature/2026-12-01-web-fetch.md.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

DEFAULT_MAX_BYTES = 2 * 1024 * 1024
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_REDIRECTS = 5


@dataclass(frozen=True)
class WebFetchSettings:
    """`[web_fetch]` of the config file."""

    max_bytes: int = DEFAULT_MAX_BYTES
    """The most bytes of one response body read; the rest is not downloaded. The same cap
    holds for a gzip or deflate body once undone, and for the Markdown of a page."""
    timeout: float = DEFAULT_TIMEOUT
    """Seconds one fetch may take in all, redirects and the conversion to Markdown included."""
    max_redirects: int = DEFAULT_MAX_REDIRECTS
    """Redirects followed (same host only) before the fetch gives up."""
    allow_private_addresses: bool = False
    """Whether hosts on loopback, private, link-local and other non-public addresses may be
    fetched (a local documentation server, a test)."""


def web_fetch_settings(
    entry: Any, error: Callable[[str, str | None, str | None], Exception]
) -> WebFetchSettings:
    """The config file's `[web_fetch]` table; `error(problem, key, table)` makes the exception
    that names the file and line."""
    table = "web_fetch"
    if not isinstance(entry, dict):
        raise error("[web_fetch] must be a table", table, None)
    values: dict[str, Any] = {}
    for key, value in entry.items():
        if key in ("max_bytes", "max_redirects"):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise error(f"[web_fetch] `{key}` must be a whole number (0 or more)", key, table)
            if key == "max_bytes" and value == 0:
                raise error("[web_fetch] `max_bytes` must be above 0", key, table)
            values[key] = value
        elif key == "timeout":
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise error("[web_fetch] `timeout` must be a number of seconds above 0", key, table)
            values[key] = float(value)
        elif key == "allow_private_addresses":
            if not isinstance(value, bool):
                raise error(f"[web_fetch] `{key}` must be true or false", key, table)
            values[key] = value
        else:
            raise error(
                f"unknown key `{key}` in [web_fetch]; expected max_bytes, timeout, "
                "max_redirects or allow_private_addresses",
                key,
                table,
            )
    return WebFetchSettings(**values)


class UrlRefused(ValueError):
    """A URL `web_fetch` does not fetch (the message says why)."""


@dataclass(frozen=True)
class WebUrl:
    """An accepted URL: http or https, a host, no user name or password."""

    url: str
    scheme: str
    host: str
    """Lower case; an IPv6 address without brackets."""
    port: int | None
    """The port when the URL names one that is not its scheme's default."""

    @property
    def origin(self) -> str:
        """`host` or `host:port`: what an "allow always" answer covers."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}" if self.port is not None else host


_DEFAULT_PORTS = {"http": 80, "https": 443}
_FORBIDDEN = frozenset(" \t\r\n\\\0")
_MAX_LABEL = 63
"""The DNS limit on a label of a name (RFC 1035), in characters once encoded."""


def parse_url(text: str) -> WebUrl:
    """`text` as a `WebUrl`; `UrlRefused` for anything else. Strict on purpose: a URL that two
    parsers could read differently (backslashes, spaces, control characters, credentials)
    is refused, so the host the user allows is the host that is fetched."""
    if not text or len(text) > 8192:
        raise UrlRefused("the URL is empty or longer than 8192 characters")
    if any(ch in _FORBIDDEN or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        raise UrlRefused("the URL contains spaces, backslashes or control characters")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise UrlRefused(f"the URL cannot be parsed ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise UrlRefused(f"only http and https URLs are fetched, not {scheme or 'this'!r}")
    if "@" in parts.netloc:
        raise UrlRefused("the URL contains a user name or password; none are ever sent")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise UrlRefused("the URL has no host")
    if not host.isascii():
        host = _idna_host(host)
    if port == _DEFAULT_PORTS[scheme]:
        port = None
    return WebUrl(text, scheme, host.lower(), port)


def _idna_host(host: str) -> str:
    """A non-ASCII host in its IDNA (ASCII) form; `UrlRefused` when it is not a valid name."""
    from encodings.idna import nameprep

    # Each label's length is checked before it is encoded: Python's IDNA codec
    # punycode-encodes a label first, in time quadratic in it (a label of 8,000 characters
    # took 11 s of the event loop), and checks the length after. Punycode never shortens
    # what nameprep gives, so a longer label could not be valid.
    try:
        if any(len(nameprep(label)) > _MAX_LABEL for label in host.split(".")):
            raise UrlRefused(
                f"the host is not a valid domain name: a label of it is longer than "
                f"{_MAX_LABEL} characters"
            )
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        raise UrlRefused(f"the host {host[:100]!r} is not a valid domain name") from None


def fetch_origin(arguments_url: Any) -> str | None:
    """The origin (`host[:port]`) of a web_fetch call's `url` argument, or None when it is not
    an accepted URL (the tool then refuses it without fetching)."""
    if not isinstance(arguments_url, str):
        return None
    try:
        return parse_url(arguments_url).origin
    except UrlRefused:
        return None


_NAT64 = ipaddress.ip_network("64:ff9b::/96")
"""The well-known NAT64 prefix (RFC 6052): the last 32 bits are the IPv4 address reached."""
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
"""The local-use NAT64 prefix (RFC 8215): a network may translate it at any prefix length
RFC 6052 allows within it (/48, /56, /64, /96), so every one of those readings is checked."""
_NAT64_LOCAL_LENGTHS = (48, 56, 64, 96)
"""The prefix lengths of `_embedded_ipv4`'s readings of a local-use NAT64 address, in order."""


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address stands for (IPv4-mapped, 6to4, NAT64), if any."""
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    if ip.sixtofour is not None:
        return [ip.sixtofour]
    value = int(ip)
    if ip in _NAT64:
        return [ipaddress.IPv4Address(value & 0xFFFFFFFF)]
    if ip not in _NAT64_LOCAL:
        return []
    # RFC 6052 section 2.2: bits 64-71 are zero; the IPv4 bits sit around them.
    return [
        ipaddress.IPv4Address((value >> 64 & 0xFFFF) << 16 | value >> 40 & 0xFFFF),  # /48
        ipaddress.IPv4Address((value >> 64 & 0xFF) << 24 | value >> 32 & 0xFFFFFF),  # /56
        ipaddress.IPv4Address(value >> 24 & 0xFFFFFFFF),  # /64
        ipaddress.IPv4Address(value & 0xFFFFFFFF),  # /96
    ]


def non_public(address: str) -> str | None:
    """Why `address` (an IP address) is not a public one, as a noun phrase (`127.0.0.1, a
    loopback address`), or None when it is public. An IPv6 address that carries an IPv4 one
    (IPv4-mapped, 6to4, NAT64) is judged by the IPv4 address it leads to."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return f"{address}, which is not an IP address"
    if isinstance(ip, ipaddress.IPv6Address):
        carried = _embedded_ipv4(ip)
        refused = [(ipv4, kind) for ipv4 in carried if (kind := _non_public_kind(ipv4))]
        if refused and ip in _NAT64_LOCAL:
            *others, last = (
                f"{ipv4} (/{length})"
                for ipv4, length in zip(carried, _NAT64_LOCAL_LENGTHS, strict=True)
            )
            ipv4, kind = refused[0]
            return (
                f"{ip}, a local-use NAT64 address of {', '.join(others)} or {last}, by the "
                f"network's prefix length; {ipv4} is {kind}"
            )
        if refused:
            ipv4, kind = refused[0]
            form = "an IPv4-mapped" if ip.ipv4_mapped else "a 6to4" if ip.sixtofour else "a NAT64"
            return f"{ip}, {form} address of {ipv4}, {kind}"
        if carried:
            return None  # the prefix itself is not global: the IPv4 address it leads to is
    kind = _non_public_kind(ip)
    return None if kind is None else f"{ip}, {kind}"


def _non_public_kind(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_private or ip.is_link_local or ip.is_unspecified or ip.is_reserved:
        return "a private, link-local or reserved address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local:
        # fec0::/10: deprecated (RFC 3879) but still routed inside some networks, and
        # Python's `is_global` counts it as global.
        return "a site-local address"
    if ip.is_multicast or not ip.is_global:
        return "not a public address"
    return None
