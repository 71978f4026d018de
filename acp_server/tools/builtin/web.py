"""The `web_fetch` tool: one HTTP(S) GET, its answer as text for the model.

- **Under the turn signal.** Every await on the network runs inside `signal.linked_scope()`, so
  a cancel closes the request at once; the client is closed before the tool returns.
- **Caps.** The body is streamed and reading stops at `max_bytes` (the rest is never
  downloaded; the result says so); gzip and deflate are undone in bounded steps, each stage
  stopped at the same cap (`web_body`); the whole fetch, redirects included, has one deadline;
  redirects are followed on the same host only, up to `max_redirects`, each target parsed and
  checked again. A redirect to another host is reported to the model, which may fetch it with
  a new call (a new permission question).
- **What comes back.** HTML is converted to Markdown (html-to-markdown) in a child process
  that a cancel, a time limit and a memory cap stop (`web_convert`), its output cut at
  `max_bytes`; text and JSON pass through; anything else is refused, naming its type.
- **Nothing of the user's is sent.** A fresh client per call: no cookie jar that keeps
  anything (cookies set by a redirect are not sent to its target), no environment (no .netrc,
  no proxy variables), no Authorization header, no URL with credentials.
- **Not the user's network.** Hosts that resolve to loopback, private, link-local or other
  non-public addresses are refused before connecting, and the address actually connected to is
  checked again before the answer is read, unless `[web_fetch] allow_private_addresses`.

See docs/rfc/implemented/feature/2026-12-01-web-fetch.md.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import msgspec

from acp_server import __version__
from acp_server.cancellation import TurnSignal
from acp_server.tools.base import ToolCallContext, ToolKind, ToolOutput
from acp_server.tools.budget import ToolBudget
from acp_server.tools.builtin._common import BuiltinTool, failed, str_arg
from acp_server.tools.builtin.web_body import ACCEPT_ENCODING, BodyRefused, BoundedBody, read_body
from acp_server.tools.builtin.web_convert import ConversionFailed, HtmlConverter
from acp_server.tools.web_access import (
    UrlRefused,
    WebFetchSettings,
    WebUrl,
    non_public,
    parse_url,
)
from acp_server.tools.workspace import PathRoots

if TYPE_CHECKING:
    import httpx

USER_AGENT = f"acp-server/{__version__} (web_fetch)"
_CLOSE_TIMEOUT_S = 2.0


class WebFetchArgs(msgspec.Struct, forbid_unknown_fields=True):
    url: Annotated[str, msgspec.Meta(description="The http:// or https:// URL to fetch.")]
    offset: Annotated[
        int,
        msgspec.Meta(
            ge=0, description="Start at this character of the converted text (default 0)."
        ),
    ] = 0


def _size(count: int) -> str:
    return f"{count} byte{'s' * (count != 1)}"


class _Done(Exception):
    """The fetch ends with this output (refused, redirected away, too many redirects)."""

    def __init__(self, output: ToolOutput) -> None:
        super().__init__(output.text)
        self.output = output


class WebFetch(BuiltinTool[WebFetchArgs]):
    name = "web_fetch"
    kind: ToolKind = "fetch"
    args_type = WebFetchArgs
    description = (
        "Fetch a web page or file over HTTP(S) (GET) and return its content: HTML converted to "
        "Markdown, text and JSON as they are; images and other binary content are refused. "
        "Redirects on the same host are followed; a redirect to another host is reported, "
        "fetch that URL with a new call. No cookies or credentials are sent. Large pages are "
        "cut: call again with `offset` (characters of the converted text) to read on. The "
        "user may be asked first."
    )

    def __init__(
        self,
        path_roots: PathRoots,
        settings: WebFetchSettings | None = None,
        *,
        max_bytes: int = ToolBudget().body_bytes,
        converter: HtmlConverter | None = None,
    ) -> None:
        super().__init__(path_roots)
        self.settings = settings if settings is not None else WebFetchSettings()
        self.max_bytes = max_bytes
        self.converter = converter if converter is not None else HtmlConverter()

    def title(self, arguments: Mapping[str, Any]) -> str:
        url = str_arg(arguments, "url")
        return f"Fetch {url[:200]}" if url else "Fetch a web page"

    async def act(
        self, args: WebFetchArgs, call: ToolCallContext, signal: TurnSignal
    ) -> ToolOutput:
        try:
            target = parse_url(args.url)
        except UrlRefused as exc:
            return failed(f"Refused: {exc}")
        # Imported on first use, as web_text below: an idle session never pays for them.
        from http.cookiejar import CookieJar, DefaultCookiePolicy

        import httpx

        client = httpx.AsyncClient(
            follow_redirects=False,
            trust_env=False,  # no .netrc credentials, no proxy or certificate variables
            cookies=CookieJar(DefaultCookiePolicy(allowed_domains=[])),  # keeps none
            timeout=httpx.Timeout(self.settings.timeout),
            headers={
                "User-Agent": USER_AGENT,
                "Accept": "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.5",
                "Accept-Encoding": ACCEPT_ENCODING,
            },
        )
        output: ToolOutput | None = None
        try:
            with signal.linked_scope(), anyio.move_on_after(self.settings.timeout):
                output = await self._fetch(client, target, args.offset, signal)
        except _Done as done:
            output = done.output
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            output = failed(f"Fetching {target.url} failed: {exc or type(exc).__name__}")
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_TIMEOUT_S):
                await client.aclose()
        signal.raise_if_aborted()
        if output is None:
            return failed(
                f"Fetching {target.url} timed out after {self.settings.timeout:g} s (the "
                "[web_fetch] timeout of the config file); nothing was returned"
            )
        return output

    async def _fetch(
        self, client: httpx.AsyncClient, target: WebUrl, offset: int, signal: TurnSignal
    ) -> ToolOutput:
        first = target
        for hop in range(self.settings.max_redirects + 1):
            await self._check_addresses(target)
            request = client.build_request("GET", target.url)
            if request.url.host.rstrip(".").lower() != target.host:
                raise _Done(failed(f"Refused: the host of {target.url} is read ambiguously"))
            response = await client.send(request, stream=True)
            try:
                self._check_peer(response, target)
                if not response.is_redirect:
                    return await self._read(response, offset, first, signal)
                following = self._redirect(response, target, hop)
            finally:
                await response.aclose()
            target = following
        raise AssertionError("the last hop returns or raises")

    def _redirect(self, response: httpx.Response, target: WebUrl, hop: int) -> WebUrl:
        import httpx

        location = response.headers.get("location", "")
        try:
            following = parse_url(str(response.url.join(location)))
        except (UrlRefused, ValueError, httpx.InvalidURL) as exc:
            raise _Done(
                failed(f"{target.url} redirects to {location[:300]!r}, which is refused: {exc}")
            ) from None
        if following.origin != target.origin:
            raise _Done(
                ToolOutput(
                    f"{target.url} redirects (HTTP {response.status_code}) to another host: "
                    f"{following.url}\nweb_fetch follows redirects on the same host only; "
                    "call web_fetch with that URL to fetch it."
                )
            )
        if hop >= self.settings.max_redirects:
            raise _Done(
                failed(
                    f"Too many redirects: {target.url} redirects again, past the limit of "
                    f"{self.settings.max_redirects} (the [web_fetch] max_redirects of the "
                    f"config file); the next was {following.url}"
                )
            )
        return following

    async def _check_addresses(self, target: WebUrl) -> None:
        """Refuse a host that resolves to a non-public address (before connecting)."""
        if self.settings.allow_private_addresses:
            return
        port = target.port or (443 if target.scheme == "https" else 80)
        try:
            infos = await anyio.getaddrinfo(target.host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise _Done(failed(f"Cannot resolve {target.host}: {exc}")) from None
        for info in infos:
            self._refuse_non_public(target, str(info[4][0]))

    def _check_peer(self, response: httpx.Response, target: WebUrl) -> None:
        """Refuse an answer from a non-public address (DNS may change after the check)."""
        if self.settings.allow_private_addresses:
            return
        stream = response.extensions.get("network_stream")
        peer = stream.get_extra_info("server_addr") if stream is not None else None
        if isinstance(peer, tuple) and peer:
            self._refuse_non_public(target, str(peer[0]))

    def _refuse_non_public(self, target: WebUrl, address: str) -> None:
        why = non_public(address)
        if why is not None:
            raise _Done(
                failed(
                    f"Refused: {target.host} is at {why}. web_fetch reaches public addresses "
                    "only, unless `allow_private_addresses = true` is set in the [web_fetch] "
                    "table of the config file."
                )
            )

    async def _read(
        self, response: httpx.Response, offset: int, first: WebUrl, signal: TurnSignal
    ) -> ToolOutput:
        from acp_server.tools.builtin.web_text import content_class, decode, meta_charset

        mime = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        shape = content_class(mime)
        if shape is None:
            return failed(
                f"Refused: {response.url} is {mime} content; web_fetch returns web pages (as "
                "Markdown), text and JSON only"
            )
        try:
            body = await read_body(response, self.settings.max_bytes)
        except BodyRefused as exc:
            return failed(f"Refused: {exc}")
        data = body.data
        if shape == "":
            if b"\0" in data[:4096]:
                return failed(
                    f"Refused: {response.url} has no content type and looks binary; web_fetch "
                    "returns web pages (as Markdown), text and JSON only"
                )
            head = data[:512].lstrip().lower()
            shape = "html" if head.startswith((b"<!doctype html", b"<html")) else "text"
        charset = response.charset_encoding
        if shape == "html" and charset is None:
            charset = meta_charset(data)
        text, problem = await decode(data, charset)
        notes = [self._cut_note(response, body)] if body.cut else []
        notes += [body.left_out] if body.left_out else []
        notes += [problem] if problem else []
        described = mime or "text"
        if shape == "html":
            limit = self.settings.max_bytes
            try:
                converted = await self.converter.convert(text, limit=limit, signal=signal)
            except ConversionFailed as exc:
                return failed(f"Fetching {response.url} gave a page, but {exc}")
            text = converted.text
            described = f"{mime or 'HTML'}, converted to Markdown"
            if converted.instead is not None:
                described = f"{mime or 'HTML'}, as plain text"
                notes.append(converted.instead)
            if converted.cut:
                made = "Markdown" if converted.instead is None else "text"
                notes.append(
                    f"the page's {made} is longer than the {_size(limit)} limit ([web_fetch] "
                    f"max_bytes): only its first {_size(limit)} were kept, so the text below "
                    "ends early"
                )
        return self._result(response, text, described, offset, first, notes)

    def _cut_note(self, response: httpx.Response, body: BoundedBody) -> str:
        cap = _size(self.settings.max_bytes)
        if body.codings:
            return (
                f"the response, decoded from {', '.join(body.codings)}, is larger than the "
                f"{cap} download limit ([web_fetch] max_bytes): only its first {cap} were "
                "kept, so the text below ends early"
            )
        total = response.headers.get("content-length", "")
        of = f" of {total} bytes" if total.isdigit() else ""
        return (
            f"the response is larger than the {cap} download limit ([web_fetch] max_bytes): "
            f"only its first {cap}{of} were read, so the text below ends early"
        )

    def _result(
        self,
        response: httpx.Response,
        text: str,
        described: str,
        offset: int,
        first: WebUrl,
        notes: list[str],
    ) -> ToolOutput:
        status = response.status_code
        lines = [f"URL: {response.url}"]
        if str(response.url) != first.url:
            lines.append(f"(redirected from {first.url})")
        lines.append(f"Status: {status} {response.reason_phrase}".rstrip())
        lines.append(f"Content-Type: {described}")
        lines += (f"[{note}]" for note in notes)
        if offset > len(text):
            lines.append(f"\noffset {offset} is past the end ({len(text)} characters)")
            return failed("\n".join(lines))
        if offset:
            lines.append(f"[from character {offset} of {len(text)}]")
        header = "\n".join(lines) + "\n\n"
        shown = text[offset:]
        room = max(self.max_bytes - len(header.encode()) - 200, 1024)
        data = shown.encode("utf-8", errors="replace")
        note = ""
        if len(data) > room:
            kept = data[:room].decode("utf-8", errors="ignore")
            newline = kept.rfind("\n")
            if newline > room // 2:
                kept = kept[: newline + 1]
            end = offset + len(kept)
            note = (
                f"\n[... {len(text) - end} more characters of {len(text)} not shown (the "
                f"tool-result limit); call web_fetch again with offset={end} to read on ...]"
            )
            shown = kept
        body = shown if shown.strip() else "(empty)"
        return ToolOutput(header + body + note, failed=status >= 400)
