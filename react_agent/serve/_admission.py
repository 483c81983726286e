"""Which requests the endpoint takes: :class:`Guard` checks each one's ``Host``, ``Origin`` and
body type before a route sees it; :class:`Gate` bounds how many are at the backend and how many
wait (one more is answered 503)."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.datastructures import Headers

from ._config import ApiError, ServeConfig, error_response

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
"""The host names a server without an API key answers to (see ``ServeConfig.allowed_hosts``)."""


class Guard:
    """Checks every request before a route sees it, answering in OpenAI's error shape: the
    ``Host`` (DNS rebinding), the ``Origin`` (a page of another site) and, for a body, that it
    is JSON (a browser sends a cross-site form or ``text/plain`` body without asking first)."""

    def __init__(self, app: Any, config: ServeConfig) -> None:
        self.app, self.config = app, config
        hosts = config.allowed_hosts
        if hosts is None and config.api_key is None:
            hosts = LOOPBACK_HOSTS
        self.hosts = None if hosts is None else {h.strip("[]").lower() for h in hosts}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            server = scope.get("server") or ("", None)
            refusal = self.refusal(Headers(scope=scope), scope.get("method", "GET"),
                                   str(server[0]).lower())
            if refusal is not None:
                await error_response(refusal)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def refusal(self, headers: Headers, method: str, address: str = "") -> ApiError | None:
        """Why the request is refused, or ``None``; ``address``: the server's address the
        request came in on (an allowed host)."""
        host = _host_name(headers.get("host", ""))
        if self.hosts is not None and host not in self.hosts and host != address:
            return ApiError(403, f"This server does not answer to the host {host[:100]!r}; start "
                            "it with --allow-host (or an --api-key) to allow it.",
                            code="host_not_allowed")
        origin = headers.get("origin")
        if origin is not None and origin not in self.config.allowed_origins:
            return ApiError(403, f"Requests from web pages of {origin[:100]!r} are not allowed; "
                            "start the server with --allow-origin to allow them.",
                            code="origin_not_allowed")
        if method == "POST":
            media = headers.get("content-type", "").split(";")[0].strip().lower()
            if media != "application/json":
                return ApiError(415, "Send the request body as JSON with the header "
                                "'Content-Type: application/json'.",
                                code="unsupported_media_type")
        return None


def _host_name(host: str) -> str:
    """The name or address of a ``Host`` header, without the port (``[::1]:8000`` -> ``::1``)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Gate:
    """A bounded queue in front of the backend: at most ``concurrency`` requests at the backend
    and ``queue`` more waiting in arrival order; :meth:`admit` refuses the next one."""

    def __init__(self, concurrency: int, queue: int, retry_after: int = 5) -> None:
        self.concurrency, self.queue, self.retry_after = concurrency, queue, retry_after
        self.admitted = 0
        self.running = 0
        self._slots = asyncio.Semaphore(concurrency)

    def admit(self) -> Ticket:
        """A place in the queue.

        Raises:
            ApiError: 503 with ``Retry-After``: the queue is full.
        """
        if self.admitted >= self.concurrency + self.queue:
            raise ApiError(
                503, f"The server is busy: {self.running} request(s) at the model and "
                f"{self.admitted - self.running} waiting (the limit). Try again in "
                f"{self.retry_after} s.",
                "server_error", code="queue_full",
                headers={"Retry-After": str(self.retry_after)},
            )
        self.admitted += 1
        return Ticket(self)


class Ticket:
    """One admitted request: :meth:`wait` for a slot at the backend, :meth:`release` when done
    (safe to call more than once)."""

    def __init__(self, gate: Gate) -> None:
        self.gate, self._held, self._done = gate, False, False

    async def wait(self) -> None:
        await self.gate._slots.acquire()
        self._held = True
        self.gate.running += 1

    def release(self) -> None:
        if self._done:
            return
        self._done = True
        self.gate.admitted -= 1
        if self._held:
            self.gate.running -= 1
            self.gate._slots.release()
