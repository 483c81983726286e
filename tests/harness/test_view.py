"""The offline HTML view of runs (react_agent.harness._view, ``react-agent view``,
``run --html``): the page's content, its escaping and redaction, and, in headless Chromium,
that it makes no request, runs nothing from the trace and reacts to clicks.

The browser tests need Chromium (``/usr/bin/chromium``, Debian's ``chromium`` package) and
Playwright's Python API; they are skipped without them, except under
``REACT_AGENT_REQUIRE_BROWSER=1`` (set by ``.ci/run``), where they fail.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from react_agent import Agent, RunResult, ScriptedModel, Toolbox
from react_agent.harness import (
    BatchTask,
    TraceWriter,
    ViewEntry,
    load_view,
    render_view,
    run_batch,
    write_view,
)
from react_agent.policies import Review, default_policies
from react_agent.types import ModelReply

CHROMIUM = os.environ.get("REACT_AGENT_CHROMIUM", "/usr/bin/chromium")
REQUIRE_BROWSER = os.environ.get("REACT_AGENT_REQUIRE_BROWSER") == "1"
HOSTILE_THOUGHT = "Weather first. <script>document.title='pwned-thought'</script>"
HOSTILE_REPLY = ("no JSON at all <script>document.title='pwned'; alert(1)</script> "
                 '<a href="javascript:alert(2)">click</a> <img src=x onerror="alert(3)">')
ANSWER = "It is 18 °C in Paris <script>alert(4)</script>"
TASK = "Weather in Paris? (Authorization: Bearer abcdefghijklmnop0123)"
SECRET = "hunter2-secret"


TOOLS_MODULE = """
from react_agent import Toolbox

toolbox = Toolbox()


@toolbox.tool
def get_weather(city: str, password: str = "") -> str:
    \"\"\"Current weather of a city.\"\"\"
    return f"18 °C in {city}"
"""


def toolbox() -> Toolbox:
    tb = Toolbox()

    @tb.tool
    def get_weather(city: str, password: str = "") -> str:
        """Current weather of a city."""
        if city == "Atlantis":
            raise LookupError("no such city <img src=x onerror=alert(5)>")
        return f"18 °C in {city} <img src=x onerror=\"alert(6)\">"

    @tb.tool
    def report() -> str:
        """A long report."""
        return "\n".join(f"line {i}: " + "x" * 70 for i in range(60))

    return tb


REPLIES: list[Any] = [
    json.dumps({"thought": HOSTILE_THOUGHT, "action": {"name": "get_weather", "args": {
        "city": "Paris", "password": SECRET}}}),
    HOSTILE_REPLY,
    "{'thought': 'Python style', 'action': {'name': 'get_weather', 'args': {'city': 'Atlantis'}}}",
    json.dumps({"thought": "The report.", "action": {"name": "report", "args": {}}}),
    json.dumps({"thought": "Done.", "action": {"final_answer": ANSWER}}),
]


def traced(path: Path, replies: list[Any] = REPLIES, task: str = TASK) -> RunResult:
    with TraceWriter(path, model="scripted-1.5b") as trace:
        return Agent(ScriptedModel(replies), toolbox(), callbacks=[trace]).run(task)


@pytest.fixture
def trace_file(tmp_path: Path) -> Path:
    path = tmp_path / "run.jsonl"
    result = traced(path)
    assert result.status == "final_answer"
    return path


def attributes(page: str) -> list[tuple[str, str, str]]:
    """``(tag, attribute, value)`` of every element of ``page``, as a browser parses it."""
    found: list[tuple[str, str, str]] = []

    class Parser(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.extend((tag, name, value or "") for name, value in attrs)

    Parser().feed(page)
    return found


def data_block(page: str) -> Any:
    match = re.search(r'<script type="application/json" id="view-data">(.*?)</script>', page,
                      re.S)
    assert match
    assert "<" not in match.group(1)
    return json.loads(match.group(1))


# -- the page -----------------------------------------------------------------------------------
def test_a_run_page_shows_the_run_and_escapes_everything(trace_file: Path) -> None:
    page = render_view(load_view(trace_file))
    for shown in ("scripted-1.5b", "final_answer", "get_weather, report", "Timeline",
                  "Python style", "single-quoted strings", "tool_error", "Raw reply",
                  "characters, 60 lines"):
        assert shown in page
    for index in range(1, 6):
        assert f'id="e0t0s{index}"' in page
    # only the page's own three script elements; the trace's markup is text
    assert page.count("<script") == 3
    assert "&lt;script&gt;alert(4)&lt;/script&gt;" in page
    assert "<img" not in page and "onerror=\"alert" not in page
    assert {(tag, name) for tag, name, value in attributes(page)
            if name in ("src", "href", "action", "formaction", "srcset", "poster", "data")
            and not (name == "href" and value.startswith("#"))} == set()
    assert not [name for _, name, _ in attributes(page) if name.startswith("on")]
    assert "url(" not in page and "@import" not in page
    assert "Content-Security-Policy" in page and "connect-src 'none'" in page
    assert data_block(page)["mode"] == "run"


def test_secrets_are_masked(trace_file: Path) -> None:
    page = render_view(load_view(trace_file), redact=["password"])
    assert SECRET not in page
    assert "abcdefghijklmnop0123" not in page  # the Bearer token of the task
    assert "&quot;password&quot;: &quot;[redacted]&quot;" in page
    none = render_view(load_view(trace_file), patterns=())
    assert SECRET in none and "abcdefghijklmnop0123" in none
    custom = render_view(load_view(trace_file), patterns=[r"Paris"])
    assert "Paris" not in custom


def test_long_texts_are_cut_with_their_size(tmp_path: Path) -> None:
    huge = "z" * 300_000
    replies = [json.dumps({"thought": "t", "action": {"final_answer": huge}})]
    result = Agent(ScriptedModel(replies), Toolbox()).run("Say a lot.")
    page = render_view(result, max_chars=5_000)
    assert "the page shows the first 5,000 of 300,000 characters" in page
    assert len(page) < 60_000


def test_a_lone_surrogate_and_controls_are_written(tmp_path: Path) -> None:
    replies = [json.dumps({"thought": "t\u202e\x1b[2J", "action": {"final_answer": "a\ud800b"}})]
    result = Agent(ScriptedModel(replies), Toolbox()).run("Odd text.")
    path = write_view(tmp_path / "odd.html", result)
    page = path.read_text("utf-8")
    assert "\\u202e" in page and "\\x1b" in page and "\u202e" not in page


def test_a_results_file_is_an_index(tmp_path: Path) -> None:
    tasks = [
        BatchTask("sunny", "Weather in Paris?", expected=("18",), shape="lookup"),
        BatchTask("wrong", "Weather in Rome?", expected=("24",), shape="lookup"),
        BatchTask("lost", "Weather in Atlantis?", shape="error"),
    ]
    replies = {
        "sunny": [json.dumps({"thought": "t", "action": {"name": "get_weather",
                                                          "args": {"city": "Paris"}}}),
                  json.dumps({"thought": "t", "action": {"final_answer": "18 °C"}})],
        "wrong": [json.dumps({"thought": "t", "action": {"final_answer": "cold"}})],
        "lost": ["no json", "no json", "no json", "no json"],
    }
    out = tmp_path / "tasks.results.jsonl"
    run_batch(tasks, out, lambda t: Agent(ScriptedModel(replies[t.id]), toolbox()))
    with out.open("a", encoding="utf-8") as f:  # a line that was not a task
        f.write(json.dumps({"id": "bad", "status": "bad_task", "passed": False, "error":
                            "line 4: not a task", "problems": ["line 4: not a task"],
                            "result": None}) + "\n")
    entries = load_view(out)
    assert [e.label for e in entries] == ["sunny", "wrong", "lost", "bad"]
    assert [e.passed for e in entries] == [True, False, None, False]
    page = render_view(entries)
    data = data_block(page)
    assert data["mode"] == "index"
    assert [e["status"] for e in data["entries"]] == ["final_answer", "final_answer",
                                                      "parse_errors", "bad_task"]
    assert '<a href="#e1">wrong</a>' in page and 'id="e1"' in page
    assert "the final answer lacks &#x27;24&#x27;" in page
    assert "line 4: not a task" in page


def test_several_traces_and_a_cut_one(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    traced(first)
    traced(second, REPLIES[:2])  # the model runs out of replies: model_error
    lines = first.read_text("utf-8").splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[:-3]) + "\n", encoding="utf-8")  # killed mid-run
    entries = load_view(first, second, cut)
    assert [e.outcome for e in entries] == ["final_answer", "model_error", "interrupted"]
    assert entries[0].model == "scripted-1.5b" and entries[0].started
    assert "3 runs" in render_view(entries)


def test_a_reviewed_draft_is_a_draft_in_its_header_and_its_body() -> None:
    """The draft the review asked for again is named the same way in the step's header, in
    the timeline and in its body; the review's answer is the final one."""
    replies = [json.dumps({"thought": "t", "action": {"name": "get_weather",
                                                      "args": {"city": "Paris"}}}),
               json.dumps({"thought": "t", "action": {"final_answer": "draft text"}}),
               json.dumps({"thought": "t", "action": {"final_answer": "reviewed text"}})]
    policies = default_policies(use=[Review(mode="always")])
    result = Agent(ScriptedModel(replies), toolbox(), policies=policies).run("Weather?")
    assert [s.origin for s in result.steps] == [None, None, "review"]
    page = render_view(result)
    draft = re.search(r'<details class="step[^"]*" id="e0t0s2".*?</details>', page, re.S)
    assert draft is not None
    assert '<span class="act">draft answer: draft text</span>' in draft.group()
    assert "Draft answer (the review asked again)" in draft.group()
    assert "final answer" not in draft.group().lower()
    timeline = page[page.index('<ol class="timeline">'):page.index("</ol>")]
    assert '<span class="what">draft answer: draft text</span>' in timeline
    assert '<span class="what">reviewed answer: reviewed text</span>' in timeline


def test_a_policys_question_is_a_question_not_an_unusable_reply() -> None:
    from react_agent.policies import Relevance

    call = json.dumps({"thought": "t", "action": {"name": "get_weather",
                                                  "args": {"city": "Paris"}}})
    replies = [call, ModelReply("yes", choices={"yes": 0.9, "no": 0.1}),
               json.dumps({"thought": "t", "action": {"final_answer": "Sunny."}})]
    policies = default_policies(use=[Relevance()], off=["review"])
    result = Agent(ScriptedModel(replies), toolbox(), policies=policies).run("Weather?")
    assert [s.origin for s in result.steps] == [None, "relevance", None]
    page = render_view(result)
    question = re.search(r'<details class="step[^"]*" id="e0t0s2".*?</details>', page, re.S)
    assert question is not None and "unusable reply" not in question.group()
    assert 'class="step bad' not in question.group()
    assert "extra call: relevance" in question.group() and "parser:" not in question.group()
    timeline = page[page.index('<ol class="timeline">'):page.index("</ol>")]
    assert '<span class="what">question (relevance): yes</span>' in timeline


def test_an_answer_a_policy_set_aside_is_not_shown_as_the_final_answer() -> None:
    from react_agent.policies import MissedCall

    replies = [json.dumps({"thought": "t", "action": {"final_answer": "From memory."}}),
               ModelReply("yes", choices={"yes": 0.9, "no": 0.1}),
               json.dumps({"thought": "t", "action": {"name": "get_weather",
                                                      "args": {"city": "Paris"}}}),
               json.dumps({"thought": "t", "action": {"final_answer": "Sunny."}})]
    policies = default_policies(use=[MissedCall()], off=["review"])
    result = Agent(ScriptedModel(replies), toolbox(), policies=policies).run("Weather?")
    page = render_view(result)
    first = re.search(r'<details class="step[^"]*" id="e0t0s1".*?</details>', page, re.S)
    assert first is not None and "Answer set aside" in first.group()
    assert "Final answer" not in first.group()
    last = re.search(r'<details class="step[^"]*" id="e0t0s4".*?</details>', page, re.S)
    assert last is not None and "Final answer" in last.group()


# -- the command line ---------------------------------------------------------------------------
def test_view_command(trace_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from react_agent.cli import main

    assert main(["view", str(trace_file), "--redact", "password,city"]) == 0
    page = trace_file.with_suffix(".html").read_text("utf-8")
    assert SECRET not in page and "[redacted]" in page
    assert "View:" in capsys.readouterr().err
    assert main(["view", str(trace_file), "-o", str(trace_file)]) == 2


def test_run_html_writes_the_view(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from react_agent import cli

    def scripted(*args: Any, **kwargs: Any) -> ScriptedModel:
        return ScriptedModel([*REPLIES[:1], ModelReply(REPLIES[-1], 10, 5, "stop")])

    monkeypatch.setattr(cli._session, "make_model", scripted)
    tools = tmp_path / "tools.py"
    tools.write_text(TOOLS_MODULE, encoding="utf-8")
    out = tmp_path / "run.html"
    code = cli.main(["run", "--tools", f"{tools}:toolbox", "--html", str(out), "--redact",
                     "password", "--quiet", "Weather in Paris?"])
    assert code == 0
    page = out.read_text("utf-8")
    assert "It is 18 °C in Paris &lt;script&gt;" in page and SECRET not in page

    def interrupted(*args: Any, **kwargs: Any) -> ScriptedModel:
        def ctrl_c(messages: Any) -> str:
            raise KeyboardInterrupt
        return ScriptedModel([REPLIES[0], ctrl_c])

    monkeypatch.setattr(cli._session, "make_model", interrupted)  # Ctrl-C during the second step
    code = cli.main(["run", "--tools", f"{tools}:toolbox", "--html", str(out), "--quiet",
                     "Weather in Paris?"])
    assert code == 130
    page = out.read_text("utf-8")
    assert "interrupted" in page and 'id="e0t0s1"' in page


# -- in a browser -----------------------------------------------------------------------------
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]


def _need_browser(reason: str) -> None:
    if REQUIRE_BROWSER:
        pytest.fail(f"browser test cannot run (REACT_AGENT_REQUIRE_BROWSER=1): {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium through Playwright (the system's browser; none is downloaded)."""
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        _need_browser(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _need_browser("playwright is not installed (pip install '.[dev]')")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield chromium
        chromium.close()


class Opened:
    """A page opened from disk, with what it logged, requested and tried to pop up."""

    def __init__(self, browser: Any, path: Path, javascript: bool = True) -> None:
        self.context = browser.new_context(java_script_enabled=javascript)
        self.page = self.context.new_page()
        self.console: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)

    def check_quiet(self) -> None:
        assert self.console == []
        assert self.requests == [self.url]
        assert self.dialogs == []

    def close(self) -> None:
        self.context.close()


def test_the_run_page_in_a_browser(browser: Any, trace_file: Path, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    path = write_view(tmp_path / "run.html", load_view(trace_file), redact=["password"])
    opened = Opened(browser, path)
    page = opened.page
    try:
        assert page.title().startswith("Weather in Paris?")
        expect(page.locator(".answer .text")).to_have_text(ANSWER)
        for index in range(1, 6):
            expect(page.locator(f"#e0t0s{index} > summary")).to_be_visible()
        # the trace's markup shows as text and runs nothing
        expect(page.locator("#e0t0s2 .err")).to_contain_text("<script>document.title='pwned'")
        expect(page.locator("#e0t0s1 .thought")).to_contain_text("<script>")
        assert "pwned" not in page.title()
        assert page.evaluate("document.querySelectorAll('img, iframe, object, embed').length") \
            == 0
        assert page.evaluate("[...document.links].every(a => a.getAttribute('href')"
                             ".startsWith('#'))")
        # collapse everything, then open step 3 and its raw reply by clicking
        page.get_by_role("button", name="Collapse all").click()
        thought = page.locator("#e0t0s3 .thought")
        expect(thought).to_be_hidden()
        page.locator("#e0t0s3 > summary").click()
        expect(thought).to_contain_text("Python style")
        raw = page.locator("#e0t0s3 details.raw pre")
        expect(raw).to_be_hidden()
        page.locator("#e0t0s3 details.raw > summary").click()
        expect(raw).to_contain_text("'Atlantis'")
        page.get_by_role("button", name="Expand all").click()
        expect(page.locator("#e0t0s4 details.long pre")).to_be_visible()
        page.locator("#only-problems").check()
        expect(page.locator("#e0t0s4")).to_be_hidden()
        expect(page.locator("#e0t0s3")).to_be_visible()
        opened.check_quiet()
    finally:
        opened.close()


def test_the_index_in_a_browser_with_and_without_javascript(
    browser: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    traces = []
    for n, city in enumerate(("Paris", "Rome", "Oslo")):
        path = tmp_path / f"{city}.jsonl"
        answer = json.dumps({"thought": "t", "action": {"final_answer": f"Sunny in {city}"}})
        traced(path, [REPLIES[0], answer] if n else [HOSTILE_REPLY] * 4, f"Weather in {city}?")
        traces.append(path)
    path = write_view(tmp_path / "index.html", load_view(*traces))
    opened = Opened(browser, path)
    page = opened.page
    try:
        rows = page.locator("table.runs tbody tr")
        expect(rows).to_have_count(3)
        expect(page.locator("#e1")).to_be_hidden()  # one run at a time
        page.locator("#f-text").fill("rome")
        expect(page.locator("#f-count")).to_have_text("1 of 3 shown")
        expect(rows.nth(1)).to_be_visible()
        expect(rows.nth(0)).to_be_hidden()
        page.locator("#f-text").fill("")
        page.locator("#f-status").select_option("parse_errors")
        expect(page.locator("#f-count")).to_have_text("1 of 3 shown")
        expect(rows.nth(0)).to_be_visible()
        page.locator("#f-status").select_option("")
        page.get_by_role("link", name="Oslo.jsonl").click()
        expect(page.locator("#e2 .answer .text")).to_have_text("Sunny in Oslo")
        expect(page.locator("#index")).to_be_hidden()
        page.locator("#e2 .back a").click()
        expect(page.locator("#index")).to_be_visible()
        opened.check_quiet()
    finally:
        opened.close()
    plain = Opened(browser, path, javascript=False)
    try:  # without JavaScript: everything is there, the controls are not
        expect(plain.page.locator("#e1 .answer .text")).to_be_visible()
        expect(plain.page.locator("#e2t0s1 > summary")).to_be_visible()
        expect(plain.page.locator("#f-text")).to_be_hidden()
        plain.check_quiet()
    finally:
        plain.close()


def test_a_results_file_of_run_tasks_as_written(tmp_path: Path) -> None:
    """The record format :func:`run_batch` writes is what the view reads (no browser)."""
    out = tmp_path / "r.jsonl"
    run_batch([BatchTask("only", "Weather in Paris?", expected=("18",))], out,
              lambda t: Agent(ScriptedModel([REPLIES[0], json.dumps(
                  {"thought": "t", "action": {"final_answer": "18 °C"}})]), toolbox()))
    entry = load_view(out)[0]
    assert isinstance(entry, ViewEntry) and entry.passed is True and entry.seconds is not None


# -- the embedded model ---------------------------------------------------------------------------
@pytest.mark.real_model
def test_a_real_run_viewed_and_traced(embedded_model: Any, browser: Any, tmp_path: Path) -> None:
    """A run of the embedded model, written as a trace and as spans, opens as a page that shows
    each of its steps and its answer, quietly."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from playwright.sync_api import expect

    from react_agent.harness import OtelCallback
    from react_agent.harness._display import safe
    from react_agent.tools.builtin import builtin_toolbox

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    toolbox = Toolbox([builtin_toolbox()["calculate"]])
    trace_path = tmp_path / "real.jsonl"
    with TraceWriter(trace_path, model=embedded_model.name) as trace:
        spans = OtelCallback(provider, model=embedded_model.name)
        result = Agent(embedded_model, toolbox, callbacks=[trace, spans], max_steps=4).run(
            "What is 17 * 23? Use the calculator.")
    assert result.steps
    finished = exporter.get_finished_spans()
    chats = [s for s in finished if s.name == f"chat {embedded_model.name}"]
    assert len(chats) == len(result.steps)
    assert all(dict(c.attributes or {})["gen_ai.usage.input_tokens"] > 0 for c in chats)
    path = write_view(tmp_path / "real.html", load_view(trace_path))
    opened = Opened(browser, path)
    try:
        for step in result.steps:
            expect(opened.page.locator(f"#e0t0s{step.index} > summary")).to_be_visible()
        if result.final_answer is not None:
            first_line = safe(result.final_answer).strip().splitlines()[0][:60]
            expect(opened.page.locator(".answer .text")).to_contain_text(first_line)
        opened.check_quiet()
    finally:
        opened.close()


@pytest.mark.parametrize("name", ["answer_floor", "review", "held_calls", "repeat", "budget"])
@pytest.mark.parametrize("record", [float("inf"), {"reasons": float("inf")}, {"reasons": 3},
                                    [{"name": 1, "args": {1, 2}}], {"probability": "x"},
                                    [None, 7], "text"])
def test_a_policy_record_of_any_shape_is_shown_in_words(name: str, record: object) -> None:
    """A record is read from a file: whatever its shape, it is shown, never a traceback."""
    from react_agent.harness._view import _record

    assert isinstance(_record(name, record), str)


def test_a_call_set_aside_in_an_old_file_is_shown_as_a_note_not_a_failure() -> None:
    """A result ``skipped`` (also in a file written before results had the field: error
    ``set_aside``) is a note, whoever skipped it; any other failed result is a problem."""
    old = {"name": "get_weather", "args": {"city": "Paris"}, "observation": "sunny",
           "ok": False, "error": "set_aside"}
    failed = dict(old, error="tool_error")
    skipped = dict(old, error="my_code", origin="my_policy", skipped=True)
    steps = [{"index": n, "tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}],
              "results": [result], "in_history": False, "stage": "direct", "thought": "t"}
             for n, result in enumerate((old, failed, skipped), 1)]
    page = render_view(RunResult.from_dict({"task": "t", "status": "max_steps",
                                            "final_answer": None, "steps": steps}))
    first = re.search(r'<details class="step([^"]*)" id="e0t0s1".*?</details>', page, re.S)
    second = re.search(r'<details class="step([^"]*)" id="e0t0s2".*?</details>', page, re.S)
    assert first is not None and second is not None
    assert "problem" not in first.group(1) and "problem" in second.group(1)
    assert '<span class="badge note">get_weather: set_aside</span>' in first.group()
    assert '<span class="badge bad">get_weather: tool_error</span>' in second.group()
    assert '<span class="badge note">get_weather: my_code</span>' in page


def test_every_piece_of_the_page_markup_is_used_and_none_is_missing() -> None:
    """The page's markup lives in ``_view_assets/`` (page.html, parts.html): each piece the
    code asks for is there, none is left unused, and each fills in to HTML with no ``$`` of
    the template left (a misspelt placeholder raises)."""
    from react_agent.harness import _view

    code = Path(_view.__file__).read_text(encoding="utf-8")
    asked = set(re.findall(r'_part\(\s*"(\w+)"', code))
    assert asked == set(_view._parts())
    for name, template in _view._parts().items():
        names = {m.group("named") or m.group("braced")
                 for m in template.pattern.finditer(template.template)} - {None}
        filled = template.substitute(dict.fromkeys(names, "<x>"))
        assert "$" not in filled and filled.startswith("<") and filled.endswith(">"), name


def test_a_run_page_shows_the_typed_value() -> None:
    replies = [json.dumps({"thought": "t", "action": {"final_answer": {"lines": "<b>7</b>"}}})]
    result = Agent(ScriptedModel(replies), Toolbox(), output_type=dict[str, str],
                   policies=default_policies(off=["review"])).run("Count.")
    assert result.output == {"lines": "<b>7</b>"}
    page = render_view(result)
    assert "Output (the typed value)" in page
    assert "&lt;b&gt;7&lt;/b&gt;" in page and "<b>7</b>" not in page
    plain = Agent(ScriptedModel([replies[0]]), Toolbox(),
                  policies=default_policies(off=["review"])).run("Count.")
    assert "Output (the typed value)" not in render_view(plain)
