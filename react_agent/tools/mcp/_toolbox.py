"""The :class:`MCPToolbox`: the tools of MCP servers in a :class:`~react_agent.tools.Toolbox`,
named for the model (unique across servers), within the bounds on their number and their size
in the system prompt."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from ..._lexical import did_you_mean
from ...errors import ConfigError, ToolDefinitionError
from .._toolbox import DEFAULT_TOOL_TIMEOUT, Tool, Toolbox
from ._config import (
    DEFAULT_MCP_STARTUP_TIMEOUT,
    DEFAULT_MCP_TIMEOUT,
    MAX_MCP_PROMPT_CHARS,
    MAX_MCP_TOOLS,
    MCPServerConfig,
    _Choice,
    _matches,
    _require_sdk,
    _resolve,
    _visible,
    logger,
    tool_name,
)
from ._connection import _Connection, _Runtime


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


def _caller(conn: _Connection, original: str) -> Callable[..., str]:
    def call(**args: Any) -> str:
        return conn.call(original, args)

    call.__name__ = tool_name(original)
    call.__doc__ = f"Call {original} on the MCP server {conn.name}."
    return call
