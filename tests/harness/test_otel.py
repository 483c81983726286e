"""OpenTelemetry spans (react_agent.harness._otel): the span tree and attributes of scripted
runs (GenAI semantic conventions), content only on request, ``serve`` requests, and the
provider the command line builds from the ``OTEL_*`` environment."""

from __future__ import annotations

import io
import json
import logging
import sys
import threading
import types
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode

from react_agent import Agent, ScriptedModel, Toolbox
from react_agent.harness import OtelCallback, OtelMiddleware, tracer_provider_from_env

TASK = "Weather in Paris?"
REPLIES = [
    json.dumps({"thought": "Atlantis first.", "action": {"name": "get_weather",
                                                         "args": {"city": "Atlantis"}}}),
    "no JSON at all",
    json.dumps({"thought": "Paris.", "action": {"name": "get_weather", "args": {"city": "Paris"}}}),
    json.dumps({"thought": "Done.", "action": {"final_answer": "It is 18 °C in Paris."}}),
]


def weather() -> Toolbox:
    tb = Toolbox()

    @tb.tool
    def get_weather(city: str) -> str:
        """Current weather of a city."""
        if city == "Atlantis":
            raise LookupError("no such city")
        return f"18 °C in {city}"

    return tb


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def run(provider: TracerProvider, replies: list[Any] = REPLIES, **options: Any) -> Any:
    callback = OtelCallback(provider, model="scripted", **options)
    return Agent(ScriptedModel(replies), weather(), callbacks=[callback]).run(TASK)


def tree(spans: tuple[ReadableSpan, ...] | list[ReadableSpan]) -> list[str]:
    """The spans as indented lines ``name [STATUS]``, children in start order."""
    children: dict[int | None, list[ReadableSpan]] = {}
    ids = {s.context.span_id for s in spans}
    for span in spans:
        parent = span.parent.span_id if span.parent and span.parent.span_id in ids else None
        children.setdefault(parent, []).append(span)
    lines: list[str] = []

    def walk(span: ReadableSpan, depth: int) -> None:
        lines.append("  " * depth + f"{span.name} [{span.status.status_code.name}]")
        for child in sorted(children.get(span.context.span_id, []), key=lambda s: s.start_time
                            or 0):
            walk(child, depth + 1)

    for root in children.get(None, []):
        walk(root, 0)
    return lines


def test_the_span_tree_of_a_run(provider: TracerProvider,
                                exporter: InMemorySpanExporter) -> None:
    result = run(provider)
    assert result.status == "final_answer"
    spans = exporter.get_finished_spans()
    assert tree(spans) == [
        "invoke_agent react-agent [UNSET]",
        "  chat scripted [UNSET]",
        "  execute_tool get_weather [ERROR]",
        "  chat scripted [ERROR]",
        "  chat scripted [UNSET]",
        "  execute_tool get_weather [UNSET]",
        "  chat scripted [UNSET]",
    ]
    agent = next(s for s in spans if s.name.startswith("invoke_agent"))
    chats = [s for s in spans if s.name.startswith("chat")]
    tools = [s for s in spans if s.name.startswith("execute_tool")]
    assert agent.kind == SpanKind.INTERNAL and all(c.kind == SpanKind.CLIENT for c in chats)
    assert agent.attributes is not None
    assert dict(agent.attributes) == {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "react-agent",
        "gen_ai.request.model": "scripted", "react_agent.tools": ("get_weather",),
        "gen_ai.usage.input_tokens": result.usage["prompt_tokens"],
        "gen_ai.usage.output_tokens": result.usage["completion_tokens"],
        "react_agent.status": "final_answer", "react_agent.model_calls": 4,
        "react_agent.tool_calls": 2, "react_agent.best_effort": False,
    }
    assert [e.name for e in agent.events] == ["react_agent.final_answer"]
    for chat, step in zip(chats, result.steps, strict=True):
        attributes = dict(chat.attributes or {})
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.request.model"] == "scripted"
        assert attributes["react_agent.step"] == step.index
        assert attributes["gen_ai.usage.input_tokens"] == step.prompt_tokens
        assert attributes["gen_ai.usage.output_tokens"] == step.completion_tokens
        assert attributes["gen_ai.response.finish_reasons"] == ("stop",)
    unusable = dict(chats[1].attributes or {})
    assert unusable["error.type"] == "parse_error" and "react_agent.parse.stage" not in unusable
    assert chats[1].status.description == "unusable reply (no_json)"  # no reply text quoted
    assert dict(chats[0].attributes or {})["react_agent.tool_calls"] == ("get_weather",)
    assert dict(chats[3].attributes or {})["react_agent.action"] == "final_answer"
    failed = dict(tools[0].attributes or {})
    assert failed == {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                      "gen_ai.tool.type": "function", "react_agent.step": 1,
                      "react_agent.tool.ok": False, "react_agent.tool.error": "tool_error",
                      "error.type": "tool_error"}
    assert tools[0].status.status_code == StatusCode.ERROR
    assert tools[0].status.description == "tool_error"
    # no message content without capture_content
    everything = json.dumps([dict(s.attributes or {}) for s in spans], ensure_ascii=False)
    for text in ("Weather in Paris", "no such city", "Atlantis", "18 °C", "no JSON at all"):
        assert text not in everything


def test_content_only_on_request(provider: TracerProvider,
                                 exporter: InMemorySpanExporter) -> None:
    run(provider, capture_content=True, conversation_id="c-1", provider_name="openai")
    spans = exporter.get_finished_spans()
    agent = next(s for s in spans if s.name.startswith("invoke_agent"))
    attributes = dict(agent.attributes or {})
    assert json.loads(str(attributes["gen_ai.input.messages"])) == [
        {"role": "user", "parts": [{"type": "text", "content": TASK}]}]
    assert "get_weather" in str(attributes["gen_ai.system_instructions"])
    assert "It is 18 °C in Paris." in str(attributes["gen_ai.output.messages"])
    assert attributes["gen_ai.conversation.id"] == "c-1"
    assert attributes["gen_ai.provider.name"] == "openai"
    tool = next(s for s in spans if s.name.startswith("execute_tool"))
    assert dict(tool.attributes or {})["gen_ai.tool.call.arguments"] == '{"city": "Atlantis"}'
    assert "no such city" in str(dict(tool.attributes or {})["gen_ai.tool.call.result"])
    assert "no such city" in str(tool.status.description)
    chat = [s for s in spans if s.name.startswith("chat")][1]
    assert "no JSON at all" in str(dict(chat.attributes or {})["gen_ai.output.messages"])


def test_a_failed_run_and_a_policy_call(provider: TracerProvider,
                                        exporter: InMemorySpanExporter) -> None:
    # the model fails on its second call: the open chat span and the run are errors
    result = run(provider, REPLIES[:1])
    assert result.status == "model_error"
    spans = exporter.get_finished_spans()
    assert tree(spans)[-1] == "  chat scripted [ERROR]"
    agent = next(s for s in spans if s.name.startswith("invoke_agent"))
    assert dict(agent.attributes or {})["error.type"] == "model_error"
    assert agent.status.status_code == StatusCode.ERROR
    assert agent.status.description == "model_error"  # its error text only with content
    exporter.clear()
    run(provider, REPLIES[:1], capture_content=True)
    agent = next(s for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent"))
    assert "only 1 replies" in str(agent.status.description)
    exporter.clear()
    # a draft answer that states none of the tool's values: the review asks again
    replies = [REPLIES[2], json.dumps({"thought": "t", "action": {"final_answer": "Warm."}}),
               json.dumps({"thought": "t", "action": {"final_answer": "18 °C in Paris."}})]
    result = run(provider, replies)
    assert [s.origin for s in result.steps] == [None, None, "review"]
    spans = exporter.get_finished_spans()
    chats = [s for s in spans if s.name.startswith("chat")]
    assert dict(chats[2].attributes or {})["react_agent.origin"] == "review"
    notes = [e for c in chats for e in c.events if e.name == "react_agent.policy_note"]
    assert notes and dict(notes[0].attributes or {})["react_agent.policy"] == "review"


def test_a_focused_question_reports_its_usage(provider: TracerProvider,
                                              exporter: InMemorySpanExporter) -> None:
    # Relevance's question is answered and never parsed as a reply: its span has the usage too
    from react_agent.policies import Relevance, default_policies

    replies = [REPLIES[2], "yes", REPLIES[3]]
    callback = OtelCallback(provider, model="scripted")
    result = Agent(ScriptedModel(replies), weather(), callbacks=[callback],
                   policies=default_policies(use=[Relevance()], off=["review"])).run(TASK)
    assert [s.origin for s in result.steps] == [None, "relevance", None]
    chats = [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
    assert len(chats) == 3
    question = dict(chats[1].attributes or {})
    assert question["react_agent.origin"] == "relevance"
    assert question["gen_ai.usage.input_tokens"] == result.steps[1].prompt_tokens > 0
    assert question["gen_ai.usage.output_tokens"] == result.steps[1].completion_tokens


CLEANED, HELD = 73914, "zq-held-55817"  # values found nowhere else


def invoices() -> Toolbox:
    tb = Toolbox()

    @tb.tool
    def lookup_invoice(number: int) -> str:
        """The amount due on an invoice."""
        return f"Invoice {number}: 120 euros due."

    @tb.tool
    def pay(reference: str) -> str:
        """Pay an invoice."""
        return "paid"

    return tb


def everything(spans: tuple[ReadableSpan, ...]) -> str:
    """All a span says: names, attributes, events and statuses, as one text."""
    return json.dumps([[s.name, dict(s.attributes or {}), s.status.description,
                        [[e.name, dict(e.attributes or {})] for e in s.events]] for s in spans],
                      ensure_ascii=False)


@pytest.mark.parametrize("capture", [False, True])
def test_argument_values_only_with_content(provider: TracerProvider,
                                           exporter: InMemorySpanExporter,
                                           capture: bool) -> None:
    """A held call (its note quotes its arguments) and a cleaned argument (its note quotes the
    value): without capture_content neither value reaches a span or event, only the kinds."""
    replies = [json.dumps({"thought": "both", "action": [
                   {"name": "lookup_invoice", "args": {"number": str(CLEANED)}},
                   {"name": "pay", "args": {"reference": HELD}}]}),
               json.dumps({"thought": "t", "action": {"final_answer": "120 euros are due."}})]
    callback = OtelCallback(provider, model="scripted", capture_content=capture)
    result = Agent(ScriptedModel(replies), invoices(), callbacks=[callback]).run(
        f"Look up invoice {CLEANED} and pay it.")
    assert result.status == "final_answer"
    assert [n[:2] for n in result.steps[0].notes] == [["held_calls", "Held"]]
    assert result.steps[0].results[0].cleaning == [f'number: "{CLEANED}" -> {CLEANED}']
    spans = exporter.get_finished_spans()
    tool = next(s for s in spans if s.name == "execute_tool lookup_invoice")
    notes = [dict(e.attributes or {}) for s in spans for e in s.events
             if e.name == "react_agent.policy_note"]
    assert [(n["react_agent.policy"], n["react_agent.label"]) for n in notes] == [
        ("held_calls", "Held")]
    text = everything(spans)
    if capture:
        assert HELD in str(notes[0]["react_agent.text"])
        assert dict(tool.attributes or {})["react_agent.tool.cleaning"] == (
            f'number: "{CLEANED}" -> {CLEANED}',)
    else:
        assert "react_agent.text" not in notes[0]
        assert dict(tool.attributes or {})["react_agent.tool.cleaning"] == (
            "number: string -> integer",)
        assert str(CLEANED) not in text and HELD not in text


def test_a_run_inside_a_span_and_a_failing_exporter(
    provider: TracerProvider, exporter: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("request") as outer:
        run(provider)
    agent = next(s for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent"))
    assert agent.parent is not None and agent.parent.span_id == outer.get_span_context().span_id

    class Broken:
        def start_span(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("collector down")

    callback = OtelCallback(provider, model="scripted")
    callback.tracer = Broken()  # type: ignore[assignment]
    with caplog.at_level(logging.WARNING, logger="react_agent"):
        result = Agent(ScriptedModel(REPLIES), weather(), callbacks=[callback]).run(TASK)
    assert result.status == "final_answer"  # the run goes on
    assert sum("OpenTelemetry callback failed" in r.message for r in caplog.records) == 1


def test_runs_at_once_keep_their_own_spans(provider: TracerProvider,
                                           exporter: InMemorySpanExporter) -> None:
    """One callback shared by runs in several threads (run --tasks --concurrency)."""
    callback = OtelCallback(provider, model="scripted")
    barrier = threading.Barrier(3)

    def paced(text: str) -> Any:
        def reply(messages: Any) -> str:
            barrier.wait(timeout=10)  # every step of the three runs at the same time
            return text
        return reply

    def one() -> None:
        replies = [paced(REPLIES[2]), paced(REPLIES[3])]
        Agent(ScriptedModel(replies), weather(), callbacks=[callback]).run(TASK)

    threads = [threading.Thread(target=one) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert tree(exporter.get_finished_spans()) == [
        "invoke_agent react-agent [UNSET]", "  chat scripted [UNSET]",
        "  execute_tool get_weather [UNSET]", "  chat scripted [UNSET]",
    ] * 3


def test_serve_requests_get_a_span(provider: TracerProvider,
                                   exporter: InMemorySpanExporter) -> None:
    openai = pytest.importorskip("openai")
    from react_agent.serve import ServeConfig, create_app, running

    model = ScriptedModel([REPLIES[2], "no JSON", json.dumps(
        {"thought": "t", "action": {"final_answer": "18"}})])
    app = OtelMiddleware(create_app(model, ServeConfig(api_key="k")), provider, model="scripted")
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    with running(app) as url:
        client = openai.OpenAI(base_url=url, api_key="k", max_retries=0)
        reply = client.chat.completions.create(
            model="x", messages=[{"role": "user", "content": TASK}], tools=tools,
            extra_headers={"traceparent": f"00-{trace_id}-00f067aa0ba902b7-01"})
        assert reply.choices[0].message.tool_calls
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=url, api_key="wrong", max_retries=0).models.list()
    spans = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time or 0)
    assert [s.name for s in spans] == ["POST /v1/chat/completions", "GET /v1/models"]
    chat, models = (dict(s.attributes or {}) for s in spans)
    assert spans[0].kind == SpanKind.SERVER
    assert format(spans[0].context.trace_id, "032x") == trace_id
    assert chat["http.response.status_code"] == 200 and chat["http.route"] == \
        "/v1/chat/completions"
    assert chat["gen_ai.operation.name"] == "chat" and chat["gen_ai.request.model"] == "scripted"
    assert chat["gen_ai.usage.input_tokens"] > 0 and chat["react_agent.attempts"] == 1
    assert chat["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert models["http.response.status_code"] == 401
    assert spans[1].status.status_code == StatusCode.UNSET  # a client's error is not ours


def test_the_provider_from_the_environment(monkeypatch: pytest.MonkeyPatch,
                                           caplog: pytest.LogCaptureFixture) -> None:
    for name in ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_SERVICE_NAME",
                 "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_RESOURCE_ATTRIBUTES",
                 "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"):
        monkeypatch.delenv(name, raising=False)
    stream = io.StringIO()
    provider = tracer_provider_from_env(stream=stream)  # nothing set: JSON on the stream
    assert provider.resource.attributes["service.name"] == "react-agent"
    run(provider, REPLIES[3:])
    printed = stream.getvalue()
    assert '"name": "invoke_agent react-agent"' in printed and '"name": "chat scripted"' in printed

    monkeypatch.setenv("OTEL_SERVICE_NAME", "my-agent")
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    provider = tracer_provider_from_env(stream=stream)
    assert provider.resource.attributes["service.name"] == "my-agent"
    assert provider._active_span_processor._span_processors == ()

    monkeypatch.delenv("OTEL_TRACES_EXPORTER")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    fake = types.ModuleType("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    monkeypatch.setitem(sys.modules, fake.__name__, None)  # not installed
    with caplog.at_level(logging.WARNING, logger="react_agent"):
        provider = tracer_provider_from_env(stream=stream)
    assert "opentelemetry-exporter-otlp is not installed" in caplog.text
    processors = provider._active_span_processor._span_processors
    assert type(processors[0]).__name__ == "SimpleSpanProcessor"

    class Exporter(InMemorySpanExporter):
        pass

    fake.OTLPSpanExporter = Exporter  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, fake.__name__, fake)  # installed
    provider = tracer_provider_from_env(stream=stream)
    (batch,) = provider._active_span_processor._span_processors
    assert type(batch).__name__ == "BatchSpanProcessor"
    assert isinstance(batch._batch_processor._exporter, Exporter)
    provider.shutdown()


def test_run_otel_on_the_command_line(monkeypatch: pytest.MonkeyPatch, provider: TracerProvider,
                                      exporter: InMemorySpanExporter) -> None:
    from react_agent import cli
    from react_agent.cli import _session  # where the command line makes its model and spans

    monkeypatch.setattr(_session, "make_model", lambda *a, **k: ScriptedModel(REPLIES[3:]))
    monkeypatch.setattr(_session, "global_tracer_provider", lambda: provider)
    assert cli.main(["run", "--otel", "--otel-content", "--quiet", TASK]) == 0
    agent = next(s for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent"))
    assert TASK in str(dict(agent.attributes or {})["gen_ai.input.messages"])
