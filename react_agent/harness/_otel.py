"""OpenTelemetry spans of runs and of ``serve`` requests (the ``otel`` extra), following the
semantic conventions for generative AI (``gen_ai.*``).

:class:`OtelCallback` is an event callback, like :class:`~react_agent.harness.TraceWriter`
(``Agent(model, toolbox, callbacks=[OtelCallback(model=model.name)])``, or
``react-agent run --otel``). A run gives this tree of spans::

    invoke_agent react-agent            (the run; INTERNAL)
    ├── chat MODEL                      (each model call; CLIENT)
    ├── execute_tool NAME               (each tool call; INTERNAL)
    └── ...

with ``gen_ai.operation.name``, ``gen_ai.request.model``, ``gen_ai.usage.input_tokens`` /
``output_tokens`` (per call, and summed on the run), ``gen_ai.tool.name``,
``gen_ai.response.finish_reasons`` and ``react_agent.*`` attributes (the run's status, the
parser's stage and repairs, the step number, a tool's failure kind). A failure sets the span's
status to ERROR with ``error.type`` (an unusable reply: ``parse_error``; a failed tool call: its
kind, e.g. ``tool_error``, ``timeout``; a run that ended without a final answer: its status).
What the small-model policies did is an event ``react_agent.policy_note`` on the span of the
step it is about (the policy, its label and the step).

Message contents (the system prompt, the task, replies, tool arguments and results, the final
answer) are recorded only when asked for (``capture_content=True``, ``--otel-content``), as the
conventions' ``gen_ai.system_instructions``, ``gen_ai.input.messages``,
``gen_ai.output.messages``, ``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result``; so
are the texts that may quote them: a policy note's text, the values of the argument cleaning
(without them, only its kind: ``amount: string -> integer``), the text of an unusable reply's
problem, of a tool's failure and of a run's error (without them, their kind or status).

:class:`OtelMiddleware` wraps the ``serve`` app in a SERVER span per HTTP request (continuing
a client's W3C ``traceparent``); the app adds the turn's token usage and parse outcome to it.
:func:`tracer_provider_from_env` builds the SDK's provider from the standard ``OTEL_*``
environment variables for the command line.

A callback never stops a run: an error inside it is logged (once per kind) and passed over.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from .._version import __version__
from ..errors import ConfigError, install_hint
from ..events import (
    Event,
    FinalAnswer,
    HistoryCompressed,
    ModelCallFinished,
    ModelCallStarted,
    ParseFailed,
    PolicyNote,
    ReplyParsed,
    RunFinished,
    RunStarted,
    ToolFinished,
    ToolStarted,
)
from ..types import RunResult, Step, ToolResult

if TYPE_CHECKING:
    from opentelemetry.trace import Span

log = logging.getLogger(__name__)


_Scope = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
_Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def _require(sdk: bool = False) -> None:
    try:
        import opentelemetry.trace

        if sdk:
            import opentelemetry.sdk.trace  # noqa: F401
    except ImportError as exc:
        raise ConfigError(f"OpenTelemetry is not installed ({exc.name} is missing): "
                          f"the otel extra, {install_hint('otel')}.") from exc


class OtelCallback:
    """Emits OpenTelemetry spans for the runs whose events it gets (see the module docs).

    Args:
        tracer_provider: where the spans go (an OpenTelemetry ``TracerProvider``, e.g.
            :func:`tracer_provider_from_env`'s); ``None``: the global provider
            (``opentelemetry.trace.set_tracer_provider``), which drops them if none was set.
        model: the model's name (``gen_ai.request.model``, and the chat spans' names).
        capture_content: also record message contents (prompts, replies, tool arguments and
            results, answers) and the texts that may quote them (policy notes, the values of
            the argument cleaning, errors), which may hold personal or secret data.
        agent_name: ``gen_ai.agent.name``.
        provider_name: ``gen_ai.provider.name`` (e.g. ``"openai"``), when known.
        conversation_id: ``gen_ai.conversation.id``, set on every run (e.g. a chat's turns).

    Raises:
        ConfigError: OpenTelemetry is not installed (the ``otel`` extra).
    """

    def __init__(
        self, tracer_provider: Any = None, *, model: str | None = None,
        capture_content: bool = False, agent_name: str = "react-agent",
        provider_name: str | None = None, conversation_id: str | None = None,
    ) -> None:
        _require()
        from opentelemetry import trace

        self.tracer = trace.get_tracer("react_agent", __version__,
                                       tracer_provider=tracer_provider)
        self.model, self.capture_content = model, capture_content
        self.agent_name, self.provider_name = agent_name, provider_name
        self.conversation_id = conversation_id
        # the open spans of the run in progress, per thread and asyncio task: runs that go on
        # at once (run --tasks --concurrency) each have their own
        self._spans: ContextVar[_RunSpans | None] = ContextVar("react_agent_otel", default=None)
        self._failed: set[str] = set()

    def __call__(self, event: Event) -> None:
        try:
            self._handle(event)
        except Exception as exc:  # never stop the run for its telemetry
            kind = type(exc).__name__
            if kind not in self._failed:
                self._failed.add(kind)
                log.warning("OpenTelemetry callback failed (%s: %s); its spans may be "
                            "incomplete", kind, exc)

    # -- events -----------------------------------------------------------------------------
    def _handle(self, event: Event) -> None:
        st = self._spans.get()
        if st is None:
            st = _RunSpans()
            self._spans.set(st)
        if isinstance(event, RunStarted):
            self._start_run(st, event)
        elif isinstance(event, ModelCallStarted):
            self._start_chat(st, event.index, event.message_count, event.message_chars)
        elif isinstance(event, ModelCallFinished):
            # usage belongs to the call: a policy's question (read from probabilities) is
            # answered but never parsed as a reply
            if st.chat is not None and st.chat_step == event.step.index:
                st.chat.set_attributes(_usage(event.step.prompt_tokens,
                                              event.step.completion_tokens))
                if event.step.origin:
                    st.chat.set_attribute("react_agent.origin", event.step.origin)
        elif isinstance(event, (ReplyParsed, ParseFailed)):
            if st.chat is None or st.chat_step != event.step.index:
                self._start_chat(st, event.step.index, 0, 0)  # replayed events have no start
            self._read_reply(st, event)
        elif isinstance(event, PolicyNote):
            note: dict[str, Any] = {
                "react_agent.policy": event.policy, "react_agent.label": event.label,
                "react_agent.step": event.step.index}
            if self.capture_content:  # the text may quote the run (a held call's arguments)
                note["react_agent.text"] = event.text
            if st.chat is not None and st.chat_step == event.step.index:
                st.chat.add_event("react_agent.policy_note", note)
            elif event.step.index > st.chat_step:  # before the extra call it is about
                st.notes.append(note)
            elif st.agent is not None:
                st.agent.add_event("react_agent.policy_note", note)
        elif isinstance(event, ToolStarted):
            self._close_chat(st)
            self._start_tool(st, event.step, event.call.name)
        elif isinstance(event, ToolFinished):
            self._close_chat(st)
            self._finish_tool(st, event.step, event.result)
        elif isinstance(event, FinalAnswer):
            self._close_chat(st)
            if st.agent is not None:
                attributes: dict[str, Any] = {"react_agent.draft": event.draft,
                                              "react_agent.best_effort": event.best_effort,
                                              "react_agent.step": event.step.index}
                if self.capture_content:
                    attributes["react_agent.answer"] = event.text
                st.agent.add_event("react_agent.final_answer", attributes)
        elif isinstance(event, HistoryCompressed):
            error = event.error if self.capture_content else "failed" if event.error else None
            st.pending.append(("react_agent.history_compressed", {
                "react_agent.turns": event.turns, "react_agent.tokens_before":
                event.tokens_before, "react_agent.tokens_after": event.tokens_after,
                "react_agent.error": error or ""}))
        elif isinstance(event, RunFinished):
            self._finish_run(st, event.result)

    def _start_run(self, st: _RunSpans, event: RunStarted) -> None:
        from opentelemetry.trace import SpanKind

        if st.agent is not None:  # a run that never finished
            self._close_all(st, "interrupted", "The run gave no RunFinished event.")
        st.chat_step = 0
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": self.agent_name,
            "react_agent.tools": list(event.tools),
        }
        self._common(attributes)
        if event.resumed_steps:
            attributes["react_agent.resumed_steps"] = event.resumed_steps
        if self.capture_content:
            attributes["gen_ai.system_instructions"] = _dumps(
                [{"type": "text", "content": event.system_prompt}])
            attributes["gen_ai.input.messages"] = _dumps(
                [{"role": "user", "parts": [{"type": "text", "content": event.task}]}])
        st.agent = self.tracer.start_span(f"invoke_agent {self.agent_name}",
                                             kind=SpanKind.INTERNAL, attributes=attributes)
        for name, extra in st.pending:
            st.agent.add_event(name, extra)
        st.pending.clear()

    def _start_chat(self, st: _RunSpans, index: int, messages: int, chars: int) -> None:
        from opentelemetry.trace import SpanKind

        self._close_chat(st)
        attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", "react_agent.step": index}
        self._common(attributes)
        if messages:
            attributes["react_agent.messages"] = messages
            attributes["react_agent.message_chars"] = chars
        name = f"chat {self.model}" if self.model else "chat"
        st.chat = self.tracer.start_span(name, context=self._context(st),
                                            kind=SpanKind.CLIENT, attributes=attributes)
        st.chat_step, st.chat_end = index, None
        for note in st.notes:
            st.chat.add_event("react_agent.policy_note", note)
        st.notes.clear()

    def _read_reply(self, st: _RunSpans, event: ReplyParsed | ParseFailed) -> None:
        from opentelemetry.trace import Status, StatusCode

        span, step = st.chat, event.step
        assert span is not None
        span.set_attributes(_usage(step.prompt_tokens, step.completion_tokens))
        if step.finish_reason:
            span.set_attribute("gen_ai.response.finish_reasons", [step.finish_reason])
        if step.origin:
            span.set_attribute("react_agent.origin", step.origin)
        if self.capture_content:
            message: dict[str, Any] = {"role": "assistant", "parts": [
                {"type": "text", "content": step.raw_output}]}
            if step.finish_reason:
                message["finish_reason"] = step.finish_reason
            span.set_attribute("gen_ai.output.messages", _dumps([message]))
        if isinstance(event, ParseFailed):
            span.set_attribute("error.type", "parse_error")
            if event.kind:
                span.set_attribute("react_agent.parse_error.kind", event.kind)
            problem = step.error if self.capture_content and step.error else \
                f"unusable reply ({event.kind or 'parse_error'})"  # the problem quotes it
            span.set_status(Status(StatusCode.ERROR, problem))
        else:
            span.set_attribute("react_agent.parse.stage", event.reply.stage)
            if event.reply.repairs:
                span.set_attribute("react_agent.parse.repairs", list(event.reply.repairs))
            span.set_attribute("react_agent.action", "final_answer"
                               if event.reply.final_answer is not None else "tool_calls")
            if event.reply.tool_calls:
                span.set_attribute("react_agent.tool_calls",
                                   [c.name for c in event.reply.tool_calls])
        st.chat_end = time.time_ns()

    def _start_tool(self, st: _RunSpans, step: Step, name: str) -> None:
        from opentelemetry.trace import SpanKind

        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
            "gen_ai.tool.type": "function", "react_agent.step": step.index,
        }
        start = time.time_ns()
        span = self.tracer.start_span(f"execute_tool {name}", context=self._context(st),
                                      kind=SpanKind.INTERNAL, attributes=attributes,
                                      start_time=start)
        st.tools.append((span, start))

    def _finish_tool(self, st: _RunSpans, step: Step, result: ToolResult) -> None:
        from opentelemetry.trace import Status, StatusCode

        if not st.tools:
            self._start_tool(st, step, result.call.name)
        span, start = st.tools.pop(0)
        span.set_attribute("react_agent.tool.ok", result.ok)
        cleaning = result.cleaning if self.capture_content else result.cleaning_kinds
        if cleaning:
            span.set_attribute("react_agent.tool.cleaning", list(cleaning))
        if self.capture_content:
            span.set_attribute("gen_ai.tool.call.arguments", _dumps(result.call.args))
            span.set_attribute("gen_ai.tool.call.result", result.observation)
        if result.error:
            span.set_attribute("react_agent.tool.error", result.error)
        if not result.ok and not result.skipped:
            kind = result.error or "tool_error"
            span.set_attribute("error.type", kind)
            text = f"{kind}: {result.observation[:500]}" if self.capture_content else kind
            span.set_status(Status(StatusCode.ERROR, text))
        # the calls of a step run together and are reported after: each ends after its own time
        span.end(end_time=min(time.time_ns(), start + int(result.seconds * 1e9)))

    def _finish_run(self, st: _RunSpans, result: RunResult) -> None:
        from opentelemetry.trace import Status, StatusCode

        if st.agent is None:
            return
        ok = result.status == "final_answer"
        # the error may quote the model's reply or the server's message
        error = result.error if self.capture_content else None
        self._close_all(st, None if ok else result.status, error)
        agent = st.agent
        for note in st.notes:
            agent.add_event("react_agent.policy_note", note)
        st.notes.clear()
        st.chat_step = 0
        usage = result.usage
        agent.set_attributes({
            **_usage(usage["prompt_tokens"], usage["completion_tokens"]),
            "react_agent.status": result.status, "react_agent.model_calls":
            usage["model_calls"], "react_agent.tool_calls": usage["tool_calls"],
            "react_agent.best_effort": result.best_effort,
        })
        if self.capture_content and result.final_answer is not None:
            agent.set_attribute("gen_ai.output.messages", _dumps([{
                "role": "assistant", "parts": [{"type": "text", "content": result.final_answer}],
                "finish_reason": "stop"}]))
        if not ok:
            agent.set_attribute("error.type", result.status)
            agent.set_status(Status(StatusCode.ERROR, error or result.status))
        agent.end()
        st.agent = None

    # -- helpers ----------------------------------------------------------------------------
    def _common(self, attributes: dict[str, Any]) -> None:
        if self.model:
            attributes["gen_ai.request.model"] = self.model
        if self.provider_name:
            attributes["gen_ai.provider.name"] = self.provider_name
        if self.conversation_id:
            attributes["gen_ai.conversation.id"] = self.conversation_id

    def _context(self, st: _RunSpans) -> Any:
        from opentelemetry import trace

        return trace.set_span_in_context(st.agent) if st.agent is not None else None

    def _close_chat(self, st: _RunSpans) -> None:
        if st.chat is not None:
            st.chat.end(end_time=st.chat_end)
            st.chat, st.chat_end = None, None

    def _close_all(self, st: _RunSpans, status: str | None, error: str | None) -> None:
        """End the open spans; a model call that got no reply and tool calls that never
        finished get ``status`` as their error (``None``: none)."""
        from opentelemetry.trace import Status, StatusCode

        spans = [s for s, _ in st.tools]
        if st.chat is not None and st.chat_end is None:
            spans.insert(0, st.chat)
        for span in spans:
            if status is not None:
                span.set_attribute("error.type", status)
                span.set_status(Status(StatusCode.ERROR, error or status))
        self._close_chat(st)
        for span, _ in st.tools:
            span.end()
        st.tools.clear()


@dataclass
class _RunSpans:
    """The open spans of one run (and what waits for the next span)."""

    agent: Span | None = None
    chat: Span | None = None
    chat_step: int = 0
    chat_end: int | None = None  # when the reply was read (the chat span ends then)
    tools: list[tuple[Span, int]] = field(default_factory=list)  # open tool spans, with start
    pending: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # before a run
    notes: list[dict[str, Any]] = field(default_factory=list)  # before the call they are about


def _usage(prompt: int | None, completion: int | None) -> dict[str, int]:
    usage = {}
    if prompt is not None:
        usage["gen_ai.usage.input_tokens"] = prompt
    if completion is not None:
        usage["gen_ai.usage.output_tokens"] = completion
    return usage


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr)


# -- serve ----------------------------------------------------------------------------------------
_ROUTES = ("/v1/chat/completions", "/v1/models", "/health")


class OtelMiddleware:
    """ASGI middleware: a SERVER span per HTTP request (``POST /v1/chat/completions``), with
    the HTTP conventions' attributes (method, route, status code; ERROR for a 5xx), continuing
    the client's trace when it sends a W3C ``traceparent``. On a chat completion,
    ``gen_ai.operation.name`` is ``chat``, ``gen_ai.request.model`` the served model, and the
    ``serve`` app adds the turn's token usage, attempts, parser stage and parse error.

    ``app = OtelMiddleware(create_app(model), tracer_provider, model=model.name)``.

    Raises:
        ConfigError: OpenTelemetry is not installed (the ``otel`` extra).
    """

    def __init__(self, app: Callable[[_Scope, _Receive, _Send], Awaitable[None]],
                 tracer_provider: Any = None, model: str | None = None) -> None:
        _require()
        from opentelemetry import trace

        self.app, self.model = app, model
        self.tracer = trace.get_tracer("react_agent.serve", __version__,
                                       tracer_provider=tracer_provider)

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        from opentelemetry import context, propagate, trace
        from opentelemetry.trace import SpanKind, Status, StatusCode

        method, path = str(scope.get("method", "GET")), str(scope.get("path", ""))
        route = path if path in _ROUTES else None
        attributes: dict[str, Any] = {"http.request.method": method, "url.path": path[:200],
                                      "url.scheme": str(scope.get("scheme", "http"))}
        if route:
            attributes["http.route"] = route
        server = scope.get("server")
        if isinstance(server, (tuple, list)) and len(server) == 2:
            attributes["server.address"], attributes["server.port"] = str(server[0]), \
                int(server[1])
        if route == "/v1/chat/completions":
            attributes["gen_ai.operation.name"] = "chat"
            if self.model:
                attributes["gen_ai.request.model"] = self.model
        carrier = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])
                   if k.lower() in (b"traceparent", b"tracestate")}
        parent = propagate.extract(carrier) if carrier else None
        span = self.tracer.start_span(f"{method} {route}" if route else method,
                                      context=parent, kind=SpanKind.SERVER,
                                      attributes=attributes)
        token = context.attach(trace.set_span_in_context(span, parent))

        async def sending(message: MutableMapping[str, Any]) -> None:
            if message.get("type") == "http.response.start":
                status = int(message.get("status", 0))
                span.set_attribute("http.response.status_code", status)
                if status >= 500:
                    span.set_attribute("error.type", str(status))
                    span.set_status(Status(StatusCode.ERROR))
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except BaseException as exc:
            span.record_exception(exc)
            span.set_attribute("error.type", type(exc).__qualname__)
            span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}"))
            raise
        finally:
            context.detach(token)
            span.end()


_NO_OTEL: list[bool] = []  # filled once opentelemetry is found missing


def annotate_turn(prompt_tokens: int, completion_tokens: int, attempts: int,
                  stage: str | None, parse_error: str | None, calls: bool) -> None:
    """Add a ``serve`` turn's outcome to the current span (the request's, under
    :class:`OtelMiddleware`); nothing when no span is recording or OpenTelemetry is missing."""
    if _NO_OTEL:
        return
    try:
        from opentelemetry import trace
    except ImportError:
        _NO_OTEL.append(True)
        return
    span = trace.get_current_span()
    if not span.is_recording():
        return
    span.set_attributes({
        **_usage(prompt_tokens, completion_tokens), "react_agent.attempts": attempts,
        "gen_ai.response.finish_reasons": ["tool_calls" if calls else "stop"],
    })
    if stage:
        span.set_attribute("react_agent.parse.stage", stage)
    if parse_error:
        span.set_attribute("react_agent.parse_error.kind", parse_error)


# -- the command line ---------------------------------------------------------------------------
def tracer_provider_from_env(
    service_name: str = "react-agent", stream: IO[str] | None = None
) -> Any:
    """The SDK's ``TracerProvider`` for ``--otel``, configured from the standard ``OTEL_*``
    environment variables: the resource (``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``;
    the service is ``service_name`` unless they name one), the sampler (``OTEL_TRACES_SAMPLER``)
    and the exporter:

    - ``OTEL_TRACES_EXPORTER=none``: none (the spans are made and dropped);
    - an OTLP exporter when ``opentelemetry-exporter-otlp`` is installed and
      ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``..._TRACES_ENDPOINT``) is set, over
      ``OTEL_EXPORTER_OTLP_PROTOCOL`` (``http/protobuf`` by default, or ``grpc``), batched
      (``OTEL_BSP_*``); headers, timeouts and certificates from their own ``OTEL_*``
      variables;
    - else spans printed as JSON to ``stream`` (standard error), one as each ends (also with
      ``OTEL_TRACES_EXPORTER=console``); a warning says when an endpoint is set but the
      exporter is not installed.

    A provider already set globally (``opentelemetry-instrument``) is used as it is.

    Raises:
        ConfigError: OpenTelemetry is not installed (the ``otel`` extra).
    """
    _require(sdk=True)
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import SpanProcessor
    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SimpleSpanProcessor,
    )

    current = trace.get_tracer_provider()
    if isinstance(current, SdkTracerProvider):
        return current
    resource = Resource.create()
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = Resource.create({"service.name": service_name,
                                    "service.version": __version__})
    provider = SdkTracerProvider(resource=resource)
    names = [n.strip().lower() for n in os.environ.get("OTEL_TRACES_EXPORTER", "").split(",")
             if n.strip()]
    endpoint = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or \
        os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    processor: SpanProcessor | None = None
    if names == ["none"]:
        return provider
    if endpoint and (not names or "otlp" in names):
        exporter = _otlp_exporter()
        if exporter is not None:
            processor = BatchSpanProcessor(exporter)
        else:
            log.warning("OTEL_EXPORTER_OTLP_ENDPOINT is set but opentelemetry-exporter-otlp is "
                        "not installed (pip install opentelemetry-exporter-otlp): the spans "
                        "are printed to standard error instead")
    if processor is None:
        console = ConsoleSpanExporter(out=stream or sys.stderr)
        processor = SimpleSpanProcessor(console)
    provider.add_span_processor(processor)
    return provider


def global_tracer_provider() -> Any:
    """The global tracer provider, set once from the environment
    (:func:`tracer_provider_from_env`) if it is not an SDK provider yet: the one every span
    of the command line goes to (it is flushed and shut down when the process exits).

    Raises:
        ConfigError: OpenTelemetry is not installed (the ``otel`` extra).
    """
    _require(sdk=True)
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider

    if not isinstance(trace.get_tracer_provider(), SdkTracerProvider):
        trace.set_tracer_provider(tracer_provider_from_env())
    return trace.get_tracer_provider()


def _otlp_exporter() -> Any:
    """The OTLP span exporter of ``OTEL_EXPORTER_OTLP_PROTOCOL``, or ``None`` when the
    ``opentelemetry-exporter-otlp`` package for it is not installed."""
    protocol = (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf").lower()
    module = "grpc" if protocol == "grpc" else "http"
    try:
        exporters = __import__(f"opentelemetry.exporter.otlp.proto.{module}.trace_exporter",
                               fromlist=["OTLPSpanExporter"])
    except ImportError:
        return None
    return exporters.OTLPSpanExporter()
