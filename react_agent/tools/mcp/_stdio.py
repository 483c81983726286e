"""Bounds on what an MCP server sends, before the SDK reads it: a stdio server's stdout in
whole lines of at most :data:`~react_agent.tools.mcp.MAX_MCP_MESSAGE_BYTES` that may be
JSON-RPC (:class:`_StdoutGuard`), an HTTP response body bounded as it is read
(:func:`_bounded_body`), and the end of a server's stderr (:class:`_StderrTail`)."""

from __future__ import annotations

import codecs
import functools
import itertools
import json
import os
import re
import threading
import time
from contextlib import suppress
from typing import Any, Protocol

from typing_extensions import Buffer

from ._config import _LOGGED_LINES, MAX_MCP_MESSAGE_BYTES, STDERR_KEPT_BYTES, _visible, logger


# -- bounds on what a server sends ---------------------------------------------------------------
class _Session(Protocol):
    """What the bounds on a server's messages use of its connection (:class:`_Connection`)."""

    received: int
    """Bytes of messages received from the server."""

    @property
    def label(self) -> str: ...

    def broken(self, reason: str) -> None: ...


_TOO_LARGE = "larger than the message limit"
"""Words in the error that stands for a message not read (how it is told from others)."""

_TOO_LARGE_CODE = -32_099
"""The JSON-RPC error code of the error answer that stands for a result not read (stdio)."""


def _too_large(exc: BaseException) -> bool:
    """Whether ``exc`` says a message from the server was not read for its size (the stdio
    guard's answer, the HTTP body bound's, or the SDK's own bound on an event)."""
    text = str(getattr(exc, "message", None) or exc)
    return getattr(exc, "code", None) == _TOO_LARGE_CODE or _TOO_LARGE in text or \
        bool(re.search(r"exceeded the \d+ byte limit", text))


class _StdoutGuard:
    """What a stdio server writes on stdout, bounded before the SDK reads it.

    The SDK reads a server's stdout through an incremental decoder of the ``encoding`` it is
    given (``StdioServerParameters.encoding``) and keeps everything up to a newline; this
    guard's :attr:`encoding` names a codec (UTF-8, registered once) whose decoder hands the SDK
    only whole lines, each at most :data:`MAX_MCP_MESSAGE_BYTES`, and only those that may be
    JSON-RPC (an object naming ``"jsonrpc"``):

    - a longer line is read on and dropped, keeping only its first and last few KB: a response
      becomes an error answer to its request (the call is an error observation naming the
      limit; the session goes on), a request or notification from the server is dropped, and
      one whose id cannot be read ends the session (:meth:`_Connection.broken`);
    - other lines (a banner, log lines, progress bars) are dropped; the first
      :data:`_LOGGED_LINES` are logged, the rest counted (:meth:`summary`).
    """

    _KEPT = 4096  # bytes kept of each end of a line too long to read

    def __init__(self, conn: _Session) -> None:
        self.conn = conn
        self.serial = next(_SERIALS)
        self.encoding = f"{_CODEC}{self.serial}"
        self.dropped = 0
        """Lines that were not JSON-RPC."""
        self.too_long = 0
        """Messages longer than :data:`MAX_MCP_MESSAGE_BYTES`."""
        _register_codec()
        _GUARDS[self.serial] = self

    def line(self, raw: bytes, errors: str) -> str | None:
        """A whole line as the SDK gets it (without its newline), or ``None`` to drop it."""
        text = raw.decode("utf-8", errors)
        stripped = text.strip()
        if not stripped:
            return None
        if stripped[0] == "{" and stripped[-1] == "}" and '"jsonrpc"' in stripped:
            return text
        self.dropped += 1
        if self.dropped <= _LOGGED_LINES:
            logger.warning("MCP server %s wrote a line on stdout that is not JSON-RPC "
                           "(dropped): %s", self.conn.label, _visible(stripped[:200]))
        if self.dropped == _LOGGED_LINES:
            logger.warning("MCP server %s: further such lines are dropped without logging "
                           "(their count is logged when it stops)", self.conn.label)
        return None

    def over(self, head: bytes, tail: bytes, size: int) -> str | None:
        """What stands for a line of ``size`` bytes, too long to read: an error answer to its
        request, or ``None`` (dropped)."""
        self.too_long += 1
        members = _head_members(head.decode("utf-8", "replace"))
        request_id = members.get("id", _NO_ID)
        if request_id is _NO_ID or "method" in members:
            found = _TAIL_ID.search(tail.decode("utf-8", "replace"))
            request_id = json.loads(found.group(1)) if found and "method" not in members \
                else _NO_ID
        limit = f"{size:,} bytes, {_TOO_LARGE} of {MAX_MCP_MESSAGE_BYTES:,} bytes"
        if self.too_long <= _LOGGED_LINES:
            logger.warning("MCP server %s sent a message of %s; it was not read",
                           self.conn.label, limit)
        if "method" in members:  # a request or notification from the server: dropped
            return None
        if not isinstance(request_id, (int, str)) or isinstance(request_id, bool):
            self.conn.broken(f"sent a message of {limit}, whose id could not be read; the "
                             "session was ended")
            return None
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {
            "code": _TOO_LARGE_CODE, "message": f"the message was {limit}; it was not read"}})

    def summary(self) -> None:
        """Log how many lines were dropped, if more than were logged one by one (once, when
        the session ends)."""
        if _GUARDS.pop(self.serial, None) is not None and self.dropped > _LOGGED_LINES:
            logger.warning("MCP server %s wrote %d lines on stdout that were not JSON-RPC "
                           "(dropped)", self.conn.label, self.dropped)


class _GuardedDecoder(codecs.IncrementalDecoder):
    """The decoder the SDK reads a stdio server's stdout with (see :class:`_StdoutGuard`):
    bytes in, whole lines out; holds at most :data:`MAX_MCP_MESSAGE_BYTES` of a line."""

    def __init__(self, serial: int, errors: str = "strict") -> None:
        super().__init__(errors)
        guard = _GUARDS.get(serial)
        if guard is None:  # only if the SDK decodes outside a session
            raise LookupError(f"{_CODEC}{serial} belongs to no MCP server")
        self.guard = guard
        self.line = bytearray()
        self.size = 0
        """Bytes of the current line when it is too long (then only its ends are kept)."""
        self.head = b""
        self.tail = b""

    def decode(self, input: Buffer, final: bool = False) -> str:
        data = bytes(input)
        self.guard.conn.received += len(data)
        out: list[str] = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            self._add(data[start:] if end < 0 else data[start:end])
            if end < 0:
                break
            text = self._done()
            if text is not None:
                out.append(text + "\n")
            start = end + 1
        return "".join(out)

    def _add(self, piece: bytes) -> None:
        kept = _StdoutGuard._KEPT
        if self.size:
            self.size += len(piece)
            self.tail = (self.tail + piece[-kept:])[-kept:]
        elif len(self.line) + len(piece) <= MAX_MCP_MESSAGE_BYTES:
            self.line += piece
        else:
            self.size = len(self.line) + len(piece)
            self.head = bytes(self.line[:kept]) + piece[:max(0, kept - len(self.line))]
            self.tail = (bytes(self.line[-kept:]) + piece[-kept:])[-kept:]
            self.line = bytearray()

    def _done(self) -> str | None:
        if self.size:
            size, head, tail = self.size, self.head, self.tail
            self.size, self.head, self.tail = 0, b"", b""
            return self.guard.over(head, tail, size)
        raw = bytes(self.line)
        self.line = bytearray()
        return self.guard.line(raw, self.errors)

    def reset(self) -> None:
        self.line, self.size, self.head, self.tail = bytearray(), 0, b"", b""


_CODEC = "react_agent_mcp_stdout_"
_SERIALS = itertools.count(1)
_GUARDS: dict[int, _StdoutGuard] = {}
_REGISTERED = threading.Lock()
_registered: list[bool] = []


def _register_codec() -> None:
    """Register the codec of :class:`_StdoutGuard` (once per process)."""
    with _REGISTERED:
        if not _registered:
            codecs.register(_find_codec)
            _registered.append(True)


def _find_codec(name: str) -> codecs.CodecInfo | None:
    if not name.startswith(_CODEC) or not name[len(_CODEC):].isdigit():
        return None
    utf8 = codecs.lookup("utf-8")
    return codecs.CodecInfo(
        utf8.encode, utf8.decode, name=name, incrementalencoder=utf8.incrementalencoder,
        incrementaldecoder=functools.partial(_GuardedDecoder, int(name[len(_CODEC):])),
        streamreader=utf8.streamreader, streamwriter=utf8.streamwriter)


_NO_ID = object()
_TAIL_ID = re.compile(r'[,{]\s*"id"\s*:\s*(-?\d{1,20}|"(?:[^"\\]|\\.){0,200}")\s*\}\s*$')
"""The id of a message that ends with it (``{"result": ..., "jsonrpc": "2.0", "id": 7}``, as
the TypeScript SDK writes): the ``}`` after it closes the message, so it is at the top."""


def _head_members(head: str) -> dict[str, Any]:
    """The top-level members of a JSON object that begins with ``head``, as far as ``head``
    holds them whole (a member cut off by its end is there with the value ``None``)."""
    decoder = json.JSONDecoder()
    members: dict[str, Any] = {}
    at = _skip_space(head, 0)
    if head[at:at + 1] != "{":
        return members
    at += 1
    while True:
        at = _skip_space(head, at)
        try:
            key, at = decoder.raw_decode(head, at)
        except ValueError:
            return members
        at = _skip_space(head, at)
        if not isinstance(key, str) or head[at:at + 1] != ":":
            return members
        at = _skip_space(head, at + 1)
        try:
            members[key], at = decoder.raw_decode(head, at)
        except (ValueError, RecursionError):
            members[key] = None
            return members
        at = _skip_space(head, at)
        if head[at:at + 1] != ",":
            return members
        at += 1


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


@functools.cache
def _bounded_body() -> tuple[type[Any], type[Exception]]:
    """The HTTP body wrapper of :meth:`_Connection._bound_response` and its error (made when
    first needed: ``httpx2`` comes with the ``mcp`` extra)."""
    import httpx2

    class BodyTooLarge(httpx2.StreamError):
        """A body over the limit (a ``StreamError``: the SDK makes it an error answer to the
        request, and the session goes on)."""

    class BoundedBody(httpx2.AsyncByteStream):
        def __init__(self, stream: Any, conn: _Session, limit: int | None,
                     encoding: str | None) -> None:
            self.stream, self.conn, self.limit, self.encoding = stream, conn, limit, encoding

        async def __aiter__(self) -> Any:
            if self.encoding is not None:  # asked for identity: its decoded size is unknown
                raise BodyTooLarge(f"the body is encoded ({self.encoding[:40]}), so it may be "
                                   f"{_TOO_LARGE} of {MAX_MCP_MESSAGE_BYTES:,} bytes")
            read = 0
            async for chunk in self.stream:
                read += len(chunk)
                self.conn.received += len(chunk)
                if self.limit is not None and read > self.limit:
                    raise BodyTooLarge(f"the body is {_TOO_LARGE} of {self.limit:,} bytes; it "
                                       "was not read")
                yield chunk

        async def aclose(self) -> None:
            await self.stream.aclose()

    return BoundedBody, BodyTooLarge


class _StderrTail:
    """A pipe for a server's stderr, drained by a daemon thread that keeps only the end."""

    def __init__(self, limit: int = STDERR_KEPT_BYTES) -> None:
        read_fd, write_fd = os.pipe()
        self.writer = os.fdopen(write_fd, "w")
        self._reader = read_fd
        self._limit = limit
        self._kept = bytearray()
        self.total = 0
        """Bytes read from the server's stderr in all."""
        self._last = time.monotonic()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="react-agent:mcp-stderr",
                                        daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        try:
            while True:
                chunk = os.read(self._reader, 65536)
                if not chunk:
                    break
                with self._lock:
                    self._kept += chunk
                    self.total += len(chunk)
                    if len(self._kept) > self._limit:
                        del self._kept[: len(self._kept) - self._limit]
                    self._last = time.monotonic()
        except OSError:
            pass
        finally:
            os.close(self._reader)

    def text(self) -> str:
        with self._lock:
            return self._kept.decode("utf-8", "replace")

    def tail(self, lines: int, chars: int, settle: bool = False) -> str:
        """The last ``lines`` non-empty lines, at most ``chars`` characters; with ``settle``,
        first wait (at most 0.5 s) until nothing has arrived for 50 ms, so that what a dying
        server wrote last is there."""
        if settle:
            start = time.monotonic()
            while time.monotonic() - start < 0.5 and \
                    time.monotonic() - max(start, self._last) < 0.05:
                time.sleep(0.01)
        kept = [line.rstrip() for line in self.text().splitlines() if line.strip()]
        text = "\n".join(kept[-lines:])
        return text if len(text) <= chars else "..." + text[-chars:]

    def close(self) -> None:
        """Close the writing end (after the server has stopped): the drain ends."""
        with suppress(OSError):
            self.writer.close()
        self._thread.join(0.5)
