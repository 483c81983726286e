"""Read-only file tools confined to one directory: :class:`FileTools`, whose methods are the tools.

``list_directory``, ``read_file``, ``file_info`` and ``search_files`` see only the root
directory and what is under it: every path is resolved relative to it (following symlinks), and
a path that lands outside it is refused with a ``PermissionError``. They never write, and they
bound their work (at most 200 listed entries, 100 KB read per file, a capped number of search
results and scanned files), so a model cannot stall a run with them.

Failures are raised as ordinary exceptions (``ValueError``, ``PermissionError``,
``FileNotFoundError`` ...) whose messages tell the model what to do instead; the invoker turns
them into ``Error: <Type>: <message>`` observations.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["FileTools"]

MAX_LIST_ENTRIES = 200
"""Entries ``list_directory`` shows before summarising the rest."""

MAX_READ_BYTES = 100_000
"""Bytes ``read_file`` reads from one file (the first 100 KB)."""

BINARY_SNIFF_BYTES = 8192
"""A file with a NUL byte in its first this-many bytes is treated as binary."""

MAX_SEARCH_RESULTS = 500
"""Upper bound on ``search_files``'s ``max_results``."""

MAX_SEARCH_FILES = 5000
"""Files ``search_files`` scans before it stops and says so."""

MAX_SEARCH_FILE_BYTES = 1_000_000
"""Bytes ``search_files`` searches in one file (the first 1 MB)."""

MAX_LINE_CHARS = 200
"""Characters of a matching line ``search_files`` shows."""

_SKIPPED_DIRS = frozenset({"__pycache__", "node_modules"})


class FileTools:
    """The read-only file tools of one root directory; each public method is a tool.

    Args:
        root: the directory the tools are confined to; default: the current working directory
            when the object is made. Resolved (symlinks followed) once, here.

    Raises:
        NotADirectoryError: ``root`` is not an existing directory.

    Example: ``toolbox = Toolbox(); for tool in FileTools("docs").tools(): toolbox.add(tool)``.
    """

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(os.getcwd() if root is None else root).resolve()
        """The directory the tools see (resolved, symlinks followed, when the object is made)."""
        if not self.root.is_dir():
            raise NotADirectoryError(f"The file tools' root {self.root} is not a directory.")

    def tools(self) -> list[Callable[..., str]]:
        """The tool methods, in the order they are offered to the model."""
        return [self.list_directory, self.read_file, self.file_info, self.search_files]

    def list_directory(self, path: str = ".") -> str:
        """List the files and subdirectories of a directory (with sizes).

        Args:
            path: directory relative to the working folder; "." is the folder itself.

        Returns:
            A header line, then one entry per line sorted by name: ``name/`` for directories,
            ``name (N bytes)`` for files; at most 200 entries, then a line counting the rest.

        Raises:
            PermissionError: ``path`` is outside the root.
            FileNotFoundError: ``path`` does not exist.
            NotADirectoryError: ``path`` is a file.
            ValueError: ``path`` is a symlink loop.
        """
        folder = self._existing(path)
        if not folder.is_dir():
            raise NotADirectoryError(f"{path!r} is a file, not a directory; use read_file on it.")
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: (e.name.casefold(), e.name))
        shown = "./" if folder == self.root else f"{self._show(folder)}/"
        if not entries:
            return f"{shown}: empty directory"
        lines = [f"{shown}: {len(entries)} entries"]
        for entry in entries[:MAX_LIST_ENTRIES]:
            lines.append(self._describe_entry(entry))
        if len(entries) > MAX_LIST_ENTRIES:
            lines.append(f"... and {len(entries) - MAX_LIST_ENTRIES} more entries not shown")
        return "\n".join(lines)

    def read_file(self, path: str, start_line: int = 1, max_lines: int = 200) -> str:
        """Read a text file by its path; the result starts with the file's total line count.

        Args:
            path: file path relative to the working folder, e.g. "README.md".
            start_line: first line to show (1 = the beginning).
            max_lines: how many lines to show at most.

        Returns:
            A header like ``README.md: 57 lines (showing 1-57)``, then the lines as they are;
            when lines remain, a last line saying which ``start_line`` reads on. Only the first
            100 KB of a file are read (the header says so when the file is longer).

        Raises:
            PermissionError: ``path`` is outside the root.
            FileNotFoundError: ``path`` does not exist.
            IsADirectoryError: ``path`` is a directory.
            ValueError: the file is binary or not a regular file, ``start_line`` or
                ``max_lines`` is below 1, or ``start_line`` is past the end of the file.
        """
        _check_positive("start_line", start_line)
        _check_positive("max_lines", max_lines)
        file = self._existing(path)
        name = self._show(file)
        if file.is_dir():
            raise IsADirectoryError(f"{name!r} is a directory; use list_directory on it.")
        if not file.is_file():
            raise ValueError(f"{name!r} is not a regular file (a device, socket or pipe).")
        data, truncated = _read_head(file, MAX_READ_BYTES)
        if _is_binary(data):
            raise ValueError(
                f"{name} looks like a binary file (it contains NUL bytes); read_file only reads "
                "text files."
            )
        lines = data.decode("utf-8", errors="replace").splitlines()
        if truncated and len(lines) > 1 and not data.endswith((b"\n", b"\r")):
            lines.pop()  # the last line was cut mid-way
        total = len(lines)
        count = f"the first {total} lines (only the first 100 KB are read)" if truncated else (
            f"{total} line{'s' if total != 1 else ''}"
        )
        if total == 0:
            return f"{name}: 0 lines (empty file)"
        if start_line > total:
            raise ValueError(
                f"start_line {start_line} is past the end: only the first {total} lines of {name} "
                "can be read (100 KB limit)." if truncated else
                f"start_line {start_line} is past the end: {name} has {count}."
            )
        end = min(total, start_line + max_lines - 1)
        out = [f"{name}: {count} (showing {start_line}-{end})", *lines[start_line - 1 : end]]
        if end < total:
            out.append(f"[{total - end} more lines; call read_file with start_line={end + 1}]")
        return "\n".join(out)

    def file_info(self, path: str) -> str:
        """Size, number of lines and last change of a file, without reading it all out.

        Args:
            path: file path relative to the working folder, e.g. "README.md".

        Returns:
            One line like ``README.md: 183 lines, 9120 bytes, last changed 2026-11-29 20:41``
            (lines are counted in the whole file; a binary file gets no line count).

        Raises:
            PermissionError: ``path`` is outside the root.
            FileNotFoundError: ``path`` does not exist.
            IsADirectoryError: ``path`` is a directory.
        """
        file = self._existing(path)
        name = self._show(file)
        if file.is_dir():
            raise IsADirectoryError(f"{name!r} is a directory; use list_directory on it.")
        stat = file.stat()
        changed = _dt.datetime.fromtimestamp(stat.st_mtime).strftime("%Y-%m-%d %H:%M")
        head, _ = _read_head(file, BINARY_SNIFF_BYTES)
        if _is_binary(head):
            return f"{name}: binary file, {stat.st_size} bytes, last changed {changed}"
        lines, last = 0, b"\n"
        with open(file, "rb") as f:
            while chunk := f.read(1 << 20):
                lines += chunk.count(b"\n")
                last = chunk[-1:]
        lines += last != b"\n"  # a last line without a newline still counts
        return f"{name}: {lines} lines, {stat.st_size} bytes, last changed {changed}"

    def search_files(self, pattern: str, path: str = ".", max_results: int = 50) -> str:
        """Search inside files for a piece of text: lists the lines containing `pattern`
        (plain text, ignoring case) in the text files under a folder.

        Args:
            pattern: the text to look for, e.g. "def main".
            path: folder (or single file) to search, relative to the working folder.
            max_results: stop after this many matching lines.

        Returns:
            One ``relative/path:lineno: line text`` per matching line (text trimmed to 200
            characters), plus a closing note when results or scanned files hit their caps; or
            a sentence saying nothing matched.

        Raises:
            ValueError: ``pattern`` is empty or ``max_results`` is below 1.
            PermissionError: ``path`` is outside the root.
            FileNotFoundError: ``path`` does not exist.
        """
        if not pattern.strip():
            raise ValueError("pattern is empty; give the text to look for.")
        _check_positive("max_results", max_results)
        limit = min(max_results, MAX_SEARCH_RESULTS)
        start = self._existing(path)
        results, scanned, capped_files = self._matching_lines(start, pattern.casefold(), limit)
        where = self._show(start)
        if not results:
            note = f"No matches for {pattern!r} in {where} ({scanned} files searched)."
            if capped_files:
                note += f" Stopped after {MAX_SEARCH_FILES} files; search a narrower path."
            return note
        if len(results) >= limit:
            results.append(
                f"[stopped at {limit} results; use a more specific pattern or path"
                + (", or a larger max_results]" if limit < MAX_SEARCH_RESULTS else "]")
            )
        elif capped_files:
            results.append(f"[stopped after {MAX_SEARCH_FILES} files; search a narrower path]")
        return "\n".join(results)

    def _matching_lines(self, start: Path, needle: str, limit: int) -> tuple[list[str], int, bool]:
        """``path:lineno: line`` for up to ``limit`` lines holding ``needle`` (casefolded) in
        the text files under ``start``; how many files were scanned; whether the file cap
        stopped the scan."""
        results: list[str] = []
        scanned = 0
        for file in self._walk_files(start):
            if scanned >= MAX_SEARCH_FILES:
                return results, scanned, True
            scanned += 1
            try:
                data, _ = _read_head(file, MAX_SEARCH_FILE_BYTES)
            except OSError:
                continue
            if _is_binary(data):
                continue
            shown = self._show(file)
            for lineno, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
                if needle in line.casefold():
                    results.append(f"{shown}:{lineno}: {_excerpt(line, needle)}")
                    if len(results) >= limit:
                        return results, scanned, False
        return results, scanned, False

    # -- paths inside the root -------------------------------------------------------------------
    def _resolve(self, path: str) -> Path:
        """``path`` (relative to the root, or absolute) resolved; refused if outside the root."""
        if "\0" in path:
            raise ValueError("The path contains a NUL character; write a plain relative path.")
        candidate = Path(path or ".")
        if not candidate.is_absolute():
            candidate = self.root / candidate
        try:
            resolved = candidate.resolve()
        except (RuntimeError, OSError) as exc:  # a symlink loop (RuntimeError before 3.13)
            raise ValueError(f"{path!r} cannot be resolved: {exc}") from None
        if not resolved.is_relative_to(self.root):
            raise PermissionError(
                f"{path!r} is outside the allowed directory {self.root}; use a path relative to it."
            )
        return resolved

    def _existing(self, path: str) -> Path:
        resolved = self._resolve(path)
        if not resolved.exists():
            raise FileNotFoundError(
                f"{path!r} does not exist in {self.root}; call list_directory to see what is there."
            )
        return resolved

    def _inside(self, path: Path) -> bool:
        try:
            return path.resolve().is_relative_to(self.root)
        except (RuntimeError, OSError):
            return False

    def _show(self, path: Path) -> str:
        """``path`` relative to the root, with ``/`` separators (``.`` for the root itself)."""
        return path.relative_to(self.root).as_posix() if path != self.root else "."

    def _describe_entry(self, entry: os.DirEntry[str]) -> str:
        if entry.is_symlink():
            try:
                target = Path(entry.path).resolve()
            except (RuntimeError, OSError):
                return f"{entry.name} (broken link)"
            if not target.is_relative_to(self.root):
                return f"{entry.name} (link to outside the allowed directory)"
        try:
            if entry.is_dir():
                return f"{entry.name}/"
            return f"{entry.name} ({entry.stat().st_size} bytes)"
        except OSError:
            return f"{entry.name} (broken link or unreadable)"


    def _walk_files(self, start: Path) -> Iterator[Path]:
        """Files under ``start`` in sorted order, skipping hidden entries, ``__pycache__``,
        ``node_modules``, symlinked directories and links that point outside the root."""
        if start.is_file():
            yield start
            return
        for folder, dirnames, filenames in os.walk(start):
            dirnames[:] = sorted(
                d for d in dirnames if not d.startswith(".") and d not in _SKIPPED_DIRS
            )
            for name in sorted(filenames):
                if name.startswith("."):
                    continue
                file = Path(folder) / name
                if file.is_symlink() and not self._inside(file):
                    continue
                if file.is_file():
                    yield file


def _read_head(path: Path, limit: int) -> tuple[bytes, bool]:
    """The first ``limit`` bytes of a file and whether there was more."""
    with path.open("rb") as f:
        data = f.read(limit + 1)
    return data[:limit], len(data) > limit


def _is_binary(data: bytes) -> bool:
    return b"\0" in data[:BINARY_SNIFF_BYTES]


def _check_positive(name: str, value: int) -> None:
    if value < 1:
        raise ValueError(f"{name} must be 1 or more, got {value}.")


def _excerpt(line: str, needle: str) -> str:
    """``line`` trimmed to MAX_LINE_CHARS, keeping the first match of ``needle`` in view."""
    line = line.strip()
    if len(line) <= MAX_LINE_CHARS:
        return line
    at = line.casefold().find(needle)
    start = max(0, min(at - MAX_LINE_CHARS // 4, len(line) - MAX_LINE_CHARS))
    cut = line[start : start + MAX_LINE_CHARS]
    return ("..." if start else "") + cut + ("..." if start + MAX_LINE_CHARS < len(line) else "")
