"""The built-in tools: the CLI's default toolbox (a safe calculator, the current date/time and
read-only file tools) and the long-term memory tools.

:func:`builtin_toolbox` builds the default toolbox from :func:`calculate`,
:func:`current_datetime` and the methods of :class:`FileTools` (confined to one root
directory); :func:`memory_tools` gives ``remember``/``recall`` tools over a per-user store
(:class:`MemoryStore`).
"""

from __future__ import annotations

import os

from .._toolbox import Toolbox
from ._calculator import MAX_EXPRESSION_CHARS, calculate, evaluate
from ._clock import current_datetime
from ._files import FileTools
from ._memory import MemoryStore, memory_tools

__all__ = ["MAX_EXPRESSION_CHARS", "FileTools", "MemoryStore", "builtin_toolbox", "calculate",
           "current_datetime",
           "evaluate", "memory_tools"]


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
