"""The examples by use case (examples/*.py), each run with --scripted in a subprocess (canned
replies, no model) and checked on what it prints: the tools really ran and gave their results,
and the answer, the conversation or the results table came out whole."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from react_agent import ScriptedModel

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NAMES = sorted(p.stem for p in EXAMPLES.glob("*.py") if not p.name.startswith("_"))


def run_example(name: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python examples/NAME.py ARGS`` from ``cwd`` (not the repository: the examples must not
    depend on the working directory)."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), *args], cwd=cwd, env=env,
        capture_output=True, text=True, encoding="utf-8", timeout=60,
    )


def scripted(name: str, cwd: Path) -> str:
    done = run_example(name, "--scripted", cwd=cwd)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_every_example_has_a_test_and_says_how_to_run_it() -> None:
    tested = {name.removeprefix("test_") for name in globals() if name.startswith("test_")}
    assert set(NAMES) <= tested, f"examples without a test: {set(NAMES) - tested}"
    for name in NAMES:
        doc = ast.get_docstring(ast.parse((EXAMPLES / f"{name}.py").read_text("utf-8"))) or ""
        assert f"python examples/{name}.py" in doc, name
        assert "--scripted" in doc and "--base-url" in doc, name


def test_quickstart(tmp_path: Path) -> None:
    out = scripted("quickstart", tmp_path)
    # the file tool read the list written into its folder; the calculator did the sum
    assert "Action: read_file {\"path\": \"shopping.txt\"}" in out
    assert "apples: 3 at 0.40\nbread: 1 at 2.25\ncoffee: 2 at 5.90" in out
    assert "Observation: 3 * 0.40 + 1 * 2.25 + 2 * 5.90 = 15.25" in out
    assert "Tools used: read_file, calculate" in out
    assert re.search(r"^Answer: .*15\.25", out, re.M)


def test_tools_of_your_own(tmp_path: Path) -> None:
    out = scripted("tools_of_your_own", tmp_path)
    # the schema came from the type hints and the docstring
    assert '- currency (string, required): one of "EUR", "GBP", "JPY"; the currency to convert ' \
        "into." in out
    assert "- amount (number, required): the amount in US dollars." in out
    assert 'Observation: {"product": "Trailhead 30", "price": 89.0, "currency": "USD"}' in out
    assert "Observation: 89.00 USD = 81.88 EUR" in out
    assert re.search(r"^Final answer: .*81\.88 EUR", out, re.M)
    assert "Status: final_answer, 3 model calls, 2 tool calls" in out


def test_other_model(tmp_path: Path) -> None:
    out = scripted("other_model", tmp_path)
    assert "Observation: 350 / 4 * 7 = 612.5" in out
    assert "Final answer: For 7 people you need 612.5 g of flour." in out


def test_other_model_without_a_server(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = run_example("other_model", "--base-url", f"http://127.0.0.1:{port}/v1",
                       "--model", "any", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"Server: http://127.0.0.1:{port}/v1" in done.stdout
    assert "Status: model_error" in done.stdout
    assert "The server failed: " in done.stdout


def test_conversation_memory(tmp_path: Path) -> None:
    out = scripted("conversation_memory", tmp_path)
    first, later = out.split("--- a new conversation")
    assert "Observation: Remembered: Dana is vegetarian and allergic to peanuts." in first
    # the new conversation recalls the fact from the memory file the first one wrote
    assert "Observation: - Dana is vegetarian and allergic to peanuts. (remembered " in later
    assert "Remembered facts: ['Dana is vegetarian and allergic to peanuts.']" in later
    assert not list(tmp_path.iterdir())  # the memory file lived in a temporary folder


def test_batch(tmp_path: Path) -> None:
    out = scripted("batch", tmp_path)
    rows = {line.split()[0]: line.split()[1:4] for line in out.splitlines()
            if line.split() and line.split()[0] in ("final_answer", "arithmetic", "no-tool")}
    assert rows == {"final_answer": ["3", "3", "0"], "arithmetic": ["2", "2", "0"],
                    "no-tool": ["1", "1", "0"]}  # tasks, passed, failed
    totals = [line.split()[1:4] for line in out.splitlines() if line.startswith("total ")]
    assert totals == [["3", "3", "0"], ["3", "3", "0"]]  # by status, by shape
    assert "[3/3] greeting: final_answer, passed: True" in out


def test_batch_suite_needs_a_model(tmp_path: Path) -> None:
    done = run_example("batch", "--suite", "--scripted", cwd=tmp_path)
    assert done.returncode == 1
    assert "--suite needs a model" in done.stderr


def test_serve_openai_sdk(tmp_path: Path) -> None:
    out = scripted("serve_openai_sdk", tmp_path)
    assert re.search(r"^Serving at http://127\.0\.0\.1:\d+/v1$", out, re.M)
    # the server sent both calls as tool_calls; the client ran them and sent the results back
    assert "Assistant (thinking): I need the weather in both cities." in out
    assert "Tool call: get_weather({'city': 'Lisbon'}) -> sunny, 21 °C" in out
    assert "Tool call: get_weather({'city': 'Oslo'}) -> cloudy, 9 °C" in out
    assert out.rstrip().endswith(
        "Assistant: It is warmer in Lisbon: 21 °C and sunny, against 9 °C in Oslo.")


def _run_helper() -> ModuleType:
    """examples/_run.py, the examples' shared command line."""
    spec = importlib.util.spec_from_file_location("examples_run", EXAMPLES / "_run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shared_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    run = _run_helper()
    args = run.command_line("doc", argv=["--scripted"])
    model = run.pick_model(args, [run.reply_answer("t", "done")])
    assert isinstance(model, ScriptedModel)
    assert json.loads(model.replies[0]) == {"thought": "t", "action": {"final_answer": "done"}}
    args = run.command_line("doc", base_url="http://localhost:11434/v1", argv=["--model", "m"])
    assert (args.base_url, args.model) == ("http://localhost:11434/v1", "m")
    for argv in (["--scripted", "--base-url", "http://x/v1"], ["--model", "m"]):
        with pytest.raises(SystemExit) as exc:
            run.command_line("doc", argv=argv)
        assert exc.value.code == 2
    assert "--scripted runs on canned replies" in capsys.readouterr().err
