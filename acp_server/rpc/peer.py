"""A bidirectional JSON-RPC 2.0 peer over a pair of byte streams.

The reader classifies each line (request, notification, response, or garbage) and answers
garbage itself; requests run one task each, so a long `session/prompt` never stops the
`session/cancel` or the permission response that must reach it. Each request task *admits*
its request before the reader moves on (by default when the handler returns; handlers that
run long admit early), which makes arrival order meaningful: a session created by one line
exists before the next line is dispatched, and a cancel is never handled before the prompt it
cancels was queued. See docs/rfc/implemented/architecture/2026-11-30-json-rpc-peer.md.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import anyio
import msgspec
from anyio.abc import ByteReceiveStream, ByteSendStream, TaskGroup
from msgspec import UNSET

from acp_protocol import errors
from acp_protocol.base import CancelRequestNotification
from acp_protocol.jsonrpc import (
    JSONRPC_VERSION,
    ErrorObject,
    Frame,
    OutgoingNotification,
    OutgoingRequest,
    RequestId,
    valid_request_id,
)
from acp_protocol.methods import CANCEL_REQUEST

from .batch import Batch
from .error_exit import error_frame
from .errors import MalformedAnswer, PeerClosed, RemoteError, RequestTimeout
from .framing import DEFAULT_MAX_LINE_BYTES, OVERSIZED, LineReader
from .writer import FrameWriter

log = logging.getLogger(__name__)

T = TypeVar("T")


class IncomingRequest:
    """One request from the other side, while it is being handled."""

    def __init__(self, request_id: RequestId, method: str, params: msgspec.Raw | None) -> None:
        self.id = request_id
        self.method = method
        self.params = params
        self.scope = anyio.CancelScope()
        self.admitted = anyio.Event()
        # A handler with its own notion of cancellation (session/prompt answers `cancelled`
        # instead of -32800) installs this; by default the handler's scope is cancelled.
        self.on_cancel_request: Callable[[], None] | None = None
        # Work that must follow the response on the wire (e.g. session-level updates for a
        # session the client only knows once it has read the session/new response).
        self.after_response: list[Callable[[], Awaitable[None]]] = []
        self.batch: Batch | None = None
        """The batch the request came in, whose array its answer joins (None: a line)."""

    def admit(self) -> None:
        """Let the reader dispatch the next line; idempotent."""
        self.admitted.set()


class Dispatcher(Protocol):
    """What the peer hands requests and notifications to (the router, rpc/dispatch.py)."""

    async def dispatch_request(self, request: IncomingRequest) -> Any:
        """Handle `request` and return its complete response frame."""

    async def dispatch_notification(self, method: str, params: msgspec.Raw | None) -> None:
        """Handle a notification; unknown ones are ignored."""


class _Pending:
    __slots__ = ("done", "error", "method", "result")

    def __init__(self, method: str) -> None:
        self.method = method
        self.done = anyio.Event()
        self.result: msgspec.Raw | None = None
        self.error: BaseException | None = None


class Peer:
    """Reads frames from `receive`, writes frames to `send`, routes both directions."""

    def __init__(
        self,
        receive: ByteReceiveStream,
        send: ByteSendStream,
        dispatcher: Dispatcher,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        self._lines = LineReader(receive, max_line_bytes)
        self._max_line_bytes = max_line_bytes
        self.writer = FrameWriter(send)
        self._dispatcher = dispatcher
        self._frame_decoder = msgspec.json.Decoder(Frame)
        self._error_decoder = msgspec.json.Decoder(ErrorObject)
        self._ids = itertools.count()
        self._pending: dict[int, _Pending] = {}
        self._incoming: dict[RequestId, IncomingRequest] = {}
        self.input_closed = anyio.Event()
        self._scope: anyio.CancelScope | None = None
        self.null_request_ids = True
        """Whether a request may have the id null (ACP v1: yes; v2: no, `-32600`)."""
        self.batches = False
        """Whether an array is read as a JSON-RPC batch (ACP v2; v1: one `-32600` for any
        array). Both are set by the handshake that chose the connection's version, before
        the next line is read."""
        self._batch_decoder = msgspec.json.Decoder(list[msgspec.Raw])

    # -- outgoing -------------------------------------------------------------------------

    async def notify(self, method: str, params: Any) -> None:
        """Send a notification; a gone client makes this a no-op."""
        await self.writer.send(OutgoingNotification(JSONRPC_VERSION, method, params))

    async def request(
        self,
        method: str,
        params: Any,
        result_type: type[T],
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - expiry must also send $/cancel_request
    ) -> T:
        """Send a request and wait for its result.

        Raises `RemoteError` for an error answer, `MalformedAnswer` for a result that does not
        decode as `result_type`, `PeerClosed` when the other side can no longer answer,
        `RequestTimeout` after `timeout` seconds. Whenever we stop waiting before
        the answer (timeout or cancellation of the caller), `$/cancel_request` tells the other
        side so it can stop the work too.
        """
        if self.input_closed.is_set() or self.writer.broken.is_set():
            raise PeerClosed(f"cannot send {method}: the client is gone")
        request_id = next(self._ids)
        pending = _Pending(method)
        self._pending[request_id] = pending
        try:
            await self.writer.send(OutgoingRequest(JSONRPC_VERSION, request_id, method, params))
            with anyio.fail_after(timeout):
                await pending.done.wait()
        except TimeoutError:
            await self._give_up(request_id)
            raise RequestTimeout(f"{method} got no answer within {timeout} s") from None
        except BaseException:
            if not pending.done.is_set():
                with anyio.CancelScope(shield=True):
                    await self._give_up(request_id)
            raise
        finally:
            self._pending.pop(request_id, None)
        if pending.error is not None:
            raise pending.error
        assert pending.result is not None
        try:
            return msgspec.json.decode(pending.result, type=result_type)
        except msgspec.DecodeError as exc:  # ValidationError included
            raise MalformedAnswer(method, str(exc)) from None

    async def _give_up(self, request_id: int) -> None:
        if self.input_closed.is_set():
            return
        await self.notify(CANCEL_REQUEST, CancelRequestNotification(request_id=request_id))

    def _fail_pending(self, reason: str) -> None:
        for pending in self._pending.values():
            if not pending.done.is_set():
                pending.error = PeerClosed(f"{pending.method}: {reason}")
                pending.done.set()

    def _resolve(self, frame: Frame) -> None:
        request_id = frame.id
        pending = self._pending.get(request_id) if type(request_id) is int else None
        if pending is None or pending.done.is_set():
            log.warning("dropping a response to unknown request id %r", request_id)
            return
        if frame.error is not UNSET:
            try:
                err = self._error_decoder.decode(frame.error)
            except msgspec.DecodeError:
                err = ErrorObject(errors.INTERNAL_ERROR, "malformed error response")
            pending.error = RemoteError(pending.method, err.code, err.message, err.data)
        else:
            assert frame.result is not UNSET
            pending.result = frame.result
        pending.done.set()

    # -- incoming -------------------------------------------------------------------------

    async def run(self) -> None:
        """Serve until input ends and every request in flight has been answered.

        At end of input our own pending requests fail at once (nobody will answer them), the
        requests already in flight finish and are answered, then the written output is
        drained. `close()` stops everything sooner.
        """
        with anyio.CancelScope() as self._scope:
            async with anyio.create_task_group() as outer:
                outer.start_soon(self.writer.run)
                async with anyio.create_task_group() as requests:
                    await self._read_loop(requests)
                    self.input_closed.set()
                    self._fail_pending("the client closed its input")
                self.writer.close()

    def close(self) -> None:
        """Stop reading, abandon requests in flight and stop writing."""
        self.input_closed.set()
        self._fail_pending("the connection is closing")
        if self._scope is not None:
            self._scope.cancel()

    async def _read_loop(self, requests: TaskGroup) -> None:
        while True:
            # Each request ends in a response we must buffer until the client reads it; a
            # client that writes without reading would grow that buffer (and the tasks waiting
            # to add to it) without bound. Not reading meanwhile pushes back into its pipe.
            await self.writer.room()
            try:
                line = await self._lines.receive_line()
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return
            except OSError as exc:
                log.warning("reading input failed (%s); treating it as end of input", exc)
                return
            if line is OVERSIZED:
                await self.writer.send(
                    error_frame(
                        None,
                        errors.INVALID_REQUEST,
                        "Invalid request",
                        f"message exceeds the {self._max_line_bytes}-byte line limit",
                    )
                )
                continue
            assert isinstance(line, bytes)
            await self._route(line, requests)

    async def _route(self, line: bytes, requests: TaskGroup) -> None:
        try:
            # msgspec skips over raw params without checking their UTF-8; the wire must be UTF-8.
            line.decode()
        except UnicodeDecodeError as exc:
            await self.writer.send(
                error_frame(None, errors.PARSE_ERROR, "Parse error", f"invalid UTF-8: {exc}")
            )
            return
        if self.batches and line.lstrip()[:1] == b"[":
            await self._batch(line, requests)
            return
        try:
            frame = self._frame_decoder.decode(line)
        except msgspec.ValidationError:
            await self.writer.send(
                error_frame(None, errors.INVALID_REQUEST, "Invalid request", "not a JSON object")
            )
            return
        except msgspec.DecodeError as exc:
            await self.writer.send(error_frame(None, errors.PARSE_ERROR, "Parse error", str(exc)))
            return
        except RecursionError:
            await self.writer.send(
                error_frame(None, errors.PARSE_ERROR, "Parse error", "JSON nested too deeply")
            )
            return
        await self._dispatch(frame, requests)

    async def _dispatch(
        self, frame: Frame, requests: TaskGroup, batch: Batch | None = None
    ) -> None:
        """Route one decoded frame (a line's, or an element of `batch`)."""
        if frame.method is UNSET and (frame.result is not UNSET or frame.error is not UNSET):
            # A response: route it to our pending table; responses are never answered.
            if frame.jsonrpc == JSONRPC_VERSION and (frame.result is UNSET) != (
                frame.error is UNSET
            ):
                self._resolve(frame)
            else:
                log.warning("dropping a malformed response frame")
            return

        has_id = frame.id is not UNSET
        id_ok = not has_id or valid_request_id(frame.id, null=self.null_request_ids)
        if frame.jsonrpc != JSONRPC_VERSION or not isinstance(frame.method, str) or not id_ok:
            reply_id = frame.id if has_id and id_ok else None
            refusal = error_frame(reply_id, errors.INVALID_REQUEST, "Invalid request", _why(frame))
            if batch is not None:
                batch.refused(refusal)
            else:
                await self.writer.send(refusal)
            return

        params = None if frame.params is UNSET else frame.params
        if not has_id:
            await self._notification(frame.method, params)
            return
        request = IncomingRequest(frame.id, frame.method, params)
        if batch is not None:
            request.batch = batch
            batch.started()
        self._incoming[request.id] = request
        requests.start_soon(self._handle, request)
        await request.admitted.wait()

    async def _batch(self, line: bytes, requests: TaskGroup) -> None:
        """A JSON-RPC batch (rpc/batch.py): each element dispatched in order, the answers
        written as one array once all are in."""
        try:
            items = self._batch_decoder.decode(line)
        except (msgspec.DecodeError, RecursionError) as exc:
            await self.writer.send(error_frame(None, errors.PARSE_ERROR, "Parse error", str(exc)))
            return
        if not items:
            await self.writer.send(
                error_frame(None, errors.INVALID_REQUEST, "Invalid request", "an empty batch")
            )
            return
        batch = Batch()
        for item in items:
            try:
                frame = self._frame_decoder.decode(item)
            except (msgspec.DecodeError, RecursionError):  # not an object, or nested too deep
                batch.refused(
                    error_frame(
                        None, errors.INVALID_REQUEST, "Invalid request", "not a JSON object"
                    )
                )
                continue
            await self._dispatch(frame, requests, batch)
        batch.seal()
        requests.start_soon(self._write_batch, batch)

    async def _write_batch(self, batch: Batch) -> None:
        frames = await batch.complete()
        if frames:  # an all-notification batch is not answered at all
            await self.writer.send(frames)
        if batch.follow_ups:
            await self.writer.sent()
        for method, follow_up in batch.follow_ups:
            await self._follow_up(method, follow_up)

    async def _follow_up(self, method: str, follow_up: Callable[[], Awaitable[None]]) -> None:
        try:
            await follow_up()
        except Exception:
            log.exception("work after the %s response failed", method)

    async def _notification(self, method: str, params: msgspec.Raw | None) -> None:
        if method == CANCEL_REQUEST:
            self._cancel_incoming(params)
            return
        try:
            await self._dispatcher.dispatch_notification(method, params)
        except Exception:
            log.exception("notification %s failed", method)

    def _cancel_incoming(self, params: msgspec.Raw | None) -> None:
        try:
            target = msgspec.json.decode(params or b"null", type=CancelRequestNotification)
        except msgspec.DecodeError:
            log.warning("ignoring a malformed %s", CANCEL_REQUEST)
            return
        request = self._incoming.get(target.request_id)
        if request is None:
            return
        if request.on_cancel_request is not None:
            request.on_cancel_request()
        else:
            request.scope.cancel()

    async def _handle(self, request: IncomingRequest) -> None:
        response: Any = None
        try:
            with request.scope:
                response = await self._dispatcher.dispatch_request(request)
        finally:
            request.admit()
            if self._incoming.get(request.id) is request:
                del self._incoming[request.id]
        if request.scope.cancelled_caught:
            response = error_frame(request.id, errors.REQUEST_CANCELLED, "Request cancelled")
        if request.batch is not None:
            request.batch.answered(response, request.method, request.after_response)
            return
        await self.writer.send(response)
        if request.after_response:
            # The answer reaches the client before the work it is not waiting for: queued is
            # not written, and the follow-ups (a new session's slash-command scan, the
            # warm-up's start) would otherwise run first on this loop turn.
            await self.writer.sent()
        for follow_up in request.after_response:
            await self._follow_up(request.method, follow_up)


def _why(frame: Frame) -> str:
    if frame.jsonrpc != JSONRPC_VERSION:
        return 'jsonrpc must be "2.0"'
    if not isinstance(frame.method, str):
        return "method must be a string"
    if frame.id is None:
        return "this connection's request ids are strings or integers (ACP v2), not null"
    return "id must be a 64-bit signed integer, a string or null"
