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

The pieces: :mod:`._config` (servers, limits, errors, names), :mod:`._stdio` (bounds on what a
server sends), :mod:`._results` (results as observations), :mod:`._connection` (the event loop
and the sessions), :mod:`._toolbox` (the toolbox). :class:`MCPToolbox` and the names users need
are also importable from :mod:`react_agent.tools`.
"""

from ._config import (
    DEFAULT_MCP_STARTUP_TIMEOUT,
    DEFAULT_MCP_TIMEOUT,
    MAX_DESCRIPTION_CHARS,
    MAX_MCP_LISTING_BYTES,
    MAX_MCP_MESSAGE_BYTES,
    MAX_MCP_PROMPT_CHARS,
    MAX_MCP_TOOL_NAME_CHARS,
    MAX_MCP_TOOLS,
    STDERR_KEPT_BYTES,
    MCPCallError,
    MCPRequestError,
    MCPServerConfig,
    MCPServerStopped,
    MCPTimeout,
    MCPToolError,
    tool_name,
)
from ._results import observation
from ._toolbox import MCPToolbox

__all__ = [
    "DEFAULT_MCP_STARTUP_TIMEOUT", "DEFAULT_MCP_TIMEOUT", "MAX_DESCRIPTION_CHARS",
    "MAX_MCP_LISTING_BYTES", "MAX_MCP_MESSAGE_BYTES", "MAX_MCP_PROMPT_CHARS",
    "MAX_MCP_TOOLS", "MAX_MCP_TOOL_NAME_CHARS", "STDERR_KEPT_BYTES", "MCPCallError",
    "MCPRequestError", "MCPServerConfig", "MCPServerStopped", "MCPTimeout", "MCPToolError",
    "MCPToolbox", "observation", "tool_name",
]
