"""Read-only file tools confined to one directory: :class:`FileTools`, whose methods are the tools.

``list_directory``, ``read_file``, ``file_info`` and ``search_files`` see only the root
directory and what is under it: every path is resolved relative to it (following symlinks), and
a path that lands outside it is refused with a ``PermissionError``. What is then opened is that
resolved path inside the root, even if a folder on the way is replaced by a symlink after the
check: on POSIX systems each folder is opened in the one before it without following symlinks
(elsewhere the opened file is compared with the path after opening). They never write, they
open only regular files for reading (a named pipe, socket or device is refused before it is
opened), and they bound their work (at most 200 listed entries, 100 KB read per file, 10 MB
counted per file, a capped number of search results and scanned files), so a model cannot stall
a run with them.

Failures are raised as ordinary exceptions (``ValueError``, ``PermissionError``,
``FileNotFoundError`` ...) whose messages tell the model what to do instead; the invoker turns
them into ``Error: <Type>: <message>`` observations.
"""

from __future__ import annotations

import datetime as _dt
import errno
import os
import stat as _stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = ["FileTools"]

MAX_LIST_ENTRIES = 200
"""Entries ``list_directory`` shows before summarising the rest."""

MAX_READ_BYTES = 100_000
"""Bytes ``read_file`` reads from one file (the first 100 KB)."""

BINARY_SNIFF_BYTES = 8192
"""A file with a NUL byte in its first this-many bytes is treated as binary."""

MAX_COUNT_BYTES = 10_000_000
"""Bytes ``file_info`` counts lines in (the first 10 MB; it says so when the file is longer)."""

MAX_SEARCH_RESULTS = 500
"""Upper bound on ``search_files``'s ``max_results``."""

MAX_SEARCH_FILES = 5000
"""Files ``search_files`` scans before it stops and says so."""

MAX_SEARCH_FILE_BYTES = 1_000_000
"""Bytes ``search_files`` searches in one file (the first 1 MB)."""

MAX_LINE_CHARS = 200
"""Characters of a matching line ``search_files`` shows."""

_SKIPPED_DIRS = frozenset({"__pycache__", "node_modules"})

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FILE_FLAGS = (os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
"""How a file is opened: never through a symlink as its last component, and without blocking
(opening a named pipe that replaced the file after the check would wait for a writer)."""
_DIR_FLAGS = _FILE_FLAGS | getattr(os, "O_DIRECTORY", 0)

_WALKS = (os.open in os.supports_dir_fd and os.stat in os.supports_dir_fd
          and os.scandir in os.supports_fd and _NOFOLLOW != 0 and hasattr(os, "O_DIRECTORY"))
"""Whether paths can be opened one folder at a time, each in the one before, never following a
symlink (POSIX); elsewhere the opened file is compared with the path after opening."""


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
            PermissionError: ``path`` is outside the root, or a folder on its way changed into a
                symlink while it was being opened.
            FileNotFoundError: ``path`` does not exist.
            NotADirectoryError: ``path`` is a file.
            ValueError: ``path`` is a symlink loop, or a named pipe, socket or device.
        """
        folder = self._existing(path)
        if not _WALKS:  # listed by its path: a folder swapped after this check is followed
            _check_kind(os.stat(folder, follow_symlinks=False), path, directory=True)
            with os.scandir(folder) as it:
                return self._listing(folder, it)
        fd = self._open(folder, path, directory=True)
        try:
            with os.scandir(fd) as it:
                return self._listing(folder, it)
        finally:
            os.close(fd)

    def _listing(self, folder: Path, it: Iterator[os.DirEntry[str]]) -> str:
        entries = sorted(it, key=lambda e: (e.name.casefold(), e.name))
        shown = "./" if folder == self.root else f"{self._show(folder)}/"
        if not entries:
            return f"{shown}: empty directory"
        lines = [f"{shown}: {len(entries)} entries"]
        for entry in entries[:MAX_LIST_ENTRIES]:
            lines.append(self._describe_entry(folder, entry))
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
            PermissionError: ``path`` is outside the root, or a folder on its way changed into a
                symlink while it was being opened.
            FileNotFoundError: ``path`` does not exist.
            IsADirectoryError: ``path`` is a directory.
            ValueError: the file is binary or not a regular file (a named pipe, socket or
                device), ``start_line`` or ``max_lines`` is below 1, or ``start_line`` is past
                the end of the file.
        """
        _check_positive("start_line", start_line)
        _check_positive("max_lines", max_lines)
        file = self._existing(path)
        name = self._show(file)
        with self._open_file(file, name) as f:
            data, truncated = _read_head(f, MAX_READ_BYTES)
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
            (lines are counted in the first 10 MB: ``at least N lines (counted in the first
            10 MB)`` for a longer file; a binary file gets no line count).

        Raises:
            PermissionError: ``path`` is outside the root, or a folder on its way changed into a
                symlink while it was being opened.
            FileNotFoundError: ``path`` does not exist.
            IsADirectoryError: ``path`` is a directory.
            ValueError: ``path`` is not a regular file (a named pipe, socket or device).
        """
        file = self._existing(path)
        name = self._show(file)
        with self._open_file(file, name) as f:
            stat = os.fstat(f.fileno())
            changed = _changed(stat.st_mtime)
            head = f.read(BINARY_SNIFF_BYTES)
            if _is_binary(head):
                return f"{name}: binary file, {stat.st_size} bytes, last changed {changed}"
            lines, last, counted = head.count(b"\n"), head[-1:] or b"\n", len(head)
            while counted < MAX_COUNT_BYTES and (
                chunk := f.read(min(1 << 20, MAX_COUNT_BYTES - counted))
            ):
                lines, last, counted = lines + chunk.count(b"\n"), chunk[-1:], counted + len(chunk)
            longer = counted >= MAX_COUNT_BYTES and f.read(1) != b""
        lines += last != b"\n"  # a last line without a newline still counts
        count = f"at least {lines} lines (counted in the first 10 MB)" if longer else \
            f"{lines} lines"
        return f"{name}: {count}, {stat.st_size} bytes, last changed {changed}"

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
            shown = self._show(file)
            try:
                with self._open_file(self._resolve(str(file)), shown) as f:
                    data, _ = _read_head(f, MAX_SEARCH_FILE_BYTES)
            except (OSError, ValueError):  # unreadable, gone, not a regular file, outside
                continue
            if _is_binary(data):
                continue
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
        except (RuntimeError, OSError, ValueError) as exc:  # a symlink loop (RuntimeError
            # before 3.13), a name too long, a character the file system cannot hold
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

    def _open_file(self, resolved: Path, name: str) -> BinaryIO:
        """The regular file ``resolved`` (from :meth:`_resolve`), opened for reading as it is
        inside the root (see :meth:`_open`). ``name``: the path as the model should see it."""
        fd = self._open(resolved, name)
        try:
            return os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise

    def _open(self, resolved: Path, name: str, *, directory: bool = False) -> int:
        """A descriptor of ``resolved`` (from :meth:`_resolve`: inside the root, no symlink in
        it) that is that path inside the root, even if a folder on the way was replaced by a
        symlink after the check. With :data:`_WALKS`, each folder is opened in the one before
        it with ``O_NOFOLLOW``; else (best effort) the opened file is compared (device and
        inode) with what the path, checked again, names. Only a regular file is opened (a
        directory with ``directory``): its kind is checked before opening (opening a named pipe
        blocks, opening a device can act on it) and, by identity, after.

        Raises:
            FileNotFoundError: the path does not exist (any more).
            PermissionError: the path changed into (or through) a symlink while being opened,
                or the file may not be read.
            IsADirectoryError, NotADirectoryError: a directory where a file is wanted, or the
                other way round.
            ValueError: not a regular file nor a directory (a named pipe, socket or device).
        """
        try:
            if _WALKS:
                return self._open_walking(resolved, name, directory)
            _check_kind(os.stat(resolved, follow_symlinks=False), name, directory)
            fd = os.open(resolved, _DIR_FLAGS if directory else _FILE_FLAGS)
            try:  # what was opened is what the path, checked again, now names
                again = self._resolve(str(resolved))
                same = again == resolved and _same(os.fstat(fd), os.stat(again), directory)
            except (OSError, ValueError):
                same = False
            if not same:
                os.close(fd)
                raise _changed_error(name)
            return fd
        except FileNotFoundError:
            raise FileNotFoundError(
                f"{name!r} does not exist in {self.root}; call list_directory to see what is there."
            ) from None
        except OSError as exc:
            if isinstance(exc, PermissionError) and exc.errno is None:
                raise  # ours
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise _changed_error(name) from None  # a folder on the way is now a symlink
            raise

    def _open_walking(self, resolved: Path, name: str, directory: bool) -> int:
        parts = resolved.relative_to(self.root).parts
        if not parts:  # the root itself
            return self._open_root(name, directory)
        folder = self._folder_of(parts)
        try:
            before = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
            _check_kind(before, name, directory)
            fd = os.open(parts[-1], _DIR_FLAGS if directory else _FILE_FLAGS, dir_fd=folder)
        finally:
            os.close(folder)
        if not _same(os.fstat(fd), before, directory):  # replaced since the check
            os.close(fd)
            raise _changed_error(name)
        return fd

    def _open_root(self, name: str, directory: bool) -> int:
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            _check_kind(os.fstat(fd), name, directory)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _folder_of(self, parts: tuple[str, ...]) -> int:
        """A descriptor of the folder holding ``root/parts...``: each folder is opened in the
        one before it, none through a symlink (``OSError`` ``ELOOP`` or ``ENOTDIR`` if one is
        a symlink or a file now)."""
        folder = os.open(self.root, _DIR_FLAGS)
        try:
            for part in parts[:-1]:
                inner = os.open(part, _DIR_FLAGS, dir_fd=folder)
                os.close(folder)
                folder = inner
        except BaseException:
            os.close(folder)
            raise
        return folder

    def _stat_inside(self, resolved: Path) -> os.stat_result:
        """The status of ``resolved`` (from :meth:`_resolve`) itself, reached as in
        :meth:`_open` (a symlink on the way raises ``OSError``)."""
        parts = resolved.relative_to(self.root).parts
        if not _WALKS or not parts:
            return os.stat(resolved, follow_symlinks=False)
        folder = self._folder_of(parts)
        try:
            return os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
        finally:
            os.close(folder)

    def _inside(self, path: Path) -> bool:
        try:
            return path.resolve().is_relative_to(self.root)
        except (RuntimeError, OSError):
            return False

    def _show(self, path: Path) -> str:
        """``path`` relative to the root, with ``/`` separators (``.`` for the root itself)."""
        return path.relative_to(self.root).as_posix() if path != self.root else "."

    def _describe_entry(self, folder: Path, entry: os.DirEntry[str]) -> str:
        """``name/``, ``name (N bytes)`` or what keeps it from being described. A link is
        described by its target, reached as in :meth:`_open`; nothing else is followed."""
        try:
            if entry.is_symlink():
                try:
                    target = (folder / entry.name).resolve()
                except (RuntimeError, OSError, ValueError):
                    return f"{entry.name} (broken link)"
                if not target.is_relative_to(self.root):
                    return f"{entry.name} (link to outside the allowed directory)"
                status = self._stat_inside(target)
            else:
                status = entry.stat(follow_symlinks=False)
        except OSError:
            return f"{entry.name} (broken link or unreadable)"
        if _stat.S_ISDIR(status.st_mode):
            return f"{entry.name}/"
        if _stat.S_ISLNK(status.st_mode):
            return f"{entry.name} (changed while listed)"
        return f"{entry.name} ({status.st_size} bytes)"

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


def _read_head(f: BinaryIO, limit: int) -> tuple[bytes, bool]:
    """The first ``limit`` bytes of an open file and whether there was more."""
    data = f.read(limit + 1)
    return data[:limit], len(data) > limit


def _check_kind(status: os.stat_result, name: str, directory: bool) -> None:
    """Raise unless ``status`` is of a regular file (a directory, with ``directory``)."""
    mode = status.st_mode
    if _stat.S_ISLNK(mode):
        raise _changed_error(name)
    if directory:
        if _stat.S_ISDIR(mode):
            return
        if _stat.S_ISREG(mode):
            raise NotADirectoryError(f"{name!r} is a file, not a directory; use read_file on it.")
    elif _stat.S_ISREG(mode):
        return
    elif _stat.S_ISDIR(mode):
        raise IsADirectoryError(f"{name!r} is a directory; use list_directory on it.")
    kind = "a named pipe" if _stat.S_ISFIFO(mode) else "a socket" if _stat.S_ISSOCK(mode) else \
        "a device" if _stat.S_ISCHR(mode) or _stat.S_ISBLK(mode) else "a special file"
    if directory:
        raise ValueError(f"{name!r} is not a directory ({kind}); list a folder instead.")
    raise ValueError(f"{name!r} is not a regular file ({kind}); only regular files can be read.")


def _same(opened: os.stat_result, checked: os.stat_result, directory: bool) -> bool:
    """Whether the file opened is the one checked (device, inode and kind: a freed inode number
    can come back at once as a named pipe) and of the kind wanted."""
    wanted = _stat.S_ISDIR if directory else _stat.S_ISREG
    return wanted(opened.st_mode) and (opened.st_dev, opened.st_ino) == (
        checked.st_dev, checked.st_ino) and _stat.S_IFMT(opened.st_mode) == _stat.S_IFMT(
        checked.st_mode)


def _changed_error(name: str) -> PermissionError:
    return PermissionError(
        f"{name!r} changed while it was being opened (it, or a folder on its way, was "
        "replaced); it was not read. Call the tool again."
    )


def _changed(mtime: float) -> str:
    """A file's last change as ``YYYY-MM-DD HH:MM`` (local time), or words for a time that is no
    date (a file system can hold any number)."""
    try:
        return _dt.datetime.fromtimestamp(mtime).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return "at an unknown time (the file's time is out of range)"


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
