"""Tests for the ``react-agent`` command (react_agent.cli), run in-process through ``main``.

``run`` needs a model: an unreachable ``--base-url`` (a refused connection, no network) covers the
model-error path, and a tiny OpenAI-compatible HTTP server in a thread (stdlib only) covers a
whole run to its final answer.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import observed

from react_agent import (
    ConfigError,
    OutputParseError,
    Toolbox,
    ToolCall,
    ToolResult,
    __version__,
    parse_reply,
)
from react_agent.cli import build_parser, load_toolbox, main
from react_agent.engine import observation_message
from react_agent.harness._trace import read_trace

UNREACHABLE = "http://127.0.0.1:9/v1"
GOOD_REPLY = '{"thought": "Need the weather.", "action": {"name": "get_weather", ' \
    '"args": {"city": "北京"}}}'
BAD_REPLY = "The weather is probably fine."

TOOLS_MODULE = '''
from react_agent import Toolbox

toolbox = Toolbox()


@toolbox.tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return f"sunny, 21 °C in {city}"


def make_toolbox():
    return toolbox


not_a_toolbox = 42
'''


@pytest.fixture(autouse=True)
def _isolate(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the environment from pointing the CLI at a real server or proxy, and undo the
    sys.path entries that loading a toolbox file adds."""
    for var in ("OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_API_KEY", "NO_COLOR"):
        monkeypatch.delenv(var, raising=False)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.lower(), raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))


@pytest.fixture
def tools_file(tmp_path: Path) -> Path:
    path = tmp_path / "mytools.py"
    path.write_text(TOOLS_MODULE, encoding="utf-8")
    return path


# -- parse --------------------------------------------------------------------------------------
def test_parse_file_good_reply(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reply_file = tmp_path / "reply.txt"
    reply_file.write_text(GOOD_REPLY, encoding="utf-8")
    assert main(["parse", str(reply_file)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "stage: direct" in out
    assert "repairs: none" in out
    assert "thought: Need the weather." in out
    assert 'tool call: get_weather {"city": "北京"}' in out


def test_parse_stdin_good_reply(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "Sure!\n```json\n" + GOOD_REPLY.replace("}}}", "},}}") + "\n```"
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    assert main(["parse", "-"]) == 0
    out = capsys.readouterr().out
    assert "stage: repaired" in out
    assert "repairs: trailing commas" in out
    assert 'tool call: get_weather {"city": "北京"}' in out


def test_parse_final_answer(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    reply = '{"thought": "done", "action": {"final_answer": "It is sunny."}}'
    monkeypatch.setattr(sys, "stdin", io.StringIO(reply))
    assert main(["parse", "-"]) == 0
    out = capsys.readouterr().out
    assert "final answer: It is sunny." in out
    assert "tool call" not in out


@pytest.mark.parametrize("source", ["file", "stdin"])
def test_parse_bad_reply(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(OutputParseError) as info:
        parse_reply(BAD_REPLY)
    if source == "file":
        path = tmp_path / "bad.txt"
        path.write_text(BAD_REPLY, encoding="utf-8")
        argv = ["parse", str(path)]
    else:
        monkeypatch.setattr(sys, "stdin", io.StringIO(BAD_REPLY))
        argv = ["parse", "-"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"error ({info.value.kind}): {info.value.problem}")
    assert "The model would be sent:" in out
    assert str(info.value) in out


def test_parse_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.txt"
    assert main(["parse", str(missing)]) == 2
    assert "nope.txt" in capsys.readouterr().err


# -- run against an unreachable server ----------------------------------------------------------
def test_run_unreachable_server(tools_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "Weather in Paris?", "--tools", f"{tools_file}:toolbox",
                 "--base-url", UNREACHABLE, "--model", "any-model"])
    assert code == 1
    out = capsys.readouterr().out
    assert "Task: Weather in Paris?" in out
    assert "Status: model_error" in out
    assert UNREACHABLE in out
    assert "Could not connect" in out


def test_run_unreachable_server_json(tools_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "Weather in Paris?", "--tools", f"{tools_file}:toolbox",
                 "--base-url", UNREACHABLE, "--json"])
    assert code == 1
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert {"status", "final_answer", "steps"} <= set(data)
    assert data["status"] == "model_error"
    assert data["final_answer"] is None
    assert data["steps"] == []
    assert UNREACHABLE in data["error"] and "Could not connect" in data["error"]
    assert "get_weather" in data["messages"][0]["content"]  # the --tools toolbox was used
    assert "Status: model_error" in captured.err  # the thought chain goes to stderr


def test_run_unreachable_server_quiet(tools_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "hi", "--tools", f"{tools_file}:toolbox", "--base-url", UNREACHABLE,
                 "--model", "m", "--quiet"])
    assert code == 1
    out = capsys.readouterr().out
    assert out.startswith("Could not connect to the model server at " + UNREACHABLE)
    assert "Task:" not in out


# -- run against a tiny OpenAI-compatible server (tests/fault_server.py) --------------------------
def test_run_to_final_answer(
    fault_server: Any, tools_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = fault_server
    server.script = [
        f"reply:{GOOD_REPLY}",
        'reply:{"thought": "Done.", "action": {"final_answer": "晴"}}',
        'reply:{"thought": "Add the temperature.", "action": {"final_answer": "晴, 21 °C"}}',
    ]
    url = server.url
    code = main(["run", "北京天气?", "--tools", f"{tools_file}:make_toolbox", "--base-url", url,
                 "--model", "fake"])  # the default --review auto: the draft lacks the 21
    assert code == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:5] == [
        "Task: 北京天气?",
        "Thought: Need the weather.",
        'Action: get_weather {"city": "北京"}',
        "Observation: sunny, 21 °C in 北京",
        "Thought: Done.",
    ]
    assert out[5:9] == [
        "Draft answer: 晴",
        "Review: the draft answer states none of the values get_weather returned; asking "
        "again in a focused call",
        "Thought: Add the temperature.", "Final answer: 晴, 21 °C"]
    assert any(line.startswith("Status: final_answer, 3 model calls, 1 tool call,") for line in out)
    assert len(server.requests) == 3
    review = server.requests[2]["messages"]
    assert [m["role"] for m in review] == ["system", "user"]
    assert review[1]["content"].startswith(
        'The tool results:\n- get_weather {"city": "北京"}:\n<data ')
    assert "\nsunny, 21 °C in 北京\n</data " in review[1]["content"]
    assert review[1]["content"].endswith("\nThe task: 北京天气?")
    assert all("tools" not in r for r in server.requests)  # prompt-driven: never tools=
    assert server.requests[1]["messages"][-1] == {
        "role": "user", "content": observation_message([WEATHER_RESULT], "北京天气?"),
    }
    assert observed(server.requests[1]["messages"][-1]["content"]) == ["sunny, 21 °C in 北京"]


WEATHER_RESULT = ToolResult(ToolCall("get_weather", {"city": "北京"}), "sunny, 21 °C in 北京",
                            ok=True)
"""The result of :data:`GOOD_REPLY`'s call with the tools of ``tools_file``."""


@pytest.mark.parametrize("framing", ["on", "off"])
def test_the_frame_observations_option(
    fault_server: Any, tools_file: Path, capsys: pytest.CaptureFixture[str], framing: str
) -> None:
    fault_server.script = [f"reply:{GOOD_REPLY}", _final("晴, 21 °C")]
    assert main(["run", "北京天气?", "--tools", f"{tools_file}:make_toolbox", "--base-url",
                 fault_server.url, "--model", "fake", "--review", "off",
                 "--frame-observations", framing]) == 0
    sent = fault_server.requests[1]["messages"]
    framed = framing == "on"
    assert sent[0]["content"] == fault_server.requests[0]["messages"][0]["content"]
    assert sent[-1]["content"] == observation_message([WEATHER_RESULT], "北京天气?", framed)
    assert "Observation: sunny, 21 °C in 北京" in capsys.readouterr().out  # printed the same


def test_run_max_steps_exit_code(
    fault_server: Any, tools_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fault_server.script = [f"reply:{GOOD_REPLY}"]  # also the reply to the best-effort question
    url = fault_server.url
    code = main(["run", "task", "--tools", f"{tools_file}:toolbox", "--base-url", url,
                 "--model", "fake", "--max-steps", "1", "--json"])
    assert code == 1
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "max_steps"
    assert data["steps"][0]["observations"] == ["sunny, 21 °C in 北京"]
    assert data["final_answer"] is None and data["best_effort"] is False
    assert data["usage"]["prompt_tokens"] == 22  # two model calls, 11 tokens each


# -- --tools errors -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param("{file}", "are named MODULE:OBJECT or FILE.py:OBJECT", id="no-colon"),
        pytest.param(":toolbox", "are named MODULE:OBJECT", id="no-module"),
        pytest.param("{file}:", "are named MODULE:OBJECT", id="no-object"),
        pytest.param("{file}:not_a_toolbox", "not a Toolbox (got int)", id="not-a-toolbox"),
        pytest.param("{dir}/missing.py:toolbox", "no file", id="missing-file"),
        pytest.param("no_such_module_xyz:toolbox", "no module named 'no_such_module_xyz'",
                     id="missing-module"),
    ],
)
def test_tools_errors_exit_2(
    spec: str, message: str, tools_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = spec.format(file=tools_file, dir=tools_file.parent)
    code = main(["run", "task", "--tools", spec, "--base-url", UNREACHABLE])
    assert code == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("react-agent: ")
    assert message in captured.err
    assert captured.out == ""  # stopped before the run began


def test_tools_missing_attribute_exit_2(tools_file: Path, capsys: pytest.CaptureFixture[str]):
    code = main(["run", "task", "--tools", f"{tools_file}:nope", "--base-url", UNREACHABLE])
    assert code == 2
    assert ":nope" in capsys.readouterr().err


def test_tools_missing_attribute_message(tools_file: Path) -> None:
    clear = r"(has no|no object|not found).*'nope'|'nope'.*not found"
    with pytest.raises(ConfigError, match=clear):
        load_toolbox(f"{tools_file}:nope")


def test_tools_module_with_bad_tool_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "badtools.py"
    path.write_text(
        "from react_agent import Toolbox\ntoolbox = Toolbox()\n\n"
        "@toolbox.tool\ndef undocumented(x: str) -> str:\n    return x\n",
        encoding="utf-8",
    )
    assert main(["run", "task", "--tools", f"{path}:toolbox", "--base-url", UNREACHABLE]) == 2
    assert "add a docstring" in capsys.readouterr().err


# -- load_toolbox -------------------------------------------------------------------------------
@pytest.mark.parametrize("attr", ["toolbox", "make_toolbox"])
def test_load_toolbox_from_file(tools_file: Path, attr: str) -> None:
    toolbox = load_toolbox(f"{tools_file}:{attr}")
    assert isinstance(toolbox, Toolbox)
    assert toolbox.names == ["get_weather"]
    assert toolbox["get_weather"].func(city="Rome") == "sunny, 21 °C in Rome"


def test_load_toolbox_from_relative_file(
    tools_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tools_file.parent.parent)
    toolbox = load_toolbox(f"{tools_file.parent.name}/mytools.py:toolbox")
    assert toolbox.names == ["get_weather"]


@pytest.mark.parametrize("attr", ["toolbox", "make_toolbox"])
def test_load_toolbox_from_module(
    tools_file: Path, monkeypatch: pytest.MonkeyPatch, attr: str
) -> None:
    module = "react_agent_cli_test_tools"
    (tools_file.parent / f"{module}.py").write_text(TOOLS_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tools_file.parent))
    monkeypatch.delitem(sys.modules, module, raising=False)
    try:
        toolbox = load_toolbox(f"{module}:{attr}")
    finally:
        sys.modules.pop(module, None)
    assert isinstance(toolbox, Toolbox)
    assert toolbox.names == ["get_weather"]


def test_load_toolbox_from_installed_package() -> None:
    toolbox = load_toolbox("react_agent.tools.builtin:builtin_toolbox")
    assert "calculate" in toolbox.names


# -- the command itself -------------------------------------------------------------------------
def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"react-agent {__version__}"


@pytest.mark.parametrize(("argv", "line"), [
    ([], "react-agent: error: the following arguments are required: command"),
    (["parse"], "react-agent parse: error: the following arguments are required: file"),
    (["fly"], "react-agent: error: argument command: invalid choice: 'fly' (choose from 'run', "),
    (["run", "x", "--max-steps", "many"],
     "react-agent run: error: argument --max-steps: invalid int value: 'many'"),
    (["run", "x", "--mcp-alow", "get_*"],
     "react-agent run: error: unrecognized arguments: --mcp-alow get_* (did you mean "
     "'--mcp-allow'?)"),
    (["tools", "--jsn"],
     "react-agent tools: error: unrecognized arguments: --jsn (did you mean '--json'?)"),
    (["view", "a.jsonl", "--bogus"], "react-agent view: error: unrecognized arguments: --bogus"),
], ids=["no-command", "parse-no-file", "unknown-command", "bad-int", "option-typo",
        "option-typo-tools", "unknown-option"])
def test_usage_errors_are_one_line_and_a_pointer_to_help(
    argv: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not the whole usage (19 lines for run) before the line that says what is wrong."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    first, second = capsys.readouterr().err.splitlines()
    assert first.startswith(line)
    command = line.partition(":")[0]
    assert second == f"See '{command} --help' for the options."


def test_module_help_subprocess() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "react_agent", "--help"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0
    assert done.stdout.startswith("usage: react-agent")
    for word in ("run", "parse", "--version"):
        assert word in done.stdout


def test_a_reader_that_goes_away_ends_the_output_without_a_traceback() -> None:
    """`react-agent tools | head -1`: the pipe is closed before the CLI writes, so its write
    fails with EPIPE; the CLI ends quietly with 141 (128 + SIGPIPE), as shell tools do."""
    proc = subprocess.Popen([sys.executable, "-m", "react_agent", "tools"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the child has imported anything, let alone printed
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


# -- the CLI as a real process: Ctrl-C and approval ---------------------------------------------
CLI_TOOLS = Path(__file__).parent / "data" / "cli_tools.py"


def _reply(name: str, **args: Any) -> str:
    return "reply:" + json.dumps({"thought": f"use {name}", "action": {"name": name, "args": args}})


FINAL_DONE = 'reply:{"thought": "ok", "action": {"final_answer": "done"}}'


def _ctrl_c_as_in_a_terminal() -> None:
    """In the child before it starts: SIGINT back to its default, so that Python turns it into
    KeyboardInterrupt even when the test run ignores it (a shell starts background jobs with
    SIGINT ignored, and children inherit that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start_cli(url: str, marker: Path, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "MARKER": str(marker), "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "react_agent", "run", "mail boss@example.com", "--tools",
         f"{CLI_TOOLS}:toolbox", "--base-url", url, *extra],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=_ctrl_c_as_in_a_terminal,
    )


def _wait_for(condition: Any, what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_ctrl_c_during_a_tool(fault_server: Any, tmp_path: Path) -> None:
    fault_server.script = [_reply("add", a=2, b=3), _reply("slow", seconds=60), FINAL_DONE]
    marker = tmp_path / "started"
    proc = _start_cli(fault_server.url, marker, "--trace", str(tmp_path / "trace.jsonl"))
    _wait_for(marker.exists, "the slow tool to start")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    lines = out.splitlines()
    assert 'Action: add {"a": 2, "b": 3}' in lines
    assert "Observation: 5" in lines
    assert 'Action: slow {"seconds": 60}' in lines
    assert lines[-2].startswith("Status: interrupted, 2 model calls, 1 tool call,")
    assert lines[-1] == "The run was interrupted (Ctrl-C)."
    assert "Traceback" not in err
    [run] = read_trace(tmp_path / "trace.jsonl")  # the trace was flushed up to the end
    assert run.status == "interrupted" and run.steps[0].observations == ["5"]
    assert [c.name for c in run.tool_calls] == ["add", "slow"]


def test_ctrl_c_during_a_model_call_json(fault_server: Any, tmp_path: Path) -> None:
    fault_server.script = [_reply("add", a=2, b=3), "stall"]
    proc = _start_cli(fault_server.url, tmp_path / "m", "--json")
    _wait_for(lambda: len(fault_server.requests) == 2, "the second model call")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    data = json.loads(out)
    assert data["status"] == "interrupted"
    assert [s["observations"] for s in data["steps"]] == [["5"]]
    assert observed(data["messages"][-1]["content"]) == ["5"]
    assert "Status: interrupted" in err and "Traceback" not in err


@pytest.mark.parametrize("keep", ["save", "trace"])
def test_ctrl_c_with_save_or_trace_prints_the_command_that_goes_on(
    fault_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], keep: str
) -> None:
    fault_server.script = [_reply("add", a=2, b=3), _reply("slow", seconds=60)]
    marker = tmp_path / "started"
    saved = tmp_path / ("my run.json" if keep == "save" else "my run.jsonl")
    proc = _start_cli(fault_server.url, marker, f"--{keep}", str(saved), "--max-steps", "4",
                      "--api-key", "sk-secret-key", "--no-fresh-model", "--review", "off")
    _wait_for(marker.exists, "the slow tool to start")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    [line] = [line for line in err.splitlines() if line.startswith("To go on from here: ")]
    command = shlex.split(line.removeprefix("To go on from here: "))
    assert command[:4] == ["react-agent", "run", "--resume", str(saved)]
    assert command[4:] == ["--base-url", fault_server.url, "--tools", f"{CLI_TOOLS}:toolbox",
                           "--max-steps", "4", "--review", "off", f"--{keep}", str(saved),
                           "--no-fresh-model", "--api-key", "..."]  # the key is not printed
    assert "sk-secret-key" not in err
    fault_server.script = [_reply("add", a=1, b=1), FINAL_DONE]
    fault_server.requests.clear()
    assert main(command[1:-2]) == 0  # the command as printed goes on from the slow step
    assert "Final answer: done" in capsys.readouterr().out
    assert observed(fault_server.requests[0]["messages"][-1]["content"]) == ["5"]


@pytest.mark.parametrize(
    ("answer", "extra", "observation"),
    [
        ("y\n", [], "Observation: sent to boss@example.com"),
        ("yes\n", [], "Observation: sent to boss@example.com"),
        ("n\n", [], 'Observation: Error: the user declined to run send_email {"to": '),
        ("\n", [], "Observation: Error: the user declined"),
        ("", [], "Observation: Error: the user declined"),  # end of input
        ("", ["--yes"], "Observation: sent to boss@example.com"),
    ],
    ids=["y", "yes", "n", "enter", "eof", "--yes"],
)
def test_approval_on_the_terminal(
    fault_server: Any, tmp_path: Path, answer: str, extra: list[str], observation: str
) -> None:
    fault_server.script = [_reply("send_email", to="boss@example.com"), FINAL_DONE]
    proc = _start_cli(fault_server.url, tmp_path / "m", *extra)
    out, err = proc.communicate(answer, timeout=60)
    assert proc.returncode == 0, err
    assert any(line.startswith(observation) for line in out.splitlines()), out
    asked = 'Allow send_email {"to": "boss@example.com"}? [y/N]'
    assert (asked in err) is (extra == [])
    assert "Final answer: done" in out


def test_trace_then_replay_prints_the_same_chain(
    fault_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fault_server.script = [_reply("add", a=2, b="3"), FINAL_DONE, FINAL_DONE]
    trace = tmp_path / "run.jsonl"
    code = main(["run", "2+3?", "--tools", f"{CLI_TOOLS}:toolbox", "--base-url", fault_server.url,
                 "--trace", str(trace), "--review", "always"])
    live = capsys.readouterr().out
    assert code == 0
    assert "Usage: step  1: model" in live and "Usage: in all:  model" in live
    assert "Draft answer: " in live and "Final answer: " in live
    assert main(["replay", str(trace)]) == 0
    assert capsys.readouterr().out == live
    assert main(["replay", str(trace), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "final_answer"
    assert data["steps"][0]["results"][0]["cleaning"] == ['b: "3" -> 3']


def test_replay_of_a_missing_trace_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(tmp_path / "nope.jsonl")]) == 2
    assert "Cannot read the trace" in capsys.readouterr().err


def test_stream_flag_shows_the_raw_reply(
    fault_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fault_server.script = [FINAL_DONE]
    code = main(["run", "hi", "--tools", f"{CLI_TOOLS}:toolbox", "--base-url", fault_server.url,
                 "--stream"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0
    assert lines[1] == 'Model: {"thought": "ok", "action": {"final_answer": "done"}}'
    assert lines[2:4] == ["Thought: ok", "Final answer: done"]
    assert fault_server.requests[0]["stream"] is True


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run"], "run needs one of: a task, --tasks FILE.jsonl, --resume FILE."),
        (["run", "x", "--tasks", "t.jsonl"],
         "run needs one of: a task, --tasks FILE.jsonl, --resume FILE."),
    ],
)
def test_run_argument_errors_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f"react-agent: {message}"


# -- chat -----------------------------------------------------------------------------------------
def test_chat_keeps_history_saves_and_resets(fault_server: Any, tmp_path: Path) -> None:
    fault_server.script = [
        _reply("add", a=2, b=3), 'reply:{"thought": "t", "action": {"final_answer": "5"}}',
        'reply:{"thought": "t", "action": {"final_answer": "You asked 2 + 3."}}',
        'reply:{"thought": "t", "action": {"final_answer": "fresh"}}',
    ]
    saved = tmp_path / "chat.json"
    lines = ["2 + 3?", "What did I ask?", f"/save {saved}", "/reset", "hello", "/bogus", "/exit"]
    proc = subprocess.run(
        [sys.executable, "-m", "react_agent", "chat", "--tools", f"{CLI_TOOLS}:toolbox",
         "--base-url", fault_server.url],
        input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Final answer: 5" in out and "Final answer: You asked 2 + 3." in out
    assert f"(saved to {saved})" in out and "(the conversation was cleared)" in out
    assert "(commands: /reset, /save FILE, /exit)" in out
    assert "Task:" not in out
    second_turn = fault_server.requests[2]["messages"]
    assert [m["role"] for m in second_turn] == ["system", "user", "assistant", "user", "assistant",
                                                "user"]
    assert second_turn[1]["content"] == "2 + 3?"
    after_reset = fault_server.requests[3]["messages"]
    assert [m["content"] for m in after_reset[1:]] == ["hello"]
    data = json.loads(saved.read_text("utf-8"))
    assert [t["task"] for t in data["turns"]] == ["2 + 3?", "What did I ask?"]


def test_chat_load_continues(fault_server: Any, tmp_path: Path) -> None:
    saved = tmp_path / "chat.json"
    saved.write_text(json.dumps({
        "messages": [{"role": "system", "content": "old"}, {"role": "user", "content": "I am Ann."},
                     {"role": "assistant", "content": "ok"}],
        "turn_starts": [1], "turns": [],
    }))
    fault_server.script = ['reply:{"thought": "t", "action": {"final_answer": "Ann"}}']
    proc = subprocess.run(
        [sys.executable, "-m", "react_agent", "chat", "--tools", f"{CLI_TOOLS}:toolbox",
         "--base-url", fault_server.url, "--load", str(saved)],
        input="Who am I?\n", capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    sent = fault_server.requests[0]["messages"]
    assert [m["content"] for m in sent[1:]] == ["I am Ann.", "ok", "Who am I?"]
    assert sent[0]["content"] != "old"


# -- batches --------------------------------------------------------------------------------------
def _final(answer: str) -> str:
    return "reply:" + json.dumps({"thought": "t", "action": {"final_answer": answer}})


def test_tasks_file_runs_resumes_and_summarises(
    fault_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("\n".join(json.dumps(t) for t in [
        {"id": "sum", "task": "2 + 3?", "expected": ["5"]},
        {"id": "name", "task": "Your name?", "expected": ["Bob"]},
        {"task": "Say hi", "tools": f"{CLI_TOOLS}:toolbox"},
    ]) + "\n\n")
    out = tmp_path / "results.jsonl"
    out.write_text(json.dumps({"id": "sum", "status": "final_answer", "passed": True,
                               "steps": 2, "prompt_tokens": 5, "completion_tokens": 5,
                               "seconds": 1.0}) + "\n")
    fault_server.script = [_final("I am a model."), _final("hi")]
    code = main(["run", "--tasks", str(tasks), "--out", str(out), "--base-url", fault_server.url,
                 "--tools", f"{CLI_TOOLS}:toolbox"])
    captured = capsys.readouterr()
    assert code == 1  # one expectation failed
    assert len(fault_server.requests) == 2, "the task already in the output was skipped"
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in records] == ["sum", "name", "3"]
    name, hi = records[1], records[2]
    assert (name["status"], name["passed"], name["missing"]) == ("final_answer", False, ["Bob"])
    assert hi["passed"] is None and hi["final_answer"] == "hi"
    assert hi["result"]["steps"][0]["raw_output"].startswith('{"thought"')
    assert "1 task(s) already in" in captured.out
    table = captured.out.splitlines()
    header = next(i for i, line in enumerate(table) if line.startswith("status"))
    seconds = [1.0, hi["seconds"], name["seconds"]]
    assert table[header + 1].split() == ["final_answer", "3", "1", "1", "4",
                                         str(10 + 2 * 18), f"{sum(seconds):.1f}",
                                         f"{sorted(seconds)[1]:.1f}"]
    assert "Failed (1):" in captured.out and "  name: the final answer lacks 'Bob'" in captured.out
    assert "[########################] 2/2" in captured.err
    # a second run has nothing left to do
    assert main(["run", "--tasks", str(tasks), "--out", str(out), "--base-url",
                 fault_server.url]) == 1
    assert len(fault_server.requests) == 2


def test_bad_tasks_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"task": "ok"}\n{"id": 3}\n')
    assert main(["run", "--tasks", str(tasks), "--base-url", UNREACHABLE]) == 2
    assert ("tasks.jsonl, line 2: not a task (task: missing"
            in capsys.readouterr().err)


def test_memory_flag_adds_the_memory_tools(
    fault_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("REACT_AGENT_DATA", str(tmp_path))
    fault_server.script = [_reply("remember", fact="The user likes tea."), _final("noted")]
    assert main(["run", "I like tea", "--memory", "ann", "--base-url", fault_server.url]) == 0
    assert "Observation: Remembered: The user likes tea." in capsys.readouterr().out
    assert "- recall:" in fault_server.requests[0]["messages"][0]["content"]
    facts = json.loads((tmp_path / "memory" / "ann.json").read_text("utf-8"))["facts"]
    assert [f["fact"] for f in facts] == ["The user likes tea."]


@pytest.mark.parametrize("source", ["save", "trace"])
def test_save_then_resume_with_more_steps(
    fault_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str
) -> None:
    fault_server.script = [_reply("add", a=1, b=1), _reply("add", a=1, b=1)]  # 2nd: best effort
    saved = tmp_path / ("run.json" if source == "save" else "run.jsonl")
    flag = "--save" if source == "save" else "--trace"
    common = ["--tools", f"{CLI_TOOLS}:toolbox", "--base-url", fault_server.url]
    assert main(["run", "1+1 then 2+2?", "--max-steps", "1", flag, str(saved), *common]) == 1
    capsys.readouterr()
    fault_server.script = [_reply("add", a=2, b=2), _final("2 and 4")]
    fault_server.requests.clear()
    assert main(["run", "--resume", str(saved), "--max-steps", "3", *common]) == 0
    out = capsys.readouterr().out
    assert "Final answer: 2 and 4" in out
    first = fault_server.requests[0]["messages"]
    assert [m["role"] for m in first] == ["system", "user", "assistant", "user"]
    assert observed(first[-1]["content"]) == ["2"]


def test_resume_from_a_cut_trace_sends_the_whole_history(
    fault_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A process killed mid-run leaves a trace without run_end; resuming it sends the model the
    history the run had (every step's reply and observation), not only the system prompt and
    the task."""
    trace = tmp_path / "run.jsonl"
    common = ["--tools", f"{CLI_TOOLS}:toolbox", "--base-url", fault_server.url]
    fault_server.script = [_reply("add", a=1, b=1), _reply("add", a=2, b=2), _final("2 and 4")]
    assert main(["run", "1+1 then 2+2?", "--trace", str(trace), *common]) == 0
    sent = fault_server.requests[2]["messages"]  # what the third model call was sent
    records = [json.loads(line) for line in trace.read_text("utf-8").splitlines()]
    cut = [r for r in records if r["type"] != "run_end" and not (
        r.get("step") == 3 and r["type"] == "model_call")]
    trace.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in cut), "utf-8")
    capsys.readouterr()
    fault_server.script = [_final("2 and 4")]
    fault_server.requests.clear()
    assert main(["run", "--resume", str(trace), *common]) == 0
    assert fault_server.requests[0]["messages"] == sent
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "Final answer: 2 and 4" in capsys.readouterr().out


HOSTILE = "\x1b]52;c;ZWNobyBoaQ==\x07\x1b[2J\x1b]0;title\x07\r\u202eevil"


def test_run_and_replay_print_no_control_sequence_a_reply_holds(
    fault_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reply's thought, arguments and answer, and an observation naming the model's own tool
    name, may hold escape sequences (clipboard write OSC 52, clear screen, window title, a
    carriage return, a right-to-left override): printed, each is a visible escape."""
    fault_server.script = [
        "reply:" + json.dumps({"thought": HOSTILE, "action": {"name": "add",
                                                               "args": {"a": 1, "b": HOSTILE}}}),
        "reply:" + json.dumps({"thought": "t", "action": {"name": HOSTILE, "args": {}}}),
        "reply:" + json.dumps({"thought": HOSTILE, "action": {"final_answer": HOSTILE}}),
    ]
    trace = tmp_path / "run.jsonl"
    assert main(["run", "hi", "--tools", f"{CLI_TOOLS}:toolbox", "--base-url", fault_server.url,
                 "--trace", str(trace)]) == 0
    live = capsys.readouterr().out
    assert main(["replay", str(trace)]) == 0
    replayed = capsys.readouterr().out
    for out in (live, replayed):
        assert not any(c in out for c in "\x1b\x07\r\u202e"), repr(out)
        assert out.count("\\x1b]52;c;") >= 3 and "\\u202e" in out  # thought, args, answer
    assert replayed == live


def test_resume_into_the_same_trace_keeps_the_earlier_records(
    fault_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`run --resume T --trace T`: the resumed run is appended to T; nothing of the earlier run
    is lost, and T then reads back as both runs."""
    trace = tmp_path / "run.jsonl"
    common = ["--tools", f"{CLI_TOOLS}:toolbox", "--base-url", fault_server.url]
    fault_server.script = [_reply("add", a=1, b=1)]
    main(["run", "1+1?", "--trace", str(trace), "--max-steps", "1", *common])
    before = trace.read_text("utf-8")
    assert read_trace(trace)[-1].status == "max_steps"
    fault_server.script = [_final("2")]
    assert main(["run", "--resume", str(trace), "--trace", str(trace), *common]) == 0
    after = trace.read_text("utf-8")
    assert after.startswith(before) and len(after) > len(before)
    runs = read_trace(trace)
    assert [r.status for r in runs] == ["max_steps", "final_answer"]
    assert runs[1].final_answer == "2"
    assert runs[1].tool_calls[0].to_dict() == {"name": "add", "args": {"a": 1, "b": 1}}
    capsys.readouterr()


# -- serve ---------------------------------------------------------------------------------------
def test_serve_refuses_a_public_address_without_a_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--host", "0.0.0.0", "--base-url", UNREACHABLE]) == 2
    assert "--api-key" in capsys.readouterr().err


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
@pytest.mark.parametrize("key", ["", " "])
def test_serve_refuses_an_empty_api_key(
    host: str, key: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Hostile input (issue 38, item 9): ``--api-key ""`` let ``Authorization: Bearer`` with
    no token in and turned the Host check off."""
    assert main(["serve", "--host", host, "--api-key", key, "--base-url", UNREACHABLE]) == 2
    assert "--api-key is empty" in capsys.readouterr().err


def test_serve_takes_a_gguf_file_as_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--model", str(tmp_path / "missing.gguf")]) == 2
    assert f"No GGUF model file at {tmp_path / 'missing.gguf'}" in capsys.readouterr().err


def test_serve_in_front_of_a_server(fault_server: Any) -> None:
    """`react-agent serve --base-url URL` as a real process: a request with tools gets the
    server's plain-text reply back as a tool call; Ctrl-C stops it cleanly."""
    import socket
    import urllib.request

    fault_server.script = [_reply("add", a=2, b="3")]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "react_agent", "serve", "--base-url", fault_server.url,
         "--port", str(port), "--api-key", "k"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_ctrl_c_as_in_a_terminal,
    )
    base = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=1) as response:
                return response.status == 200
        except OSError:
            return proc.poll() is not None

    try:
        _wait_for(up, "the server to start")
        tool = {"type": "function", "function": {
            "name": "add", "description": "Add two numbers.", "parameters": {
                "type": "object", "properties": {"a": {"type": "number"},
                                                 "b": {"type": "number"}}}}}
        body = {"model": "m", "messages": [{"role": "user", "content": "2+3?"}], "tools": [tool]}
        request = urllib.request.Request(
            f"{base}/v1/chat/completions", data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Authorization": "Bearer k"})
        with urllib.request.urlopen(request, timeout=30) as response:
            reply = json.loads(response.read())
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    (call,) = reply["choices"][0]["message"]["tool_calls"]
    assert call["function"] == {"name": "add", "arguments": '{"a": 2, "b": 3}'}
    assert f"Serving fault-model at http://127.0.0.1:{port}/v1" in err
    assert proc.returncode in (0, -signal.SIGINT)


@pytest.mark.parametrize(("given", "floor"), [([], 0.035), (["--answer-floor", "0.2"], 0.2),
                                              (["--answer-floor", "off"], None)])
def test_the_answer_floor_option(given: list[str], floor: float | None) -> None:
    assert build_parser().parse_args(["run", "Hi", *given]).answer_floor == floor


@pytest.mark.parametrize("command", [["run", "Hi"], ["chat"], ["serve"]])
def test_observations_are_framed_unless_turned_off(command: list[str]) -> None:
    parser = build_parser()
    assert parser.parse_args(command).frame_observations == "on"
    assert parser.parse_args([*command, "--frame-observations", "off"]).frame_observations == "off"


@pytest.mark.parametrize("bad", ["0", "1.5", "high"])
def test_a_bad_answer_floor_is_refused(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "Hi", "--answer-floor", bad])
    assert "expected a probability in (0, 1] or off" in capsys.readouterr().err


def test_the_cli_reference_names_every_option() -> None:
    """docs/cli.md is kept in step with the parser: every subcommand and option is there."""
    import argparse

    doc = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text(encoding="utf-8")
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    missing = [f"{name} {option}" for name, sub in commands.choices.items()
               for action in sub._actions for option in action.option_strings
               if option.startswith("--") and option != "--help" and f"`{option}" not in doc]
    missing += [name for name in commands.choices if f"## `{name}`" not in doc]
    assert missing == []


def test_serve_takes_policies_on_and_off_for_its_turns(capsys: pytest.CaptureFixture[str]) -> None:
    from react_agent.cli._serve import serve_policies
    from react_agent.models import ScriptedModel

    model = ScriptedModel([])
    assert serve_policies(model, [], []) is None  # serve's own defaults
    names = [p.name for p in serve_policies(model, ["unknown_args"], ["held_calls"]) or []]
    assert "unknown_args" in names and "held_calls" not in names
    assert "review" not in names and "best_effort" not in names  # never in a turn
    with pytest.raises(ConfigError, match="does not run in serve"):
        serve_policies(model, ["review"], [])
    with pytest.raises(ConfigError, match="--with-policy routing"):
        serve_policies(model, ["routing"], [])  # a turn shows the request's own tools
    with pytest.raises(SystemExit):
        main(["serve", "--with-policy", "unknown_arg"])  # a typo: argparse's choices
    assert "unknown_args" in capsys.readouterr().err


# -- --output-schema ----------------------------------------------------------------------------
COUNT_SCHEMA = {"type": "object", "properties": {"lines": {"type": "integer"}},
                "required": ["lines"]}


def _typed(value: Any) -> str:
    return "reply:" + json.dumps({"thought": "Counted.", "action": {"final_answer": value}})


def test_output_schema_prints_the_typed_value_after_the_final_answer(
    fault_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(COUNT_SCHEMA))
    fault_server.script = [_typed({"lines": "oops"}), _typed({"lines": "173"})]
    assert main(["run", "Count the lines.", "--output-schema", str(schema), "--review", "off",
                 "--base-url", fault_server.url]) == 0
    out = capsys.readouterr().out.splitlines()
    assert any(line.startswith("Output does not fit: lines: ") for line in out)
    final = out.index('Final answer: {"lines": "173"}')
    assert out[final + 1] == 'Output: {"lines": 173}'
    assert '"lines"' in fault_server.requests[0]["messages"][0]["content"]


def test_output_schema_in_json_and_quiet(
    fault_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(COUNT_SCHEMA))
    fault_server.script = [_typed({"lines": 5})]
    args = ["run", "Count.", "--output-schema", str(schema), "--review", "off",
            "--base-url", fault_server.url]
    assert main([*args, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["output"] == {"lines": 5}
    fault_server.script = [_typed({"lines": 5})]
    assert main([*args, "--quiet"]) == 0
    assert capsys.readouterr().out == '{"lines": 5}\n'


@pytest.mark.parametrize(("content", "message"), [
    ("[1, 2]", "is not a JSON object"),
    ("{nope", "is not valid JSON"),
    ("[" * 500 + "]" * 500, "nested deeper"),
    (json.dumps({"$ref": "file:///etc/passwd"}), "refers outside the schema"),
    (json.dumps({"type": "object", "properties": {"a": {"type": "nothing"}}}),
     "not a valid JSON Schema"),
    (" " * 1_000_001, "larger than"),
])
def test_a_bad_output_schema_file_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str,
) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(content)
    assert main(["run", "x", "--output-schema", str(schema), "--base-url", UNREACHABLE]) == 2
    err = capsys.readouterr().err
    assert str(schema) in err and message in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_an_output_schema_that_is_a_fifo_is_refused_not_waited_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    fifo = tmp_path / "schema.json"
    os.mkfifo(fifo)  # no writer: opening it to read the usual way waits for one
    stop = threading.Event()

    def writer() -> None:  # frees a reader that waits (the test fails then, never hangs)
        while not stop.is_set():
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # no reader yet
                stop.wait(0.01)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        assert main(["run", "x", "--output-schema", str(fifo), "--base-url", UNREACHABLE]) == 2
    finally:
        stop.set()
        thread.join()
    err = capsys.readouterr().err
    assert str(fifo) in err and "a FIFO, not a regular file" in err
    assert main(["run", "x", "--output-schema", os.devnull, "--base-url", UNREACHABLE]) == 2
    assert "a device, not a regular file" in capsys.readouterr().err


@pytest.mark.parametrize(("options", "message"), [
    (["--with-policy", "review"], "--with-policy review: this policy is set with --review"),
    (["--with-policy", "answer_floor"], "set with --answer-floor"),
    (["--with-policy", "held_calls", "--without-policy", "held_calls"], "contradict"),
])
def test_policy_options_that_contradict_each_other_exit_2_before_the_model_loads(
    options: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "x", *options, "--model", "local:/nonexistent.gguf"]) == 2
    err = capsys.readouterr().err
    assert message in err and "GGUF" not in err  # refused before the model is looked for


def test_quiet_prints_no_prose_where_a_typed_value_is_due(
    fault_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """A new user (2026-12-06): with ``--quiet`` a script reads stdout as JSON; an answer that
    never fit printed its prose there."""
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(COUNT_SCHEMA))
    fault_server.script = [_typed("about twelve")] * 3
    assert main(["run", "Count.", "--output-schema", str(schema), "--review", "off", "--quiet",
                 "--base-url", fault_server.url]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("output_invalid: ")


def test_quiet_typed_json_escapes_what_a_terminal_acts_on_and_stays_json(
    fault_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"s": {"type": "string"}}}))
    fault_server.script = [_typed({"s": "b\x9b31m\x7f\u202eé"})]
    assert main(["run", "x", "--output-schema", str(schema), "--review", "off", "--quiet",
                 "--base-url", fault_server.url]) == 0
    out = capsys.readouterr().out
    assert "\x9b" not in out and "\u202e" not in out and "\x7f" not in out
    assert json.loads(out) == {"s": "b\x9b31m\x7f\u202eé"}


def test_a_tasks_files_empty_output_schema_is_its_own_not_the_command_lines(
    fault_server: Any, tmp_path: Path,
) -> None:
    """Attack (2026-12-06): ``"output_schema": {}`` (any value) was taken as no schema."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "any", "task": "Give one.", "output_schema": {}}) + "\n")
    int_schema = tmp_path / "int.json"
    int_schema.write_text(json.dumps({"type": "string"}))
    out = tmp_path / "out.jsonl"
    fault_server.script = [_typed(1)]
    main(["run", "--tasks", str(tasks), "--out", str(out), "--output-schema", str(int_schema),
          "--review", "off", "--base-url", fault_server.url])
    record = json.loads(out.read_text().splitlines()[0])
    assert (record["output"], record["output_valid"]) == (1, True)


def test_yes_approves_what_tools_ask_never_what_a_policy_doubts() -> None:
    """``--yes`` approves a tool marked ``requires_approval``; a call Provenance sends for
    approval (a value only a tool result named) of any other tool is declined."""
    from react_agent.cli._session import approve_all

    toolbox = Toolbox()
    toolbox.add(lambda: "ok", name="wire", description="Wire money.", requires_approval=True)
    toolbox.add(lambda: "ok", name="pay", description="Pay.", acts=True)
    assert approve_all(toolbox.get("wire"), {}) is True
    assert approve_all(toolbox.get("pay"), {}) is False
