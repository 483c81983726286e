"""Tests for react_agent.tools._loading: a Toolbox named ``MODULE:OBJECT`` or ``FILE.py:OBJECT``,
what a name that is not quite right says, and a file's folder serving its own imports only while
it runs (the CLI's use is tested in test_cli.py)."""

from __future__ import annotations

import importlib.util
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from react_agent import ConfigError, Toolbox
from react_agent.tools import load_toolbox

TOOLS = '''
from react_agent import Toolbox

toolbox = Toolbox()
weather_tools = Toolbox()


def make_toolbox():
    return toolbox
'''


@pytest.fixture
def tools_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "teamtools.py"
    path.write_text(TOOLS, encoding="utf-8")
    (tmp_path / "needs_more.py").write_text("import no_such_dependency_xyz\n", encoding="utf-8")
    yield path
    for name in ("teamtools", "needs_more"):  # imported from this test's folder
        sys.modules.pop(name, None)


@pytest.mark.parametrize(("spec", "message"), [
    ("{file}:toolbx", "the module has no object 'toolbx' (did you mean 'toolbox'?). Its "
     "Toolboxes: toolbox, weather_tools."),
    ("teamtools:weather_tool", "the module has no object 'weather_tool' (did you mean "
     "'weather_tools'?)"),
    ("teamtools:make_toolbx", "the module has no object 'make_toolbx' (did you mean "
     "'make_toolbox'?)"),
    ("teamtols:toolbox", "no module named 'teamtols' can be imported (did you mean "
     "'teamtools'?)."),
    ("react_agent.tools.biltin:builtin_toolbox", "no module named 'react_agent.tools.biltin' "
     "can be imported (did you mean 'react_agent.tools.builtin'?)."),
    ("needs_more:toolbox", "importing 'needs_more' needs the module 'no_such_dependency_xyz', "
     "which is not installed."),
    ("zzqqxx_nothing_like_it:toolbox", "no module named 'zzqqxx_nothing_like_it' can be "
     "imported."),
])
def test_a_name_that_is_not_there_says_what_is(tools_file: Path, spec: str,
                                               message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        load_toolbox(spec.format(file=tools_file))
    assert str(exc.value).startswith(f"Tools {spec.format(file=tools_file)!r}: {message}")


def test_a_module_name_of_a_file_here_that_is_not_importable_names_the_file_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``react-agent`` as an installed command does not import from the current folder: a
    module named like a file here is pointed to the ``FILE.py:OBJECT`` form."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "localtools_abc.py").write_text(TOOLS, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"to load the file, name it localtools_abc\.py:OBJECT"):
        load_toolbox("localtools_abc:toolbox")
    assert isinstance(load_toolbox("localtools_abc.py:toolbox"), Toolbox)


@pytest.mark.parametrize("attr", ["toolbox", "make_toolbox"])
def test_a_toolbox_or_a_function_giving_one(tools_file: Path, attr: str) -> None:
    assert isinstance(load_toolbox(f"teamtools:{attr}"), Toolbox)


NEIGHBOUR_TOOLS = '''
from react_agent import Toolbox
from {helper} import GREETING  # a module next to this file, imported as it loads

toolbox = Toolbox()


@toolbox.tool
def greet(name: str) -> str:
    """Greet someone."""
    return f"{{GREETING}}, {{name}}"
'''


def test_a_tools_file_imports_its_neighbours_and_leaves_no_path_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module named like one imported later (here a fresh name, imported after loading; in
    the command line e.g. ``uvicorn`` when ``serve`` starts) next to the tools file is never
    found through the folder."""
    tag = uuid.uuid4().hex[:12]
    helper, planted = f"tools_helper_{tag}", f"imported_later_{tag}"
    (tmp_path / f"{helper}.py").write_text('GREETING = "Hello"\n', encoding="utf-8")
    (tmp_path / f"{planted}.py").write_text("PLANTED = True\n", encoding="utf-8")
    (tmp_path / "tools.py").write_text(NEIGHBOUR_TOOLS.format(helper=helper), encoding="utf-8")
    monkeypatch.setattr(sys, "path", list(sys.path))  # restored whatever happens
    before = list(sys.path)
    try:
        toolbox = load_toolbox(f"{tmp_path / 'tools.py'}:toolbox")
        again = load_toolbox(f"{tmp_path / 'tools.py'}:toolbox")  # each task loads it anew
        found = importlib.util.find_spec(planted)
    finally:
        sys.modules.pop(helper, None)
    assert toolbox["greet"].func(name="Ada") == "Hello, Ada"
    assert again.names == ["greet"]
    assert found is None  # the folder is not where later imports look
    assert sys.path == before
