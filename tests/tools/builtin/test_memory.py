"""Tests for react_agent.tools.builtin._memory: remember/recall backed by one JSON file per user."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from react_agent import Agent, ConfigError, ToolCall
from react_agent.models import ScriptedModel
from react_agent.tools._invoker import invoke
from react_agent.tools.builtin._memory import MemoryStore, data_dir, memory_tools


def test_remember_then_recall_by_words(tmp_path: Path) -> None:
    store = MemoryStore("alice", tmp_path)
    stored = store.remember("  The user lives in Beijing. ")
    assert stored == "Remembered: The user lives in Beijing."
    store.remember("The user's birthday is 3 May.")
    store.remember("用户喜欢喝绿茶")
    out = store.recall("where does the user live?")
    assert out.splitlines()[0].startswith("- The user lives in Beijing. (remembered 20")
    assert store.recall("birthday").startswith("- The user's birthday is 3 May.")
    assert store.recall("喜欢什么茶").startswith("- 用户喜欢喝绿茶")
    assert store.recall("quantum chromodynamics") == \
        "(nothing remembered matches 'quantum chromodynamics')"
    assert store.recall("").splitlines()[0].startswith("- 用户喜欢喝绿茶")  # newest first
    assert store.remember("The user lives in Beijing.") == \
        "Already remembered: The user lives in Beijing."
    assert len(store.facts()) == 3


def test_facts_outlive_the_store_and_are_per_user(tmp_path: Path) -> None:
    MemoryStore("alice", tmp_path).remember("Alice likes tea.")
    assert "Alice likes tea." in MemoryStore("alice", tmp_path).recall("tea")
    assert MemoryStore("bob", tmp_path).recall("tea") == "(nothing is remembered yet)"
    data = json.loads((tmp_path / "alice.json").read_text("utf-8"))
    assert data["user_id"] == "alice" and data["facts"][0]["fact"] == "Alice likes tea."


@pytest.mark.parametrize(
    "user_id", ["../etc", "a/b", "", "x" * 65, "名字", "alice\n", "alice\n\n", "\nalice"]
)
def test_user_ids_that_are_not_file_names(tmp_path: Path, user_id: str) -> None:
    with pytest.raises(ConfigError, match="not usable as a file name"):
        MemoryStore(user_id, tmp_path)


def test_a_failed_write_keeps_the_earlier_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MemoryStore("alice", tmp_path)
    store.remember("First fact.")
    before = (tmp_path / "alice.json").read_bytes()

    def disk_full(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("react_agent._persist.os.replace", disk_full)
    with pytest.raises(OSError, match="No space left"):
        store.remember("Second fact.")
    assert (tmp_path / "alice.json").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alice.json", "alice.json.lock"]


def test_a_damaged_file_is_reported_and_left_alone(tmp_path: Path) -> None:
    (tmp_path / "alice.json").write_text("{not json")
    tools = memory_tools("alice", tmp_path)
    result = invoke(tools, ToolCall("remember", {"fact": "x"}))
    assert result.error == "tool_error" and "is damaged" in result.observation
    assert (tmp_path / "alice.json").read_text() == "{not json"


def test_empty_fact_is_an_error_observation(tmp_path: Path) -> None:
    result = invoke(memory_tools("alice", tmp_path), ToolCall("remember", {"fact": "   "}))
    assert result.observation == \
        "Error: ValueError: the fact is empty; pass the sentence to remember"


WRITER = textwrap.dedent("""
    import sys
    from react_agent.tools.builtin._memory import MemoryStore
    store = MemoryStore("shared", sys.argv[1])
    for i in range(int(sys.argv[3])):
        store.remember(f"fact {i} from writer {sys.argv[2]}")
""")


def test_two_processes_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), name, "40"])
        for name in ("A", "B")
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    facts = [f["fact"] for f in MemoryStore("shared", tmp_path).facts()]
    assert len(facts) == 80
    assert sorted(facts) == sorted(f"fact {i} from writer {w}" for w in "AB" for i in range(40))


def test_memory_across_runs_of_different_agents(tmp_path: Path) -> None:
    """Seed 002's long-term memory: what one run remembers, a later run recalls."""
    remember = '{"thought": "keep it", "action": {"name": "remember", "args": ' \
        '{"fact": "用户住在北京"}}}'
    recall = '{"thought": "look", "action": {"name": "recall", "args": {"query": "住在哪里"}}}'
    done = '{"thought": "ok", "action": {"final_answer": "好的"}}'
    Agent(ScriptedModel([remember, done]), memory_tools("u1", tmp_path)).run("记住我住在北京")
    later = Agent(ScriptedModel([recall, done]), memory_tools("u1", tmp_path)).run("我住在哪里?")
    assert later.steps[0].observations[0].startswith("- 用户住在北京 (remembered ")


def test_data_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("REACT_AGENT_DATA", str(tmp_path / "d"))
    assert data_dir() == tmp_path / "d"
    monkeypatch.delenv("REACT_AGENT_DATA")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "x"))
    assert data_dir() == tmp_path / "x" / "react-agent"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_in_place_of_the_memory_file_is_refused_not_waited_on(
    tmp_path: Path,
) -> None:
    os.mkfifo(tmp_path / "alice.json")
    tools = memory_tools("alice", tmp_path)
    results: list[str] = []
    worker = threading.Thread(target=lambda: results.extend(
        invoke(tools, ToolCall(name, args)).observation
        for name, args in (("recall", {}), ("remember", {"fact": "x"}))
    ), daemon=True)
    worker.start()
    worker.join(20)
    if worker.is_alive():  # before the fix: blocked in open(); a writer releases it
        os.close(os.open(tmp_path / "alice.json", os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("the memory tools waited on a named pipe")
    assert results == [f"Error: ValueError: the memory file {tmp_path / 'alice.json'} is not a "
                       "regular file; not changed"] * 2


@pytest.mark.parametrize(
    "content",
    ['{"facts": ["a string"]}', '{"facts": [{"fact": 3, "time": "2024"}]}',
     '{"facts": [{"fact": "x"}]}', "[" * 100_000 + "]" * 100_000],
    ids=["not-an-object", "fact-not-text", "no-time", "nested-too-deep"],
)
def test_a_memory_file_of_another_shape_is_reported_and_left_alone(
    tmp_path: Path, content: str,
) -> None:
    (tmp_path / "alice.json").write_text(content, encoding="utf-8")
    tools = memory_tools("alice", tmp_path)
    for name, args in (("recall", {"query": "x"}), ("remember", {"fact": "y"})):
        result = invoke(tools, ToolCall(name, args))
        assert result.error == "tool_error"
        assert result.observation.startswith(
            f"Error: ValueError: the memory file {tmp_path / 'alice.json'} is ")
        assert result.observation.endswith("; not changed")
    assert (tmp_path / "alice.json").read_text(encoding="utf-8") == content
