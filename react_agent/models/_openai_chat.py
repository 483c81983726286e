"""Any OpenAI-compatible chat endpoint (OpenAI, llama.cpp server, vLLM, Ollama, LM Studio, ...)
through the official ``openai`` SDK. Only plain messages are sent: never ``tools=``."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator, Sequence
from typing import Any

from ..errors import ConfigError, ModelError
from ..types import Message, ModelReply
from .base import STOP_SEQUENCES


def _openai_form(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "react_step", "schema": schema}}


def _llama_form(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_object", "schema": schema}


RESPONSE_FORMATS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "json_schema": _openai_form,
    "json_object+schema": _llama_form,
}
"""The ``response_format`` spellings a server is asked with, in order (the OpenAI form, then the
llama.cpp / vLLM / LM Studio form); the first one a server accepts is kept for the session."""


class OpenAIChatModel:
    """A chat model behind an OpenAI-compatible HTTP API.

    Args:
        model: the model name; ``None`` = ``$OPENAI_MODEL``, else the first model the server lists
            (local servers usually serve exactly one).
        base_url: e.g. ``http://127.0.0.1:8080/v1``; ``None`` = ``$OPENAI_BASE_URL``, else OpenAI.
        api_key: ``None`` = ``$OPENAI_API_KEY``, else a placeholder (local servers ignore it).
        temperature: sampling temperature (0 = deterministic, the default).
        max_tokens: cap on the reply length, in tokens.
        timeout: seconds to wait for one HTTP request.
        max_retries: the SDK's own retries (with backoff) on connection errors, 408/409/429/5xx.
        extra_body: extra JSON fields for the request (server-specific options).

    ``complete`` raises :class:`ModelError` naming the cause and the URL when the server fails.
    """

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        timeout: float = 120.0,
        max_retries: int = 2,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - openai is a core dependency
            raise ConfigError("OpenAIChatModel needs openai: pip install openai") from exc
        self._openai = openai
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self._client_options: dict[str, Any] = {
            "base_url": self.base_url, "api_key": key, "timeout": timeout,
            "max_retries": max_retries,
        }
        self.client = openai.OpenAI(**self._client_options)
        self._async_client: Any = None
        self.constrained_form: str | None = None
        """The ``response_format`` spelling this server accepted (``None``: not tried yet;
        ``""``: it accepts none)."""
        self._refused: set[str] = set()
        self._strict_failure: str | None = None
        self._model = model or os.environ.get("OPENAI_MODEL")
        self.temperature, self.max_tokens, self.extra_body = temperature, max_tokens, extra_body

    @property
    def name(self) -> str:
        return self._model or f"(first model at {self.base_url})"

    def model_name(self) -> str:
        """The model name in use; asks the server's ``/models`` the first time if none was given."""
        if self._model is None:
            try:
                listed = self.client.models.list().data
            except self._openai.OpenAIError as exc:
                raise self._explain(exc) from exc
            if not listed:
                raise ModelError(
                    f"The server at {self.base_url} lists no models; pass --model NAME.",
                    cause="not_found",
                )
            self._model = listed[0].id
        return self._model

    async def _amodel_name(self) -> str:
        """:meth:`model_name` without blocking the event loop."""
        if self._model:
            return self._model
        return await asyncio.to_thread(self.model_name)

    accepts_schema = True
    """``complete``/``stream`` take ``schema=`` (a JSON Schema of the reply) and send it as
    ``response_format``, trying the spellings of :data:`RESPONSE_FORMATS`
    in order; the first the server accepts is kept in :attr:`constrained_form` for the session
    (``""`` once every form was rejected: plain prompting from then on, unless ``strict``)."""

    def complete(
        self, messages: Sequence[Message], schema: dict[str, Any] | None = None,
        strict: bool = False,
    ) -> ModelReply:
        """The reply to ``messages`` (constrained to ``schema`` where the server allows it).

        Raises:
            ModelError: the server failed after the SDK's retries (cause and URL named), or,
                with ``strict``, rejected every ``response_format`` form.
        """
        model = self.model_name()
        requests = self._requests(model, messages, schema, strict)
        return self._reply(_send(requests, self.client.chat.completions.create), model)

    async def acomplete(
        self, messages: Sequence[Message], schema: dict[str, Any] | None = None,
        strict: bool = False,
    ) -> ModelReply:
        """:meth:`complete` through ``openai.AsyncOpenAI`` (same options, same errors)."""
        model = await self._amodel_name()
        requests = self._requests(model, messages, schema, strict)
        return self._reply(await _asend(requests, self._aclient().chat.completions.create), model)

    def stream(
        self, messages: Sequence[Message], schema: dict[str, Any] | None = None,
        strict: bool = False,
    ) -> Iterator[str | ModelReply]:
        """The reply's text pieces as the server sends them (``stream=True``), then the whole
        :class:`ModelReply` (usage from the last chunk where the server sends it).

        Raises:
            ModelError: as :meth:`complete`, also when the stream breaks off.
        """
        requests = self._requests(self.model_name(), messages, schema, strict, stream=True)
        chunks = _send(requests, self.client.chat.completions.create)
        final = _Final()
        with self._explained():
            for chunk in chunks:
                if piece := final.take(chunk):
                    yield piece
        yield final.reply()

    async def astream(
        self, messages: Sequence[Message], schema: dict[str, Any] | None = None,
        strict: bool = False,
    ) -> AsyncIterator[str | ModelReply]:
        """:meth:`stream` through ``openai.AsyncOpenAI``."""
        model = await self._amodel_name()
        requests = self._requests(model, messages, schema, strict, stream=True)
        chunks = await _asend(requests, self._aclient().chat.completions.create)
        final = _Final()
        with self._explained():
            async for chunk in chunks:
                if piece := final.take(chunk):
                    yield piece
        yield final.reply()

    def _requests(
        self, model: str, messages: Sequence[Message], schema: dict[str, Any] | None,
        strict: bool, stream: bool = False,
    ) -> Requests:
        """The exchange with the server, without I/O (one implementation for the sync and the
        async client): yields the keyword arguments of each ``chat.completions.create`` call,
        one per ``response_format`` form to try, and is sent the response or thrown the error;
        returns the first response the server accepted. :func:`_send` and :func:`_asend` drive
        it.

        Raises:
            ModelError: the server failed (cause and URL named), or rejected every form.
        """
        for name, form in self._forms(schema, strict):
            try:
                response = yield self._request(model, messages, form, stream)
            except (self._openai.OpenAIError, ValueError) as exc:  # ValueError: a non-JSON body
                if self._rejected(name, exc):
                    continue
                raise self._explain(exc) from exc
            self._accepted(name)
            return response
        raise self._unsupported()

    def _aclient(self) -> Any:
        if self._async_client is None:
            self._async_client = self._openai.AsyncOpenAI(**self._client_options)
        return self._async_client

    def _forms(
        self, schema: dict[str, Any] | None, strict: bool
    ) -> list[tuple[str | None, dict[str, Any] | None]]:
        """The ``response_format`` values to try, in order: ``(name, value)``; ``(None, None)``
        is plain prompting."""
        self._strict_failure = None
        if schema is None:
            return [(None, None)]
        if self.constrained_form == "":  # every form was rejected earlier in this session
            return [] if strict else [(None, None)]
        names = [self.constrained_form] if self.constrained_form else list(RESPONSE_FORMATS)
        forms: list[tuple[str | None, dict[str, Any] | None]] = [
            (name, RESPONSE_FORMATS[name](schema)) for name in names
        ]
        return forms if strict else [*forms, (None, None)]

    def _rejected(self, name: str | None, exc: Exception) -> bool:
        """A ``response_format`` form the server refused: HTTP 400/422 (other than a full
        context), or any error that names ``response_format`` (llama-cpp-python's server
        answers 500 to a form it does not know). Remembered; the next form is tried."""
        o = self._openai
        if name is None or not isinstance(exc, o.APIStatusError):
            return False
        text = str(getattr(exc, "message", exc)).lower()
        refused = isinstance(exc, (o.BadRequestError, o.UnprocessableEntityError)) or (
            "response_format" in text or "json_schema" in text
        )
        if not refused or self._explain(exc).cause == "context_length":
            return False
        self._strict_failure = str(getattr(exc, "message", exc))[:200]
        if name == self.constrained_form:
            self.constrained_form = None  # it worked before; try the others again
        self._refused.add(name)
        if self._refused >= set(RESPONSE_FORMATS):
            self.constrained_form = ""
        return True

    def _accepted(self, name: str | None) -> None:
        if name is not None:
            self.constrained_form = name

    def _unsupported(self) -> ModelError:
        return ModelError(
            f"The server at {self.base_url} rejected every response_format form "
            f"({', '.join(RESPONSE_FORMATS)}): {self._strict_failure or 'no detail'}. Use "
            "--constrained auto (falls back to plain prompting) or off.",
            cause="bad_request",
        )

    def _request(
        self, model: str, messages: Sequence[Message], response_format: Any = None,
        stream: bool = False,
    ) -> dict[str, Any]:
        request = {
            "model": model, "messages": list(messages), "temperature": self.temperature,
            "max_tokens": self.max_tokens, "stop": list(STOP_SEQUENCES),
            "extra_body": self.extra_body,
        }
        if response_format is not None:
            request["response_format"] = response_format
        if stream:
            request.update(stream=True, stream_options={"include_usage": True})
        return request

    def _reply(self, response: Any, model: str) -> ModelReply:
        if not getattr(response, "choices", None):
            raise ModelError(
                f"The server at {self.base_url} answered with no choices (model {model}); "
                "check the server's log.",
                cause="empty_reply",
            )
        choice = response.choices[0]
        usage = getattr(response, "usage", None)
        return ModelReply(
            text=choice.message.content or "",
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            finish_reason=choice.finish_reason,
        )

    @contextlib.contextmanager
    def _explained(self) -> Iterator[None]:
        """Any exception inside (a stream that breaks off) raised as the :class:`ModelError`
        that explains it."""
        try:
            yield
        except Exception as exc:
            raise self._explain(exc) from exc

    def _explain(self, exc: Exception) -> ModelError:
        """Turn an SDK exception into a ModelError that names the cause, the URL and the fix."""
        o, url, model = self._openai, self.base_url, self._model
        if isinstance(exc, ModelError):
            return exc
        if not isinstance(exc, (o.OpenAIError, ValueError)):  # e.g. httpx errors mid-stream
            return ModelError(
                f"The connection to the model server at {url} broke while the reply was "
                f"streaming ({type(exc).__name__}: {exc}). Check the server's log and try again.",
                cause="connection",
            )
        detail = str(getattr(exc, "message", "") or exc)[:300]
        if isinstance(exc, o.APITimeoutError):
            return ModelError(
                f"The model server at {url} did not answer in time (after retries). It may be "
                "overloaded or the reply too long; try again or raise the timeout.",
                cause="timeout",
            )
        if isinstance(exc, o.APIConnectionError) and not _refused(exc):
            cause = exc.__cause__
            return ModelError(
                f"The connection to the model server at {url} broke before the reply was "
                f"complete ({type(cause).__name__ if cause else 'no detail'}: {cause}). The "
                "server may have crashed or run out of memory; check its log and try again.",
                cause="connection",
            )
        if isinstance(exc, o.APIConnectionError):
            return ModelError(
                f"Could not connect to the model server at {url}. Is it running? Start it, or "
                "pass the right --base-url (it usually ends in /v1).",
                cause="connection",
            )
        if isinstance(exc, (o.AuthenticationError, o.PermissionDeniedError)):
            return ModelError(
                f"The model server at {url} refused the API key ({exc.status_code}): {detail}. "
                "Set OPENAI_API_KEY or pass --api-key.",
                cause="auth",
            )
        if isinstance(exc, o.NotFoundError):
            return ModelError(
                f"Not found at {url} ({f'model {model!r}' if model else 'no model name'}): "
                f"{detail}. Check the model name "
                "(the server's /models lists them) and that the URL ends in /v1.",
                cause="not_found",
            )
        if isinstance(exc, o.BadRequestError):
            low = detail.lower()
            if "context" in low or "too long" in low or ("maximum" in low and "token" in low):
                return ModelError(
                    f"The conversation no longer fits the model's context window at {url}: "
                    f"{detail}. Use fewer steps, shorter observations or a larger context.",
                    cause="context_length",
                )
            return ModelError(f"The model server at {url} rejected the request: {detail}",
                              cause="bad_request")
        if isinstance(exc, o.APIStatusError):
            return ModelError(
                f"The model server at {url} failed with HTTP {exc.status_code} (after retries): "
                f"{detail}. Check the server's log.",
                cause="server",
            )
        if isinstance(exc, (o.APIResponseValidationError, ValueError)):
            return ModelError(
                f"The server at {url} answered with something that is not an OpenAI-style JSON "
                f"reply ({type(exc).__name__}: {detail[:120]}). Is --base-url an OpenAI-"
                "compatible API (it usually ends in /v1)?",
                cause="bad_response",
            )
        return ModelError(f"The model server at {url} failed: {detail}", cause="other")


Requests = Generator[dict[str, Any], Any, Any]
"""The exchange of :meth:`OpenAIChatModel._requests`: yields request options, is sent
responses."""


def _send(requests: Requests, create: Callable[..., Any]) -> Any:
    """Run ``requests`` with the blocking ``create``; returns the accepted response."""
    try:
        options = next(requests)
        while True:
            try:
                response = create(**options)
            except Exception as exc:
                options = requests.throw(exc)
            else:
                options = requests.send(response)
    except StopIteration as done:
        return done.value


async def _asend(requests: Requests, create: Callable[..., Awaitable[Any]]) -> Any:
    """:func:`_send` with the awaitable ``create`` of ``openai.AsyncOpenAI``."""
    try:
        options = next(requests)
        while True:
            try:
                response = await create(**options)
            except Exception as exc:
                options = requests.throw(exc)
            else:
                options = requests.send(response)
    except StopIteration as done:
        return done.value


def _refused(exc: BaseException) -> bool:
    """The connection was never made (refused, unknown host, connect timeout), as opposed to
    broken mid-reply. httpx's exception names are read so that httpx need not be imported."""
    cause = exc.__cause__
    return cause is None or type(cause).__name__ in ("ConnectError", "ConnectTimeout")


class _Final:
    """Collects a streamed completion: its text pieces, usage and finish reason."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.usage: Any = None
        self.finish_reason: str | None = None

    def take(self, chunk: Any) -> str:
        """The text piece of ``chunk`` (``""`` if none), kept with usage and finish reason."""
        if getattr(chunk, "usage", None):
            self.usage = chunk.usage
        choices = getattr(chunk, "choices", None) or []
        if not choices:
            return ""
        self.finish_reason = choices[0].finish_reason or self.finish_reason
        delta = getattr(choices[0], "delta", None)
        piece = (getattr(delta, "content", None) or "") if delta is not None else ""
        self.parts.append(piece)
        return piece

    def reply(self) -> ModelReply:
        return ModelReply(
            text="".join(self.parts),
            prompt_tokens=getattr(self.usage, "prompt_tokens", None),
            completion_tokens=getattr(self.usage, "completion_tokens", None),
            finish_reason=self.finish_reason,
        )
