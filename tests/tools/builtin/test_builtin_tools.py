"""Tests for the default toolbox and its confined read-only file tools (react_agent.tools.builtin,
react_agent.tools.builtin._files); the calculator and the clock have their own test modules."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from react_agent.tools._invoker import invoke
from react_agent.tools._toolbox import Toolbox
from react_agent.tools.builtin import _files as files_module
from react_agent.tools.builtin import builtin_toolbox
from react_agent.tools.builtin._files import FileTools
from react_agent.types import ToolCall

TOOL_NAMES = [
    "calculate", "current_datetime", "list_directory", "read_file", "file_info", "search_files",
]


# -- fixtures ----------------------------------------------------------------------------------
@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A small project tree under tmp_path/root, plus a secret file next to (outside) it."""
    base = tmp_path / "root"
    (base / "docs").mkdir(parents=True)
    (base / "src" / "pkg").mkdir(parents=True)
    (base / ".git").mkdir()
    (base / "README.md").write_text("# Demo\nHello World\nthird line\n", encoding="utf-8")
    (base / "docs" / "guide.txt").write_text("Intro\nSay hello to the agent\n", encoding="utf-8")
    (base / "src" / "pkg" / "main.py").write_text(
        "def main():\n    print('HELLO')\n", encoding="utf-8"
    )
    (base / ".git" / "config").write_text("hello from git internals\n", encoding="utf-8")
    (base / "image.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00hello\x00binary")
    (tmp_path / "secret.txt").write_text("TOP SECRET hello\n", encoding="utf-8")
    return base


@pytest.fixture
def tools(root: Path) -> Toolbox:
    return builtin_toolbox(root)


def run(toolbox: Toolbox, name: str, **args: object) -> object:
    """Call a tool's function directly (as the invoker does, with keyword arguments)."""
    return toolbox[name].func(**args)


# -- the toolbox -------------------------------------------------------------------------------
def test_toolbox_has_the_six_tools_with_descriptions_and_arg_docs(tools: Toolbox) -> None:
    assert tools.names == TOOL_NAMES
    for tool in tools.values():
        assert tool.description, tool.name
        assert len(tool.description) < 300, tool.name  # small models: keep prompts short
        for arg, spec in tool.parameters["properties"].items():
            assert spec.get("description"), f"{tool.name}.{arg} has no description"
    assert tools["read_file"].parameters["required"] == ["path"]
    assert tools["read_file"].parameters["properties"]["start_line"] == {
        "type": "integer", "default": 1, "description": "first line to show (1 = the beginning).",
    }
    assert "** 0.5" in tools["calculate"].description
    assert "(2 ** 8 + 100) / 3" in tools["calculate"].description


def test_default_root_is_the_current_directory_at_call_time(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(root / "docs")
    toolbox = builtin_toolbox()
    listing = run(toolbox, "list_directory")
    assert "guide.txt (" in listing
    with pytest.raises(PermissionError):
        run(toolbox, "read_file", path="../README.md")


def test_the_file_tools_are_the_methods_of_one_object(root: Path) -> None:
    files = FileTools(root / "docs")
    toolbox = Toolbox()
    for tool in files.tools():
        toolbox.add(tool)
    assert toolbox.names == TOOL_NAMES[2:]
    assert toolbox["read_file"].parameters == builtin_toolbox(root)["read_file"].parameters
    assert run(toolbox, "read_file", path="guide.txt").startswith("guide.txt: 2 lines")
    with pytest.raises(PermissionError):
        files.read_file("../README.md")


def test_root_must_be_a_directory(root: Path) -> None:
    with pytest.raises(NotADirectoryError):
        builtin_toolbox(root / "README.md")
    with pytest.raises(NotADirectoryError):
        builtin_toolbox(root / "missing")


# -- list_directory ----------------------------------------------------------------------------
def test_list_directory_root(tools: Toolbox, root: Path) -> None:
    binary_size = (root / "image.bin").stat().st_size
    assert run(tools, "list_directory").splitlines() == [
        "./: 5 entries",
        ".git/",
        "docs/",
        f"image.bin ({binary_size} bytes)",
        "README.md (30 bytes)",
        "src/",
    ]
    assert run(tools, "list_directory", path=str(root)) == run(tools, "list_directory")


def test_list_directory_subdirectory_and_sorting(tools: Toolbox, root: Path) -> None:
    for name in ["b.txt", "A.txt", "c"]:
        (root / "docs" / name).write_text("x", encoding="utf-8")
    (root / "docs" / "sub").mkdir()
    lines = run(tools, "list_directory", path="docs").splitlines()
    assert lines == [
        "docs/: 5 entries",
        "A.txt (1 bytes)",
        "b.txt (1 bytes)",
        "c (1 bytes)",
        "guide.txt (29 bytes)",
        "sub/",
    ]
    assert run(tools, "list_directory", path="docs/sub") == "docs/sub/: empty directory"


def test_list_directory_caps_entries(tools: Toolbox, root: Path) -> None:
    many = root / "many"
    many.mkdir()
    for i in range(250):
        (many / f"f{i:03d}.txt").write_text("", encoding="utf-8")
    lines = run(tools, "list_directory", path="many").splitlines()
    assert lines[0] == "many/: 250 entries"
    assert len(lines) == 1 + 200 + 1
    assert lines[1] == "f000.txt (0 bytes)" and lines[200] == "f199.txt (0 bytes)"
    assert lines[-1] == "... and 50 more entries not shown"


def test_list_directory_errors(tools: Toolbox) -> None:
    with pytest.raises(FileNotFoundError, match="list_directory"):
        run(tools, "list_directory", path="nope")
    with pytest.raises(NotADirectoryError, match="read_file"):
        run(tools, "list_directory", path="README.md")


# -- read_file ---------------------------------------------------------------------------------
def test_read_file_whole(tools: Toolbox) -> None:
    assert run(tools, "read_file", path="README.md") == (
        "README.md: 3 lines (showing 1-3)\n# Demo\nHello World\nthird line"
    )


def test_read_file_windows(tools: Toolbox, root: Path) -> None:
    (root / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 58)), encoding="utf-8")
    out = run(tools, "read_file", path="long.txt", start_line=10, max_lines=3).splitlines()
    assert out == [
        "long.txt: 57 lines (showing 10-12)",
        "line 10",
        "line 11",
        "line 12",
        "[45 more lines; call read_file with start_line=13]",
    ]
    tail = run(tools, "read_file", path="long.txt", start_line=55).splitlines()
    assert tail == ["long.txt: 57 lines (showing 55-57)", "line 55", "line 56", "line 57"]
    first = run(tools, "read_file", path="long.txt").splitlines()
    assert first[0] == "long.txt: 57 lines (showing 1-57)" and len(first) == 58


def test_read_file_argument_errors(tools: Toolbox) -> None:
    with pytest.raises(ValueError, match=r"past the end: README\.md has 3 lines"):
        run(tools, "read_file", path="README.md", start_line=4)
    with pytest.raises(ValueError, match="start_line must be 1 or more"):
        run(tools, "read_file", path="README.md", start_line=0)
    with pytest.raises(ValueError, match="max_lines must be 1 or more"):
        run(tools, "read_file", path="README.md", max_lines=0)


def test_read_file_missing_and_directory(tools: Toolbox) -> None:
    with pytest.raises(FileNotFoundError, match=r"'nope\.md' does not exist.*list_directory"):
        run(tools, "read_file", path="nope.md")
    with pytest.raises(IsADirectoryError, match="list_directory"):
        run(tools, "read_file", path="docs")


def test_read_file_refuses_binary(tools: Toolbox) -> None:
    with pytest.raises(ValueError, match=r"image\.bin looks like a binary file"):
        run(tools, "read_file", path="image.bin")


def test_read_file_empty_and_invalid_utf8(tools: Toolbox, root: Path) -> None:
    (root / "empty.txt").write_bytes(b"")
    assert run(tools, "read_file", path="empty.txt") == "empty.txt: 0 lines (empty file)"
    (root / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    out = run(tools, "read_file", path="latin1.txt")
    assert out == "latin1.txt: 1 line (showing 1-1)\ncaf\ufffd"


def test_read_file_caps_at_100_kb(tools: Toolbox, root: Path) -> None:
    line = "x" * 99 + "\n"  # 100 bytes a line
    (root / "big.txt").write_text(line * 3000, encoding="utf-8")  # 300 KB
    out = run(tools, "read_file", path="big.txt", start_line=990, max_lines=50).splitlines()
    assert out[0] == (
        "big.txt: the first 1000 lines (only the first 100 KB are read) (showing 990-1000)"
    )
    assert out[1:] == ["x" * 99] * 11
    # 151 + 999 * 100 bytes: the 100,000th byte falls mid-line; that partial line is dropped.
    (root / "cut.txt").write_text("y" * 150 + "\n" + line * 999, encoding="utf-8")
    out = run(tools, "read_file", path="cut.txt", start_line=998).splitlines()
    assert out == [
        "cut.txt: the first 999 lines (only the first 100 KB are read) (showing 998-999)",
        "x" * 99,
        "x" * 99,
    ]
    with pytest.raises(ValueError, match=r"only the first 999 lines of cut\.txt can be read"):
        run(tools, "read_file", path="cut.txt", start_line=1000)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_read_file_refuses_a_named_pipe_instead_of_blocking(tools: Toolbox, root: Path) -> None:
    os.mkfifo(root / "pipe")
    with pytest.raises(ValueError, match="not a regular file"):
        run(tools, "read_file", path="pipe")
    assert run(tools, "search_files", pattern="hello", path=".").count("\n") == 2  # pipe skipped


def test_symlink_loop_is_an_error_not_a_crash(tools: Toolbox, root: Path) -> None:
    os.symlink(root / "loop-b", root / "loop-a")
    os.symlink(root / "loop-a", root / "loop-b")
    with pytest.raises((ValueError, PermissionError, FileNotFoundError)):
        run(tools, "read_file", path="loop-a")
    listing = run(tools, "list_directory")
    assert "loop-a (broken link" in listing and "README.md (" in listing
    assert run(tools, "search_files", pattern="hello").count("\n") == 2


def test_read_file_accepts_absolute_path_inside_root(tools: Toolbox, root: Path) -> None:
    out = run(tools, "read_file", path=str(root / "docs" / "guide.txt"))
    assert out.startswith("docs/guide.txt: 2 lines (showing 1-2)\nIntro")


# -- search_files ------------------------------------------------------------------------------
def test_search_files_hits_case_insensitive_and_skips_git_and_binary(tools: Toolbox) -> None:
    out = run(tools, "search_files", pattern="hello")
    assert out.splitlines() == [
        "README.md:2: Hello World",
        "docs/guide.txt:2: Say hello to the agent",
        "src/pkg/main.py:2: print('HELLO')",
    ]
    assert ".git" not in out and "image.bin" not in out and "SECRET" not in out


def test_search_files_is_plain_text_not_regex(tools: Toolbox, root: Path) -> None:
    (root / "regex.txt").write_text("a.*b\n(a+)+$\naxxb\n", encoding="utf-8")
    assert run(tools, "search_files", pattern="a.*b").splitlines() == ["regex.txt:1: a.*b"]
    assert run(tools, "search_files", pattern="(a+)+$") == "regex.txt:2: (a+)+$"


def test_search_files_no_hits(tools: Toolbox) -> None:
    out = run(tools, "search_files", pattern="zebra")
    assert out.startswith("No matches for 'zebra' in .")
    assert "files searched" in out


def test_search_files_in_subfolder_and_single_file(tools: Toolbox) -> None:
    assert run(tools, "search_files", pattern="hello", path="docs") == (
        "docs/guide.txt:2: Say hello to the agent"
    )
    assert run(tools, "search_files", pattern="def", path="src/pkg/main.py") == (
        "src/pkg/main.py:1: def main():"
    )


def test_search_files_hidden_folder_searched_only_when_asked(tools: Toolbox) -> None:
    out = run(tools, "search_files", pattern="internals", path=".git")
    assert out == ".git/config:1: hello from git internals"
    assert run(tools, "search_files", pattern="internals").startswith("No matches")


def test_search_files_caps_results(tools: Toolbox, root: Path) -> None:
    (root / "many.txt").write_text("needle\n" * 30, encoding="utf-8")
    lines = run(tools, "search_files", pattern="NEEDLE", max_results=5).splitlines()
    assert lines[:5] == [f"many.txt:{i}: needle" for i in range(1, 6)]
    assert len(lines) == 6 and lines[5].startswith("[stopped at 5 results")


def test_search_files_trims_long_lines_keeping_the_match(tools: Toolbox, root: Path) -> None:
    (root / "wide.txt").write_text("a" * 1000 + "TARGET" + "b" * 1000 + "\n", encoding="utf-8")
    (line,) = run(tools, "search_files", pattern="target").splitlines()
    prefix, text = line.split(": ", 1)
    assert prefix == "wide.txt:1"
    assert "TARGET" in text
    assert len(text) <= 200 + 6  # 200 characters plus the "..." markers


def test_search_files_argument_errors(tools: Toolbox) -> None:
    with pytest.raises(ValueError, match="pattern is empty"):
        run(tools, "search_files", pattern="  ")
    with pytest.raises(ValueError, match="max_results must be 1 or more"):
        run(tools, "search_files", pattern="x", max_results=0)
    with pytest.raises(FileNotFoundError):
        run(tools, "search_files", pattern="x", path="missing")


# -- confinement -------------------------------------------------------------------------------
ESCAPES = ["..", "../secret.txt", "docs/../../secret.txt", "src/pkg/../../../secret.txt"]


@pytest.mark.parametrize("path", ESCAPES)
def test_dotdot_escapes_are_refused(tools: Toolbox, root: Path, path: str) -> None:
    message = f"is outside the allowed directory {root}; use a path relative to it"
    with pytest.raises(PermissionError, match=re.escape(message)):
        run(tools, "read_file", path=path)
    with pytest.raises(PermissionError, match=re.escape(message)):
        run(tools, "list_directory", path=path)
    with pytest.raises(PermissionError, match=re.escape(message)):
        run(tools, "search_files", pattern="secret", path=path)


def test_absolute_paths_outside_are_refused(tools: Toolbox, root: Path) -> None:
    for path in [str(root.parent / "secret.txt"), str(root.parent), "/", "/etc/passwd"]:
        with pytest.raises(PermissionError, match="outside the allowed directory"):
            run(tools, "read_file", path=path)
        with pytest.raises(PermissionError, match="outside the allowed directory"):
            run(tools, "list_directory", path=path)


def test_sibling_with_common_prefix_is_outside(tmp_path: Path, root: Path) -> None:
    sibling = tmp_path / "root2"  # "root2" starts with "root" but is not inside it
    sibling.mkdir()
    (sibling / "x.txt").write_text("x\n", encoding="utf-8")
    with pytest.raises(PermissionError):
        run(builtin_toolbox(root), "read_file", path="../root2/x.txt")
    with pytest.raises(PermissionError):
        run(builtin_toolbox(root), "read_file", path=str(sibling / "x.txt"))


def test_symlink_pointing_outside_is_refused(tools: Toolbox, root: Path) -> None:
    os.symlink(root.parent / "secret.txt", root / "link.txt")
    os.symlink(root.parent, root / "outdir", target_is_directory=True)
    with pytest.raises(PermissionError, match=r"'link\.txt' is outside the allowed directory"):
        run(tools, "read_file", path="link.txt")
    with pytest.raises(PermissionError, match="outside the allowed directory"):
        run(tools, "list_directory", path="outdir")
    with pytest.raises(PermissionError, match="outside the allowed directory"):
        run(tools, "read_file", path="outdir/secret.txt")
    # Searching the root neither follows the links nor shows the secret.
    out = run(tools, "search_files", pattern="secret")
    assert out.startswith("No matches"), out
    # The listing names the links without describing what they point to.
    listing = run(tools, "list_directory")
    assert "link.txt (link to outside the allowed directory)" in listing
    assert "outdir (link to outside the allowed directory)" in listing
    assert "17 bytes" not in listing  # the size of secret.txt


def test_symlink_pointing_inside_is_allowed(tools: Toolbox, root: Path) -> None:
    os.symlink(root / "README.md", root / "docs" / "readme-link.md")
    os.symlink(root / "src", root / "docs" / "code", target_is_directory=True)
    out = run(tools, "read_file", path="docs/readme-link.md")
    assert out.startswith("README.md: 3 lines (showing 1-3)\n# Demo")
    assert "main.py (" in run(tools, "list_directory", path="docs/code/pkg")
    found = run(tools, "search_files", pattern="hello world", path="docs")
    assert found == "docs/readme-link.md:2: Hello World"


def test_root_given_through_a_symlink(tmp_path: Path, root: Path) -> None:
    alias = tmp_path / "alias"
    os.symlink(root, alias, target_is_directory=True)
    toolbox = builtin_toolbox(alias)
    assert run(toolbox, "read_file", path="README.md").startswith("README.md: 3 lines")
    assert run(toolbox, "read_file", path=str(alias / "README.md")).startswith("README.md:")
    with pytest.raises(PermissionError):
        run(toolbox, "read_file", path="../secret.txt")


# -- through the invoker -----------------------------------------------------------------------
def test_invoke_success(tools: Toolbox) -> None:
    result = invoke(tools, ToolCall("calculate", {"expression": "(2 ** 8 + 100) / 3"}))
    assert result.ok and result.error is None
    assert result.observation == "(2 ** 8 + 100) / 3 = 118.66666666666667"
    result = invoke(tools, ToolCall("read_file", {"path": "README.md", "max_lines": 1}))
    assert result.ok
    assert result.observation.splitlines()[:2] == ["README.md: 3 lines (showing 1-1)", "# Demo"]


def test_invoke_refusal_becomes_an_error_observation(tools: Toolbox) -> None:
    result = invoke(tools, ToolCall("read_file", {"path": "../secret.txt"}))
    assert not result.ok and result.error == "tool_error"
    assert result.observation.startswith("Error: PermissionError: '../secret.txt' is outside")
    assert "SECRET" not in result.observation


def test_invoke_calculator_refusal(tools: Toolbox) -> None:
    result = invoke(tools, ToolCall("calculate", {"expression": "__import__('os').getcwd()"}))
    assert result.observation.startswith("Error: ValueError:")
    assert not result.ok


@pytest.mark.parametrize(
    ("content", "lines"), [(b"", 0), (b"one\n", 1), (b"one\ntwo", 2), (b"a\n\nb\n", 3)]
)
def test_file_info_counts_lines(tmp_path: Path, content: bytes, lines: int) -> None:
    (tmp_path / "f.txt").write_bytes(content)
    info = builtin_toolbox(tmp_path)["file_info"].func("f.txt")
    assert info.startswith(f"f.txt: {lines} lines, {len(content)} bytes, last changed ")


def test_file_info_binary_and_confinement(tmp_path: Path) -> None:
    (tmp_path / "b.bin").write_bytes(b"\0\1\2")
    tools = builtin_toolbox(tmp_path)
    assert tools["file_info"].func("b.bin").startswith("b.bin: binary file, 3 bytes")
    with pytest.raises(PermissionError):
        tools["file_info"].func("../outside.txt")


# -- only regular files are opened (issue 30, defect 9) ----------------------------------------
def _finishes(work: Callable[[], object], seconds: float = 20.0) -> object:
    """``work()``'s result or exception, failing the test if it has not finished in time (it
    runs in a daemon thread, so a blocked call cannot hang the test session)."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:
            box["value"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    return box["value"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("tool", ["read_file", "file_info", "list_directory"])
def test_no_file_tool_opens_a_named_pipe(tools: Toolbox, root: Path, tool: str) -> None:
    pipe = root / "pipe"
    os.mkfifo(pipe)
    try:
        outcome = _finishes(lambda: run(tools, tool, path="pipe"))
    finally:  # a reader blocked in open() (before the fix) is released by a writer
        with contextlib.suppress(OSError):
            os.close(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK))
    assert isinstance(outcome, ValueError)
    expected = "is not a directory (a named pipe)" if tool == "list_directory" else \
        "is not a regular file (a named pipe)"
    assert expected in str(outcome)


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="needs Unix sockets")
def test_no_file_tool_opens_a_socket(tmp_path: Path) -> None:
    base = Path(tempfile.mkdtemp(prefix="s", dir="/tmp" if os.path.isdir("/tmp") else None))
    try:
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(base / "sock"))
        tools = builtin_toolbox(base)
        for tool in ("read_file", "file_info"):
            with pytest.raises(ValueError, match=r"'sock' is not a regular file \(a socket\)"):
                run(tools, tool, path="sock")
        assert run(tools, "search_files", pattern="x").startswith("No matches")
        server.close()
    finally:
        shutil.rmtree(base)


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_no_file_tool_opens_a_device() -> None:
    tools = FileTools("/dev")
    with pytest.raises(ValueError, match=r"'null' is not a regular file \(a device\)"):
        tools.file_info("null")
    with pytest.raises(ValueError, match=r"'null' is not a regular file \(a device\)"):
        tools.read_file("null")


def test_file_info_counts_lines_in_a_bounded_head_of_a_huge_sparse_file(tmp_path: Path) -> None:
    sparse = tmp_path / "sparse.log"
    with sparse.open("wb") as f:
        f.write(b"a line of text\n" * 1000)
    try:
        os.truncate(sparse, 1 << 40)  # 1 TB, nearly all of it a hole: reading it all takes hours
    except (OSError, OverflowError):
        pytest.skip("the file system cannot hold a 1 TB sparse file")
    try:
        outcome = _finishes(lambda: FileTools(tmp_path).file_info("sparse.log"))
    finally:
        sparse.unlink()  # no 1 TB file is left behind in the kept temporary folders
    assert isinstance(outcome, str), outcome
    assert outcome.startswith("sparse.log: at least 1001 lines (counted in the first 10 MB), "
                              f"{1 << 40} bytes, last changed ")


def test_file_info_of_a_file_whose_time_is_no_date(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f.txt").write_text("x\n", encoding="utf-8")
    real = os.fstat

    def far_future(fd: int) -> os.stat_result:  # file systems clamp such times when set
        status = real(fd)
        return os.stat_result((*status[:8], 2**62, status[9]))

    monkeypatch.setattr(files_module.os, "fstat", far_future)
    assert FileTools(tmp_path).file_info("f.txt") == (
        "f.txt: 1 lines, 2 bytes, last changed at an unknown time (the file's time is out of "
        "range)")


# -- a folder swapped for a link between the check and the open (issue 30, defect 12) ---------
@pytest.fixture
def swap(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[[], FileTools]:
    """``swap()``: file tools whose next path check is followed by ``docs`` being replaced with
    a link to a folder outside the root holding a ``guide.txt`` of secrets (``docs`` is put back
    first): the race of a folder swapped after the check, made certain."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "guide.txt").write_text("TOP SECRET hello\n", encoding="utf-8")
    (outside / "secret-name.txt").write_text("x", encoding="utf-8")
    docs, moved = root / "docs", root / "docs.moved"
    armed: list[bool] = []
    check = FileTools._resolve

    def check_then_swap(self: FileTools, path: str) -> Path:
        resolved = check(self, path)
        if armed:
            armed.clear()
            docs.rename(moved)
            docs.symlink_to(outside, target_is_directory=True)
        return resolved

    def arm() -> FileTools:
        if docs.is_symlink():
            docs.unlink()
            moved.rename(docs)
        armed.append(True)
        return FileTools(root)

    monkeypatch.setattr(FileTools, "_resolve", check_then_swap)
    return arm


def test_a_folder_swapped_for_a_link_after_the_check_is_not_read(
    swap: Callable[[], FileTools],
) -> None:
    for tool in ("read_file", "file_info"):
        with pytest.raises(PermissionError, match=r"'docs/guide\.txt' changed while it was being "
                           r"opened .* it was not read\. Call the tool again\."):
            getattr(swap(), tool)("docs/guide.txt")
    with pytest.raises(PermissionError, match="'docs' changed while it was being opened"):
        swap().list_directory("docs")
    found = swap().search_files("hello", path="docs")
    assert found.startswith("No matches"), found


def test_without_opening_folder_by_folder_the_swap_is_caught_after_opening(
    swap: Callable[[], FileTools], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files_module, "_WALKS", False)  # as on Windows
    for tool in ("read_file", "file_info"):
        with pytest.raises(PermissionError, match="changed while it was being opened"):
            getattr(swap(), tool)("docs/guide.txt")
    assert swap().search_files("hello", path="docs").startswith("No matches")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_file_swapped_for_a_pipe_after_its_kind_was_checked_is_not_read(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    check = files_module._check_kind

    def check_then_swap(status: os.stat_result, name: str, directory: bool) -> None:
        check(status, name, directory)
        (root / "README.md").unlink()
        os.mkfifo(root / "README.md")

    monkeypatch.setattr(files_module, "_check_kind", check_then_swap)
    try:
        outcome = _finishes(lambda: FileTools(root).read_file("README.md"))
    finally:
        with contextlib.suppress(OSError):
            os.close(os.open(root / "README.md", os.O_WRONLY | os.O_NONBLOCK))
    assert isinstance(outcome, PermissionError), outcome
    assert "'README.md' changed while it was being opened" in str(outcome)
