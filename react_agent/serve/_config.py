"""The options of ``react-agent serve`` (:class:`ServeConfig`) and its errors, answered in
OpenAI's shape (:class:`ApiError`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from starlette.responses import JSONResponse, Response

from ..config import AgentConfig
from ..errors import ConfigError, ReactAgentError
from ..policies import Policy
from ..tools import DEFAULT_MAX_OBSERVATION_CHARS
from ._openai import error_body

UPSTREAM_CONCURRENCY = 8
"""Default number of requests sent at once to an OpenAI-compatible backend."""


@dataclass
class ServeConfig:
    """Options of the endpoint."""

    api_key: str | None = None
    """Clients must send ``Authorization: Bearer <api_key>`` (compared in constant time);
    ``None``: no key is asked for (bind to a loopback address only). An empty or blank key is
    a :class:`ConfigError` (it would let ``Authorization: Bearer`` with no token in)."""
    concurrency: int | None = None
    """Requests at the backend at once; ``None``: 1 for an in-process model (the embedded one
    answers one request at a time), :data:`UPSTREAM_CONCURRENCY` for an OpenAI-compatible
    server."""
    queue: int = 64
    """Requests that may wait for the backend; one more is refused with 503."""
    retry_after: int = 5
    """Seconds sent in the ``Retry-After`` header of a 503."""
    max_body_bytes: int = 4 * 1024 * 1024
    """Larger request bodies are refused with 413."""
    body_seconds: float = 30.0
    """The whole request body must arrive within this many seconds of the request's headers;
    a slower one is answered 408 and its connection closed (a client cannot hold a
    connection open by sending its body a byte at a time)."""
    max_connections: int = 256
    """Connections open at once; past it, new requests are answered 503 by the server
    (uvicorn's ``limit_concurrency``, set by :func:`running` and ``react-agent serve``)."""
    keep_alive_seconds: float = 5.0
    """An idle keep-alive connection is closed after this many seconds (uvicorn's
    ``timeout_keep_alive``, set by :func:`running` and ``react-agent serve``)."""
    max_parse_retries: int = AgentConfig.max_parse_retries
    """Unusable model replies asked again inside one request (the agent's budget)."""
    thoughts: bool = True
    """Send the model's thought as ``content`` next to its ``tool_calls``: clients send it back
    with the history, so the model sees its own reasoning on the next turn."""
    allowed_hosts: tuple[str, ...] | None = None
    """The ``Host`` header values accepted (names or addresses, no port); ``None``: the
    loopback names (``localhost``, ``127.0.0.1``, ``::1``) when no ``api_key`` is set, so a
    web page cannot reach the endpoint by DNS rebinding; any host when one is set. The
    address the request came in on (the server's own, as its URL writes it: ``--host
    127.0.0.2``) is accepted too: a page reached by DNS rebinding sends its own name, never
    the address."""
    allowed_origins: tuple[str, ...] = ()
    """Web origins (``https://app.example``) whose pages may call the endpoint from a browser;
    they get CORS headers. A request from any other origin (its ``Origin`` header) is refused
    with 403. Clients outside a browser send no ``Origin``."""
    max_observation_chars: int = DEFAULT_MAX_OBSERVATION_CHARS
    """The most characters of one ``tool`` message the model sees (the rest cut with a marker
    saying so), as ``AgentConfig.max_observation_chars`` bounds a tool result: also the bound of
    the work framing and the policies do on it."""
    frame_observations: bool = True
    """The ``tool`` messages go to the model framed as data, as the library frames tool results
    (``AgentConfig.frame_observations``); ``False``: as they are."""
    policies: Sequence[Policy] | None = None
    """The small-model policies of each turn (:mod:`react_agent.policies`); ``None``: the
    library's defaults without the review of the final answer and the best-effort answer."""

    def __post_init__(self) -> None:
        if self.api_key is not None and not self.api_key.strip():
            raise ConfigError("api_key is empty: give a key that clients must send "
                              "(Authorization: Bearer KEY), or None to ask for none (then "
                              "serve on a loopback address only).")
        if self.concurrency is not None and self.concurrency < 1:
            raise ConfigError("concurrency must be at least 1.")
        if self.max_connections < 1 or self.body_seconds <= 0 or self.keep_alive_seconds <= 0:
            raise ConfigError("max_connections must be at least 1, body_seconds and "
                              "keep_alive_seconds more than 0.")
        if self.queue < 0 or self.max_parse_retries < 0 or self.retry_after < 0:
            raise ConfigError("queue, max_parse_retries and retry_after must be 0 or more.")
        if self.max_body_bytes < 1024:
            raise ConfigError("max_body_bytes must be at least 1024.")
        if self.max_observation_chars < 100:
            raise ConfigError("max_observation_chars must be at least 100.")
        off = [p.name for p in self.policies or () if not p.runs_in_serve]
        if off:
            raise ConfigError(
                f"policies: {', '.join(off)} cannot run in serve (a policy that replaces a final "
                "answer the client may already have, or needs a step budget); keep those that "
                "can: [p for p in default_policies(model, use=[...]) if p.runs_in_serve].")


class ApiError(ReactAgentError):
    """An HTTP error answered in OpenAI's error shape."""

    def __init__(
        self, status: int, message: str, kind: str = "invalid_request_error",
        param: str | None = None, code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind
        self.param, self.code, self.headers = param, code, headers


def error_response(exc: ApiError) -> Response:
    return JSONResponse(error_body(exc.message, exc.kind, exc.param, exc.code),
                        status_code=exc.status, headers=exc.headers)
