"""MCP servers as toolboxes (react_agent.tools.mcp), against servers started here:

- ``mcp_fault_server.py`` (beside this file, on the SDK's low-level server): schemas and results
  as servers really write them, and every fault: a hung call, a server that dies mid-call or at
  start, one that never answers ``initialize``, one that floods stderr; over stdio and over
  streamable HTTP on 127.0.0.1;
- ``mcp-server-time`` (PyPI, the reference time server) over stdio;
- ``@modelcontextprotocol/server-everything`` (npm) over stdio, where Node and the package are
  installed (``.ci/run`` installs it; the test says why it is skipped otherwise);
- the embedded model answering through mcp-server-time (``real_model``).
"""

from __future__ import annotations

import _thread
import asyncio
import base64
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from helpers import bomb, no_refs, values, wide

from react_agent import Agent, ConfigError, ScriptedModel, Toolbox
from react_agent.cli import main
from react_agent.tools import MCPServerConfig, MCPToolbox, ainvoke_all, invoke
from react_agent.tools import schema as json_schema
from react_agent.tools.mcp import (
    MAX_MCP_MESSAGE_BYTES,
    MAX_MCP_PROMPT_CHARS,
    MAX_MCP_TOOLS,
    STDERR_KEPT_BYTES,
    MCPToolError,
    observation,
    tool_name,
)
from react_agent.tools.mcp._config import _SdkLog
from react_agent.tools.schema import CUT_TEXT, MAX_VALUES
from react_agent.types import ToolCall

FAULT = Path(__file__).with_name("mcp_fault_server.py")
TIME = [sys.executable, "-m", "mcp_server_time"]
TIME_LINE = f"{sys.executable} -m mcp_server_time"


def fault(*flags: str, **options: Any) -> MCPServerConfig:
    return MCPServerConfig([sys.executable, str(FAULT), *flags], **options)


def call(toolbox: Toolbox, name: str, **args: Any) -> Any:
    return invoke(toolbox, ToolCall(name, args))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (exited, not yet reaped) is not alive
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return True


def wait_gone(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def final(text: str) -> str:
    return json.dumps({"thought": "done", "action": {"final_answer": text}})


def act(name: str, **args: Any) -> str:
    return json.dumps({"thought": f"use {name}", "action": {"name": name, "args": args}})


# -- names -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "mapped"), [
    ("get_time", "get_time"), ("get-time.v2", "get-time.v2"), ("get weather/now",
                                                                "get_weather_now"),
    ("2fa", "_2fa"), ("données", "donn_es"), ("", "_"), ("a" * 64, "a" * 64),
])
def test_tool_names_are_mapped_onto_the_rule(name: str, mapped: str) -> None:
    assert tool_name(name) == mapped


def test_long_names_stay_apart() -> None:
    one, two = tool_name("x" * 70 + "1"), tool_name("x" * 70 + "2")
    assert one != two and len(one) == len(two) == 64


# -- results as servers send them ----------------------------------------------------------------
def result(*content: Any, structured: Any = None, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=list(content), structured_content=structured,
                                is_error=error)


def text(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)


def test_text_parts_and_structured_content() -> None:
    assert observation(result(text("one"), text("two"))) == "one\ntwo"
    data = {"t": 21.5, "city": "Zürich"}
    assert observation(result(text(json.dumps(data, indent=2)), structured=data)) == \
        '{"t": 21.5, "city": "Zürich"}'
    assert observation(result(text("It is warm."), structured=data)) == \
        'It is warm.\n{"t": 21.5, "city": "Zürich"}'
    assert observation(result(structured=data)) == '{"t": 21.5, "city": "Zürich"}'
    assert observation(result(text("0.5"), structured={"result": 0.5})) == "0.5"  # wrapped
    assert observation(result(text("hi"), structured={"result": "hi"})) == "hi"
    assert observation(result(text("hi"), structured={"result": "ho"})) == 'hi\n{"result": "ho"}'
    assert observation(result()) == "(the tool returned no content)"


def test_binary_content_becomes_a_placeholder_naming_type_and_size() -> None:
    png = base64.b64encode(bytes(2048)).decode()
    blob = base64.b64encode(bytes(10)).decode()
    shown = observation(result(
        types.ImageContent(type="image", data=png, mime_type="image/png"),
        types.AudioContent(type="audio", data=blob, mime_type="audio/wav"),
        types.EmbeddedResource(type="resource", resource=types.BlobResourceContents(
            uri="file:///a.bin", mime_type="application/pdf", blob=png)),
        types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
            uri="file:///n.txt", text="the note")),
        types.ResourceLink(type="resource_link", name="report", uri="file:///r.pdf",
                           description="Q3"),
    ))
    assert shown.splitlines() == [
        "[image: image/png, 2.0 KB; not shown]",
        "[audio: audio/wav, 10 bytes; not shown]",
        "[resource file:///a.bin (application/pdf): binary, 2.0 KB; not shown]",
        "[resource file:///n.txt]", "the note",
        "[resource link: report file:///r.pdf (Q3)]",
    ]
    assert png not in shown


def test_an_error_result_is_raised_for_the_invoker() -> None:
    with pytest.raises(MCPToolError, match="No such city"):
        observation(result(text("No such city"), error=True))
    with pytest.raises(MCPToolError, match="gave no details"):
        observation(result(error=True))


# -- the fault server over stdio ----------------------------------------------------------------
@pytest.fixture(scope="module")
def faulty() -> Iterator[MCPToolbox]:
    with MCPToolbox(fault(), timeout=20) as toolbox:
        yield toolbox


def test_tools_over_two_pages_with_names_schemas_and_notes(faulty: MCPToolbox) -> None:
    assert {"echo", "slow", "die", "mixed", "tree_sum", "search", "book", "get_weather_now",
            "_2fa-code", "donn_es", "external"} <= set(faulty.names)
    assert len(faulty) == 22  # both pages
    assert all(faulty[n].group == "faulty" for n in faulty.names)
    for tool in faulty.values():
        json_schema.check_valid(tool.parameters)
        assert no_refs(tool.parameters)
    [server] = faulty.servers
    assert server["name"] == "faulty" and server["alive"] and server["server"]["version"] == "1.0"
    assert any(n.startswith("faulty/tree_sum: Node refers to itself") for n in faulty.notes)


def test_results_through_the_invoker(faulty: MCPToolbox) -> None:
    assert call(faulty, "echo", text="hi").observation == "hi"
    mixed = call(faulty, "mixed")
    assert mixed.ok and mixed.observation.splitlines()[:3] == [
        "Here is everything:", "[image: image/png, 1.2 KB; not shown]",
        "[audio: audio/wav, 2.9 KB; not shown]"]
    assert mixed.observation.endswith('[resource link: report file:///report.pdf '
                                      '(application/pdf)]\n{"count": 6}')
    assert call(faulty, "structured").observation == \
        '{"temperature": 21.5, "unit": "C", "city": "Zürich"}'
    failed = call(faulty, "fail")
    assert (failed.ok, failed.error) == (False, "tool_error")
    assert failed.observation == "Error: MCPToolError: No such city: Atlantis"
    huge = invoke(faulty, ToolCall("huge", {"chars": 50_000}), max_chars=1000)
    assert huge.observation.endswith("[... 49000 more characters cut; the result was too long]")
    assert call(faulty, "nothing").observation == "(the tool returned no content)"


def test_arguments_reach_the_server_cleaned_and_checked(faulty: MCPToolbox) -> None:
    sent = call(faulty, "search", query=" cats ", order="Oldest", limit="3")
    assert json.loads(sent.observation)["args"] == {"query": "cats", "order": "oldest",
                                                    "limit": 3}
    wrong = call(faulty, "book", isbn="12")
    assert wrong.error == "invalid_args" and "isbn" in wrong.observation
    renamed = call(faulty, "get_weather_now", city="Oslo")
    assert json.loads(renamed.observation) == {"tool": "get weather/now",
                                               "args": {"city": "Oslo"}}


def test_a_hung_call_times_out_and_the_next_call_works() -> None:
    with MCPToolbox(fault(timeout=1)) as toolbox:
        started = time.perf_counter()
        slow = call(toolbox, "slow", seconds=30)
        assert time.perf_counter() - started < 3
        assert (slow.ok, slow.error) == (False, "timeout")
        assert "did not finish within 1 seconds" in slow.observation
        assert call(toolbox, "echo", text="still here").observation == "still here"

        async def both() -> list[Any]:  # the async API: the same, and in parallel
            return await ainvoke_all(toolbox, [ToolCall("slow", {"seconds": 30}),
                                               ToolCall("echo", {"text": "beside"})])

        started = time.perf_counter()
        slow, echoed = asyncio.run(both())
        assert time.perf_counter() - started < 3
        assert slow.error == "timeout" and echoed.observation == "beside"


def test_a_server_that_dies_mid_call_is_an_observation_and_the_run_goes_on(
        tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    toolbox = MCPToolbox(fault("--pid-file", str(pid_file)))
    toolbox.add(lambda text: text.upper(), name="shout_py", description="Upper-case a text.")
    model = ScriptedModel([act("die"), act("echo", text="again"), act("shout_py", text="ok"),
                           final("The server died.")])
    with toolbox:
        result = Agent(model, toolbox).run("Break it.")
    assert result.status == "final_answer"
    died, again, python = (s.results[0] for s in result.steps[:3])
    assert died.error == "tool_error"
    assert died.observation.startswith(
        "Error: MCPServerStopped: the MCP server 'faulty' (started as ")
    assert "stopped (connection closed) during a call of die" in died.observation
    assert "mcp_fault_server.py" in died.observation
    assert died.observation.endswith(
        "The server's stderr ends with:\n  fault server: fatal: the disk is on fire")
    assert again.error == "tool_error" and "cannot be used any more" in again.observation
    assert python.observation == "OK"
    assert wait_gone(int(pid_file.read_text()))


def test_a_server_that_cannot_start_is_a_config_error_with_its_stderr() -> None:
    started = time.perf_counter()
    with pytest.raises(ConfigError) as caught:
        MCPToolbox(fault("--crash-at-start"))
    assert time.perf_counter() - started < 20
    message = str(caught.value)
    assert message.startswith(f"MCP server `{sys.executable} {FAULT} --crash-at-start`: the "
                              "server exited (or closed the connection) while starting.")
    assert message.endswith("Its stderr ends with:\n  fault server: cannot open the database "
                            "/nonexistent/db.sqlite")


def test_a_missing_command_and_a_bad_target_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="the command was not found"):
        MCPToolbox("no-such-mcp-server-here --stdio")
    with pytest.raises(ConfigError, match="give a command line"):
        MCPToolbox("   ")
    with pytest.raises(ConfigError, match="cannot split the command line"):
        MCPToolbox('python -c "unclosed')
    with pytest.raises(ConfigError, match="timeout must be > 0"):
        MCPToolbox(fault(timeout=0))
    with pytest.raises(ConfigError, match="at least one server"):
        MCPToolbox()


def test_a_server_that_never_answers_initialize_times_out_at_start(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    started = time.perf_counter()
    with pytest.raises(ConfigError) as caught:
        MCPToolbox(fault("--silent", "--pid-file", str(pid_file), startup_timeout=2))
    assert time.perf_counter() - started < 15
    assert "did not finish starting within 2 s (no answer to initialize" in str(caught.value)
    assert wait_gone(int(pid_file.read_text()))


def test_a_server_that_floods_stderr_neither_blocks_nor_fills_memory() -> None:
    with MCPToolbox(fault("--flood", str(20 * 1024 * 1024))) as toolbox:
        assert call(toolbox, "shout").observation == "shouted"
        assert call(toolbox, "echo", text="fine").observation == "fine"
        log = toolbox.server_log("faulty")
        assert 0 < len(log.encode()) <= STDERR_KEPT_BYTES
        assert log.rstrip().endswith("noise")


def test_closing_stops_the_servers_even_on_ctrl_c(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    with pytest.raises(KeyboardInterrupt), MCPToolbox(
            fault("--pid-file", str(pid_file))) as toolbox:
        assert call(toolbox, "echo", text="x").ok
        raise KeyboardInterrupt
    assert toolbox.closed and wait_gone(int(pid_file.read_text()), 1)
    after = call(toolbox, "echo", text="x")
    assert after.error == "tool_error" and "closed" in after.observation
    toolbox.close()  # idempotent


def test_ctrl_c_while_a_server_starts_stops_it_at_once(tmp_path: Path) -> None:
    """Ctrl-C while a server that never answers ``initialize`` starts: the interrupt comes
    once the server process is up (it wrote its pid), however long that takes."""
    pid_file = tmp_path / "pid"

    def interrupt_when_started() -> None:
        deadline = time.monotonic() + 60
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # the server now sits silent in initialize
        _thread.interrupt_main()

    watcher = threading.Thread(target=interrupt_when_started, daemon=True)
    watcher.start()
    with pytest.raises(KeyboardInterrupt):
        MCPToolbox(fault("--silent", "--pid-file", str(pid_file), startup_timeout=120))
    watcher.join()
    assert pid_file.exists(), "the server never started"
    assert wait_gone(int(pid_file.read_text()))


def test_servers_left_open_are_stopped_when_the_program_ends(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = ("import sys; from react_agent.tools import MCPToolbox; "
              f"t = MCPToolbox([sys.executable, {str(FAULT)!r}, '--pid-file', {str(pid_file)!r}]);"
              " print(len(t))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip() == "22" and "Traceback" not in done.stderr, done.stderr
    assert wait_gone(int(pid_file.read_text()), 5)


def test_clashing_names_get_the_server_prefix_and_lists_choose_tools() -> None:
    with MCPToolbox(fault("--name", "alpha"), fault("--name", "beta", deny=["slow"]),
                    allow=["echo", "slow", "add"]) as toolbox:
        assert toolbox.names == ["alpha.echo", "slow", "alpha.add", "beta.echo", "beta.add"]
        assert call(toolbox, "beta.echo", text="b").observation == "b"
    with MCPToolbox(fault(prefix=True, allow="e[cx]*", name="srv")) as toolbox:  # 1 pattern
        assert toolbox.names == ["srv.echo", "srv.external"]


@pytest.mark.parametrize(("servers", "options", "message"), [
    ([TIME], {"allow": ["get_curent_time"]},
     "The allow pattern 'get_curent_time' matches no tool of the MCP servers (did you mean "
     "'get_current_time'?); the tools: convert_time, get_current_time."),
    ([TIME], {"allow": ["get_*"], "deny": ["conver_*"]},
     "The deny pattern 'conver_*' matches no tool of the MCP servers (did you mean "
     "'convert_time'?)"),
    ([MCPServerConfig(TIME, name="clock", allow="get_time")], {},
     "The allow pattern 'get_time' matches no tool of the MCP server 'clock' (did you mean "
     "'get_current_time'?)"),
    ([MCPServerConfig(TIME, name="clock", deny=["zzz"])], {},
     "The deny pattern 'zzz' matches no tool of the MCP server 'clock'; the tools:"),
])
def test_a_pattern_that_matches_no_tool_is_an_error_with_the_closest_names(
    servers: list[Any], options: dict[str, Any], message: str
) -> None:
    """A typo in an allow pattern would leave the model without the tool (and the run would
    start anyway); in a deny pattern, with the tool it was to be denied."""
    with pytest.raises(ConfigError) as exc:
        MCPToolbox(*servers, **options)
    assert str(exc.value).startswith(message)


def test_sync_and_async_runs_mix_mcp_and_python_tools() -> None:
    with MCPToolbox(fault(allow=["add"])) as toolbox:
        @toolbox.tool
        def double(x: int) -> int:
            """Double a number."""
            return 2 * x

        script = [act("add", a=2, b=3), act("double", x=5), final("5 and 10")]
        result = Agent(ScriptedModel(script), toolbox).run("Add, then double.")
        assert [s.observations for s in result.steps[:2]] == [["5"], ["10"]]
        result = asyncio.run(Agent(ScriptedModel(script), toolbox).arun("Add, then double."))
        assert result.status == "final_answer"
        assert [s.observations for s in result.steps[:2]] == [["5"], ["10"]]


# -- bounds on what servers send ----------------------------------------------------------------
def test_a_costly_tool_listing_is_flattened_within_the_bounds(tmp_path: Path) -> None:
    """About 270 KB of tools/list whose schemas refer to their definitions many times, each with
    a large enum, default and examples: copying each reference's target, as the flattening
    did, grows with the square of the size (tests/tools/schema/test_flatten.py) and took tens of
    seconds per tool, outside the start-up timeout; here each tool's schema stays within the
    flattening's bounds."""
    listing = [{"name": "wide", "description": "Many fields.", "inputSchema": wide(5000, 2000)},
               {"name": "deep", "description": "Nested.", "inputSchema": bomb(10, 60, 100)},
               {"name": "echo", "description": "Say it.", "inputSchema": {
                   "type": "object", "properties": {"text": {"type": "string"}}}}]
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(listing))
    assert 200_000 < path.stat().st_size < 300_000
    with MCPToolbox(fault("--tools-file", str(path))) as toolbox:
        assert toolbox.names == ["wide", "deep", "echo"]
        for tool in toolbox.values():
            assert values(tool.parameters) <= MAX_VALUES + 200
            assert no_refs(tool.parameters)
        for name in ("wide", "deep"):
            assert any(n.startswith(f"faulty/{name}: the input schema is too large: parts were "
                                    "cut") for n in toolbox.notes)
        fields = toolbox["wide"].parameters["properties"]["fields"]
        assert fields["description"].startswith("The fields.") and \
            fields["description"].endswith(CUT_TEXT)
        assert fields["properties"]["f0"]["enum"][:2] == ["value-0", "value-1"]
        assert call(toolbox, "wide", fields={"f0": "value-3", "f4999": "x"}).ok
        assert call(toolbox, "echo", text="fine").observation == "fine"


def test_more_tools_than_a_toolbox_takes_is_a_config_error_naming_the_fix() -> None:
    with pytest.raises(ConfigError) as caught:
        MCPToolbox(fault("--many", "200"), fault("--name", "other", allow=["echo"]))
    message = str(caught.value)
    assert message.startswith(f"The MCP servers offer 223 tools (faulty: 222, other: 1); at "
                              f"most {MAX_MCP_TOOLS} can be used")
    assert "--mcp-allow" in message and "allow=[...]" in message
    with MCPToolbox(fault("--many", "200", allow=["tool_1?", "nnn*"])) as toolbox:
        assert toolbox.names == [f"tool_{i}" for i in range(10, 20)]  # not the long name
        assert "faulty/" + "n" * 60 + "...: left out: its name is longer than 256 " \
            "characters" in toolbox.notes


def test_descriptions_too_long_for_the_prompt_are_a_config_error() -> None:
    with pytest.raises(ConfigError) as caught:
        MCPToolbox(fault("--many", "120", "--long", allow=["tool_*"]))
    message = str(caught.value)
    assert re.match(r"The MCP servers' tools take [\d,]+ characters of the system prompt "
                    r"\(faulty: [\d,]+\); at most " + f"{MAX_MCP_PROMPT_CHARS:,}", message)
    assert "--mcp-allow" in message
    with MCPToolbox(fault("--many", "20", "--long", allow=["tool_*"])) as toolbox:
        assert len(toolbox) == 20


def test_a_tool_listing_that_never_ends_fails_the_start() -> None:
    with pytest.raises(ConfigError, match="its tool listing did not end after 100 pages"):
        MCPToolbox(fault("--pages-forever"))


@pytest.mark.parametrize("order", [None, "ts"])
def test_a_result_over_the_message_limit_is_not_read_and_the_session_goes_on(
        order: str | None) -> None:
    """The Python SDK writes a response's id first, the TypeScript SDK last: either way the
    result too large to read becomes an error observation, and the next call works."""
    with MCPToolbox(fault(*(["--order", order] if order else []), timeout=60)) as toolbox:
        huge = call(toolbox, "huge", chars=MAX_MCP_MESSAGE_BYTES + 1000)
        assert (huge.ok, huge.error) == (False, "tool_error")
        assert huge.observation.startswith(
            "Error: MCPRequestError: the result of huge from the MCP server 'faulty' (started as ")
        assert "is larger than 8.0 MB (the most read of one message from an MCP server); it " \
            "was not read. Ask for less at a time." in huge.observation
        assert call(toolbox, "echo", text="still here").observation == "still here"
        assert call(toolbox, "huge", chars=100_000).ok  # under the limit: read, then cut


def test_a_result_over_the_limit_whose_id_cannot_be_read_ends_the_session() -> None:
    with MCPToolbox(fault("--order", "middle", timeout=60)) as toolbox:
        assert call(toolbox, "echo", text="first").observation == "first"
        huge = call(toolbox, "huge", chars=MAX_MCP_MESSAGE_BYTES + 1000)
        assert huge.error == "tool_error" and "MCPServerStopped" in huge.observation
        assert "larger than the message limit of 8,388,608 bytes, whose id could not be " \
            "read; the session was ended" in huge.observation
        after = call(toolbox, "echo", text="again")
        assert after.error == "tool_error" and "whose id could not be read" in after.observation


def test_lines_that_are_not_json_rpc_are_logged_a_few_times(
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING), MCPToolbox(fault("--garbage", "50")) as toolbox:
        assert call(toolbox, "echo", text="through").observation == "through"
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("MCP server")]
    server = f"MCP server `{sys.executable} {FAULT} --garbage 50`"  # before it names itself
    assert lines == [
        f'{server} wrote a line on stdout that is not JSON-RPC (dropped): {{"level": "info", '
        '"n": 0}',
        f"{server} wrote a line on stdout that is not JSON-RPC (dropped): [1] progress #",
        f'{server} wrote a line on stdout that is not JSON-RPC (dropped): {{"level": "info", '
        '"n": 2}',
        f"{server}: further such lines are dropped without logging (their count is logged "
        "when it stops)",
        "MCP server faulty wrote 50 lines on stdout that were not JSON-RPC (dropped)"]


def test_the_sdk_messages_of_one_kind_are_logged_a_few_times(
        caplog: pytest.LogCaptureFixture) -> None:
    handler = _SdkLog()
    for n in range(20):
        handler.emit(logging.LogRecord("mcp.client.streamable_http", logging.ERROR, __file__,
                                       1, "Error parsing SSE message %d", (n,), None))
    shown = [r.getMessage() for r in caplog.records if r.name == "react_agent.mcp"]
    assert shown == [f"MCP SDK: Error parsing SSE message {n}" for n in range(3)] + [
        "MCP SDK: Error parsing SSE message %d (again; further such messages are not logged)"]


# -- streamable HTTP ---------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_server() -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(FAULT), "--http", str(port)],
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("the HTTP fault server did not start")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()


def test_streamable_http_calls_and_faults(http_server: str) -> None:
    with MCPToolbox(MCPServerConfig(http_server, timeout=60)) as patient:
        huge = call(patient, "huge", chars=MAX_MCP_MESSAGE_BYTES + 1000)
        assert huge.error == "tool_error" and "is larger than 8.0 MB" in huge.observation
        assert call(patient, "echo", text="after").observation == "after"
    with MCPToolbox(MCPServerConfig(http_server, timeout=1)) as toolbox:
        assert toolbox.servers[0]["target"] == http_server
        assert call(toolbox, "echo", text="over http").observation == "over http"
        assert call(toolbox, "structured").observation.startswith('{"temperature": 21.5')
        assert call(toolbox, "slow", seconds=20).error == "timeout"
        assert call(toolbox, "echo", text="still").observation == "still"
        died = call(toolbox, "die")
        assert died.error == "tool_error" and "MCPServerStopped" in died.observation
        assert f"(at `{http_server}`)" in died.observation
    with pytest.raises(ConfigError, match="cannot connect"):
        MCPToolbox(http_server, startup_timeout=5)  # the server is gone now


# -- mcp-server-time (PyPI) --------------------------------------------------------------------
@pytest.fixture(scope="module")
def time_server() -> Iterator[MCPToolbox]:
    with MCPToolbox(TIME) as toolbox:
        yield toolbox


def test_the_reference_time_server(time_server: MCPToolbox) -> None:
    assert time_server.names == ["get_current_time", "convert_time"]
    assert time_server.servers[0]["server"]["name"] == "mcp-time"
    now = call(time_server, "get_current_time", timezone="Asia/Tokyo")
    data = json.loads(now.observation)
    assert data["timezone"] == "Asia/Tokyo" and data["datetime"].endswith("+09:00")
    wrong = call(time_server, "get_current_time", timezone="Mars/Olympus_Mons")
    assert wrong.error == "tool_error"
    assert wrong.observation.startswith("Error: MCPToolError: ") and "Invalid timezone" in \
        wrong.observation
    converted = call(time_server, "convert_time", source_timezone="Europe/Paris", time="12:00",
                     target_timezone="Asia/Tokyo")
    assert json.loads(converted.observation)["target"]["timezone"] == "Asia/Tokyo"


def test_an_agent_run_through_the_time_server(time_server: MCPToolbox) -> None:
    model = ScriptedModel([act("get_current_time", timezone="Asia/Tokyo"),
                           lambda messages: final("It is " + re.findall(
                               r"T(\d\d:\d\d)", messages[-1]["content"])[0] + " in Tokyo.")])
    result = Agent(model, time_server).run("What time is it in Tokyo?")
    assert result.status == "final_answer"
    assert re.fullmatch(r"It is \d\d:\d\d in Tokyo\.", result.final_answer or "")


# -- @modelcontextprotocol/server-everything (npm) ---------------------------------------------
NPM_PACKAGE = "@modelcontextprotocol/server-everything"


def _npm_prefix() -> Path:
    configured = os.environ.get("REACT_AGENT_MCP_NPM")
    if configured:
        return Path(configured)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "react-agent" / "npm"


@pytest.fixture(scope="module")
def everything() -> Iterator[MCPToolbox]:
    node = shutil.which("node")
    if node is None:
        pytest.skip(f"Node.js is not installed: {NPM_PACKAGE} (an npm package) cannot run")
    entry = _npm_prefix() / "node_modules" / NPM_PACKAGE / "dist" / "index.js"
    if not entry.is_file():
        pytest.skip(f"{NPM_PACKAGE} is not installed under {_npm_prefix()}: .ci/run installs "
                    f"it (npm install --prefix {_npm_prefix()} {NPM_PACKAGE}@2026.8.31)")
    with MCPToolbox([node, str(entry), "stdio"], timeout=30) as toolbox:
        yield toolbox


def test_the_npm_reference_server(everything: MCPToolbox) -> None:
    assert {"echo", "get-sum", "get-tiny-image", "get-structured-content",
            "get-resource-reference", "get-resource-links"} <= set(everything.names)
    for tool in everything.values():
        json_schema.check_valid(tool.parameters)
        assert "$schema" not in tool.parameters
    assert call(everything, "echo", message="hello").observation == "Echo: hello"
    assert call(everything, "get-sum", a=2, b="40").observation == "The sum of 2 and 40 is 42."
    image = call(everything, "get-tiny-image").observation
    assert re.search(r"\[image: image/png, [\d.]+ KB; not shown\]", image)
    weather = call(everything, "get-structured-content", location="New York")
    assert set(json.loads(weather.observation)) >= {"temperature", "conditions"}
    blob = call(everything, "get-resource-reference", resourceType="Blob", resourceId=2)
    assert re.search(r"\[resource demo://\S+ \(text/plain\): binary, \d+ bytes; not shown\]",
                     blob.observation)
    wrong = call(everything, "get-structured-content", location="Atlantis")
    assert wrong.error == "invalid_args" and "one of" in wrong.observation


# -- the command line ----------------------------------------------------------------------------
def test_cli_tools_lists_what_the_model_sees(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "--mcp", TIME_LINE]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("- get_current_time: Get current time in a specific timezone\n"
                          "  - timezone (string, required): IANA timezone name")
    assert "- convert_time: Convert time between timezones" in out
    assert "# MCP server mcp-time (" in err and "): 2 tool(s)" in err
    assert main(["tools", "--mcp", TIME_LINE, "--mcp-deny", "convert_*", "--json"]) == 0
    specs = json.loads(capsys.readouterr().out)
    assert [s["function"]["name"] for s in specs] == ["get_current_time"]


def test_cli_an_allow_pattern_that_matches_no_tool_stops_the_run_before_it_starts(
    capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "What time is it?", "--mcp", TIME_LINE, "--mcp-allow",
                 "get_curent_time", "--base-url", "http://127.0.0.1:9/v1"]) == 2
    captured = capsys.readouterr()
    assert "react-agent: The allow pattern 'get_curent_time' matches no tool of the MCP " \
        "servers (did you mean 'get_current_time'?)" in captured.err
    assert "Step" not in captured.out  # no model call was made


def test_cli_tools_escapes_what_a_server_writes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "--mcp", f"{sys.executable} {FAULT}", "--mcp-allow", "echo",
                 "--mcp-allow", "color*", "--tools",
                 "react_agent.tools.builtin:builtin_toolbox"]) == 0
    out = capsys.readouterr().out
    assert "- echo: Say the text back." in out and "- calculate" in out  # mixed with --tools
    assert "- colors: Paint \\x1b[31mred\\x1b[0m, then \\u202eevil." in out
    assert "\x1b" not in out and "\u202e" not in out


def test_cli_a_server_that_writes_other_things_on_stdout_shows_no_traceback() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "react_agent", "tools", "--mcp", f"{sys.executable} {FAULT} "
         "--banner", "--mcp-allow", "echo"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "- echo: Say the text back.\n  - text (string, required)\n"
    assert "Traceback" not in done.stderr
    assert f"react-agent: MCP server `{sys.executable} {FAULT} --banner` wrote a line on " \
        "stdout that is not JSON-RPC (dropped): Fault server v1.0 ready, listening on stdio" \
        in done.stderr


def test_cli_what_a_server_names_is_logged_escaped() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "react_agent", "tools", "--mcp", f"{sys.executable} {FAULT}",
         "--mcp-allow", "evil*"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("- evil__0_pwned_: A name with escapes.")
    assert "react-agent: faulty/evil\\x1b]0;pwned\\x07: the reference 'http://x/s.json' " \
        "leads outside the schema" in done.stderr
    assert "\x1b" not in done.stderr + done.stdout and "\x07" not in done.stderr


def test_cli_a_server_that_cannot_start_fails_before_the_model(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "a task", "--base-url", "http://127.0.0.1:9/v1",
                 "--mcp", f"{sys.executable} {FAULT} --crash-at-start"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("react-agent: MCP server `") and "cannot open the database" in err


def test_cli_run_through_an_mcp_server(fault_server: Any, capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    fault_server.script = [f"reply:{act('get_current_time', timezone='Asia/Tokyo')}",
                           f"reply:{final('It is morning in Tokyo.')}"]
    out_file = tmp_path / "result.json"
    code = main(["run", "What time is it in Tokyo?", "--base-url", fault_server.url,
                 "--mcp", TIME_LINE, "--save", str(out_file), "--review", "off"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert 'Action: get_current_time {"timezone": "Asia/Tokyo"}' in out
    assert 'Observation: {"timezone": "Asia/Tokyo", "datetime": "' in out
    tools = fault_server.requests[0]["messages"][0]["content"]
    assert "get_current_time" in tools and "calculate" not in tools  # only the server's tools


def test_cli_chat_keeps_one_session_over_the_turns(fault_server: Any, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    fault_server.script = [f"reply:{act('echo', text='one')}", f"reply:{final('said one')}",
                           f"reply:{act('echo', text='two')}", f"reply:{final('said two')}"]
    proc = subprocess.run(
        [sys.executable, "-m", "react_agent", "chat", "--base-url", fault_server.url, "--mcp",
         f"{sys.executable} {FAULT} --pid-file {pid_file}", "--mcp-allow", "echo"],
        input="Say one.\nSay two.\n/exit\n", capture_output=True, text=True, timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "Observation: one" in proc.stdout and "Observation: two" in proc.stdout
    assert "Final answer: said two" in proc.stdout
    assert len(pid_file.read_text().split()) == 1 and wait_gone(int(pid_file.read_text()))


def test_cli_run_tasks_uses_the_servers_for_every_task(fault_server: Any, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "a", "task": "Echo a.", "expected": ["a"]}) + "\n" +
                     json.dumps({"id": "b", "task": "Echo b.", "expected": ["b"]}) + "\n")
    fault_server.script = [f"reply:{act('echo', text='a')}", f"reply:{final('a')}",
                           f"reply:{act('echo', text='b')}", f"reply:{final('b')}"]
    code = main(["run", "--tasks", str(tasks), "--base-url", fault_server.url, "--review", "off",
                 "--mcp", f"{sys.executable} {FAULT}", "--mcp-allow", "echo"])
    assert code == 0, capsys.readouterr()
    results = [json.loads(line) for line in
               (tmp_path / "tasks.results.jsonl").read_text().splitlines()]
    assert [r["status"] for r in results] == ["final_answer", "final_answer"]
    assert all(r["passed"] for r in results)


def _ctrl_c_as_in_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_cli_ctrl_c_during_an_mcp_call_stops_the_server(fault_server: Any,
                                                        tmp_path: Path) -> None:
    marker, pid_file = tmp_path / "started", tmp_path / "pid"
    fault_server.script = [f"reply:{act('slow', seconds=60)}", f"reply:{final('done')}"]
    server = f"{sys.executable} {FAULT} --marker {marker} --pid-file {pid_file}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "react_agent", "run", "Wait.", "--base-url", fault_server.url,
         "--mcp", server],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"},
        preexec_fn=_ctrl_c_as_in_a_terminal,
    )
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert 'Action: slow {"seconds": 60}' in out
    assert out.splitlines()[-1] == "The run was interrupted (Ctrl-C)."
    assert "Traceback" not in err
    assert wait_gone(int(pid_file.read_text()))


# -- the embedded model ------------------------------------------------------------------------
@pytest.mark.real_model
def test_the_embedded_model_tells_the_time_in_tokyo_through_mcp(embedded_model: Any) -> None:
    # Only get_current_time: with convert_time beside it, the model was seen to convert a time
    # it made up ("14:00" UTC) instead of asking for the current one.
    with MCPToolbox(TIME, allow=["get_current_time"]) as toolbox:
        result = Agent(embedded_model, toolbox, max_steps=5).run("What time is it in Tokyo?")
    answered = [r for step in result.steps for r in step.results if r.ok]
    assert answered, result.tool_calls
    observed = answered[-1]
    assert observed.call.name == "get_current_time"
    assert "Tokyo" in str(observed.args.get("timezone")), observed
    assert result.status == "final_answer"
    hour, minute = re.findall(r"T(\d\d):(\d\d)", observed.observation)[0]
    shown = {f"{hour}:{minute}", f"{int(hour)}:{minute}", f"{int(hour) % 12 or 12}:{minute}"}
    assert any(t in (result.final_answer or "") for t in shown), (result.final_answer, shown)
