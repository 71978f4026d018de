"""What the HTTP providers share: one lazily built client, retries, error messages, SSE reading.

`SseSession.events()` posts a JSON body and yields the server-sent events of the answer. It
owns everything between the provider and the network:

- **Lazy imports.** `httpx` and `httpx_sse` are imported the first time a request is made, so
  importing a provider module (and the server's `initialize`) does not pay for them.
- **Cancellation.** Every await on the network (sending, each read, reading an error body,
  each backoff sleep) runs inside `signal.linked_scope()`, so an abort interrupts it at once;
  the response is then closed, which closes the connection, and `TurnAborted` is raised. The
  scope never spans a `yield`, so the caller's own awaits between events are not affected.
- **Retries.** 429, 500, 502, 503, 504 and 529 answers and connection failures are retried
  with exponential backoff while nothing has been received yet (never after the first event),
  honouring `retry-after` / `retry-after-ms`.
- **Errors.** Every failure becomes a `ModelError` whose message names the provider and the
  model (`openai:gpt-4o: ...`), says what went wrong and, where one exists, the fix, with a
  short excerpt of the server's own error message. An answer saying the request does not fit
  the context window is the subclass `ContextWindowExceeded` (`acp_server.models.overflow`).

Nothing here knows either API's event format; `openai.py` and `anthropic.py` do.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from acp_server.cancellation import TurnSignal
from acp_server.models.base import ModelError, ModelRequest
from acp_server.models.overflow import context_overflow

if TYPE_CHECKING:
    import httpx
    from httpx_sse import ServerSentEvent

__all__ = [
    "RETRY_STATUSES",
    "Endpoint",
    "HttpOptions",
    "SseEvent",
    "SseSession",
    "close_provider",
    "error_excerpt",
    "status_error",
]

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, 529})
"""HTTP statuses retried (before the first event) with backoff."""

_EXCERPT_CHARS = 300
_CLOSE_TIMEOUT_S = 2.0


@dataclass(frozen=True, slots=True)
class HttpOptions:
    """Timeouts and the retry policy; the defaults are the production values.

    `backoff[i]` is the wait before retry i+1 (the last value repeats); a `retry-after`
    header replaces it. A `retry-after` longer than `max_retry_after` is not waited for: the
    request fails at once, saying when to try again.
    """

    connect_timeout: float = 10.0
    read_timeout: float = 60.0
    max_attempts: int = 4
    backoff: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0)
    max_retry_after: float = 60.0
    # The model's settings from the config file (`acp_server.models.model_settings`); None:
    # not set, so the default of the code that uses each (named in its description there).
    context_window: int | None = None
    max_output_tokens: int | None = None
    images: bool | None = None
    temperature: float | None = None
    edit_format: str | None = None
    auto_test: bool | None = None

    def sampled(self, request: ModelRequest) -> ModelRequest:
        """`request` with the configured temperature, which wins over the one it asks for."""
        if self.temperature is None:
            return request
        return msgspec.structs.replace(request, temperature=self.temperature)

    def delay(self, retry: int) -> float:
        """The backoff before retry number `retry` (1-based)."""
        if not self.backoff:
            return 0.0
        return float(self.backoff[min(retry, len(self.backoff)) - 1])


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Who is being asked, for error messages and URLs."""

    provider: str
    """`openai` or `anthropic`."""
    model: str
    base_url: str
    """Without a trailing slash."""
    key_env: str
    """The environment variable the API key is read from, e.g. `OPENAI_API_KEY`."""
    base_url_env: str
    """What sets the base URL, e.g. `OPENAI_BASE_URL` (named in messages as the fix)."""
    key_set: bool = True
    """Whether an API key is sent (a 401 without one asks for one)."""

    @property
    def label(self) -> str:
        """`provider:model`, the prefix of every message."""
        return f"{self.provider}:{self.model}"


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One server-sent event: its `event:` name (`message` when absent) and `data:`."""

    event: str
    data: str


@dataclass(slots=True)
class _Attempt:
    number: int = 0
    received: bool = False
    statuses: list[int] = field(default_factory=list)


# --- error messages -------------------------------------------------------------------------


def error_excerpt(body: bytes) -> str:
    """A short, one-line excerpt of a server's error body.

    Understands the usual JSON shapes (`{"error": {"message"}}` of OpenAI and Anthropic,
    `{"error": "..."}` of Ollama and llama.cpp, `{"message"}`, `{"detail"}`), else uses the
    text itself. Empty when the body is empty.
    """
    text: str | None = None
    try:
        decoded: Any = msgspec.json.decode(body)
    except msgspec.DecodeError:
        decoded = None
    if isinstance(decoded, dict):
        error = decoded.get("error")
        if isinstance(error, dict):
            message = error.get("message")
            kind = error.get("type")
            if isinstance(message, str):
                text = f"{kind}: {message}" if isinstance(kind, str) and kind else message
        elif isinstance(error, str):
            text = error
        if text is None:
            for key in ("message", "detail"):
                value = decoded.get(key)
                if isinstance(value, str):
                    text = value
                    break
    if text is None:
        text = body.decode("utf-8", errors="replace")
    return _shorten(text)


def _shorten(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) > _EXCERPT_CHARS:
        text = text[: _EXCERPT_CHARS - 1].rstrip() + "…"
    return text


def _said(excerpt: str) -> str:
    return f' The server said: "{excerpt}"' if excerpt else ""


def status_error(endpoint: Endpoint, status: int, excerpt: str, attempts: int = 1) -> ModelError:
    """The ModelError for an HTTP error status: what happened, the server's words, the fix."""
    who = endpoint.label
    said = _said(excerpt)
    tried = f" after {attempts} attempts" if attempts > 1 else ""
    if status == 401 and not endpoint.key_set:
        message = (
            f"{who}: the server requires an API key (HTTP 401).{said} "
            f"Set {endpoint.key_env} to a valid key."
        )
    elif status == 401:
        message = (
            f"{who}: the API key was rejected (HTTP 401).{said} "
            f"Set {endpoint.key_env} to a valid key."
        )
    elif status == 403:
        message = (
            f"{who}: access denied (HTTP 403).{said} Check that the key in "
            f"{endpoint.key_env} may use model {endpoint.model!r}."
        )
    elif status == 404:
        message = (
            f"{who}: model or endpoint not found (HTTP 404) at {endpoint.base_url}.{said} "
            f"Check the model name and {endpoint.base_url_env}."
        )
    elif status == 400 or status == 422:
        message = (
            f"{who}: the server rejected the request (HTTP {status}).{said} "
            "Check the model name and that it supports this request (tools, images, "
            "max tokens)."
        )
    elif status == 413:
        message = (
            f"{who}: the request is too large (HTTP 413).{said} "
            "Shorten the conversation or the attachments."
        )
    elif status == 429:
        message = (
            f"{who}: rate limited (HTTP 429){tried}.{said} "
            "Wait and try again, or check the account's rate limits and quota."
        )
    elif status == 529:
        message = f"{who}: the service is overloaded (HTTP 529){tried}.{said} Try again later."
    elif status >= 500:
        message = f"{who}: the server failed (HTTP {status}){tried}.{said} Try again later."
    else:
        message = f"{who}: unexpected answer (HTTP {status}) from {endpoint.base_url}.{said}"
    return ModelError(message, code=f"http_{status}")


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (seconds only; dates are ignored)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


# --- the session ----------------------------------------------------------------------------


async def close_provider(provider: object) -> None:
    """Release a provider's network resources: awaits `provider.aclose()` when it has one.

    Providers without network state (the scripted one) have none; calling this on them is
    a no-op, so owners can close whatever provider they hold.
    """
    aclose = getattr(provider, "aclose", None)
    if callable(aclose):
        await aclose()


class SseSession:
    """One provider instance's HTTP client (created on first use) and its request logic."""

    __slots__ = ("_client", "endpoint", "options")

    def __init__(self, endpoint: Endpoint, options: HttpOptions) -> None:
        self.endpoint = endpoint
        self.options = options
        self._client: httpx.AsyncClient | None = None

    def client(self) -> httpx.AsyncClient:
        """The provider's HTTP client (created on first use)."""
        if self._client is None:
            import httpx

            opts = self.options
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(
                    connect=opts.connect_timeout,
                    read=opts.read_timeout,
                    write=opts.read_timeout,
                    pool=opts.connect_timeout,
                )
            )
        return self._client

    async def aclose(self) -> None:
        """Close the client and its pooled connections; a later request opens a new one."""
        client, self._client = self._client, None
        if client is not None:
            with anyio.move_on_after(_CLOSE_TIMEOUT_S, shield=True):
                await client.aclose()

    async def events(
        self, path: str, headers: Mapping[str, str], body: bytes, signal: TurnSignal
    ) -> AsyncGenerator[SseEvent, None]:
        """POST `body` (JSON) to `base_url + path` and yield the answer's server-sent events.

        Ends when the server ends the body cleanly; the caller decides whether the stream was
        complete. Raises `TurnAborted` when the signal aborts (closing the connection first)
        and `ModelError` for everything else that goes wrong.
        """
        import httpx
        from httpx_sse import EventSource

        client = self.client()
        endpoint = self.endpoint
        url = endpoint.base_url + path
        all_headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "cache-control": "no-store",
            **headers,
        }
        attempt = _Attempt()
        while True:
            attempt.number += 1
            signal.raise_if_aborted()
            try:
                request = client.build_request("POST", url, headers=all_headers, content=body)
            except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
                raise self._bad_url(exc) from None
            response: httpx.Response | None = None
            delay: float | None = None
            with signal.linked_scope():
                try:
                    response = await client.send(request, stream=True)
                except httpx.HTTPError as exc:
                    delay = self._retry_delay(exc, attempt)
                    if delay is None:
                        raise self._transport_error(exc, attempt) from None
            signal.raise_if_aborted()
            if response is None:
                await self._backoff(delay, signal)
                continue
            try:
                if not 200 <= response.status_code < 300:
                    error_body = await self._read_error_body(response, signal)
                    delay = self._status_delay(response, attempt, error_body)
                    await response.aclose()
                    await self._backoff(delay, signal)
                    continue
                content_type = response.headers.get("content-type", "")
                if "text/event-stream" not in content_type.partition(";")[0].lower():
                    error_body = await self._read_error_body(response, signal)
                    raise ModelError(
                        f"{endpoint.label}: the server answered with "
                        f"{content_type or 'no content type'} instead of a stream "
                        f"(HTTP {response.status_code}).{_said(error_excerpt(error_body))}",
                        code="not_a_stream",
                    )
                source = EventSource(response).aiter_sse()
                try:
                    while True:
                        sse = await self._next(source, signal, attempt)
                        if sse is None:
                            return
                        if isinstance(sse, float):
                            break  # failed before the first event: retry
                        attempt.received = True
                        yield SseEvent(sse.event, sse.data)
                finally:
                    with anyio.move_on_after(_CLOSE_TIMEOUT_S, shield=True):
                        await source.aclose()
                await response.aclose()
                await self._backoff(sse, signal)
            finally:
                with anyio.move_on_after(_CLOSE_TIMEOUT_S, shield=True):
                    await response.aclose()

    async def _next(
        self,
        source: AsyncIterator[ServerSentEvent],
        signal: TurnSignal,
        attempt: _Attempt,
    ) -> ServerSentEvent | float | None:
        """The next event, None at the end of the body, or a retry delay when the connection
        failed before anything was received."""
        import httpx

        with signal.linked_scope():
            try:
                return await anext(source)
            except StopAsyncIteration:
                return None
            except httpx.HTTPError as exc:
                delay = self._retry_delay(exc, attempt)
                if delay is None:
                    raise self._transport_error(exc, attempt) from None
                return delay
        signal.raise_if_aborted()
        raise AssertionError("a linked scope was cancelled without its signal")

    async def _read_error_body(self, response: httpx.Response, signal: TurnSignal) -> bytes:
        import httpx

        body = b""
        # On a transport error the status says enough; the body was a courtesy.
        with signal.linked_scope(), contextlib.suppress(httpx.HTTPError):
            body = await response.aread()
        signal.raise_if_aborted()
        return body

    def _status_delay(self, response: httpx.Response, attempt: _Attempt, body: bytes) -> float:
        """The wait before retrying an error status, or raises its ModelError."""
        status = response.status_code
        attempt.statuses.append(status)
        overflow = context_overflow(self.endpoint.label, status, body)
        if overflow is not None:
            raise overflow
        excerpt = error_excerpt(body)
        if status not in RETRY_STATUSES or attempt.number >= self.options.max_attempts:
            raise status_error(self.endpoint, status, excerpt, attempt.number)
        retry_after = _retry_after(response.headers)
        if retry_after is None:
            return self.options.delay(attempt.number)
        if retry_after > self.options.max_retry_after:
            error = status_error(self.endpoint, status, excerpt, attempt.number)
            error.message += f" (The server asked to wait {retry_after:g} s before retrying.)"
            error.args = (error.message,)
            raise error
        return retry_after

    def _retry_delay(self, exc: Exception, attempt: _Attempt) -> float | None:
        """The wait before retrying after a transport error, or None when it is final."""
        import httpx

        retryable = isinstance(
            exc, httpx.NetworkError | httpx.RemoteProtocolError | httpx.ConnectTimeout
        )
        if not retryable or attempt.received or attempt.number >= self.options.max_attempts:
            return None
        return self.options.delay(attempt.number)

    async def _backoff(self, seconds: float | None, signal: TurnSignal) -> None:
        """Sleep before a retry; an abort interrupts it at once (then raises TurnAborted)."""
        if seconds:
            with signal.linked_scope():
                await anyio.sleep(seconds)
        signal.raise_if_aborted()

    def _bad_url(self, exc: Exception) -> ModelError:
        endpoint = self.endpoint
        return ModelError(
            f"{endpoint.label}: invalid base URL {endpoint.base_url!r} ({exc}). "
            f"Set {endpoint.base_url_env} to an http:// or https:// URL.",
            code="bad_url",
        )

    def _transport_error(self, exc: Exception, attempt: _Attempt) -> ModelError:
        import httpx

        endpoint = self.endpoint
        who = endpoint.label
        tried = f" after {attempt.number} attempts" if attempt.number > 1 else ""
        detail = str(exc) or type(exc).__name__
        if isinstance(exc, httpx.ReadTimeout):
            waited = self.options.read_timeout
            return ModelError(
                f"{who}: no data from the server for {waited:g} s (read timeout).",
                code="timeout",
            )
        if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout):
            return ModelError(f"{who}: the request timed out ({detail}).", code="timeout")
        if isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol):
            return self._bad_url(exc)
        if attempt.received:
            return ModelError(
                f"{who}: the connection was lost and the stream ended before the response "
                f"was complete ({detail}).",
                code="stream_incomplete",
            )
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
            return ModelError(
                f"{who}: cannot connect to {endpoint.base_url}{tried} ({detail}). Check "
                f"{endpoint.base_url_env} and that the server is running.",
                code="connection",
            )
        return ModelError(
            f"{who}: the request to {endpoint.base_url} failed{tried} ({detail}).",
            code="connection",
        )


def incomplete_stream(endpoint: Endpoint) -> ModelError:
    """The body ended cleanly, but before the API's end-of-response marker."""
    return ModelError(
        f"{endpoint.label}: the stream ended before the response was complete.",
        code="stream_incomplete",
    )


def malformed_chunk(endpoint: Endpoint, data: str, problem: str) -> ModelError:
    """A chunk that is not the JSON the API promises."""
    return ModelError(
        f"{endpoint.label}: malformed stream chunk from the server ({problem}): {_shorten(data)!r}",
        code="malformed_chunk",
    )
