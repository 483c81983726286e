"""The connections to MCP servers: one background event loop (:class:`_Runtime`) and one
session per server on it (:class:`_Connection`): started within its start-up time, its tools
listed page by page (each chosen by the allow and deny lists and its schema flattened by
:func:`react_agent.tools.schema.flatten`), its calls made from any thread within their
timeout, its faults turned into errors written for the model or the user."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..._version import __version__
from ...errors import ConfigError, ToolDefinitionError
from ..schema import flatten
from ._config import (
    _CLOSE_SECONDS,
    _GRACE,
    _MAX_PAGES,
    MAX_DESCRIPTION_CHARS,
    MAX_MCP_LISTING_BYTES,
    MAX_MCP_MESSAGE_BYTES,
    MAX_MCP_TOOL_NAME_CHARS,
    MAX_MCP_TOOLS,
    MCPCallError,
    MCPRequestError,
    MCPServerConfig,
    MCPServerStopped,
    MCPTimeout,
    _allowed,
    _Choice,
    _first_line,
    _indent,
    _server_name,
    _server_name_from,
    _size,
    _visible,
    logger,
    tool_name,
)
from ._results import observation
from ._stdio import _bounded_body, _StderrTail, _StdoutGuard, _too_large

if TYPE_CHECKING:
    from mcp import Client


# -- the event loop and the connections ---------------------------------------------------------
class _Runtime:
    """The background event loop thread and the connections on it (kept apart from the toolbox
    so that the toolbox's finalizer can close them)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._serve, name="react-agent:mcp", daemon=True)
        self.connections: list[_Connection] = []
        self.pending: set[concurrent.futures.Future[Any]] = set()
        self.lock = threading.Lock()
        self.closing = False
        self.thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            with suppress(BaseException):  # the loop is going away either way
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    def submit(self, coroutine: Any) -> concurrent.futures.Future[Any]:
        """Run ``coroutine`` on the loop; its future is cancelled if the toolbox closes."""
        with self.lock:
            if self.closing:
                coroutine.close()
                raise MCPServerStopped("the MCP toolbox was closed; its tools cannot be used.")
            future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
            self.pending.add(future)
        future.add_done_callback(self._forget)
        return future

    def _forget(self, future: concurrent.futures.Future[Any]) -> None:
        with self.lock:
            self.pending.discard(future)

    def start(self, connections: list[_Connection]) -> None:
        """Start every server at once; all of them, or a ConfigError naming each that failed.
        Bounded in time even if the loop is stuck (the start-up timeouts work on it)."""
        self.connections = connections
        future = self.submit(_start_all(connections))
        limit = max(float(c.config.startup_timeout) for c in connections)  # type: ignore[arg-type]
        deadline = time.monotonic() + limit + 2 * _CLOSE_SECONDS
        while True:  # in slices: a Ctrl-C (also one raised from another thread) ends the wait
            try:
                problems: list[str] = future.result(0.25)
                break
            except concurrent.futures.TimeoutError:
                if time.monotonic() > deadline:
                    future.cancel()
                    shown = ", ".join(c.config.shown for c in connections)
                    raise ConfigError(f"The MCP servers ({shown}) were not ready within "
                                      f"{limit:g} s.") from None
        if problems:
            raise ConfigError("\n".join(problems))

    def close(self) -> None:
        """Stop the servers and the loop; bounded in time; safe to call from any thread."""
        with self.lock:
            if self.closing:
                return
            self.closing = True
            pending = list(self.pending)
        for future in pending:
            future.cancel()
        if not self.loop.is_closed() and self.thread.is_alive():
            if threading.current_thread() is self.thread:  # cannot wait on itself
                for conn in self.connections:
                    conn.stop.set()
                self.loop.call_soon(self.loop.stop)
                return
            try:
                stopping = asyncio.run_coroutine_threadsafe(
                    _stop_all(self.connections), self.loop)
                stopping.result(_CLOSE_SECONDS + 2)
            except (concurrent.futures.TimeoutError, RuntimeError):
                logger.warning("MCP servers did not stop within %g s; abandoned", _CLOSE_SECONDS)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # closing never raises
                logger.warning("Stopping the MCP servers failed: %s", _visible(str(exc)))
            with suppress(RuntimeError):  # the loop is already closed
                self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(2)
        for conn in self.connections:
            if conn.stderr:
                conn.stderr.close()
            if conn.guard:
                conn.guard.summary()


async def _start_all(connections: list[_Connection]) -> list[str]:
    results = await asyncio.gather(*(c.start() for c in connections), return_exceptions=True)
    problems = [str(r) for r in results if isinstance(r, BaseException)]
    if problems:
        await _stop_all(connections)
    return problems


async def _stop_all(connections: list[_Connection]) -> None:
    for conn in connections:
        conn.stop.set()
        if conn.task is not None and not conn.connected:  # still starting: nothing to end
            conn.task.cancel()
    tasks = [c.task for c in connections if c.task is not None and not c.task.done()]
    if not tasks:
        return
    _, running = await asyncio.wait(tasks, timeout=_CLOSE_SECONDS)
    for task in running:
        task.cancel()
    if running:
        await asyncio.wait(running, timeout=2)


@dataclass(eq=False)
class _Connection:
    """One server: its config, its session (a task on the runtime's loop) and its tools."""

    config: MCPServerConfig
    runtime: _Runtime
    choice: _Choice
    """The toolbox's allow and deny lists (the server's own are in its config)."""
    name: str = ""
    client: Client | None = None
    offers: list[_Offer] = field(default_factory=list)
    """The tools chosen, their schemas flattened (at most :data:`MAX_MCP_TOOLS`)."""
    chosen: int = 0
    """How many tools the allow and deny lists chose (also beyond :data:`MAX_MCP_TOOLS`)."""
    listed: list[tuple[str, ...]] = field(default_factory=list)
    """The names of every tool listed (as the model, the server-prefixed form and the server
    name it), chosen or not: what the allow and deny patterns are checked against."""
    notes: list[str] = field(default_factory=list)
    """What was changed or left out, each line starting ``server/tool: ``."""
    protocol: str | None = None
    server_info: dict[str, Any] | None = None
    stderr: _StderrTail | None = None
    guard: _StdoutGuard | None = None
    received: int = 0
    """Bytes of messages received from the server (stdio lines, HTTP bodies)."""
    task: asyncio.Task[None] | None = None
    stopped: str | None = None
    """Why the server can no longer be used (``None`` while it can)."""
    connected: bool = False
    """Whether the server started and listed its tools."""
    fault: str | None = None
    """How the server broke the protocol, if it did (see :meth:`broken`)."""

    def __post_init__(self) -> None:
        self.name = self.config.name or _server_name_from(self.config)
        self.stop = asyncio.Event()

    @property
    def timeout(self) -> float | None:
        value = self.config.timeout
        return None if value is None or value is ... else float(value)

    @property
    def label(self) -> str:
        """The server in a log line: its name once known, else its command or URL."""
        if self.connected or self.config.name is not None:
            return self.name
        return f"`{self.config.shown}`"

    @property
    def where(self) -> str:
        kind = "at" if self.config.is_url else "started as"
        return f"the MCP server {self.name!r} ({kind} `{self.config.shown}`)"

    # -- start and stop ------------------------------------------------------------------------
    async def start(self) -> None:
        """Connect, list the tools; raises ``_StartError`` (message for the user) on failure."""
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        ready.add_done_callback(_retrieved)  # no "exception never retrieved" after a give-up
        self.task = asyncio.ensure_future(self._session(ready))
        limit = float(self.config.startup_timeout)  # type: ignore[arg-type]  # resolved
        try:
            await asyncio.wait_for(asyncio.shield(ready), limit)
        except asyncio.TimeoutError:
            self.task.cancel()
            await asyncio.wait({self.task}, timeout=_CLOSE_SECONDS)
            raise _StartError(self._start_failure(
                f"did not finish starting within {limit:g} s (no answer to initialize or to "
                "the tool listing)")) from None
        except asyncio.CancelledError:  # the toolbox is closing (Ctrl-C while starting)
            self.task.cancel()
            raise
        except Exception as exc:
            await asyncio.wait({self.task}, timeout=_CLOSE_SECONDS)
            raise _StartError(self._start_failure(self.fault or _describe_start_error(exc))
                              ) from None

    def _start_failure(self, what: str) -> str:
        text = f"MCP server `{self.config.shown}`: {what}."
        tail = self.stderr.tail(20, 3000, settle=True) if self.stderr else ""
        if tail:
            text += f"\nIts stderr ends with:\n{_indent(tail)}"
        if "within" in what:
            text += "\n(A slow first start, such as npx downloading a package, may need a " \
                "longer startup_timeout.)"
        return text

    def broken(self, reason: str) -> None:
        """The session cannot go on (the server broke the protocol): end it; calls waiting
        and later calls are error observations that say ``reason`` (while starting: the
        start fails with it)."""
        if self.stopped is None:
            self.stopped = f"{self.where} {reason}"
        self.fault = self.fault or reason
        self.stop.set()
        if not self.connected and self.task is not None:
            self.task.cancel()

    async def _session(self, ready: asyncio.Future[None]) -> None:
        """The server's whole session: connect, list tools, wait for the stop, disconnect."""
        try:
            async with AsyncExitStack() as stack:
                client = await self._connect(stack)
                self.client = client
                self.protocol = client.protocol_version
                info = client.server_info
                self.server_info = None if info is None else {"name": str(info.name)[:200],
                                                              "version": str(info.version)[:200]}
                if self.config.name is None and info is not None and info.name:
                    self.name = _server_name(str(info.name)[:200]) or self.name
                await self._list_tools(client)
                self.connected = True
                if not ready.done():
                    ready.set_result(None)
                await self.stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else
                                    RuntimeError(f"stopped ({type(exc).__name__})"))
            if self.stopped is None:
                self.stopped = f"{self.where} was stopped"
            if not isinstance(exc, (Exception, asyncio.CancelledError)):
                raise
        finally:
            if self.stopped is None:
                self.stopped = f"{self.where} was closed"
            if self.guard is not None:
                self.guard.summary()

    async def _connect(self, stack: AsyncExitStack) -> Client:
        from mcp import Client, Implementation

        transport: Any
        if self.config.is_url:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            http = await stack.enter_async_context(httpx2.AsyncClient(
                # identity: the bound on a body is on the bytes as they are read
                headers={**dict(self.config.headers or {}), "Accept-Encoding": "identity"},
                timeout=httpx2.Timeout(30.0, read=300.0),
                event_hooks={"response": [self._bound_response]},
            ))
            assert isinstance(self.config.target, str)
            transport = streamable_http_client(self.config.target.strip(), http_client=http,
                                               max_sse_event_size=MAX_MCP_MESSAGE_BYTES)
        else:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            argv = self.config.argv
            self.guard = _StdoutGuard(self)
            params = StdioServerParameters(
                command=argv[0], args=argv[1:], env=dict(self.config.env or {}) or None,
                cwd=self.config.cwd, encoding=self.guard.encoding,
                encoding_error_handler="replace",
            )
            self.stderr = _StderrTail()
            transport = stdio_client(params, errlog=self.stderr.writer)
        client = Client(transport, client_info=Implementation(name="react-agent",
                                                               version=__version__))
        return await stack.enter_async_context(client)

    async def _bound_response(self, response: Any) -> None:
        """An HTTP response's body is read at most to :data:`MAX_MCP_MESSAGE_BYTES` (an event
        stream is bounded per event by the SDK, with the same limit)."""
        kind = response.headers.get("content-type", "").lower()
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        response.stream = _bounded_body()[0](
            response.stream, self, None if kind.startswith("text/event-stream") else
            MAX_MCP_MESSAGE_BYTES, encoding if encoding not in ("", "identity") else None)

    async def _list_tools(self, client: Client) -> None:
        """Every page of the tool listing, each tool chosen and made usable at once (so that
        no page is kept); bounded in pages and bytes."""
        cursor: str | None = None
        seen: set[str] = set()
        start = self.received
        for _ in range(_MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            for remote in page.tools:
                self._offer(remote, seen)
                await asyncio.sleep(0)  # the start-up timeout may fire between two tools
            if self.received - start > MAX_MCP_LISTING_BYTES:
                raise _ServerFault(f"its tool listing is larger than "
                                   f"{_size(MAX_MCP_LISTING_BYTES)}")
            cursor = page.next_cursor
            if not cursor:
                return
        raise _ServerFault(f"its tool listing did not end after {_MAX_PAGES} pages")

    def _offer(self, remote: Any, seen: set[str]) -> None:
        """One tool of the listing: chosen or not by the allow and deny lists; if chosen, its
        schema flattened (or the tool left out, with a note saying why)."""
        original = str(getattr(remote, "name", "") or "")
        if not original or original in seen:
            return
        if len(original) > MAX_MCP_TOOL_NAME_CHARS:
            self.listed.append((original,))  # listed (a pattern that names it is no typo)
            self.notes.append(f"{self.name}/{original[:60]}...: left out: its name is longer "
                              f"than {MAX_MCP_TOOL_NAME_CHARS} characters")
            return
        seen.add(original)
        base = tool_name(original)
        shown = (base, f"{self.name}.{base}", original)
        self.listed.append(shown)
        if not _allowed(self.config.allow, self.config.deny, shown) or \
                not _allowed(self.choice.allow, self.choice.deny, shown):
            return
        self.chosen += 1
        if self.chosen > MAX_MCP_TOOLS:  # counted, not made usable: the start fails
            return
        try:
            parameters, notes = flatten(getattr(remote, "input_schema", None))
        except ToolDefinitionError as exc:
            self.chosen -= 1
            self.notes.append(f"{self.name}/{original}: left out: {exc}")
            return
        self.notes.extend(f"{self.name}/{original}: {n}" for n in notes)
        self.offers.append(_Offer(original, base, _description(remote, self), parameters))

    # -- calls ---------------------------------------------------------------------------------
    def call(self, tool: str, args: dict[str, Any]) -> str:
        """Call ``tool`` (the server's name for it) from any thread; the observation text.

        Raises:
            MCPCallError: the call failed; the message is for the model.
        """
        if self.stopped is not None:
            raise MCPServerStopped(self._stopped_text())
        future = self.runtime.submit(self._call(tool, args))
        limit = None if self.timeout is None else self.timeout + _GRACE
        try:
            result = future.result(limit)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise MCPTimeout(f"{self.where} did not answer within {self.timeout:g} s; the call "
                             "was cancelled.") from None
        except concurrent.futures.CancelledError:
            raise MCPServerStopped("the MCP toolbox was closed during the call.") from None
        except BaseException:  # KeyboardInterrupt in this thread: the call goes with it
            future.cancel()
            raise
        return observation(result)

    async def _call(self, tool: str, args: dict[str, Any]) -> Any:
        from mcp import MCPError

        client = self.client
        if client is None or self.stopped is not None:
            raise MCPServerStopped(self._stopped_text())
        try:
            limit = None if self.timeout is None else self.timeout + _GRACE  # the invoker's
            return await asyncio.wait_for(client.call_tool(tool, args), limit)  # timeout first
        except asyncio.TimeoutError:
            raise MCPTimeout(f"{self.where} did not answer within {self.timeout:g} s; the call "
                             "was cancelled.") from None
        except MCPError as exc:
            if _too_large(exc):
                raise MCPRequestError(
                    f"the result of {tool} from {self.where} is larger than "
                    f"{_size(MAX_MCP_MESSAGE_BYTES)} (the most read of one message from an MCP "
                    "server); it was not read. Ask for less at a time.") from None
            if _is_closed(exc):
                if self.stopped is None:
                    self.stopped = f"{self.where} stopped (connection closed) during a call " \
                        f"of {tool}"
                raise MCPServerStopped(self._stopped_text()) from None
            raise MCPRequestError(f"{self.where} refused the call of {tool}: "
                                  f"{exc} (code {exc.code}).") from None
        except (MCPCallError, asyncio.CancelledError):
            raise
        except Exception as exc:  # transport failures, results that break the protocol
            if self.client is None or _looks_closed(exc):
                self.stopped = f"{self.where} stopped during a call of {tool}"
                raise MCPServerStopped(self._stopped_text()) from None
            raise MCPRequestError(f"the call of {tool} on {self.where} failed: "
                                  f"{type(exc).__name__}: {_first_line(exc)}") from None

    def _stopped_text(self) -> str:
        text = f"{self.stopped or self.where + ' is not running'}; its tools cannot be used " \
            "any more in this run. Continue without them."
        tail = self.stderr.tail(6, 800, settle=True) if self.stderr else ""
        return f"{text}\nThe server's stderr ends with:\n{_indent(tail)}" if tail else text


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


class _StartError(Exception):
    """A server could not be started; the message is for the user."""


class _ServerFault(Exception):
    """The server broke a bound while starting; the message says which (for the user)."""


def _is_closed(exc: Any) -> bool:
    from mcp_types import CONNECTION_CLOSED

    return getattr(exc, "code", None) == CONNECTION_CLOSED


def _looks_closed(exc: BaseException) -> bool:
    import anyio

    return isinstance(exc, (anyio.ClosedResourceError, anyio.BrokenResourceError,
                            anyio.EndOfStream, ConnectionError, EOFError))


def _describe_start_error(exc: BaseException) -> str:
    if isinstance(exc, _ServerFault):
        return str(exc)
    if _too_large(exc):
        return f"it sent a message larger than {_size(MAX_MCP_MESSAGE_BYTES)} (the most read " \
            "of one message from an MCP server)"
    if isinstance(exc, FileNotFoundError):
        return f"the command was not found ({exc.strerror or exc}: {exc.filename!r})"
    if isinstance(exc, PermissionError):
        return f"the command cannot be run ({exc.strerror or exc})"
    if _is_closed(exc) or _looks_closed(exc):
        return "the server exited (or closed the connection) while starting"
    inner = getattr(exc, "exceptions", None)  # an exception group (anyio's task groups)
    if isinstance(inner, (list, tuple)) and inner and isinstance(inner[0], BaseException):
        return _describe_start_error(inner[0])
    return f"cannot connect: {type(exc).__name__}: {_first_line(exc)}"


@dataclass(frozen=True)
class _Offer:
    """A tool a server offers, chosen and made usable (its schema flattened)."""

    original: str
    """The server's name of the tool."""
    base: str
    """That name mapped onto the Toolbox's rule."""
    description: str
    parameters: dict[str, Any]


def _description(remote: Any, conn: _Connection) -> str:
    text = str(getattr(remote, "description", None) or getattr(remote, "title", None) or "")
    text = text.strip() or f"The tool {remote.name} of the MCP server {conn.name} (it gives no " \
        "description)."
    if len(text) > MAX_DESCRIPTION_CHARS:
        text = text[:MAX_DESCRIPTION_CHARS].rstrip() + " [...]"
    return text
