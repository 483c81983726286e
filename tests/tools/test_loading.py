"""Loading tools from ``FILE.py:OBJECT`` (react_agent.tools._loading): the file's folder serves
its own imports while it runs, and is off ``sys.path`` afterwards. (The other cases of
``load_toolbox`` are in tests/test_cli.py.)"""

from __future__ import annotations

import importlib.util
import sys
import uuid
from pathlib import Path

import pytest

from react_agent.tools import load_toolbox

TOOLS = '''
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
    (tmp_path / "tools.py").write_text(TOOLS.format(helper=helper), encoding="utf-8")
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
