"""Tools from MCP servers: :class:`MCPToolbox`, a :class:`Toolbox` whose tools call Model Context
Protocol servers, each given as a command line (stdio) or a URL (streamable HTTP).

The official ``mcp`` SDK (the ``mcp`` extra: ``pip install '.[mcp]'`` in a clone) talks to the
servers on an event loop in a background thread that the toolbox owns; a tool call made in any
thread (the agent's sync API runs tools in the calling thread or in worker threads, its async API
in worker threads) is handed to that loop and waited for, at most the server's ``timeout``.
The sessions stay open until :meth:`MCPToolbox.close` (or the end of a ``with`` block, or the
end of the program); closing stops every server process.

What servers send is made usable for a small model and for the invoker, and bounded:

- each tool's input schema is flattened (:func:`react_agent.tools.schema.flatten`):
  ``$ref``/``$defs`` resolved in place (a schema that refers to itself is cut after a few
  levels, and says so), ``anyOf`` with ``null`` written as a type list,
  older drafts' keywords rewritten, what the validator cannot take dropped, the fields of
  nested objects described in words; with bounded work and a bounded result (what does not fit
  is cut, and the argument's description says so); a tool whose required arguments cannot be
  shown is left out with a warning;
- tool names are mapped onto the Toolbox's name rule; names two servers share get the server's
  name as a prefix (``server.tool``); allow and deny lists (``fnmatch`` patterns) choose tools;
  a name longer than :data:`MAX_MCP_TOOL_NAME_CHARS` is left out; more than
  :data:`MAX_MCP_TOOLS` tools, or descriptions longer than :data:`MAX_MCP_PROMPT_CHARS` in all,
  are a :class:`~react_agent.errors.ConfigError` that names the servers;
- each result becomes one observation (:func:`observation`): text parts, structured content as
  JSON, a short placeholder for images, audio and binary resources; an ``isError`` result is an
  error observation;
- no message from a server is read beyond :data:`MAX_MCP_MESSAGE_BYTES` (a line on stdio, a
  response body or an event over HTTP): a larger result is an error observation naming the
  server and the limit, and the session goes on; lines on a stdio server's stdout that are not
  JSON-RPC are dropped, the first few logged, then only counted.

Faults never hang a run and never lose it: a call that takes longer than its timeout is
abandoned (and cancelled on the server), a server that dies during a call or before it is an
error observation naming the server, its command and the tail of its stderr; a server that
cannot start, or is not ready within ``startup_timeout`` (``initialize``, every page of the
tool listing, its schemas flattened), is a :class:`~react_agent.errors.ConfigError` before any
run. A server's stderr is drained all the time and only its last :data:`STDERR_KEPT_BYTES`
bytes are kept.
"""

from __future__ import annotations

import asyncio
import codecs
import concurrent.futures
import dataclasses
import fnmatch
import functools
import hashlib
import itertools
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

from typing_extensions import Buffer

from .._lexical import did_you_mean
from ..errors import ConfigError, ReactAgentError, ToolDefinitionError, install_hint
from ._toolbox import DEFAULT_TOOL_TIMEOUT, Tool, Toolbox
from .schema import flatten

if TYPE_CHECKING:
    from mcp import Client

logger = logging.getLogger("react_agent.mcp")

DEFAULT_MCP_TIMEOUT: float = 60.0
"""Seconds one MCP tool call may take before it is abandoned (and cancelled on the server) and
the model is told it timed out; a server's ``timeout`` overrides it (``None``: no limit)."""

DEFAULT_MCP_STARTUP_TIMEOUT: float = 60.0
"""Seconds a server has to be ready: started, ``initialize`` answered, every page of its tools
listed and their schemas flattened."""

STDERR_KEPT_BYTES = 64 * 1024
"""How much of the end of a server's stderr is kept (for error messages); the rest is read and
dropped, so a server that floods stderr neither blocks nor fills memory."""

MAX_MCP_TOOLS = 128
"""The most tools one :class:`MCPToolbox` takes from its servers (after the allow and deny
lists), as ``serve`` takes at most 128 tools in a request."""

MAX_MCP_TOOL_NAME_CHARS = 256
"""A tool whose name (as the server gives it) is longer is left out (MCP asks for at most
128)."""

MAX_DESCRIPTION_CHARS = 2000
"""Longer tool descriptions from a server are cut (they all go into the system prompt)."""

MAX_MCP_PROMPT_CHARS = 256_000
"""The most characters the servers' tools may take in the system prompt in all (names,
descriptions and arguments, as rendered): about 64,000 tokens, more than a local model's
context."""

MAX_MCP_MESSAGE_BYTES = 8 * 1024 * 1024
"""The most bytes read of one message from a server: a line on stdio, a response body or a
server-sent event over HTTP. A larger result is not read (the call is an error observation
that names the server and this limit)."""

MAX_MCP_LISTING_BYTES = 32 * 1024 * 1024
"""The most bytes a server's tool listing may take, all pages together."""

_MAX_PAGES = 100
"""The most pages of ``tools/list`` read (a server that never stops paging is a start-up
error)."""

_LOGGED_LINES = 3
"""How many lines a stdio server writes on stdout that are not JSON-RPC are logged (then they
are only counted, and the count is logged when the server stops)."""

_CLOSE_SECONDS = 10.0
"""How long closing waits for the servers to stop (the SDK's own shutdown of a stdio server is
bounded: stdin closed, then SIGTERM, then SIGKILL, a few seconds in all)."""

_GRACE = 0.5
"""The toolbox gives up on a call this long after the invoker's own timeout fired (so the
invoker reports the timeout, and the call is then cancelled on the server)."""

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
        ConfigError: a server cannot be started, exits or is not ready within its start-up
            time (the message names its command and ends with its stderr), the ``mcp`` package
            is not installed, the servers offer more than :data:`MAX_MCP_TOOLS` tools or more
            than :data:`MAX_MCP_PROMPT_CHARS` characters of tool descriptions (choose fewer
            with ``allow``/``deny``), or their tools cannot share one toolbox.
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
            self._runtime.start([_Connection(c, self._runtime, _Choice(allow, deny))
                                 for c in configs])
            for tool in _tools(self._runtime.connections, self.notes):
                self.add_tool(tool)
            _check_prompt_size(self, self._runtime.connections)
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
    traceback Python would otherwise print for them; each kind of message (the SDK's format
    string) at most :data:`_LOGGED_LINES` times, then once more saying that the rest are not
    logged. Installed only while logging is not configured."""

    _KINDS = 256  # the most kinds of message counted (then every new kind is dropped)

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: dict[tuple[str, str], int] = {}

    def emit(self, record: logging.LogRecord) -> None:
        try:
            kind = (record.name, str(record.msg)[:200])
            count = self.seen.get(kind, 0) + 1
            if count == 1 and len(self.seen) >= self._KINDS:
                return
            self.seen[kind] = count
            if count > _LOGGED_LINES + 1:
                return
            if count == _LOGGED_LINES + 1:
                logger.warning("MCP SDK: %s (again; further such messages are not logged)",
                               _visible(str(record.msg)[:200]))
                return
            text = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                detail = " ".join(str(record.exc_info[1]).split())
                text += f" ({detail[:240]}{'...' if len(detail) > 240 else ''})"
            logger.warning("MCP SDK: %s", _visible(text[:1000]))
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

        from .. import __version__

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


# -- bounds on what a server sends ---------------------------------------------------------------
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

    def __init__(self, conn: _Connection) -> None:
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
        def __init__(self, stream: Any, conn: _Connection, limit: int | None,
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


@dataclass(frozen=True)
class _Choice:
    """The toolbox's allow and deny lists."""

    allow: Sequence[str] | None
    deny: Sequence[str]


@dataclass(frozen=True)
class _Offer:
    """A tool a server offers, chosen and made usable (its schema flattened)."""

    original: str
    """The server's name of the tool."""
    base: str
    """That name mapped onto the Toolbox's rule."""
    description: str
    parameters: dict[str, Any]


def _tools(connections: list[_Connection], notes: list[str]) -> list[Tool]:
    """The tools the servers offer, named for the model (``notes`` gets the servers' notes).

    Raises:
        ConfigError: more than :data:`MAX_MCP_TOOLS` tools in all.
    """
    _unique_server_names(connections)
    for conn in connections:
        notes.extend(conn.notes)
        _all_match(conn.config.allow, conn.config.deny, conn.listed,
                   f"the MCP server {conn.name!r}")
    if connections:
        choice = connections[0].choice
        _all_match(choice.allow, choice.deny, [n for c in connections for n in c.listed],
                   "the MCP servers")
    total = sum(c.chosen for c in connections)
    if total > MAX_MCP_TOOLS:
        each = ", ".join(f"{c.name}: {c.chosen}" for c in connections if c.chosen)
        raise ConfigError(
            f"The MCP servers offer {total} tools ({each}); at most {MAX_MCP_TOOLS} can be used "
            "in one toolbox (they all go into the system prompt). Choose the tools a task "
            "needs with allow patterns (--mcp-allow 'PATTERN' on the command line, allow=[...] "
            "in MCPServerConfig or MCPToolbox) or leave some out with deny.")
    counts: dict[str, int] = {}
    for conn in connections:
        for offer in conn.offers:
            counts[offer.base] = counts.get(offer.base, 0) + 1
    tools: list[Tool] = []
    taken: set[str] = set()
    for conn in connections:
        for offer in conn.offers:
            name = offer.base
            if conn.config.prefix or counts[offer.base] > 1:
                name = tool_name(f"{conn.name}.{offer.base}")
            unique, n = name, 2
            while unique in taken:
                unique = tool_name(f"{name}_{n}")
                n += 1
            taken.add(unique)
            if unique != offer.original:
                logger.info("MCP tool %s of %s is called %r here",
                            _visible(repr(offer.original)), conn.name, unique)
            tools.append(Tool(
                name=unique,
                description=offer.description,
                parameters=offer.parameters,
                func=_caller(conn, offer.original),
                timeout=conn.timeout,
                requires_approval=conn.config.requires_approval,
                group=conn.name,
            ))
    return tools


def _check_prompt_size(toolbox: Toolbox, connections: list[_Connection]) -> None:
    """Raises ConfigError when the servers' tools take more than :data:`MAX_MCP_PROMPT_CHARS`
    characters of the system prompt in all (naming each server's share)."""
    shares: dict[str, int] = {}
    for tool in toolbox.values():
        shares[str(tool.group)] = shares.get(str(tool.group), 0) + len(tool.describe()) + 1
    total = sum(shares.values())
    if total > MAX_MCP_PROMPT_CHARS:
        each = ", ".join(f"{c.name}: {shares.get(c.name, 0):,}" for c in connections)
        raise ConfigError(
            f"The MCP servers' tools take {total:,} characters of the system prompt ({each}); "
            f"at most {MAX_MCP_PROMPT_CHARS:,} are allowed. Choose the tools a task needs with "
            "allow patterns (--mcp-allow 'PATTERN' on the command line, allow=[...] in "
            "MCPServerConfig or MCPToolbox) or leave some out with deny.")


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
