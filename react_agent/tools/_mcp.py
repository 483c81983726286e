"""Tools from MCP servers: :class:`MCPToolbox`, a :class:`Toolbox` whose tools call Model Context
Protocol servers, each given as a command line (stdio) or a URL (streamable HTTP).

The official ``mcp`` SDK (the ``mcp`` extra: ``pip install '.[mcp]'`` in a clone) talks to the
servers on an event loop in a background thread that the toolbox owns; a tool call made in any
thread (the agent's sync API runs tools in the calling thread or in worker threads, its async API
in worker threads) is handed to that loop and waited for, at most the server's ``timeout``.
The sessions stay open until :meth:`MCPToolbox.close` (or the end of a ``with`` block, or the
end of the program); closing stops every server process.

What servers send is made usable for a small model and for the invoker:

- each tool's input schema is flattened (:func:`tool_parameters`): ``$ref``/``$defs`` resolved
  in place (a schema that refers to itself is cut after :data:`REF_CUT_DEPTH` levels, and says
  so), ``anyOf`` with ``null`` written as a type list, older drafts' keywords rewritten, what
  the validator cannot take dropped, the fields of nested objects described in words; the result
  passes :func:`react_agent.tools._schema.check_valid`;
- tool names are mapped onto the Toolbox's name rule; names two servers share get the server's
  name as a prefix (``server.tool``); allow and deny lists (``fnmatch`` patterns) choose tools;
- each result becomes one observation (:func:`observation`): text parts, structured content as
  JSON, a short placeholder for images, audio and binary resources; an ``isError`` result is an
  error observation.

Faults never hang a run and never lose it: a call that takes longer than its timeout is
abandoned (and cancelled on the server), a server that dies during a call or before it is an
error observation naming the server, its command and the tail of its stderr; a server that
cannot start, or does not answer ``initialize`` within ``startup_timeout``, is a
:class:`~react_agent.errors.ConfigError` before any run. A server's stderr is drained all the
time and only its last :data:`STDERR_KEPT_BYTES` bytes are kept.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import dataclasses
import fnmatch
import hashlib
import json
import logging
import os
import re
import shlex
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field
from types import EllipsisType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .._lexical import did_you_mean
from ..errors import ConfigError, ReactAgentError, ToolDefinitionError, install_hint
from . import _schema as json_schema
from ._toolbox import DEFAULT_TOOL_TIMEOUT, Tool, Toolbox

if TYPE_CHECKING:
    from mcp import Client

logger = logging.getLogger("react_agent.mcp")

DEFAULT_MCP_TIMEOUT: float = 60.0
"""Seconds one MCP tool call may take before it is abandoned (and cancelled on the server) and
the model is told it timed out; a server's ``timeout`` overrides it (``None``: no limit)."""

DEFAULT_MCP_STARTUP_TIMEOUT: float = 60.0
"""Seconds a server has to start and answer ``initialize`` (and list its tools)."""

REF_CUT_DEPTH = 3
"""How many times a ``$ref`` may be expanded inside its own expansion (a schema that refers to
itself, such as a tree); deeper, the schema is cut and says so."""

STDERR_KEPT_BYTES = 64 * 1024
"""How much of the end of a server's stderr is kept (for error messages); the rest is read and
dropped, so a server that floods stderr neither blocks nor fills memory."""

MAX_DESCRIPTION_CHARS = 2000
"""Longer tool descriptions from a server are cut (they all go into the system prompt)."""

_CLOSE_SECONDS = 10.0
"""How long closing waits for the servers to stop (the SDK's own shutdown of a stdio server is
bounded: stdin closed, then SIGTERM, then SIGKILL, a few seconds in all)."""

_GRACE = 0.5
"""The toolbox gives up on a call this long after the invoker's own timeout fired (so the
invoker reports the timeout, and the call is then cancelled on the server)."""

_MAX_PAGES = 100
"""At most this many pages of ``tools/list`` are read (a server that never stops paging)."""

_RAW_MAX_NODES = 100_000
_RAW_MAX_DEPTH = 100
"""A schema from a server larger or deeper than this is not walked at all (it is replaced by an
open one, and a note says so)."""

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")


class MCPCallError(ReactAgentError):
    """A call of an MCP tool failed; the message, written for the model, says why."""


class MCPToolError(MCPCallError):
    """The server ran the tool and it reported an error (an ``isError`` result)."""


class MCPServerStopped(MCPCallError):
    """The server is gone: it exited or closed the connection (during this call or before)."""


class MCPRequestError(MCPCallError):
    """The server refused the request (a JSON-RPC error such as invalid parameters), or the
    transport failed."""


class MCPTimeout(MCPCallError):
    """The server did not answer within its timeout; the call was cancelled."""


# -- servers -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class MCPServerConfig:
    """One MCP server and how to use it.

    Attributes:
        target: a command line (``"python -m mcp_server_time"``, split like a shell does, or a
            list of arguments) started as a subprocess and spoken to over stdio; or an
            ``http://``/``https://`` URL of a streamable HTTP endpoint.
        name: the server's name (prefix of its tools' names when they clash, or with
            ``prefix``; shown in errors); default: the name the server gives, else one taken
            from the command or URL.
        timeout: seconds one call may take (``None``: no limit); default: the toolbox's.
        startup_timeout: seconds to start, answer ``initialize`` and list the tools; default:
            the toolbox's.
        allow: if given, only tools whose name matches one of these ``fnmatch`` patterns (the
            server's own name of the tool, or the name the model sees).
        deny: tools whose name matches one of these patterns are left out.
        prefix: give every tool of this server the prefix ``name.`` (not only those whose
            names clash with another server's).
        env: environment variables for a stdio server, added to the safe defaults the SDK
            passes (``PATH``, ``HOME``, ...).
        cwd: working directory of a stdio server.
        headers: HTTP headers for a URL server (e.g. ``Authorization``).
        requires_approval: every tool of this server asks the agent's approver before a call.
    """

    target: str | Sequence[str]
    name: str | None = None
    timeout: float | EllipsisType | None = ...
    startup_timeout: float | EllipsisType = ...
    allow: Sequence[str] | None = None
    deny: Sequence[str] = ()
    prefix: bool = False
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    headers: Mapping[str, str] | None = None
    requires_approval: bool = False

    @property
    def is_url(self) -> bool:
        """Whether this server is reached over streamable HTTP (else: a stdio subprocess)."""
        return isinstance(self.target, str) and self.target.strip().lower().startswith(
            ("http://", "https://"))

    @property
    def argv(self) -> list[str]:
        """The command and its arguments (a stdio server)."""
        if isinstance(self.target, str):
            try:
                return shlex.split(self.target)
            except ValueError as exc:
                raise ConfigError(f"MCP server {self.target!r}: cannot split the command line: "
                                  f"{exc}.") from exc
        return [str(a) for a in self.target]

    @property
    def shown(self) -> str:
        """The command line or URL as it is shown in messages (a URL without credentials or
        query)."""
        if self.is_url:
            assert isinstance(self.target, str)
            parts = urlsplit(self.target.strip())
            host = parts.hostname or ""
            if ":" in host:
                host = f"[{host}]"
            port = f":{parts.port}" if parts.port else ""
            return f"{parts.scheme}://{host}{port}{parts.path}"
        return shlex.join(self.argv)


# -- the toolbox -------------------------------------------------------------------------------
class MCPToolbox(Toolbox):
    """A :class:`Toolbox` holding the tools of one or more MCP servers (and any Python tools
    added to it, as to any toolbox).

    Connecting happens here: every server is started (in parallel) and asked for its tools.
    Use it as a context manager (or call :meth:`close`) to stop the servers; they are also
    stopped when the program ends.

    Example::

        with MCPToolbox("python -m mcp_server_time", "http://127.0.0.1:8000/mcp") as toolbox:
            toolbox.add(word_count)  # Python tools mix in
            result = Agent(model, toolbox).run("What time is it in Tokyo?")

    Args:
        *servers: each a command line, a URL or an :class:`MCPServerConfig`.
        timeout: seconds one call may take, for servers that set none (``None``: no limit).
        startup_timeout: seconds each server has to start, for servers that set none.
        allow: ``fnmatch`` patterns of the tools to keep, for every server (see
            :attr:`MCPServerConfig.allow`).
        deny: patterns of the tools to leave out, for every server.
        default_timeout: the timeout of Python tools added later (as for :class:`Toolbox`).

    Raises:
        ConfigError: a server cannot be started, exits or does not answer within its start-up
            time (the message names its command and ends with its stderr), the ``mcp`` package
            is not installed, or the servers' tools cannot share one toolbox.
    """

    def __init__(
        self,
        *servers: str | Sequence[str] | MCPServerConfig,
        timeout: float | None = DEFAULT_MCP_TIMEOUT,
        startup_timeout: float = DEFAULT_MCP_STARTUP_TIMEOUT,
        allow: Sequence[str] | None = None,
        deny: Sequence[str] = (),
        default_timeout: float | None = DEFAULT_TOOL_TIMEOUT,
    ) -> None:
        super().__init__(default_timeout=default_timeout)
        if not servers:
            raise ConfigError("MCPToolbox needs at least one server: a command line, a URL or "
                              "an MCPServerConfig.")
        configs = [_resolve(s, timeout, startup_timeout) for s in servers]
        _require_sdk()
        self.notes: list[str] = []
        """What was changed or left out to make the servers' tools usable, in words."""
        self._runtime = _Runtime()
        self._finalizer = weakref.finalize(self, self._runtime.close)
        try:
            self._runtime.start([_Connection(c, self._runtime) for c in configs])
            for tool in _tools(self._runtime.connections, allow, deny, self.notes):
                self.add_tool(tool)
        except ToolDefinitionError as exc:
            self.close()
            raise ConfigError(f"The MCP servers' tools cannot be used together: {exc}") from exc
        except BaseException:
            self.close()
            raise
        for note in self.notes:
            logger.warning("%s", _visible(note))

    # -- lifetime ------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop every server (calls still running end with an error observation). Idempotent;
        never raises (but ``KeyboardInterrupt``)."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (or the program is ending)."""
        return not self._finalizer.alive

    def __enter__(self) -> MCPToolbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> MCPToolbox:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.close)

    # -- what is there -------------------------------------------------------------------------
    @property
    def servers(self) -> list[dict[str, Any]]:
        """One entry per server: ``name``, ``target`` (command line or URL), ``protocol``
        (the version agreed), ``server`` (the name and version it reports), ``tools`` (the
        names the model sees) and ``alive``."""
        return [
            {"name": c.name, "target": c.config.shown, "protocol": c.protocol,
             "server": c.server_info, "tools": [t for t in self.names if self[t].group == c.name],
             "alive": c.stopped is None and not self.closed}
            for c in self._runtime.connections
        ]

    def server_log(self, name: str) -> str:
        """The end of a stdio server's stderr as kept so far (at most :data:`STDERR_KEPT_BYTES`);
        ``""`` for URL servers.

        Raises:
            KeyError: no server has this name.
        """
        for conn in self._runtime.connections:
            if conn.name == name:
                return conn.stderr.text() if conn.stderr else ""
        raise KeyError(name)

    def __repr__(self) -> str:
        names = ", ".join(c.name for c in self._runtime.connections)
        state = "closed" if self.closed else f"{len(self)} tools"
        return f"MCPToolbox({names}: {state})"


def _resolve(server: str | Sequence[str] | MCPServerConfig, timeout: float | None,
             startup_timeout: float) -> MCPServerConfig:
    """``server`` as a config, with the toolbox's timeouts where it sets none; checked."""
    config = server if isinstance(server, MCPServerConfig) else MCPServerConfig(server)
    if config.timeout is ...:
        config = _replace(config, timeout=timeout)
    if config.startup_timeout is ...:
        config = _replace(config, startup_timeout=startup_timeout)
    where = f"MCP server {config.target!r}"
    if isinstance(config.timeout, (int, float)) and config.timeout <= 0:
        raise ConfigError(f"{where}: timeout must be > 0 seconds or None.")
    if not isinstance(config.startup_timeout, (int, float)) or config.startup_timeout <= 0:
        raise ConfigError(f"{where}: startup_timeout must be > 0 seconds.")
    if not config.is_url and not config.argv:
        raise ConfigError(f"{where}: give a command line (e.g. 'python -m mcp_server_time') or "
                          "an http(s):// URL.")
    if config.name is not None and not _NAME.match(config.name):
        raise ConfigError(f"{where}: name {config.name!r} is not usable: use letters, digits, "
                          "'_', '.' or '-', starting with a letter or '_'.")
    return config


def _replace(config: MCPServerConfig, **changes: Any) -> MCPServerConfig:
    return dataclasses.replace(config, **changes)


def _require_sdk() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            "MCP servers need the mcp extra (the official MCP Python SDK): "
            f"{install_hint('mcp')} ({exc})."
        ) from exc
    sdk = logging.getLogger("mcp")
    if not logging.getLogger().handlers and not any(isinstance(h, _SdkLog) for h in sdk.handlers):
        sdk.addHandler(_SdkLog())


class _SdkLog(logging.Handler):
    """The SDK's warnings and errors as one line each on this module's logger, without the
    traceback Python would otherwise print for them (e.g. for a server that writes a line that
    is not JSON-RPC on stdout). Installed only while logging is not configured."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                detail = " ".join(str(record.exc_info[1]).split())
                text += f" ({detail[:240]}{'...' if len(detail) > 240 else ''})"
            logger.warning("MCP SDK: %s", _visible(text))
        except Exception:  # a log record that cannot be shown is dropped
            pass


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
        """Start every server at once; all of them, or a ConfigError naming each that failed."""
        self.connections = connections
        future = self.submit(_start_all(connections))
        problems: list[str] = future.result()
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
    name: str = ""
    client: Client | None = None
    remote_tools: list[Any] = field(default_factory=list)
    protocol: str | None = None
    server_info: dict[str, Any] | None = None
    stderr: _StderrTail | None = None
    task: asyncio.Task[None] | None = None
    stopped: str | None = None
    """Why the server can no longer be used (``None`` while it can)."""
    connected: bool = False
    """Whether the server started and listed its tools."""

    def __post_init__(self) -> None:
        self.name = self.config.name or _server_name_from(self.config)
        self.stop = asyncio.Event()

    @property
    def timeout(self) -> float | None:
        value = self.config.timeout
        return None if value is None or value is ... else float(value)

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
            raise _StartError(self._start_failure(_describe_start_error(exc))) from None

    def _start_failure(self, what: str) -> str:
        text = f"MCP server `{self.config.shown}`: {what}."
        tail = self.stderr.tail(20, 3000, settle=True) if self.stderr else ""
        if tail:
            text += f"\nIts stderr ends with:\n{_indent(tail)}"
        if "within" in what:
            text += "\n(A slow first start, such as npx downloading a package, may need a " \
                "longer startup_timeout.)"
        return text

    async def _session(self, ready: asyncio.Future[None]) -> None:
        """The server's whole session: connect, list tools, wait for the stop, disconnect."""
        try:
            async with AsyncExitStack() as stack:
                client = await self._connect(stack)
                self.client = client
                self.protocol = client.protocol_version
                info = client.server_info
                self.server_info = None if info is None else {"name": info.name,
                                                              "version": info.version}
                self.remote_tools = await _list_tools(client)
                if self.config.name is None and info is not None and info.name:
                    self.name = _server_name(info.name) or self.name
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

    async def _connect(self, stack: AsyncExitStack) -> Client:
        from mcp import Client, Implementation

        from .. import __version__

        transport: Any
        if self.config.is_url:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            http = await stack.enter_async_context(httpx2.AsyncClient(
                headers=dict(self.config.headers or {}),
                timeout=httpx2.Timeout(30.0, read=300.0),
            ))
            assert isinstance(self.config.target, str)
            transport = streamable_http_client(self.config.target.strip(), http_client=http)
        else:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            argv = self.config.argv
            params = StdioServerParameters(
                command=argv[0], args=argv[1:], env=dict(self.config.env or {}) or None,
                cwd=self.config.cwd, encoding_error_handler="replace",
            )
            self.stderr = _StderrTail()
            transport = stdio_client(params, errlog=self.stderr.writer)
        client = Client(transport, client_info=Implementation(name="react-agent",
                                                               version=__version__))
        return await stack.enter_async_context(client)

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
            return await asyncio.wait_for(client.call_tool(tool, args), self.timeout)
        except asyncio.TimeoutError:
            raise MCPTimeout(f"{self.where} did not answer within {self.timeout:g} s; the call "
                             "was cancelled.") from None
        except MCPError as exc:
            if _is_closed(exc):
                self.stopped = f"{self.where} stopped (connection closed) during a call of " \
                    f"{tool}"
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


def _is_closed(exc: Any) -> bool:
    from mcp_types import CONNECTION_CLOSED

    return getattr(exc, "code", None) == CONNECTION_CLOSED


def _looks_closed(exc: BaseException) -> bool:
    import anyio

    return isinstance(exc, (anyio.ClosedResourceError, anyio.BrokenResourceError,
                            anyio.EndOfStream, ConnectionError, EOFError))


def _describe_start_error(exc: BaseException) -> str:
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


async def _list_tools(client: Client) -> list[Any]:
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


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


_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                     "\u2066-\u2069]")


def _visible(text: str) -> str:
    """``text`` for a log line: the characters a terminal would act on (from a server) written
    as escapes, as the command line's own printing does."""
    return _UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                       else f"\\u{ord(m.group()):04x}", text)


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else "(no message)"


# -- names -------------------------------------------------------------------------------------
def _server_name_from(config: MCPServerConfig) -> str:
    """A name for a server from its command or URL (until it names itself)."""
    if config.is_url:
        parts = urlsplit(str(config.target).strip())
        return _server_name(parts.hostname or "server") or "server"
    argv = config.argv
    words = [a for a in argv[1:] if not a.startswith("-")] if len(argv) > 1 else argv
    if "-m" in argv[:-1]:
        words = [argv[argv.index("-m") + 1]]
    word = words[-1] if words else argv[0]
    return _server_name(word) or "server"


def _server_name(text: str) -> str:
    """``text`` as a server name: its last path part, without a file extension or an npm scope
    and version, in letters, digits, ``_`` and ``-`` (at most 32)."""
    last = re.split(r"[/\\]", text.strip().rstrip("/\\"))[-1]
    last = re.sub(r"@[^@]*$", "", last) if not last.startswith("@") else last
    last = re.sub(r"\.(py|js|mjs|cjs|ts|exe)$", "", last)
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", last).strip("_-")
    if name and not re.match(r"[A-Za-z_]", name):
        name = f"_{name}"
    return name[:32]


def tool_name(name: str) -> str:
    """A server's tool name mapped onto the Toolbox's rule (letters, digits, ``_ . -``, starting
    with a letter or ``_``, at most 64): other characters become ``_``; a longer name is cut and
    ends in a short hash of the whole, so that two long names stay apart."""
    mapped = re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "_"
    if not re.match(r"[A-Za-z_]", mapped):
        mapped = f"_{mapped}"
    if len(mapped) > 64:
        digest = hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        mapped = f"{mapped[:55]}_{digest}"
    return mapped


def _matches(patterns: Iterable[str], *names: str) -> bool:
    return any(fnmatch.fnmatchcase(n, p) for p in patterns for n in names)


def _tools(connections: list[_Connection], allow: Sequence[str] | None, deny: Sequence[str],
           notes: list[str]) -> list[Tool]:
    """The tools of all servers, chosen by the allow and deny lists, named for the model."""
    _unique_server_names(connections)
    chosen: list[tuple[_Connection, Any, str]] = []
    every: list[tuple[str, ...]] = []  # the names of every tool of every server
    for conn in connections:
        seen: set[str] = set()
        names: list[tuple[str, ...]] = []
        for remote in conn.remote_tools:
            original = str(getattr(remote, "name", "") or "")
            if not original or original in seen:
                continue
            seen.add(original)
            base = tool_name(original)
            shown = (base, f"{conn.name}.{base}", original)
            names.append(shown)
            if not _allowed(conn.config.allow, conn.config.deny, shown) or \
                    not _allowed(allow, deny, shown):
                continue
            chosen.append((conn, remote, base))
        _all_match(conn.config.allow, conn.config.deny, names, f"the MCP server {conn.name!r}")
        every += names
    _all_match(allow, deny, every, "the MCP servers")
    counts: dict[str, int] = {}
    for _, _, base in chosen:
        counts[base] = counts.get(base, 0) + 1
    tools: list[Tool] = []
    taken: set[str] = set()
    for conn, remote, base in chosen:
        original = str(remote.name)
        name = base
        if conn.config.prefix or counts[base] > 1:
            name = tool_name(f"{conn.name}.{base}")
        unique, n = name, 2
        while unique in taken:
            unique = tool_name(f"{name}_{n}")
            n += 1
        taken.add(unique)
        if unique != original:
            logger.info("MCP tool %s of %s is called %r here", _visible(repr(original)),
                        conn.name, unique)
        schema = getattr(remote, "input_schema", None)
        parameters, schema_notes = tool_parameters(schema)
        notes.extend(f"{conn.name}/{original}: {n}" for n in schema_notes)
        tools.append(Tool(
            name=unique,
            description=_description(remote, conn),
            parameters=parameters,
            func=_caller(conn, original),
            timeout=conn.timeout,
            requires_approval=conn.config.requires_approval,
            group=conn.name,
        ))
    return tools


def _allowed(allow: Sequence[str] | None, deny: Sequence[str], names: tuple[str, ...]) -> bool:
    if isinstance(allow, str):  # one pattern given as a string, not a list of its letters
        allow = [allow]
    if allow is not None and not _matches(allow, *names):
        return False
    return not _matches([deny] if isinstance(deny, str) else deny, *names)


def _all_match(allow: Sequence[str] | None, deny: Sequence[str],
               names: list[tuple[str, ...]], where: str) -> None:
    """Raise ConfigError for an allow or deny pattern that matches no tool of ``names`` (a typo
    would leave the model without the tool, or with the tool it was to be denied)."""
    for kind, patterns in (("allow", allow), ("deny", deny)):
        for pattern in [patterns] if isinstance(patterns, str) else patterns or ():
            if not any(_matches([pattern], *shown) for shown in names):
                tools = sorted({shown[0] for shown in names})
                close = did_you_mean(pattern, sorted({n for shown in names for n in shown}))
                raise ConfigError(_visible(
                    f"The {kind} pattern {pattern!r} matches no tool of {where}{close}; the "
                    f"tools: {', '.join(tools[:40]) or 'none'}{' ...' if len(tools) > 40 else ''}."
                ))


def _unique_server_names(connections: list[_Connection]) -> None:
    seen: dict[str, int] = {}
    for conn in connections:
        n = seen.get(conn.name, 0) + 1
        seen[conn.name] = n
        if n > 1:
            conn.name = f"{conn.name}_{n}"


def _description(remote: Any, conn: _Connection) -> str:
    text = str(getattr(remote, "description", None) or getattr(remote, "title", None) or "")
    text = text.strip() or f"The tool {remote.name} of the MCP server {conn.name} (it gives no " \
        "description)."
    if len(text) > MAX_DESCRIPTION_CHARS:
        text = text[:MAX_DESCRIPTION_CHARS].rstrip() + " [...]"
    return text


def _caller(conn: _Connection, original: str) -> Callable[..., str]:
    def call(**args: Any) -> str:
        return conn.call(original, args)

    call.__name__ = tool_name(original)
    call.__doc__ = f"Call {original} on the MCP server {conn.name}."
    return call


# -- results -----------------------------------------------------------------------------------
def observation(result: Any) -> str:
    """A ``CallToolResult`` as the text the model reads.

    Text parts as they are, one after the other; structured content as compact JSON (once: a
    text part that only repeats it is replaced by it, and ``{"result": X}`` beside a text part
    that is X is left out); images, audio and binary resources as a
    placeholder naming the type and size; a text resource with its URI; a resource link as its
    name and URI.

    Raises:
        MCPToolError: the result is an error (``isError``); the message is the server's text.
    """
    content = list(getattr(result, "content", None) or [])
    structured = getattr(result, "structured_content", None)
    parts: list[str] = []
    shown_structured = False
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text":
            text = str(getattr(block, "text", ""))
            if structured is not None and not shown_structured and _same_json(text, structured):
                parts.append(_json(structured))
                shown_structured = True
            else:
                parts.append(text)
                shown_structured = shown_structured or _wraps(structured, text)
        else:
            parts.append(_placeholder(block))
    if structured is not None and not shown_structured:
        parts.append(_json(structured))
    text = "\n".join(p for p in parts if p != "")
    if getattr(result, "is_error", False):
        raise MCPToolError(text or "the tool reported an error and gave no details.")
    return text if text.strip() else "(the tool returned no content)"


def _wraps(structured: Any, text: str) -> bool:
    """Whether ``structured`` is ``{"result": X}`` for a text part that is X (the Python SDK
    wraps a tool's plain return value so, beside the value as text)."""
    if not isinstance(structured, dict) or set(structured) != {"result"}:
        return False
    value = structured["result"]
    return text == value if isinstance(value, str) else _same_json(text, value)


def _same_json(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except (ValueError, RecursionError):
        return False


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def _placeholder(block: Any) -> str:
    kind = str(getattr(block, "type", None) or type(block).__name__)
    if kind in ("image", "audio"):
        mime = getattr(block, "mime_type", None) or "unknown type"
        return f"[{kind}: {mime}, {_size(_b64_bytes(getattr(block, 'data', '')))}; not shown]"
    if kind == "resource":
        resource = getattr(block, "resource", None)
        uri = str(getattr(resource, "uri", "") or "")
        mime = getattr(resource, "mime_type", None)
        about = f"{uri} ({mime})" if mime else uri
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return f"[resource {about}]\n{text}"
        blob = getattr(resource, "blob", "") or ""
        return f"[resource {about}: binary, {_size(_b64_bytes(blob))}; not shown]"
    if kind == "resource_link":
        name = getattr(block, "name", None) or ""
        uri = getattr(block, "uri", "") or ""
        extra = [str(x) for x in (getattr(block, "mime_type", None),
                                  getattr(block, "description", None)) if x]
        more = f" ({'; '.join(extra)})" if extra else ""
        return f"[resource link: {name} {uri}{more}]".replace("  ", " ")
    return f"[{kind} content; not shown]"


def _b64_bytes(data: Any) -> int:
    text = str(data or "").strip()
    return max(0, len(text) * 3 // 4 - text[-2:].count("="))


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KB"
    return f"{count / (1024 * 1024):.1f} MB"


# -- schemas -----------------------------------------------------------------------------------
_DROP = frozenset({"$schema", "$id", "$anchor", "$dynamicAnchor", "$comment", "$defs",
                   "definitions", "title", "$vocabulary"})
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_ONE = frozenset({"items", "additionalProperties", "not", "contains", "if", "then", "else",
                         "propertyNames", "unevaluatedItems", "unevaluatedProperties",
                         "additionalItems", "contentSchema"})
_EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}
_DATA_KEYWORDS = frozenset({
    "type", "enum", "const", "required", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "pattern", "format",
    "minItems", "maxItems", "uniqueItems", "minContains", "maxContains", "minProperties",
    "maxProperties", "dependentRequired", "description", "default", "examples", "deprecated",
    "readOnly", "writeOnly", "contentEncoding", "contentMediaType", "nullable",
})
"""The JSON Schema keywords (validation and annotation, and OpenAPI's ``nullable``) whose
values are data; any other keyword a server writes (a vendor extension, a typo) is dropped:
nothing checks or renders it, and it could hold what looks like a reference."""


def tool_parameters(schema: Any) -> tuple[dict[str, Any], list[str]]:
    """An MCP tool's ``inputSchema`` as a parameters schema the agent can render and check.

    Returns ``(parameters, notes)``: the schema (an ``object`` schema that passes
    :func:`~react_agent.tools._schema.check_valid`, with no ``$ref`` left) and what was lost on
    the way, in words (empty when nothing was). See the module's docstring for what is done.
    """
    notes: list[str] = []
    if schema is None:
        return copy.deepcopy(_EMPTY_PARAMETERS), notes
    if not isinstance(schema, dict):
        notes.append("the input schema is not an object; the tool takes no arguments here")
        return copy.deepcopy(_EMPTY_PARAMETERS), notes
    if not _within(schema, _RAW_MAX_NODES, _RAW_MAX_DEPTH):
        notes.append("the input schema is too large or too deep to read; its arguments are "
                     "passed unchecked")
        return _open_parameters(), notes
    flat = _Flattener(json_schema.normalize(schema), notes).top()
    for attempt in (flat, _simplified(flat)):
        try:
            json_schema.check_valid(attempt, "parameters")
        except ToolDefinitionError as exc:
            notes.append(f"simplified: {exc}")
            continue
        return attempt, notes
    notes.append("the input schema cannot be used; its arguments are passed unchecked")
    return _open_parameters(), notes


def _open_parameters() -> dict[str, Any]:
    return {"type": "object", "properties": {}, "additionalProperties": True}


def _within(schema: Any, max_nodes: int, max_depth: int) -> bool:
    nodes = 0
    stack: list[tuple[Any, int]] = [(schema, 1)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > max_nodes or depth > max_depth:
            return False
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return True


class _Flattener:
    """Resolves references in place and rewrites what the agent cannot take (one schema)."""

    def __init__(self, root: dict[str, Any], notes: list[str]) -> None:
        self.root = root
        self.notes = notes
        self.nodes = 0

    def top(self) -> dict[str, Any]:
        out = self.walk(self.root, (), 1)
        if not isinstance(out, dict):
            out = {}
        types = out.get("type")
        if types != "object":
            if types is not None and not (isinstance(types, list) and "object" in types):
                self.notes.append(f"the input schema has type {json.dumps(types)}, not "
                                  "object; read as an object")
            out["type"] = "object"
        for key in ("anyOf", "oneOf", "allOf", "not", "if", "then", "else"):
            if key in out:  # a combination at the top cannot be rendered as arguments
                out.pop(key)
                self.notes.append(f"the top-level {key} was left out (arguments are checked "
                                  "by their own schemas only)")
        props = out.get("properties")
        if not isinstance(props, dict):
            props = {}
        out["properties"] = props
        required = out.get("required")
        if isinstance(required, list):
            kept = [r for r in dict.fromkeys(required) if isinstance(r, str) and r in props]
            if len(kept) != len(required):
                self.notes.append("required arguments that are not declared were dropped")
            if kept:
                out["required"] = kept
            else:
                out.pop("required")
        elif required is not None:
            out.pop("required")
        for spec in props.values():
            if isinstance(spec, dict):
                _describe_shape(spec)
        return out

    def walk(self, node: Any, refs: tuple[str, ...], depth: int) -> Any:
        self.nodes += 1
        if node is True:
            return {}
        if node is False:
            return {"not": {}}
        if not isinstance(node, dict):
            return copy.deepcopy(node)
        ref = node.get("$ref")
        if isinstance(ref, str):
            return self.expand(ref, node, refs, depth)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROP or key in ("$dynamicRef", "$recursiveRef"):
                continue
            if key in _SCHEMA_MAPS:
                if isinstance(value, dict):
                    out[key] = {k: self.walk(v, refs, depth + 1) for k, v in value.items()
                                if v is not False or key != "properties"}
            elif key in _SCHEMA_LISTS:
                if isinstance(value, list):
                    out[key] = [self.walk(v, refs, depth + 1) for v in value]
            elif key in _SCHEMA_ONE:
                if isinstance(value, (dict, bool)):
                    out[key] = self.walk(value, refs, depth + 1)
                elif key == "items" and isinstance(value, list):  # draft 4-7 tuple form
                    out["prefixItems"] = [self.walk(v, refs, depth + 1) for v in value]
            elif key == "dependencies" and isinstance(value, dict):  # draft 4-7
                for dep, spec in value.items():
                    if isinstance(spec, list):
                        out.setdefault("dependentRequired", {})[dep] = spec
                    else:
                        out.setdefault("dependentSchemas", {})[dep] = self.walk(
                            spec, refs, depth + 1)
            elif key in _DATA_KEYWORDS:
                out[key] = copy.deepcopy(value)
        if "prefixItems" in out and "additionalItems" in out:
            out["items"] = out.pop("additionalItems")
        out.pop("additionalItems", None)
        for dynamic in ("$dynamicRef", "$recursiveRef"):
            if dynamic in node:
                self.notes.append(f"{dynamic} is not followed; any value is accepted there")
        return self.tidy(out)

    def expand(self, ref: str, node: dict[str, Any], refs: tuple[str, ...], depth: int) -> Any:
        rest = {k: v for k, v in node.items() if k != "$ref"}
        target = self.resolve(ref)
        if target is None:
            self.notes.append(f"the reference {ref[:100]!r} leads outside the schema or nowhere; "
                              "any value is accepted there")
            return self.walk(rest, refs, depth) if rest else {}
        if refs.count(ref) >= REF_CUT_DEPTH or depth > json_schema.MAX_DEPTH - 8 or \
                self.nodes > json_schema.MAX_NODES // 2:
            return self.cut(ref, target, rest)
        merged = {**target, **rest} if isinstance(target, dict) else (rest or target)
        return self.walk(merged, (*refs, ref), depth)

    def cut(self, ref: str, target: Any, rest: dict[str, Any]) -> dict[str, Any]:
        name = ref.rsplit("/", 1)[-1]
        self.notes.append(f"{name} refers to itself (or the schema is very large): cut after "
                          f"{REF_CUT_DEPTH} levels")
        spec = {**(target if isinstance(target, dict) else {}), **rest}
        kind = spec.get("type")
        out: dict[str, Any] = {}
        if isinstance(kind, (str, list)):
            out["type"] = copy.deepcopy(kind)
        description = str(spec.get("description") or "").strip()
        out["description"] = (f"{description} " if description else "") + \
            f"(more {name} nested inside; its schema is not shown further)"
        return out

    def resolve(self, ref: str) -> Any:
        """The part of the schema a local reference (``#``, ``#/a/b``) names; ``None`` for
        anything else (a URL, a file, an anchor, a path that leads nowhere)."""
        if ref == "#":
            return self.root
        if not ref.startswith("#/"):
            return None
        from urllib.parse import unquote

        node: Any = self.root
        for part in ref[2:].split("/"):
            key = unquote(part).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                return None
        return node

    def tidy(self, out: dict[str, Any]) -> dict[str, Any]:
        """Rewrite keywords the validator or the rendering cannot take."""
        for bound, plain in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if isinstance(out.get(bound), bool) and out.pop(bound) and plain in out:  # draft 4
                out[bound] = out.pop(plain)
        if "const" in out and "enum" not in out:
            out["enum"] = [out.pop("const")]
        if "enum" in out and not (isinstance(out["enum"], list) and out["enum"]):
            out.pop("enum")
        if out.pop("nullable", False) is True:  # OpenAPI
            out = _add_null(out)
        kinds = out.get("type")
        if isinstance(kinds, list):
            kinds = list(dict.fromkeys(k for k in kinds if isinstance(k, str)))
            out["type"] = kinds[0] if len(kinds) == 1 else kinds
            if not kinds:
                out.pop("type")
        if isinstance(out.get("pattern"), str) and not _compiles(out["pattern"]):
            self.notes.append(f"the pattern {out['pattern'][:60]!r} is not one Python can check; "
                              "dropped")
            out.pop("pattern")
        if isinstance(out.get("patternProperties"), dict):
            bad = [p for p in out["patternProperties"] if not _compiles(p)]
            for p in bad:
                out["patternProperties"].pop(p)
                self.notes.append(f"the property pattern {p[:60]!r} cannot be checked; dropped")
        required = out.get("required")
        if required is not None and not (isinstance(required, list) and
                                         all(isinstance(r, str) for r in required)):
            out.pop("required")
        out = _merge_all_of(out)
        out = _nullable(out)
        if isinstance(out.get("properties"), dict):
            for name, spec in out["properties"].items():
                if isinstance(spec, dict) and "default" in spec and not _valid(spec):
                    spec.pop("default")
                    self.notes.append(f"the default of {name} does not fit its own schema; "
                                      "dropped")
        return out


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def _valid(spec: dict[str, Any]) -> bool:
    """Whether ``spec``'s default fits ``spec`` (filled in, it would pass validation)."""
    rest = {k: v for k, v in spec.items() if k != "default"}
    try:
        return bool(json_schema.validator(rest).is_valid(spec["default"]))
    except Exception:  # a schema the validator cannot take: keep no default
        return False


def _add_null(spec: dict[str, Any]) -> dict[str, Any]:
    kinds = spec.get("type")
    if isinstance(kinds, str):
        spec["type"] = [kinds, "null"]
    elif isinstance(kinds, list) and "null" not in kinds:
        spec["type"] = [*kinds, "null"]
    if isinstance(spec.get("enum"), list) and None not in spec["enum"]:
        spec["enum"] = [*spec["enum"], None]
    return spec


def _nullable(spec: dict[str, Any]) -> dict[str, Any]:
    """``anyOf``/``oneOf`` of plain types with ``null`` as one schema with a type list: ``{"anyOf":
    [{"type": "string", ...}, {"type": "null"}]}`` -> ``{"type": ["string", "null"], ...}``;
    ``[{"type": "string"}, {"type": "integer"}, {"type": "null"}]`` -> a list of three types."""
    for key in ("anyOf", "oneOf"):
        options = spec.get(key)
        if not isinstance(options, list) or not options:
            continue
        nulls = [o for o in options if isinstance(o, dict) and o.get("type") == "null"
                 and len(o) == 1]
        others = [o for o in options if not any(o is n for n in nulls)]
        if not nulls and key == "oneOf":
            continue
        if len(others) == 1 and isinstance(others[0], dict) and \
                isinstance(others[0].get("type"), str) and others[0]["type"] != "null":
            merged = {**others[0], **{k: v for k, v in spec.items() if k != key}}
            if nulls:
                merged = _add_null(merged)
            return merged
        plain = all(isinstance(o, dict) and set(o) <= {"type", "description"} and
                    isinstance(o.get("type"), str) for o in others)
        if plain and others:
            kinds = [o["type"] for o in others] + (["null"] if nulls else [])
            merged = {k: v for k, v in spec.items() if k != key}
            merged["type"] = list(dict.fromkeys(kinds))
            notes = [o["description"] for o in others if o.get("description")]
            if notes and "description" not in merged:
                merged["description"] = "; ".join(notes)
            return merged
    return spec


def _merge_all_of(spec: dict[str, Any]) -> dict[str, Any]:
    """An ``allOf`` whose parts do not overlap with each other or the rest, merged in."""
    parts = spec.get("allOf")
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        return spec
    merged = {k: v for k, v in spec.items() if k != "allOf"}
    for part in parts:
        if set(part) & set(merged) - {"description"}:
            return spec
        for key, value in part.items():
            merged.setdefault(key, value)
    return merged


def _describe_shape(spec: dict[str, Any]) -> None:
    """Add the fields of a nested object (or of an array's objects) to the argument's
    description: the rendering shows an argument's type and description only."""
    target, lead = spec, "an object with"
    if _is_type(spec, "array") and isinstance(spec.get("items"), dict):
        target, lead = spec["items"], "each item an object with"
    props = target.get("properties") if _is_type(target, "object") else None
    if not isinstance(props, dict) or not props:
        return
    shape = _fields(target, 2)
    description = str(spec.get("description") or "").strip()
    if shape and shape not in description:
        if description.endswith((".", "!", "?")):
            description, lead = f"{description} ", lead[0].upper() + lead[1:]
        elif description:
            description += "; "
        spec["description"] = f"{description}{lead} {shape}"


def _is_type(spec: dict[str, Any], kind: str) -> bool:
    kinds = spec.get("type")
    return kinds == kind or (isinstance(kinds, list) and kind in kinds)


def _fields(spec: dict[str, Any], depth: int) -> str:
    props = spec.get("properties") or {}
    required = set(spec.get("required") or [])
    items = []
    for name, sub in list(props.items())[:12]:
        sub = sub if isinstance(sub, dict) else {}
        kind = sub.get("type")
        words = " or ".join(kind) if isinstance(kind, list) else str(kind or "value")
        if "enum" in sub and isinstance(sub["enum"], list):
            words = "one of " + ", ".join(json.dumps(v, ensure_ascii=False)
                                          for v in sub["enum"][:6])
        inner = ""
        if depth > 1 and _is_type(sub, "object") and isinstance(sub.get("properties"), dict):
            inner = f" {{{_fields(sub, depth - 1)}}}"
        items.append(f"{name} ({words}{', required' if name in required else ''}){inner}")
    more = ", ..." if len(props) > 12 else ""
    return "fields " + ", ".join(items) + more if items else ""


def _simplified(schema: dict[str, Any]) -> dict[str, Any]:
    """A plainer schema: each argument with its type, description, enum and default only."""
    props: dict[str, Any] = {}
    for name, spec in (schema.get("properties") or {}).items():
        spec = spec if isinstance(spec, dict) else {}
        kept = {k: copy.deepcopy(spec[k]) for k in ("type", "description", "enum", "default")
                if k in spec}
        if isinstance(kept.get("type"), list):
            kept["type"] = [t for t in kept["type"] if t in _JSON_TYPE_NAMES] or "string"
        elif kept.get("type") not in _JSON_TYPE_NAMES:
            kept.pop("type", None)
        if "enum" in kept and not isinstance(kept["enum"], list):
            kept.pop("enum")
        props[str(name)] = kept
    out: dict[str, Any] = {"type": "object", "properties": props}
    required = [r for r in schema.get("required") or [] if r in props]
    if required:
        out["required"] = required
    if schema.get("additionalProperties") is True:
        out["additionalProperties"] = True
    return out


_JSON_TYPE_NAMES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
