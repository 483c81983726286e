"""The CLI's default toolbox: a safe calculator, the current date/time and read-only file tools.

:func:`builtin_toolbox` builds it from :func:`~react_agent.calculator.calculate`,
:func:`~react_agent.clock.current_datetime` and the methods of
:class:`~react_agent.file_tools.FileTools` (confined to one root directory).
"""

from __future__ import annotations

import os

from .calculator import calculate, evaluate
from .clock import current_datetime
from .file_tools import FileTools
from .toolbox import Toolbox

__all__ = ["FileTools", "builtin_toolbox", "calculate", "current_datetime", "evaluate"]


def builtin_toolbox(root: str | os.PathLike[str] | None = None) -> Toolbox:
    """The default toolbox: calculator, current date/time and read-only file tools.

    Tools, in order: ``calculate``, ``current_datetime``, ``list_directory``, ``read_file``,
    ``file_info``, ``search_files``. The file tools only see ``root`` and what is under it.

    Args:
        root: the directory the file tools are confined to; default: the current working
            directory at the time of this call. Resolved (symlinks followed) once, here.

    Returns:
        A new :class:`Toolbox` holding the six tools.

    Raises:
        NotADirectoryError: ``root`` is not an existing directory.
    """
    toolbox = Toolbox()
    toolbox.add(calculate, timeout=10.0)
    toolbox.add(current_datetime, timeout=10.0)
    for tool in FileTools(root).tools():
        toolbox.add(tool, timeout=30.0)  # big or slow folders
    return toolbox
