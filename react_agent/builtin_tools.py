"""The CLI's default toolbox: a safe calculator, the current date/time and read-only file tools.

:func:`builtin_toolbox` builds it. The file tools (``list_directory``, ``read_file``,
``search_files``) are confined to one root directory: every path is resolved relative to it
(following symlinks), and a path that lands outside it is refused with a ``PermissionError``.
They never write, and they bound their work (at most 200 listed entries, 100 KB read per file,
a capped number of search results and scanned files), so a model cannot stall a run with them.

Failures are raised as ordinary exceptions (``ValueError``, ``PermissionError``,
``FileNotFoundError`` ...) whose messages tell the model what to do instead; the invoker turns
them into ``Error: <Type>: <message>`` observations.
"""

from __future__ import annotations

import ast
import datetime as _dt
import math
import operator
import os
import zoneinfo
from collections.abc import Callable, Iterator
from pathlib import Path

from .toolbox import Toolbox

__all__ = ["builtin_toolbox", "calculate", "current_datetime"]

# -- calculator --------------------------------------------------------------------------------
MAX_EXPRESSION_CHARS = 500
"""Longest expression (characters) :func:`calculate` accepts."""

MAX_NESTING = 50
"""Deepest parenthesis nesting :func:`calculate` accepts."""

MAX_INT_DIGITS = 4000
"""Largest integer result (decimal digits) :func:`calculate` computes; bigger ones are refused
before the work is done. Kept under CPython's default 4300-digit ``int -> str`` limit."""

_LOG10_2 = math.log10(2)

_BIN_OPS: dict[type[ast.operator], tuple[str, Callable[[float, float], float]]] = {
    ast.Add: ("+", operator.add),
    ast.Sub: ("-", operator.sub),
    ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv),
    ast.FloorDiv: ("//", operator.floordiv),
    ast.Mod: ("%", operator.mod),
    ast.Pow: ("**", operator.pow),
}
_UNARY_OPS: dict[type[ast.unaryop], Callable[[float], float]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_UNICODE_OPS = {"×": "*", "÷": "/", "−": "-"}  # times, divide, the Unicode minus sign
_SUPPORTED = "numbers, + - * / // % ** and parentheses"


def calculate(expression: str) -> str:
    """Evaluate arithmetic exactly. Supports numbers, + - * / // (floor division),
    % (remainder), ** (power) and parentheses, e.g. "(2 ** 8 + 100) / 3". No variables or
    functions; for a square root use ** 0.5.

    Args:
        expression: the arithmetic expression, e.g. "(2 ** 8 + 100) / 3".

    Returns:
        ``"<expression> = <result>"``: integers in full, floats as Python's ``repr``
        (e.g. ``"(2 ** 8 + 100) / 3 = 118.66666666666667"``, ``"8 / 2 = 4.0"``).

    Raises:
        ValueError: the expression is empty, longer than 500 characters, nested deeper than 50
            parentheses, not valid arithmetic, uses anything but numbers and the operators above
            (``^`` is refused with a hint to use ``**``), gives an integer of more than 4000
            digits or a non-real (complex) result.
        ZeroDivisionError: division, floor division or remainder by zero (or 0 to a negative
            power).
        OverflowError: a float result is too large to represent.
    """
    value = evaluate(expression)
    result = repr(value) if isinstance(value, float) else str(value)
    return f"{expression.strip()} = {result}"


def evaluate(expression: str) -> int | float:
    """The value of the arithmetic ``expression``, with the checks and errors of
    :func:`calculate` (which formats it for the model)."""
    text = expression.strip()
    if not text:
        raise ValueError('The expression is empty; write one like "(2 ** 8 + 100) / 3".')
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ValueError(
            f"The expression is {len(text)} characters long; the limit is {MAX_EXPRESSION_CHARS}."
            " Split the calculation into smaller steps."
        )
    if "^" in text:
        raise ValueError("'^' is not supported; use ** for powers, e.g. 2 ** 8.")
    for symbol, replacement in _UNICODE_OPS.items():
        text = text.replace(symbol, replacement)
    depth = deepest = 0
    for char in text:
        depth += (char == "(") - (char == ")")
        deepest = max(deepest, depth)
    if deepest > MAX_NESTING:
        raise ValueError(
            f"The expression nests parentheses {deepest} deep; the limit is {MAX_NESTING}."
        )
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ValueError(
            f"Cannot parse {expression.strip()!r} as arithmetic; use only {_SUPPORTED}, "
            'e.g. "(2 ** 8 + 100) / 3".'
        ) from exc
    return _evaluate(tree.body, text)


def _evaluate(node: ast.AST, text: str) -> int | float:
    """Evaluate one node of an arithmetic AST, refusing anything else."""
    if isinstance(node, ast.Constant):
        if type(node.value) in (int, float):
            return _checked(node.value)
        raise ValueError(f"{node.value!r} is not a number; the calculator only works on numbers.")
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY_OPS:
        return _checked(_UNARY_OPS[type(node.op)](_evaluate(node.operand, text)))
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN_OPS:
        symbol, func = _BIN_OPS[type(node.op)]
        left, right = _evaluate(node.left, text), _evaluate(node.right, text)
        if symbol == "**":
            _check_power(left, right)
        try:
            value = func(left, right)
        except ZeroDivisionError:
            raise ZeroDivisionError(
                f"Division by zero in {ast.get_source_segment(text, node) or text!r}."
            ) from None
        except OverflowError:
            raise OverflowError(
                f"{ast.get_source_segment(text, node) or text!r} is too large to compute."
            ) from None
        return _checked(value)
    raise ValueError(_refusal(node))


def _check_power(base: float, exponent: float) -> None:
    """Refuse an integer power whose result would have more than MAX_INT_DIGITS digits."""
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
        digits = exponent * math.log10(abs(base)) if exponent.bit_length() < 64 else math.inf
        if digits > MAX_INT_DIGITS:
            size = f"about {digits:.3g}" if math.isfinite(digits) else "far too many"
            raise ValueError(
                f"That power would have {size} digits; integer results are limited to "
                f"{MAX_INT_DIGITS} digits."
            )


def _checked(value: object) -> int | float:
    if isinstance(value, complex):
        raise ValueError(
            "The result is not a real number (e.g. a fractional power of a negative number)."
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise OverflowError("The result is too large for a floating-point number.")
    if isinstance(value, int) and value.bit_length() * _LOG10_2 > MAX_INT_DIGITS:
        raise ValueError(f"The result has more than {MAX_INT_DIGITS} digits; that is the limit.")
    return value  # type: ignore[return-value]


def _refusal(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return (
            f"Names such as {node.id!r} are not supported; write the numbers themselves "
            f"(only {_SUPPORTED})."
        )
    if isinstance(node, ast.Call):
        return (
            f"Function calls are not supported (only {_SUPPORTED}); for a square root use ** 0.5."
        )
    if isinstance(node, ast.Attribute):
        return f"Attribute access such as '.{node.attr}' is not supported (only {_SUPPORTED})."
    if isinstance(node, (ast.BinOp, ast.UnaryOp)):
        return f"That operator is not supported; use only {_SUPPORTED} (** for powers)."
    if isinstance(node, ast.Tuple):
        return "Commas are not supported; write 1000 rather than 1,000, one expression per call."
    return f"{type(node).__name__} is not supported in an expression; use only {_SUPPORTED}."


# -- date and time -----------------------------------------------------------------------------
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def current_datetime(timezone: str = "local") -> str:
    """Get the current date and time (ISO 8601, with the weekday).

    Args:
        timezone: "local", "UTC" or an IANA time zone name such as "Europe/Paris".

    Returns:
        e.g. ``"2026-11-29T20:41:05+00:00 (Sunday)"``, to the second, with the UTC offset.

    Raises:
        ValueError: ``timezone`` is not "local", "UTC" or a known IANA name.
    """
    name = timezone.strip()
    if name.lower() in ("", "local"):
        now = _dt.datetime.now().astimezone()
    elif name.upper() in ("UTC", "Z", "GMT"):
        now = _dt.datetime.now(_dt.timezone.utc)
    else:
        try:
            zone = zoneinfo.ZoneInfo(name)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
            raise ValueError(
                f"Unknown time zone {timezone!r}; write 'local', 'UTC' or an IANA name as "
                "Area/City, e.g. 'Europe/Paris', 'America/New_York', 'Asia/Tokyo'."
            ) from None
        now = _dt.datetime.now(zone)
    return f"{now.isoformat(timespec='seconds')} ({_WEEKDAYS[now.weekday()]})"


# -- read-only file tools ----------------------------------------------------------------------
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


class _Root:
    """A directory the file tools are confined to."""

    def __init__(self, root: str | os.PathLike[str] | None) -> None:
        self.path = Path(os.getcwd() if root is None else root).resolve()
        if not self.path.is_dir():
            raise NotADirectoryError(f"The file tools' root {self.path} is not a directory.")

    def resolve(self, path: str) -> Path:
        """``path`` (relative to the root, or absolute) resolved; refused if outside the root."""
        if "\0" in path:
            raise ValueError("The path contains a NUL character; write a plain relative path.")
        candidate = Path(path or ".")
        if not candidate.is_absolute():
            candidate = self.path / candidate
        try:
            resolved = candidate.resolve()
        except (RuntimeError, OSError) as exc:  # a symlink loop (RuntimeError before 3.13)
            raise ValueError(f"{path!r} cannot be resolved: {exc}") from None
        if not resolved.is_relative_to(self.path):
            raise PermissionError(
                f"{path!r} is outside the allowed directory {self.path}; use a path relative to it."
            )
        return resolved

    def existing(self, path: str) -> Path:
        resolved = self.resolve(path)
        if not resolved.exists():
            raise FileNotFoundError(
                f"{path!r} does not exist in {self.path}; call list_directory to see what is there."
            )
        return resolved

    def inside(self, path: Path) -> bool:
        try:
            return path.resolve().is_relative_to(self.path)
        except (RuntimeError, OSError):
            return False

    def show(self, path: Path) -> str:
        """``path`` relative to the root, with ``/`` separators (``.`` for the root itself)."""
        return path.relative_to(self.path).as_posix() if path != self.path else "."


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


def builtin_toolbox(root: str | os.PathLike[str] | None = None) -> Toolbox:
    """The default toolbox: calculator, current date/time and read-only file tools.

    Tools, in order: ``calculate``, ``current_datetime``, ``list_directory``, ``read_file``,
    ``search_files``. The file tools only see ``root`` and what is under it.

    Args:
        root: the directory the file tools are confined to; default: the current working
            directory at the time of this call. Resolved (symlinks followed) once, here.

    Returns:
        A new :class:`Toolbox` holding the five tools.

    Raises:
        NotADirectoryError: ``root`` is not an existing directory.
    """
    base = _Root(root)

    def list_directory(path: str = ".") -> str:
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
        folder = base.existing(path)
        if not folder.is_dir():
            raise NotADirectoryError(f"{path!r} is a file, not a directory; use read_file on it.")
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: (e.name.casefold(), e.name))
        shown = "./" if folder == base.path else f"{base.show(folder)}/"
        if not entries:
            return f"{shown}: empty directory"
        lines = [f"{shown}: {len(entries)} entries"]
        for entry in entries[:MAX_LIST_ENTRIES]:
            lines.append(_describe_entry(base, entry))
        if len(entries) > MAX_LIST_ENTRIES:
            lines.append(f"... and {len(entries) - MAX_LIST_ENTRIES} more entries not shown")
        return "\n".join(lines)

    def read_file(path: str, start_line: int = 1, max_lines: int = 200) -> str:
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
        file = base.existing(path)
        name = base.show(file)
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

    def file_info(path: str) -> str:
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
        file = base.existing(path)
        name = base.show(file)
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

    def search_files(pattern: str, path: str = ".", max_results: int = 50) -> str:
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
        needle = pattern.casefold()
        start = base.existing(path)
        results: list[str] = []
        scanned = 0
        capped_files = False
        for file in _walk_files(base, start):
            if scanned >= MAX_SEARCH_FILES:
                capped_files = True
                break
            scanned += 1
            try:
                data, _ = _read_head(file, MAX_SEARCH_FILE_BYTES)
            except OSError:
                continue
            if _is_binary(data):
                continue
            shown = base.show(file)
            for lineno, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
                if needle in line.casefold():
                    results.append(f"{shown}:{lineno}: {_excerpt(line, needle)}")
                    if len(results) >= limit:
                        break
            if len(results) >= limit:
                break
        where = base.show(start)
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

    toolbox = Toolbox()
    toolbox.add(calculate, name="calculate", timeout=10.0)
    toolbox.add(current_datetime, name="current_datetime", timeout=10.0)
    toolbox.add(list_directory, name="list_directory", timeout=30.0)  # big or slow folders
    toolbox.add(read_file, name="read_file", timeout=30.0)
    toolbox.add(file_info, name="file_info", timeout=30.0)
    toolbox.add(search_files, name="search_files", timeout=30.0)
    return toolbox


def _describe_entry(base: _Root, entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        try:
            target = Path(entry.path).resolve()
        except (RuntimeError, OSError):
            return f"{entry.name} (broken link)"
        if not target.is_relative_to(base.path):
            return f"{entry.name} (link to outside the allowed directory)"
    try:
        if entry.is_dir():
            return f"{entry.name}/"
        return f"{entry.name} ({entry.stat().st_size} bytes)"
    except OSError:
        return f"{entry.name} (broken link or unreadable)"


def _walk_files(base: _Root, start: Path) -> Iterator[Path]:
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
            if file.is_symlink() and not base.inside(file):
                continue
            if file.is_file():
                yield file
