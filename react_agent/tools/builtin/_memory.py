"""Long-term memory: a ready ``remember(fact)`` / ``recall(query)`` tool pair.

Facts live in one JSON file per user id (``<root>/<user_id>.json``), so they outlast runs and
conversations (seed 002's long-term memory). Every write takes a lock across processes
(``filelock``), re-reads the file, appends, and replaces the file atomically (temporary file +
rename), so two agents writing at once lose nothing, and a failed write (disk full, Ctrl-C)
leaves the earlier facts as they were. Recall ranks facts by the words (and, for Chinese or
Japanese text, the characters) they share with the query.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from filelock import FileLock

from ..._lexical import overlap
from ..._lexical import terms as words
from ..._paths import data_dir
from ..._persist import write_atomically
from ...errors import ConfigError
from .._toolbox import Toolbox

_USER_ID = re.compile(r"[A-Za-z0-9_.@-]{1,64}")
"""A usable user id, matched with ``fullmatch`` (``$`` would let a final newline through)."""

_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) \
    | getattr(os, "O_BINARY", 0)


class MemoryStore:
    """The facts remembered for one user.

    Args:
        user_id: letters, digits and ``_ . @ -`` (it names the file).
        root: the folder of the memory files (default ``data_dir() / "memory"``).
        lock_timeout: seconds to wait for another process's write before giving up.

    Raises:
        ConfigError: an unusable ``user_id``.
    """

    def __init__(
        self, user_id: str, root: str | os.PathLike[str] | None = None, lock_timeout: float = 10.0
    ) -> None:
        if not isinstance(user_id, str) or not _USER_ID.fullmatch(user_id):
            raise ConfigError(
                f"Memory user id {user_id!r} is not usable as a file name: use letters, digits "
                "and _ . @ - (at most 64)."
            )
        self.user_id = user_id
        self.path = Path(root or data_dir() / "memory") / f"{user_id}.json"
        self._lock = FileLock(str(self.path) + ".lock", timeout=lock_timeout)

    def facts(self) -> list[dict[str, Any]]:
        """Every fact, oldest first: ``[{"fact": str, "time": ISO 8601 UTC}, ...]``.

        Raises:
            ValueError: the file exists but is not a memory file: not a regular file (a named
                pipe, which would block the read, a device...), not JSON, or not the shape above
                (it is left untouched).
        """
        try:
            raw = self._read()
        except FileNotFoundError:
            return []
        try:
            data = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as exc:  # not UTF-8 or JSON; nested too deep
            raise ValueError(f"the memory file {self.path} is damaged ({exc}); not changed") \
                from exc
        facts = data.get("facts") if isinstance(data, dict) else None
        if not isinstance(facts, list):
            raise ValueError(f"the memory file {self.path} is not a memory file; not changed")
        for i, fact in enumerate(facts):
            if not (isinstance(fact, dict) and isinstance(fact.get("fact"), str)
                    and isinstance(fact.get("time"), str)):
                raise ValueError(f"the memory file {self.path} is damaged (fact {i} is not "
                                 '{"fact": text, "time": text}); not changed')
        return facts

    def _read(self) -> bytes:
        """The memory file's bytes, read only if it is a regular file: checked before opening
        (opening a device can act on it) and on the opened file, opened without blocking (a
        named pipe put in its place meanwhile would wait for a writer)."""
        if not stat.S_ISREG(os.stat(self.path).st_mode):
            raise self._not_regular()
        with os.fdopen(os.open(self.path, _READ_FLAGS), "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise self._not_regular()
            return f.read()

    def _not_regular(self) -> ValueError:
        return ValueError(f"the memory file {self.path} is not a regular file; not changed")

    def remember(self, fact: str) -> str:
        """Store ``fact`` for later conversations. Returns a confirmation for the model.

        Raises:
            ValueError: an empty fact, or a damaged memory file.
            filelock.Timeout: another process held the lock for ``lock_timeout`` seconds.
            OSError: the file could not be written (the earlier facts are kept).
        """
        fact = " ".join(fact.split())
        if not fact:
            raise ValueError("the fact is empty; pass the sentence to remember")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            facts = self.facts()
            if any(f["fact"] == fact for f in facts):
                return f"Already remembered: {fact}"
            now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
            facts.append({"fact": fact, "time": now})
            payload = {"user_id": self.user_id, "facts": facts}
            write_atomically(self.path, json.dumps(payload, ensure_ascii=False, indent=1))
        return f"Remembered: {fact}"

    def recall(self, query: str = "", limit: int = 5) -> str:
        """The facts that best match ``query`` (all recent ones for an empty query), one per
        line with the date they were remembered."""
        facts = self.facts()
        if not facts:
            return "(nothing is remembered yet)"
        terms = words(query)
        if terms:
            scored = [(overlap(terms, words(f["fact"])), i, f) for i, f in enumerate(facts)]
            ranked = [f for score, _, f in sorted(scored, key=lambda s: (-s[0], -s[1])) if score]
        else:
            ranked = facts[::-1]
        if not ranked:
            return f"(nothing remembered matches {query!r})"
        return "\n".join(f"- {f['fact']} (remembered {f['time'][:10]})" for f in ranked[:limit])


def memory_tools(user_id: str, root: str | os.PathLike[str] | None = None) -> Toolbox:
    """A toolbox with ``remember(fact)`` and ``recall(query)`` for ``user_id``; add it to yours
    with ``for tool in memory_tools("alice").values(): toolbox.add_tool(tool)``."""
    store = MemoryStore(user_id, root)
    toolbox = Toolbox()

    def remember(fact: str) -> str:
        """Remember a fact about the user or the task for later conversations (e.g. "The user
        prefers metric units"). Use it when the user tells you something worth keeping.

        Args:
            fact: one short, self-contained sentence.
        """
        return store.remember(fact)

    def recall(query: str = "") -> str:
        """Look up facts remembered in earlier conversations.

        Args:
            query: words to look for, e.g. "city" or "birthday"; empty for the latest facts.
        """
        return store.recall(query)

    toolbox.add(remember)
    toolbox.add(recall)
    return toolbox
