"""The embedded model's prompt as tokens: control tokens only where the chat template put them.

llama-cpp-python's ``create_chat_completion`` renders the messages with the GGUF's chat template
and tokenizes the whole rendering with special tokens recognised, so a tool result, a file or a
task holding ``<|im_end|>\\n<|im_start|>system\\n...`` would open a real system turn.
:class:`ChatTokenizer` builds the prompt's tokens itself, in three steps:

1. **Where the contents are.** The template is rendered with each message's content replaced by
   a unique placeholder, and with the real contents. Where the first, with the contents put
   back in place of the placeholders, is the second, the character spans of the contents are
   known; the rest of the rendering is the template's.
2. **The template's markers.** llama.cpp's own split (``tokenizer_st_partition`` in
   ``llama-vocab.cpp``) is reproduced: the texts of the vocabulary's control tokens, longest
   first, become those tokens (with their ``lstrip``/``rstrip`` attributes), but here only
   where they lie within the template's spans.
3. **Text.** Every run of text between two markers (template text and contents together, as
   llama.cpp tokenizes it) is tokenized as text (``special=False``). llama.cpp still takes a
   user-defined token (Qwen's ``<tool_call>``) out of text whole, and a BPE merge could reach a
   token llama.cpp marks as control, so a run is cut after the first character of every
   occurrence of such a token's text that overlaps a content: no control or user-defined token
   comes from a content.

For contents that hold no special token's text, the tokens are those ``create_chat_completion``
gives. A template that changes contents rather than copying them (trims or tests them) is
handled safely, with a warning once: when each placeholder appears once, the prompt is the
template's rendering of the placeholders with the contents put in their place; otherwise the
whole rendering is tokenized as text, without any control token.
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ModelError
from ..types import Message

log = logging.getLogger(__name__)

# llama.cpp's token attributes (llama.h, enum llama_token_attr)
UNKNOWN, CONTROL, USER_DEFINED, LSTRIP, RSTRIP = 1 << 0, 1 << 3, 1 << 4, 1 << 7, 1 << 8
C_SPACE = " \t\n\v\f\r"  # isspace() of the C locale: what lstrip/rstrip remove
ROLE = re.compile(r"[A-Za-z_]{1,32}")

Span = tuple[int, int]


@dataclass(frozen=True)
class Marker:
    """A control token of the vocabulary: llama.cpp parses ``text`` as ``token`` when special
    tokens are on, removing whitespace before it (``lstrip``) or after it (``rstrip``)."""

    text: str
    token: int
    lstrip: bool = False
    rstrip: bool = False


@dataclass(frozen=True)
class Vocabulary:
    """What :class:`ChatTokenizer` needs of a llama.cpp vocabulary.

    Attributes:
        markers: the control (and unknown) tokens, in llama.cpp's order: longest text first.
        special: the texts (2 characters or more) of every token that must not come from a
            content: control, unknown and user-defined tokens.
        tokenize: UTF-8 text -> its tokens as text (llama.cpp's ``special=False``, no BOS).
    """

    markers: tuple[Marker, ...]
    special: tuple[str, ...]
    tokenize: Callable[[bytes], list[int]]

    @classmethod
    def of(cls, llama: Any) -> Vocabulary:
        """The vocabulary of a loaded ``llama_cpp.Llama`` (one pass over its tokens)."""
        import llama_cpp

        vocab = llama._model.vocab
        markers, special = [], set()
        for token in range(llama.n_vocab()):
            attr = int(llama_cpp.llama_vocab_get_attr(vocab, token))
            if not attr & (UNKNOWN | CONTROL | USER_DEFINED):
                continue
            try:
                text = llama_cpp.llama_vocab_get_text(vocab, token).decode("utf-8")
            except UnicodeDecodeError:  # no str holds it
                continue
            if len(text) > 1:
                special.add(text)
            if text and attr & (UNKNOWN | CONTROL):
                markers.append(Marker(text, token, bool(attr & LSTRIP), bool(attr & RSTRIP)))
        markers.sort(key=lambda m: (-len(m.text.encode()), m.token))

        def tokenize(text: bytes) -> list[int]:
            return list(llama.tokenize(text, add_bos=False, special=False))

        return cls(tuple(markers), tuple(sorted(special)), tokenize)

    @property
    def control_tokens(self) -> frozenset[int]:
        return frozenset(marker.token for marker in self.markers)


@dataclass(frozen=True)
class ChatPrompt:
    """A prompt for ``Llama.create_completion``.

    Attributes:
        tokens: the token ids.
        text: the rendering they encode.
        contents: the ``(start, end)`` character spans of the messages' contents in ``text``.
        stop: the template's stop strings (the end-of-sequence token's text).
        stopping_criteria: the template's stopping criteria (at the end-of-sequence token).
    """

    tokens: list[int]
    text: str
    contents: tuple[Span, ...]
    stop: list[str]
    stopping_criteria: Any


class ChatTokenizer:
    """Messages -> :class:`ChatPrompt` (see the module's docstring).

    Args:
        formatter: a llama-cpp-python chat formatter: ``formatter(messages=[...])`` returns a
            ``ChatFormatterResponse`` (``prompt``, ``stop``, ``stopping_criteria``).
        vocabulary: the model's :class:`Vocabulary`.
        name: the model, for warnings.
    """

    def __init__(self, formatter: Callable[..., Any], vocabulary: Vocabulary,
                 name: str = "the model") -> None:
        self.formatter, self.vocabulary, self.name = formatter, vocabulary, name
        self._nonce = secrets.token_hex(8)
        self._warned: set[str] = set()

    @classmethod
    def of(cls, llama: Any) -> ChatTokenizer:
        """The tokenizer of a loaded ``llama_cpp.Llama``: its GGUF's chat template (as
        llama-cpp-python renders it), or llama-cpp-python's ``llama-2`` format for a GGUF
        without one (its own fallback)."""
        from llama_cpp import llama_chat_format

        template = (getattr(llama, "metadata", None) or {}).get("tokenizer.chat_template")
        formatter: Callable[..., Any] = llama_chat_format.format_llama2
        if template:
            eos, bos = llama.token_eos(), llama.token_bos()
            text = llama._model.token_get_text
            formatter = llama_chat_format.Jinja2ChatFormatter(
                template=template, eos_token=text(eos) if eos != -1 else "",
                bos_token=text(bos) if bos != -1 else "", stop_token_ids=[eos])
        return cls(formatter, Vocabulary.of(llama), getattr(llama, "model_path", "the model"))

    def __call__(self, messages: Sequence[Message]) -> ChatPrompt:
        """The prompt of ``messages`` (``role`` and ``content`` of each are used).

        Raises:
            ModelError: a message is not a role (a plain word) with text content, or the chat
                template fails on these messages (``cause="bad_request"``).
        """
        plain = [_plain(message, number) for number, message in enumerate(messages)]
        try:
            result = self.formatter(messages=plain)
            marked = self.formatter(messages=[
                {**message, "content": self._placeholder(number)}
                for number, message in enumerate(plain)]).prompt
        except Exception as exc:  # a template may raise anything on any input
            raise ModelError(f"The chat template of {self.name} cannot render these messages "
                             f"({type(exc).__name__}: {exc}).", cause="bad_request") from exc
        text, contents = self._contents(plain, result.prompt, marked)
        stop = result.stop if isinstance(result.stop, list) else [result.stop]
        return ChatPrompt(self.tokens(text, contents), text, contents,
                          [s for s in stop if isinstance(s, str)], result.stopping_criteria)

    def tokens(self, text: str, contents: Sequence[Span]) -> list[int]:
        """The tokens of ``text`` whose ``contents`` spans are text: control tokens only from
        the rest, as llama.cpp would parse them, and the text between as text."""
        tokens: list[int] = []
        position, strip = 0, False
        for start, end, marker in self._markers(text, contents):
            left = _skip_space(text, position, start) if strip else position
            right = _back_over_space(text, left, start) if marker.lstrip else start
            tokens += self._text(text, left, right, contents)
            tokens.append(marker.token)
            position, strip = end, marker.rstrip
        left = _skip_space(text, position, len(text)) if strip else position
        return tokens + self._text(text, left, len(text), contents)

    def _placeholder(self, number: int) -> str:
        return f"\ue000{self._nonce}.{number}\ue001"

    def _contents(self, messages: list[dict[str, str]], rendering: str,
                  marked: str) -> tuple[str, tuple[Span, ...]]:
        """The prompt's text and its contents' spans, from the rendering of the messages and
        that of the placeholders (``marked``)."""
        places = []
        for number in range(len(messages)):
            placeholder = self._placeholder(number)
            at = marked.find(placeholder)
            if at < 0 or marked.find(placeholder, at + 1) >= 0:
                self._warn_once(
                    "text", "The chat template of %s does not copy each message's content once; "
                    "its prompts are tokenized as text, without control tokens (the replies "
                    "will suffer).", self.name)
                return rendering, ((0, len(rendering)),)
            places.append((at, len(placeholder), number))
        parts, contents, length, last = [], [], 0, 0
        for at, size, number in sorted(places):
            content = messages[number]["content"]
            parts += [marked[last:at], content]
            length += at - last
            contents.append((length, length + len(content)))
            length += len(content)
            last = at + size
        parts.append(marked[last:])
        text = "".join(parts)
        if text != rendering:
            self._warn_once(
                "changed", "The chat template of %s changes some messages' contents; the "
                "prompt holds them as given.", self.name)
        return text, tuple(contents)

    def _markers(self, text: str, contents: Sequence[Span]) -> list[tuple[int, int, Marker]]:
        """Where the control tokens are: llama.cpp's partition, within the template's spans."""
        free = _complement(contents, len(text))
        template = "\0".join(text[s:e] for s, e in free)
        found = []
        for marker in self.vocabulary.markers:
            if marker.text not in template:
                continue
            rest = []
            for start, end in free:
                at = text.find(marker.text, start, end)
                while at >= 0:
                    found.append((at, at + len(marker.text), marker))
                    if at > start:
                        rest.append((start, at))
                    start = at + len(marker.text)
                    at = text.find(marker.text, start, end)
                if start < end:
                    rest.append((start, end))
            free = rest
        return sorted(found, key=lambda item: item[0])

    def _text(self, text: str, start: int, end: int, contents: Sequence[Span]) -> list[int]:
        """The tokens of ``text[start:end]`` as text, cut inside every special token's text
        that overlaps a content."""
        cuts = sorted(set(self._cuts(text, start, end, contents)))
        tokens: list[int] = []
        for left, right in zip([start, *cuts], [*cuts, end], strict=True):
            if left < right:
                tokens += self.vocabulary.tokenize(text[left:right].encode("utf-8"))
        return tokens

    def _cuts(self, text: str, start: int, end: int, contents: Sequence[Span]) -> Iterator[int]:
        longest = max((len(s) for s in self.vocabulary.special), default=0)
        for content_start, content_end in contents:
            low = max(start, content_start - longest + 1)
            high = min(end, content_end + longest - 1)
            if low >= high:
                continue
            for special in self.vocabulary.special:
                at = text.find(special, low, high)
                while at >= 0:
                    if at < content_end and at + len(special) > content_start:
                        yield at + 1
                    at = text.find(special, at + 1, high)

    def _warn_once(self, what: str, message: str, *args: object) -> None:
        if what not in self._warned:
            self._warned.add(what)
            log.warning(message, *args)


def _plain(message: Message, number: int) -> dict[str, str]:
    role, content = message.get("role"), message.get("content")
    if not isinstance(role, str) or not ROLE.fullmatch(role) or not isinstance(content, str):
        raise ModelError(f"Message {number} is not a role (a plain word) with text content.",
                         cause="bad_request")
    return {"role": role, "content": content}


def _complement(spans: Sequence[Span], length: int) -> list[Span]:
    free, position = [], 0
    for start, end in sorted(spans):
        if start > position:
            free.append((position, start))
        position = max(position, end)
    if position < length:
        free.append((position, length))
    return free


def _skip_space(text: str, start: int, end: int) -> int:
    while start < end and text[start] in C_SPACE:
        start += 1
    return start


def _back_over_space(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1] in C_SPACE:
        end -= 1
    return end
