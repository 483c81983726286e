"""The canonical start of a prompt on the embedded model: its prefix evaluated (and saved) or
restored from the saved prompt states (:mod:`react_agent.models._prompt_cache`), always the same
way.

**Canonical evaluation order.** llama.cpp evaluates a prompt in batches of ``n_batch`` tokens
from where its cache ends, and a different split changes the logits by rounding, so a greedy
reply can differ. To make a restored run reply exactly as a fresh one, every prompt that starts
with a known prefix is evaluated the same way: the prefix alone from position 0 (in
``n_batch`` batches), then the rest from the end of the prefix. :class:`CanonicalStart` wraps
the ``Llama`` object's ``generate`` so that, before a prompt is evaluated, the context holds
exactly its prefix: evaluated now (and saved) or restored from memory or disk; llama-cpp-python's
own longest-common-prefix logic then evaluates only the rest. Within a run (no reset in
between), a prompt that extends the previous one keeps reusing the context as before.

**The prefix** is the part of the chat template's rendering that the leading system messages
decide: the prompt is tokenized (by :class:`~react_agent.models._chat_tokens.ChatTokenizer`, as
every prompt is) with them and two different user messages, and the common token prefix is cut
after its last control token (``<|im_start|>`` for Qwen), so whatever follows cannot change its
tokenisation. It is used only when the real prompt's tokens start with it.
"""

from __future__ import annotations

import ctypes
import json
import logging
import time
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from ..errors import ModelError
from ._chat_tokens import ChatTokenizer
from ._prompt_cache import PromptStateCache, Tokens, state_key

log = logging.getLogger(__name__)


def save_state(llama: Any) -> bytes | None:
    """The state of sequence 0 of ``llama``'s context (its KV cache), or ``None``."""
    import llama_cpp

    ctx = llama.ctx
    size = int(llama_cpp.llama_state_seq_get_size(ctx, 0))
    if size <= 0:
        return None
    buffer = (ctypes.c_uint8 * size)()
    written = int(llama_cpp.llama_state_seq_get_data(ctx, buffer, size, 0))
    if written <= 0 or written > size:
        return None
    return bytes(memoryview(buffer).cast("B")[:written])


def clear(llama: Any) -> None:
    """Empty ``llama``'s context as a new one is: no tokens, the KV cache cleared."""
    import llama_cpp

    llama.reset()
    memory = llama_cpp.llama_get_memory(llama.ctx)
    if memory is not None:
        llama_cpp.llama_memory_clear(memory, True)


def restore_state(llama: Any, tokens: Sequence[int], state: bytes) -> bool:
    """Put ``llama``'s context in the saved ``state`` of ``tokens`` (from :func:`save_state`).
    ``False`` (and an empty context) when llama.cpp refuses it."""
    import llama_cpp

    clear(llama)
    if not state:
        return False
    buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
    if int(llama_cpp.llama_state_seq_set_data(llama.ctx, buffer, len(state), 0)) != len(state):
        clear(llama)
        return False
    llama.input_ids[: len(tokens)] = tokens
    llama.n_tokens = len(tokens)
    llama._requires_eval = True  # the logits are not restored: generate decodes before sampling
    return True


def evaluate(llama: Any, tokens: Sequence[int]) -> None:
    """Evaluate ``tokens`` in an empty context, from position 0."""
    clear(llama)
    llama.eval(list(tokens))


class PrefixFinder:
    """The prefix of the prompt that the leading system messages decide, in tokens (see the
    module's docstring), as ``chat`` tokenizes prompts. ``None`` without ``chat`` or when the
    rendering fails."""

    PROBES = ("A", "B")

    def __init__(self, chat: ChatTokenizer | None) -> None:
        self._chat = chat
        self._memo: OrderedDict[str, Tokens | None] = OrderedDict()

    def __call__(self, messages: Sequence[Any]) -> Tokens | None:
        if self._chat is None:
            return None
        leading = []
        for message in messages:
            if not isinstance(message, dict) or message.get("role") != "system":
                break
            leading.append(message)
        try:
            memo_key = json.dumps(leading, sort_keys=True, ensure_ascii=False)
        except (TypeError, ValueError):
            return None
        if memo_key in self._memo:
            self._memo.move_to_end(memo_key)
            return self._memo[memo_key]
        prefix = self._find(self._chat, leading)
        self._memo[memo_key] = prefix
        while len(self._memo) > 16:
            self._memo.popitem(last=False)
        return prefix

    def _find(self, chat: ChatTokenizer, leading: list[Any]) -> Tokens | None:
        try:
            renderings = [chat([*leading, {"role": "user", "content": probe}]).tokens
                          for probe in self.PROBES]
        except ModelError as exc:  # the template may fail on any input
            log.debug("No prompt prefix: %s", exc)
            return None
        common = 0
        for a, b in zip(*renderings, strict=False):
            if a != b:
                break
            common += 1
        control = chat.vocabulary.control_tokens
        for end in range(common, 0, -1):
            if renderings[0][end - 1] in control:
                return tuple(renderings[0][:end])
        return None


class CanonicalStart:
    """Puts the context of ``llama`` at the canonical start of each prompt that begins with a
    known prefix (see the module's docstring), restoring saved states from ``cache``
    (``None``: no saved states, the prefix is evaluated each time it is needed).

    :meth:`install` wraps ``llama.generate``; :meth:`expect` names the messages of the next
    request; :meth:`forget` makes the next request start as in a new context (a reset).
    After a request, :attr:`source` says how its prefix came into the context: ``"evaluated"``,
    ``"memory"``, ``"disk"``, ``"context"`` (already there: the previous request's prompt,
    within a run) or ``None`` (no known prefix: the prompt was evaluated as before).
    """

    def __init__(self, llama: Any, description: dict[str, Any] | None,
                 cache: PromptStateCache | None, chat: ChatTokenizer | None = None) -> None:
        self.llama, self.description, self.cache = llama, description, cache
        self.find_prefix = PrefixFinder(chat)
        self.source: str | None = None
        self._next: Tokens | None = None
        self._held: Tokens | None = None  # the prefix the context starts with, canonically
        self._fresh = True

    def install(self) -> None:
        """Wrap ``llama.generate`` (on the instance): this object's :meth:`before_generate`
        runs first. Weak references both ways: no reference cycle keeps the model alive."""
        from llama_cpp import Llama

        llama_ref, start_ref = weakref.ref(self.llama), weakref.ref(self)

        def generate(tokens: Sequence[int], *args: Any, **kwargs: Any) -> Any:
            start = start_ref()
            if start is not None:
                start.before_generate(tokens)
            target: Any = llama_ref()
            return Llama.generate(target, tokens, *args, **kwargs)

        self.llama.generate = generate

    def expect(self, messages: Sequence[Any]) -> None:
        """The next request's messages (before ``create_completion``)."""
        self._next, self.source = self.find_prefix(messages), None

    def forget(self) -> None:
        """The next request starts as in a freshly loaded model."""
        self._fresh = True
        self._held = None
        if self.cache is None:
            clear(self.llama)

    def before_generate(self, tokens: Sequence[int]) -> None:
        llama = self.llama
        prefix, self._next = self._next, None
        n = len(prefix) if prefix else 0
        if prefix is None or len(tokens) <= n or tuple(tokens[:n]) != prefix:
            self.source, self._held = None, None
            if self._fresh:
                clear(llama)  # the whole prompt from position 0, as a new context
            self._fresh = False
            return
        if (not self._fresh and self._held == prefix and llama.n_tokens >= n
                and tuple(int(t) for t in llama.input_ids[:n]) == prefix):
            self.source = "context"  # llama-cpp-python evaluates what follows the common part
            return
        self._held = None
        started = time.perf_counter()
        self.source = self._start_at(prefix)
        self._held, self._fresh = prefix, False
        log.debug("The prompt's prefix of %d tokens: %s in %.3f s.", len(prefix), self.source,
                  time.perf_counter() - started)

    def _start_at(self, prefix: Tokens) -> str:
        """Make the context hold exactly ``prefix``, evaluated canonically; says how."""
        key = b""
        if self.cache is not None and self.description is not None:
            key = state_key(self.description, prefix)
            found = self.cache.get(key, prefix)
            if found is not None:
                state, where = found
                if restore_state(self.llama, prefix, state):
                    return where
                log.warning("llama.cpp refused the saved prompt state (%s); the prompt is "
                            "evaluated again.", where)
        evaluate(self.llama, prefix)
        if self.cache is not None and key:
            saved = save_state(self.llama)
            if saved is not None:
                self.cache.put(key, prefix, saved)
        return "evaluated"
