"""The embedded model: llama.cpp in-process through ``llama-cpp-python`` (the ``local`` extra)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, ModelError, install_hint
from ..types import Message, ModelReply
from ._chat_tokens import ChatTokenizer
from ._cpu_probe import Verdict, decide
from ._prompt_cache import cache_folder, disk_cap
from ._weights import Progress, default_model_path
from .base import STOP_SEQUENCES

if TYPE_CHECKING:
    from ._answer_floor import AnswerFloor
    from ._canonical_start import CanonicalStart

log = logging.getLogger(__name__)

_PARAMS_LOCK = threading.Lock()


class LlamaCppModel:
    """A GGUF model run in this process by llama.cpp.

    Args:
        model_path: a GGUF file; ``None`` = the bundled Qwen2.5-Coder-1.5B-Instruct Q4_K_M,
            assembled on first use (see :mod:`react_agent.models._weights`).
        n_ctx: context window in tokens.
        n_threads: CPU threads; ``None`` = all cores.
        temperature: 0 (deterministic) by default.
        max_tokens: cap on one reply, in tokens.
        seed: sampling seed.
        progress: called with ``(bytes_done, bytes_total)`` while the default weights are assembled.
        extra_buffer_types: llama.cpp's fast CPU path (weight repacking into extra buffer
            types: AMX, AVX-512, AVX2 layouts). ``None`` (default) = decided once per machine by
            a probe in a child process, because some virtual machines advertise instructions
            they do not run and the process would die by SIGILL; ``True``/``False`` forces it.
            The environment variable ``REACT_AGENT_EXTRA_BUFFER_TYPES=1``/``0`` does the same
            for every model (see :mod:`react_agent.models._cpu_probe`). After :meth:`load`,
            :attr:`verdict` says what was used and why.
        prompt_cache: keep llama.cpp's state after the system prompt (the prompt's part that
            the leading system messages decide) and restore it instead of evaluating that part
            again: in memory for the life of this object, and on disk for other processes
            (see :mod:`react_agent.models._prompt_cache`). ``False`` = nothing kept.
        prompt_cache_mb: the cap of the cache folder on disk, in megabytes (0 to 1048576, i.e.
            1 TiB); ``None`` = ``$REACT_AGENT_PROMPT_CACHE_MB``, else 512; 0 = nothing on disk
            (memory only). The folder is used only while it is private (see
            :mod:`react_agent.models._prompt_cache`).
        prompt_cache_dir: the cache folder; ``None`` = ``$REACT_AGENT_PROMPT_CACHE_DIR``, else
            ``<cache dir>/prompt-cache``.

    The model loads on the first :meth:`complete` (or :meth:`load`). llama.cpp reuses its KV cache
    for the common prefix of consecutive requests, so an append-only history only pays for the
    new tokens of each step; :meth:`reset` goes back to a fresh model's state (for runs that
    must not depend on each other), keeping the saved system prompt.

    The prompt's tokens are built here (:mod:`react_agent.models._chat_tokens`): the chat
    template's own markers become control tokens, and the messages' contents (tasks, tool
    results, files, tool descriptions) are tokenized as text, so a content holding
    ``<|im_end|>`` cannot end its turn.

    Every prompt is evaluated in one canonical order whatever is cached: its system-prompt
    prefix alone from position 0, then the rest. So a reply does not depend on whether that
    prefix was evaluated now, restored from memory or from disk, or whether ``prompt_cache`` is
    on (:attr:`prefix_source` says which happened for the last request).

    Raises:
        ConfigError: llama-cpp-python or the weights are not installed, the file is not a GGUF,
            or the prompt cache's size (``prompt_cache_mb`` or its variable) is not a size.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int = 0,
        progress: Progress | None = None,
        extra_buffer_types: bool | None = None,
        prompt_cache: bool = True,
        prompt_cache_mb: float | None = None,
        prompt_cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.model_path = Path(model_path) if model_path else None
        if self.model_path is not None and not self.model_path.is_file():
            raise ConfigError(f"No GGUF model file at {self.model_path}.")
        self.n_ctx, self.n_threads, self.seed = n_ctx, n_threads or os.cpu_count() or 1, seed
        self.temperature, self.max_tokens, self.progress = temperature, max_tokens, progress
        self.extra_buffer_types = extra_buffer_types
        self.prompt_cache = prompt_cache
        self._cache_cap = disk_cap(prompt_cache_mb) if prompt_cache else 0
        self._cache_folder = cache_folder(prompt_cache_dir) if prompt_cache else None
        self.verdict: Verdict | None = None
        self._llama: Any = None
        self._start: CanonicalStart | None = None
        self._chat: ChatTokenizer | None = None
        self._final_ids: frozenset[int] | None = None
        self._lock = threading.Lock()

    accepts_answer_floor = True
    """``complete``/``stream`` take ``answer_floor=``: the reply gives the final answer when the
    model gives that branch at least this probability (:mod:`react_agent.models._answer_floor`)."""

    accepts_choices = True
    """``choose(messages, choices)``: how likely a reply begins with each word,
    from one forward pass (a request's ``Query.choices``)."""

    accepts_schema = True
    """``complete``/``stream`` take ``schema=``: llama.cpp then decodes under a grammar built
    from the JSON Schema, so every reply fits it."""

    small_model = True
    """A small local model: it gets every small-model policy by default
    (:func:`~react_agent.policies.default_policies`)."""

    @property
    def name(self) -> str:
        return self.model_path.name if self.model_path else "local (Qwen2.5-Coder-1.5B-Instruct)"

    def load(self) -> None:
        """Load the weights now (otherwise the first call does)."""
        if self._llama is not None:
            return
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise ConfigError(
                f"The embedded model needs llama-cpp-python, the local extra: "
                f"{install_hint('local')}; it compiles llama.cpp, about 10 minutes the first "
                "time -- or use a server with --base-url URL."
            ) from exc
        path = self.model_path or default_model_path(self.progress)
        verdict = decide(path, self.extra_buffer_types)
        try:
            with use_extra_bufts(verdict.extra_buffer_types):
                self._llama = Llama(
                    model_path=str(path), n_ctx=self.n_ctx, n_threads=self.n_threads,
                    seed=self.seed, verbose=False,
                )
        except (ValueError, RuntimeError) as exc:
            raise ConfigError(f"llama.cpp could not load {path}: {exc}") from exc
        self.model_path, self.verdict = path, verdict
        self._chat = ChatTokenizer.of(self._llama)
        self._start = self._canonical_start(verdict, self._chat)

    def _canonical_start(self, verdict: Verdict, chat: ChatTokenizer) -> CanonicalStart | None:
        """The canonical evaluation order (and the saved prompt state when ``prompt_cache``)
        for the loaded model; ``None`` for a recurrent or hybrid model, whose memory cannot be
        cut after a prefix (llama-cpp-python evaluates each prompt whole there)."""
        from ._canonical_start import CanonicalStart
        from ._prompt_cache import PromptStateCache, build_description

        llama = self._llama
        if getattr(llama, "_is_recurrent", False) or getattr(llama, "_is_hybrid", False):
            return None
        cache = description = None
        if self.prompt_cache and self._cache_folder is not None:
            store = PromptStateCache(self._cache_folder, self._cache_cap)
            try:  # the model's hash is remembered in the folder only if it is private
                description = build_description(llama, verdict.extra_buffer_types,
                                                self._cache_folder if store.disk() else None)
            except OSError as exc:  # the model file cannot be read again
                log.warning("No saved prompt state for %s (%s).", llama.model_path, exc)
            else:
                cache = store
        start = CanonicalStart(llama, description, cache, chat)
        start.install()
        return start

    @property
    def prefix_source(self) -> str | None:
        """How the last request's system-prompt prefix came into llama.cpp's context:
        ``"evaluated"`` (now), ``"memory"`` or ``"disk"`` (a saved state restored),
        ``"context"`` (left there by the previous request of the same run), ``None`` (no prefix
        found: the prompt was evaluated as a whole)."""
        return self._start.source if self._start is not None else None

    def complete(
        self, messages: Sequence[Message], schema: dict[str, Any] | None = None,
        strict: bool = False, answer_floor: float | None = None,
    ) -> ModelReply:
        """The reply to ``messages``; with ``schema`` (a JSON Schema), decoding is constrained
        to it (``strict`` changes nothing here: llama.cpp always supports it); with
        ``answer_floor`` (0-1], the reply gives the final answer where the model gives that
        branch at least this probability (:class:`react_agent.models._answer_floor.AnswerFloor`).

        Raises:
            ModelError: the conversation no longer fits the context window.
        """
        with self._lock:  # one llama context: one request at a time
            self.load()
            floor = self._floor(answer_floor)
            request = self._request(messages, schema, floor)
            try:
                out = self._llama.create_completion(**request)
            except ValueError as exc:  # llama-cpp-python reports context overflow this way
                raise self._overflow(exc) from exc
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        return ModelReply(
            text=choice.get("text") or "",
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            finish_reason=choice.get("finish_reason"),
            answer_probability=floor.probability if floor else None,
            answer_taken=bool(floor and floor.taken),
        )

    def stream(
        self, messages: Sequence[Message], schema: dict[str, Any] | None = None,
        strict: bool = False, answer_floor: float | None = None,
    ) -> Iterator[str | ModelReply]:
        """The reply's text pieces as llama.cpp generates them, then the whole
        :class:`ModelReply` (``schema`` and ``answer_floor`` as in :meth:`complete`). llama.cpp
        does not report usage when streaming: the tokens are counted from the context
        (prompt = tokens in context - generated).

        Raises:
            ModelError: the conversation no longer fits the context window.
        """
        parts: list[str] = []
        finish: str | None = None
        with self._lock:
            self.load()
            floor = self._floor(answer_floor)
            request = self._request(messages, schema, floor)
            try:
                for chunk in self._llama.create_completion(**request, stream=True):
                    choice = chunk["choices"][0]
                    finish = choice.get("finish_reason") or finish
                    piece = "" if choice.get("finish_reason") else choice.get("text") or ""
                    if piece:
                        parts.append(piece)
                        yield piece
            except ValueError as exc:
                raise self._overflow(exc) from exc
            text = "".join(parts)
            completion = len(self._llama.tokenize(text.encode(), add_bos=False, special=False))
            prompt = max(0, self._llama.n_tokens - completion)
        yield ModelReply(text, prompt or None, completion, finish,
                         floor.probability if floor else None, bool(floor and floor.taken))

    def choose(self, messages: Sequence[Message], choices: Sequence[str]) -> ModelReply:
        """How likely the model's reply to ``messages`` begins with each of ``choices`` (one
        word each, such as ``("yes", "no")``), normalised over them: ``ModelReply.choices``
        (``{choice: p}``, the ``p`` summing to 1), its ``text`` the likeliest. A choice counts
        the first token of the word as written, capitalised and after a space. One forward
        pass, no reply decoded.

        Raises:
            ModelError: the messages do not fit the context window.
            ValueError: fewer than two choices, or a choice that is not one word.
        """
        if len(choices) < 2 or any(not c or not c.isalpha() for c in choices):
            raise ValueError("choices: at least two words of letters")
        import numpy as np  # the local extra

        with self._lock:
            self.load()
            first = {c: self._first_tokens(c) for c in choices}
            captured: list[Any] = []

            def capture(input_ids: Any, scores: Any) -> Any:
                if not captured:
                    captured.append(np.array(scores, dtype=np.float64))
                return scores

            request = self._request(messages, None, None)
            request.update(max_tokens=1, logits_processor=[capture])
            try:
                out = self._llama.create_completion(**request)
            except ValueError as exc:
                raise self._overflow(exc) from exc
        logits = captured[0]
        p = np.exp(logits - logits.max())
        p /= p.sum()
        mass = {c: float(p[sorted(ids)].sum()) for c, ids in first.items()}
        total = sum(mass.values()) or 1.0
        probabilities = {c: m / total for c, m in mass.items()}
        return ModelReply(max(probabilities, key=lambda c: probabilities[c]),
                          prompt_tokens=(out.get("usage") or {}).get("prompt_tokens"),
                          completion_tokens=0, finish_reason="stop", choices=probabilities)

    def _first_tokens(self, word: str) -> frozenset[int]:
        """The first token of ``word`` as written, capitalised and after a space."""
        forms = {word, word.lower(), word.capitalize(), " " + word.lower(),
                 " " + word.capitalize()}
        return frozenset(self._llama.tokenize(f.encode(), add_bos=False, special=False)[0]
                         for f in forms)

    def reset(self) -> None:
        """Go back to a freshly loaded model's state, so the next reply is the one it gives.

        llama.cpp reuses the cached prefix of the previous request; the tokens after it are then
        evaluated in other batches than a fresh evaluation would use, which changes the logits by
        rounding, and a greedy reply can differ (a task's first reply can depend on the task run
        before it). After ``reset`` the next prompt is evaluated in the canonical order, as
        in a new model: its system-prompt prefix is restored (with ``prompt_cache``; else
        evaluated again from position 0), then the rest is evaluated after it. Does nothing
        before the model is loaded.
        """
        with self._lock:
            if self._start is not None:
                self._start.forget()
            elif self._llama is not None:
                self._llama.reset()

    def count_tokens(self, text: str) -> int:
        """Exact number of tokens of ``text`` for this model, tokenized as text, as a message's
        content is (a control token's text, ``<|im_end|>``, is not read as that token)."""
        with self._lock:
            self.load()
            return len(self._llama.tokenize(text.encode(), add_bos=False, special=False))

    def _request(
        self, messages: Sequence[Message], schema: dict[str, Any] | None,
        floor: AnswerFloor | None,
    ) -> dict[str, Any]:
        """The arguments of ``Llama.create_completion`` for ``messages`` (what
        ``create_chat_completion`` passed, with the prompt as tokens); names the next
        request's messages to the canonical start."""
        assert self._chat is not None  # set by load()
        prompt = self._chat(messages)
        if self._start is not None:
            self._start.expect(messages)
        request: dict[str, Any] = {
            "prompt": prompt.tokens, "temperature": self.temperature,
            "max_tokens": self.max_tokens, "seed": self.seed,
            "stop": [*STOP_SEQUENCES, *prompt.stop],
            "stopping_criteria": prompt.stopping_criteria,
        }
        if schema is not None:
            request["grammar"] = _grammar(schema)
        if floor is not None:
            request["logits_processor"] = [floor]
        return request

    def _floor(self, answer_floor: float | None) -> AnswerFloor | None:
        """A fresh :class:`AnswerFloor` for one reply (``None`` without a floor). The tokens
        that begin ``final_answer`` are found once per model, from its vocabulary."""
        if answer_floor is None:
            return None
        from ._answer_floor import AnswerFloor, final_key_tokens  # numpy: the local extra

        if self._final_ids is None:
            llama = self._llama
            self._final_ids = final_key_tokens(
                (i, llama.detokenize([i]).decode("utf-8", "ignore"))
                for i in range(llama.n_vocab()))
        return AnswerFloor(answer_floor, self._text, self._final_ids)

    def _text(self, tokens: Sequence[int]) -> str:
        return str(self._llama.detokenize(list(tokens)).decode("utf-8", "ignore"))

    def _overflow(self, exc: ValueError) -> ModelError:
        return ModelError(
            f"The conversation no longer fits the model's context window ({self.n_ctx} tokens): "
            f"{exc}. Use fewer steps or a larger n_ctx.",
            cause="context_length",
        )


GRAMMAR_MAX_COUNT = 256
"""A size keyword (``minLength``, ``maxItems``, ...) above this, or a ``pattern`` whose counted
repeats (``a{1000}``) multiply past it, is left out of the grammar: llama.cpp's converter writes
each counted place out, so ``minLength: 100000000`` would make a grammar of hundreds of MB.
Validation still checks them."""

_SIZE_KEYWORDS = frozenset({"minLength", "maxLength", "minItems", "maxItems", "minProperties",
                            "maxProperties", "minContains", "maxContains"})
_COUNTED = re.compile(r"\{\s*(\d+)\s*(?:,\s*(\d*)\s*)?\}")


def _for_grammar(schema: Any, depth: int = 0) -> Any:
    """A copy of ``schema`` without what would make its grammar huge (see
    :data:`GRAMMAR_MAX_COUNT`); schemas reaching here are bounded, the depth is checked anyway."""
    if depth > 64:
        return {}
    if isinstance(schema, list):
        return [_for_grammar(item, depth + 1) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key in _SIZE_KEYWORDS and isinstance(value, (int, float)) \
                and not isinstance(value, bool) and value > GRAMMAR_MAX_COUNT:
            continue
        if key == "pattern" and isinstance(value, str) and _counts(value) > GRAMMAR_MAX_COUNT:
            continue
        out[key] = _for_grammar(value, depth + 1)
    return out


def _counts(pattern: str) -> int:
    """The product of a pattern's counted repeats (an upper bound of how they nest)."""
    product = 1
    for low, high in _COUNTED.findall(pattern):
        product *= max(int(low[:12]), int(high[:12]) if high else 0, 1)
        if product > GRAMMAR_MAX_COUNT:
            break
    return product


def _grammar(schema: dict[str, Any]) -> Any:
    """llama.cpp's grammar for a JSON Schema (:func:`_for_grammar` of it); for a schema it
    cannot convert, the grammar of any JSON value (what llama-cpp-python's ``response_format``
    does)."""
    from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

    try:
        return LlamaGrammar.from_json_schema(json.dumps(_for_grammar(schema)), verbose=False)
    except Exception as exc:  # the converter raises anything on a schema it does not support
        log.debug("The reply schema has no llama.cpp grammar (%s); any JSON is allowed.", exc)
        return LlamaGrammar.from_string(JSON_GBNF, verbose=False)


@contextlib.contextmanager
def use_extra_bufts(enabled: bool) -> Iterator[None]:
    """Within this block, llama-cpp-python's ``Llama(...)`` loads models with llama.cpp's model
    parameter ``use_extra_bufts = enabled``.

    ``Llama`` takes no argument for it: it starts from ``llama_model_default_params()`` while
    constructing, so for ``enabled=False`` that function is wrapped for the duration of the
    block (under a lock: one load at a time). ``enabled=True`` is llama.cpp's default and
    changes nothing.

    Raises:
        ConfigError: this llama-cpp-python's ``llama_model_params`` has no ``use_extra_bufts``
            (older than 0.3.36).
    """
    if enabled:
        yield
        return
    import llama_cpp.llama_cpp as lib

    if "use_extra_bufts" not in {name for name, *_ in lib.llama_model_params._fields_}:
        raise ConfigError("This llama-cpp-python cannot turn off extra buffer types; upgrade it: "
                          "pip install 'llama-cpp-python>=0.3.36,<0.4'.")
    with _PARAMS_LOCK:
        default_params = lib.llama_model_default_params

        def safe_params() -> Any:
            params = default_params()
            params.use_extra_bufts = False
            return params

        lib.llama_model_default_params = safe_params
        try:
            yield
        finally:
            lib.llama_model_default_params = default_params
