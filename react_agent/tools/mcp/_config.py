"""What an MCP toolbox is given and bounded by: its servers (:class:`MCPServerConfig`), its
limits, its errors, and the names and patterns that choose its tools."""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import logging
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import EllipsisType
from typing import Any
from urllib.parse import urlsplit

from ...errors import ConfigError, ReactAgentError, install_hint

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


def _allowed(allow: Sequence[str] | None, deny: Sequence[str], names: tuple[str, ...]) -> bool:
    if isinstance(allow, str):  # one pattern given as a string, not a list of its letters
        allow = [allow]
    if allow is not None and not _matches(allow, *names):
        return False
    return not _matches([deny] if isinstance(deny, str) else deny, *names)


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KB"
    return f"{count / (1024 * 1024):.1f} MB"
