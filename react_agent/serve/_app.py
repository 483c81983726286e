"""``react-agent serve``: an OpenAI-compatible endpoint that gives ``tools=`` to models that have
none.

:func:`create_app` returns an ASGI app (Starlette) that serves

- ``POST /v1/chat/completions``: with ``tools``, the request is translated into react-agent's
  protocol, the model is asked for one turn by the library's engine (tolerant parsing,
  argument cleaning, the policies of a turn, retries the client never sees) and the reply
  comes back as ``message.tool_calls`` or ``message.content``, whole or as
  Server-Sent Events (``stream: true``). Without ``tools``, the request goes to the backend as it
  is: an OpenAI-compatible server gets the body unchanged (only ``model`` is set to the served
  one); an in-process model gets the messages.
- ``GET /v1/models`` (the one served model) and ``GET /health``.

The server never runs a tool. Errors come in OpenAI's shape ``{"error": {"message", "type",
"param", "code"}}``: 400 bad request, 401 wrong key, 403 a ``Host`` or ``Origin`` not allowed
(:class:`ServeConfig`), 408 a body that does not arrive in time, 413 body too large, 415 a body
that is not JSON, 502/504 failing or slow backend (with the backend's cause), 503 with
``Retry-After`` when the queue is full, 500 a bug of ours (the connection is kept). A response
whose model reply could not be read after the retries carries the raw text as ``content``, the
header ``X-React-Agent-Parse-Error`` (non-streamed) and the field ``react_agent.parse_error``.

Built on Starlette, sse-starlette and uvicorn (the ``serve`` extra).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import httpx2
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .._persist import loads
from ..agent import aquery
from ..engine import Query
from ..errors import ConfigError, ModelError
from ..events import ModelToken
from ..harness import annotate_turn
from ..models import OpenAIChatModel
from ..models.base import ChatModel, ModelReply, estimate_tokens
from ..types import Message, Step
from ._admission import Gate, Guard
from ._config import UPSTREAM_CONCURRENCY, ApiError, ServeConfig, error_response
from ._openai import (
    RequestError,
    chunk,
    completion,
    error_body,
    new_id,
    plain_messages,
    read_request,
    tool_call,
    tool_call_deltas,
    usage,
)
from ._turn import TurnResult, take_turn

log = logging.getLogger(__name__)

def create_app(model: ChatModel, config: ServeConfig | None = None) -> Starlette:
    """The ASGI app serving ``model`` (see the module docs); mount it or run it with uvicorn
    (:func:`running` runs it in a background thread).

    Args:
        model: any :class:`~react_agent.models.ChatModel`; an :class:`OpenAIChatModel` is also
            the target of requests without tools.
        config: see :class:`ServeConfig`.
    """
    service = _Service(model, config or ServeConfig())
    routes = [
        Route("/v1/chat/completions", _answering(service.chat_completions), methods=["POST"]),
        Route("/v1/models", _answering(service.models), methods=["GET"]),
        Route("/health", _answering(service.health), methods=["GET"]),
    ]
    handlers: dict[Any, Callable[[Request, Any], Awaitable[Response]]] = {
        ApiError: _api_error, HTTPException: _http_error,
    }
    middleware = [Middleware(Guard, config=service.config)]
    if service.config.allowed_origins:
        middleware.append(Middleware(
            CORSMiddleware, allow_origins=list(service.config.allowed_origins),
            allow_methods=["GET", "POST"], allow_headers=["authorization", "content-type"]))
    app = Starlette(routes=routes, exception_handlers=handlers, lifespan=service.lifespan,
                    middleware=middleware)
    app.state.service = service
    return app


class _Service:
    """The routes of one app, sharing the model, the gate and the upstream HTTP client."""

    def __init__(self, model: ChatModel, config: ServeConfig) -> None:
        self.model, self.config = model, config
        self.upstream = model if isinstance(model, OpenAIChatModel) else None
        concurrency = config.concurrency or (UPSTREAM_CONCURRENCY if self.upstream else 1)
        self.gate = Gate(concurrency, config.queue, config.retry_after)
        self._http: httpx2.AsyncClient | None = None

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if self._http is not None:
                await self._http.aclose()

    # -- routes -----------------------------------------------------------------------------
    async def health(self, request: Request) -> Response:
        gate = self.gate
        return JSONResponse({"status": "ok", "running": gate.running,
                             "waiting": gate.admitted - gate.running,
                             "concurrency": gate.concurrency, "queue": gate.queue})

    async def models(self, request: Request) -> Response:
        self._authorize(request)
        name = await self._served_name()
        return JSONResponse({"object": "list", "data": [
            {"id": name, "object": "model", "created": 0, "owned_by": "react-agent"}
        ]})

    async def chat_completions(self, request: Request) -> Response:
        self._authorize(request)
        body = await _read_json(request, self.config.max_body_bytes, self.config.body_seconds)
        if body.get("tools") in (None, []):  # anything else is read as tools (or a 400)
            return await self._admitted(lambda: self._pass_through(body))
        try:  # in a worker thread: the event loop answers other clients meanwhile
            plan = await asyncio.to_thread(read_request, body, self.config.frame_observations,
                                          self.config.max_observation_chars)
        except RequestError as exc:
            raise ApiError(400, str(exc), param=exc.param) from exc
        stream = body.get("stream") is True
        include_usage = _include_usage(body)

        async def answer() -> Response:
            turn = take_turn(self.model, plan, max_retries=self.config.max_parse_retries,
                             stream=stream, policies=self.config.policies)
            if not stream:
                return self._completion(await _turn_result(turn))
            first = await anext(turn)  # before the headers: a failing backend gets its status
            events = self._turn_events(first, turn, include_usage)
            return EventSourceResponse(events, sep="\n", ping=15)

        return await self._admitted(answer)

    # -- helpers ----------------------------------------------------------------------------
    async def _admitted(self, handle: Callable[[], Awaitable[Response]]) -> Response:
        """Run ``handle`` with a place at the backend. A streamed response keeps the place
        until it has been sent (or the client went away); any other gives it back at once."""
        ticket = self.gate.admit()
        try:
            await ticket.wait()
            response = await handle()
        except ModelError as exc:
            ticket.release()
            raise backend_error(exc) from exc
        except BaseException:
            ticket.release()
            raise
        if isinstance(response, (StreamingResponse, EventSourceResponse)):
            return _Held(response, ticket.release)
        ticket.release()
        return response

    def _authorize(self, request: Request) -> None:
        key = self.config.api_key
        if key is None:
            return
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            token.strip().encode(), key.encode()
        ):
            raise ApiError(
                401, "Missing or wrong API key: send the server's key as "
                "'Authorization: Bearer KEY' (the api_key of an OpenAI client).",
                code="invalid_api_key", headers={"WWW-Authenticate": "Bearer"},
            )

    async def _served_name(self) -> str:
        if self.upstream is None:
            return self.model.name
        try:
            return await asyncio.to_thread(self.upstream.model_name)
        except ModelError as exc:
            raise backend_error(exc) from exc

    def _message(self, result: TurnResult) -> tuple[dict[str, Any], str, dict[str, Any]]:
        """``(message, finish_reason, react_agent field)`` for a turn's result."""
        annotate_turn(result.prompt_tokens, result.completion_tokens, result.attempts,
                      result.stage, result.error.kind if result.error else None,
                      bool(result.calls))  # the request's span, under OtelMiddleware
        info: dict[str, Any] = {
            "attempts": result.attempts, "stage": result.stage, "repairs": [*result.repairs],
            "parse_error": result.error.problem if result.error else None,
        }
        if result.calls:
            calls = [tool_call(new_id("call_"), c.name, c.args) for c in result.calls]
            info["cleaning"] = [c.cleaning for c in result.calls]
            content = result.thought if self.config.thoughts else None
            return {"role": "assistant", "content": content, "tool_calls": calls}, \
                "tool_calls", info
        text = result.answer if result.answer is not None else result.text
        return {"role": "assistant", "content": text}, "stop", info

    def _completion(self, result: TurnResult) -> Response:
        message, finish, info = self._message(result)
        body = completion(new_id("chatcmpl-"), self.model.name, message, finish,
                          usage(result.prompt_tokens, result.completion_tokens), react_agent=info)
        headers = {"X-React-Agent-Parse-Error": result.error.kind} if result.error else None
        return JSONResponse(body, headers=headers)

    async def _turn_events(
        self, first: str | TurnResult, turn: AsyncGenerator[str | TurnResult, None],
        include_usage: bool
    ) -> AsyncIterator[str]:
        """The SSE data of a streamed turn: the role, answer pieces as they come, then the
        rest of the message (tool call deltas), the finish reason, usage, ``[DONE]``."""
        reply_id, model = new_id("chatcmpl-"), self.model.name

        def event(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> str:
            return _dumps(chunk(reply_id, model, delta, finish, **extra))

        try:
            yield event({"role": "assistant", "content": ""})
            item = first
            while isinstance(item, str):
                yield event({"content": item})
                item = await anext(turn)
            message, finish, info = self._message(item)
            content = message["content"] or ""
            if content.startswith(item.streamed) and content != item.streamed:
                yield event({"content": content[len(item.streamed):]})
            for delta in tool_call_deltas(message.get("tool_calls", [])):
                yield event(delta)
            yield event({}, finish, react_agent=info)
            if include_usage:
                yield event(None, usage=usage(item.prompt_tokens, item.completion_tokens))
            yield "[DONE]"
        except ModelError as exc:
            error = backend_error(exc)
            yield _dumps(error_body(error.message, error.kind, code=error.code))
        finally:
            await turn.aclose()

    async def _pass_through(self, body: dict[str, Any]) -> Response:
        if self.upstream is not None:
            return await self._forward({**body, "model": await self._served_name()})
        try:
            messages = plain_messages(body.get("messages"))
        except RequestError as exc:
            raise ApiError(400, str(exc), param=exc.param) from exc
        reply_id, name = new_id("chatcmpl-"), self.model.name
        if body.get("stream") is not True:
            reply = await _last_reply(_pieces(self.model, messages))
            return JSONResponse(completion(
                reply_id, name, {"role": "assistant", "content": reply.text},
                reply.finish_reason or "stop", _reply_usage(reply, messages),
            ))
        pieces = _pieces(self.model, messages, stream=True)
        first = await anext(pieces)
        include_usage = _include_usage(body)

        async def events() -> AsyncIterator[str]:
            item = first
            try:
                yield _dumps(chunk(reply_id, name, {"role": "assistant", "content": ""}))
                while isinstance(item, str):
                    yield _dumps(chunk(reply_id, name, {"content": item}))
                    item = await anext(pieces)
                yield _dumps(chunk(reply_id, name, {}, item.finish_reason or "stop"))
                if include_usage:
                    yield _dumps(chunk(reply_id, name, None, usage=_reply_usage(item, messages)))
                yield "[DONE]"
            except ModelError as exc:
                error = backend_error(exc)
                yield _dumps(error_body(error.message, error.kind, code=error.code))
            finally:
                await pieces.aclose()

        return EventSourceResponse(events(), sep="\n", ping=15)

    async def _forward(self, body: dict[str, Any]) -> Response:
        """Send ``body`` to the upstream server's ``/chat/completions`` and relay its answer: a
        stream as it comes, a whole reply once it is checked to be JSON; the server's failures
        (unreachable, too slow, HTTP 5xx, a refused key, a body that is not JSON) become
        502/504 naming the cause, its other answers (e.g. 400, 404) are relayed as they are."""
        assert self.upstream is not None
        url = self.upstream.base_url
        client = self._client()
        streamed = body.get("stream") is True
        try:
            response = await client.send(
                client.build_request("POST", "chat/completions", json=body), stream=streamed
            )
        except httpx2.TimeoutException as exc:
            raise ApiError(504, f"The model server at {url} did not answer in time "
                           f"({type(exc).__name__}).", "server_error",
                           code="backend_timeout") from exc
        except httpx2.HTTPError as exc:
            raise ApiError(502, f"Could not reach the model server at {url}: "
                           f"{type(exc).__name__}: {exc}", "server_error",
                           code="backend_error") from exc
        failed = response.status_code >= 500 or response.status_code in (401, 403)
        if failed or not streamed:
            data = await response.aread()
            await response.aclose()
            problem = f"answered HTTP {response.status_code}" if failed else None
            if problem is None and response.status_code == 200 and not _is_json(data):
                problem = "answered with something that is not OpenAI-style JSON"
            if problem:
                detail = data.decode("utf-8", "replace")[:300]
                raise ApiError(502, f"The model server at {url} {problem}: {detail}",
                               "server_error", code="backend_error")
            media = response.headers.get("content-type", "application/json")
            return Response(data, status_code=response.status_code, media_type=media)

        async def relay() -> AsyncIterator[bytes]:
            try:
                async for data in response.aiter_bytes():
                    yield data
            except httpx2.HTTPError as exc:
                log.warning("the model server at %s broke off its answer: %s", url, exc)
            finally:
                await response.aclose()

        media = response.headers.get("content-type", "text/event-stream")
        return StreamingResponse(relay(), status_code=response.status_code, media_type=media)

    def _client(self) -> httpx2.AsyncClient:
        if self._http is None:
            assert self.upstream is not None
            sdk = self.upstream.client
            self._http = httpx2.AsyncClient(
                base_url=self.upstream.base_url.rstrip("/") + "/", timeout=sdk.timeout,
                headers={"Authorization": f"Bearer {sdk.api_key}"},
            )
        return self._http


class _Held(Response):
    """A streamed response that calls ``release`` once it has been sent or has failed, even if
    its body never started (the client went away first)."""

    def __init__(self, inner: Response, release: Callable[[], None]) -> None:
        self.inner, self.release = inner, release
        self.status_code, self.background = inner.status_code, None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await self.inner(scope, receive, send)
        finally:
            self.release()


async def _turn_result(turn: AsyncIterator[str | TurnResult]) -> TurnResult:
    async for item in turn:
        if isinstance(item, TurnResult):
            return item
    raise AssertionError("unreachable: a turn ends with its TurnResult")  # pragma: no cover


def backend_error(exc: ModelError) -> ApiError:
    """The HTTP error for a failing backend: 504 when it was too slow, 400 when the
    conversation outgrew its context window, else 502; the message names the cause."""
    if exc.cause == "timeout":
        return ApiError(504, f"The model backend did not answer in time: {exc}", "server_error",
                        code="backend_timeout")
    if exc.cause == "context_length":
        return ApiError(400, str(exc), code="context_length_exceeded")
    return ApiError(502, f"The model backend failed ({exc.cause}): {exc}", "server_error",
                    code="backend_error")


async def _read_json(request: Request, limit: int, seconds: float = 30.0) -> dict[str, Any]:
    """The request body as a JSON object, read up to ``limit`` bytes within ``seconds``.

    Raises:
        ApiError: 413 for a larger body, 408 for one that did not arrive in time (the
            connection is closed after the answer), 400 for one that is not a JSON object.
    """
    too_large = ApiError(413, f"The request body is larger than {limit} bytes.",
                         code="request_too_large")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large
    data = bytearray()

    async def read() -> None:
        async for piece in request.stream():
            data.extend(piece)
            if len(data) > limit:
                raise too_large

    try:
        await asyncio.wait_for(read(), seconds)
    except asyncio.TimeoutError as exc:
        raise ApiError(408, f"The request body did not arrive within {seconds:g} s.",
                       code="request_timeout", headers={"Connection": "close"}) from exc
    try:
        body = loads(bytes(data))
    except ValueError as exc:
        raise ApiError(400, f"The request body is not valid JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise ApiError(400, "The request body must be a JSON object.")
    return body


async def _pieces(
    model: ChatModel, messages: list[Message], stream: bool = False
) -> AsyncGenerator[str | ModelReply, None]:
    """The model's reply to plain ``messages`` (no tools): its text pieces as they are written
    (with ``stream``), then the whole reply; the agent's model I/O."""
    async for piece in aquery(model, Query(messages, Step(index=1)), stream=stream):
        if isinstance(piece, ModelReply):
            yield piece
        elif isinstance(piece, ModelToken):
            yield piece.text


async def _last_reply(pieces: AsyncIterator[str | ModelReply]) -> ModelReply:
    reply = None
    async for piece in pieces:
        if isinstance(piece, ModelReply):
            reply = piece
    if reply is None:
        raise ModelError("The model backend ended its reply without a whole reply.")
    return reply


def _reply_usage(reply: ModelReply, messages: list[Message]) -> dict[str, int]:
    prompt = reply.prompt_tokens if reply.prompt_tokens is not None else \
        sum(estimate_tokens(m["content"]) for m in messages)
    completion = reply.completion_tokens if reply.completion_tokens is not None else \
        estimate_tokens(reply.text)
    return usage(prompt, completion)


def _include_usage(body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _is_json(data: bytes) -> bool:
    try:
        loads(data)
    except ValueError:  # (not JSON, or nested deeper than any reply is)
        return False
    return True


async def _api_error(request: Request, exc: ApiError) -> Response:
    return error_response(exc)


async def _http_error(request: Request, exc: HTTPException) -> Response:
    return JSONResponse(error_body(str(exc.detail)), status_code=exc.status_code,
                        headers=exc.headers)


def _answering(
    route: Callable[[Request], Awaitable[Response]]
) -> Callable[[Request], Awaitable[Response]]:
    """``route`` answering an unexpected exception (a bug of ours) with a 500 in OpenAI's
    shape, logged, and the connection kept: an exception left to the server would close a
    keep-alive connection under the client's next pooled request."""

    async def answer(request: Request) -> Response:
        try:
            return await route(request)
        except (ApiError, HTTPException):
            raise
        except Exception as exc:
            log.exception("internal error", exc_info=exc)
            return JSONResponse(error_body(f"Internal error: {type(exc).__name__}",
                                           "server_error"), status_code=500)

    return answer


def server_options(config: ServeConfig) -> dict[str, Any]:
    """The options of uvicorn's server that ``config`` sets: the cap on connections and the
    keep-alive timeout."""
    return {"limit_concurrency": config.max_connections,
            "timeout_keep_alive": config.keep_alive_seconds}


@contextlib.contextmanager
def running(app: Any, host: str = "127.0.0.1", port: int = 0,
            log_level: str = "warning", config: ServeConfig | None = None) -> Iterator[str]:
    """Run ``app`` with uvicorn in a background thread (for tests, benchmarks and embedding);
    yields its base URL ``http://HOST:PORT/v1`` (``port=0``: a free port) and stops it after.
    The server's options come from ``config`` (:func:`server_options`), by default the one
    :func:`create_app` made ``app`` with.

    Raises:
        ConfigError: the server did not start (e.g. the port is taken).
    """
    import uvicorn

    if config is None:
        service = getattr(getattr(app, "state", None), "service", None)
        config = service.config if isinstance(service, _Service) else ServeConfig()
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level=log_level,
                                           **server_options(config)))
    thread = threading.Thread(target=server.run, name="react-agent-serve", daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise ConfigError(f"The server could not start on {host}:{port}.")
        time.sleep(0.01)
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://{host}:{bound}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
