"""An offline HTML view of runs: one self-contained file a browser opens from disk
(``react-agent view TRACE.jsonl``, ``react-agent run --html FILE``, :func:`write_view`).

The page makes no network request of any kind: its CSS and JavaScript are inline, its fonts are
the system's, and a Content-Security-Policy forbids everything else (connections, images,
frames, forms, any script but its own). It reads fully without JavaScript (``<details>``
collapse the bulky parts); with it, an index can be filtered and sorted and every part expanded
or collapsed at once.

A trace is untrusted input (model and tool output): every text is HTML-escaped (after the
characters a terminal would act on and the bidirectional controls are made visible, as
:func:`~react_agent.harness._display.safe` does), the data the script needs sits in a
``<script type="application/json">`` block with ``<``, ``>`` and ``&`` escaped and is read with
``JSON.parse`` and written only as text, and no link or attribute takes its value from the
trace. Very long texts are cut on the page with their size shown.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import hashlib
import html
import json
import os
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from .. import __version__
from .._persist import check_shape, read_json_lines, write_atomically
from ..errors import ConfigError
from ..types import RunResult, Step, ToolResult
from ._batch import BatchRecord
from ._display import safe
from ._trace import read_trace

SECRET_PATTERNS: tuple[str, ...] = (
    r"\bsk-[A-Za-z0-9_-]{16,}",  # OpenAI-style API keys (sk-..., sk-proj-..., sk-ant-...)
    r"(?i)(?<=\bbearer )[A-Za-z0-9._~+/=-]{8,}",  # the token of "Authorization: Bearer ..."
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",  # GitHub tokens
    r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key ids
    r"\bxox[abposr]-[A-Za-z0-9-]{10,}",  # Slack tokens
)
"""What is masked in every text of a view unless other ``patterns`` are given (regular
expressions; the whole match is replaced by ``[redacted]``)."""

MASK = "[redacted]"
"""What a masked value is replaced with."""

MAX_CHARS = 20_000
"""The longest text shown whole on the page (a reply, an observation, arguments); a longer one
is cut there, with its size shown."""

_FOLD_CHARS, _FOLD_LINES = 600, 12  # an observation longer than this is collapsed
_MAX_STEPS = 2_000  # steps shown per run; more are counted, not shown
_ASSETS = "_view_assets"


@dataclass
class ViewEntry:
    """One row of a view's index: a task of a results file (all its turns) or a run of a trace.

    Attributes:
        label: what the row is called (the task's id, or ``run 2`` of a trace).
        runs: the run, or each turn of a conversation, in order.
        model: the model's name, when the file recorded it.
        shape: the task's shape (a free label of the tasks file).
        passed: whether the task passed its checks (``None``: it has none).
        problems: what the checks found, in words.
        seconds: the task's wall time, when recorded.
        source: the file it was read from.
        started: when the run started (ISO 8601), when recorded.
        resumed_steps: for each run, how many of its first steps are those of the run it
            continued (``run --resume``).
        status: the record's status when it holds no run (``bad_task``, ``worker_lost``).
        error: the record's error when it holds no run.
    """

    label: str
    runs: list[RunResult]
    model: str | None = None
    shape: str | None = None
    passed: bool | None = None
    problems: list[str] = field(default_factory=list)
    seconds: float | None = None
    source: str | None = None
    started: str | None = None
    resumed_steps: list[int] = field(default_factory=list)
    status: str | None = None
    error: str | None = None

    @property
    def outcome(self) -> str:
        """The status of its last run (or of the record, when it holds none)."""
        return self.runs[-1].status if self.runs else self.status or "no run"


def load_view(*paths: str | os.PathLike[str]) -> list[ViewEntry]:
    """The entries of trace files (one per run) and results files of ``run --tasks`` (one per
    task), read with the package's bounded readers, in order.

    Raises:
        ConfigError: a file cannot be read or is neither a trace nor a results file (the
            message names the file, the line and the field at fault).
    """
    if not paths:
        raise ConfigError("Name at least one trace or results file to view.")
    entries: list[ViewEntry] = []
    for path in paths:
        lines = read_json_lines(path, "trace or results file", skip_broken="all")
        if not lines:
            raise ConfigError(f"{path} is empty: it holds no run to show.")
        first = next((r for _, r in lines if isinstance(r, dict)), None)
        if first is not None and first.get("type") == "run_start":
            entries += _trace_entries(path, lines)
        elif first is not None and "id" in first and "result" in first:
            entries += _results_entries(path, lines)
        else:
            raise ConfigError(f"{path} is neither a trace (run --trace) nor a results file "
                              "(run --tasks): its first record has neither type run_start "
                              "nor an id and a result.")
    return entries


def _trace_entries(path: str | os.PathLike[str], lines: list[tuple[int, Any]]
                   ) -> list[ViewEntry]:
    runs = read_trace(path)
    starts = [r for _, r in lines if isinstance(r, dict) and r.get("type") == "run_start"]
    name = Path(path).name
    entries = []
    for n, result in enumerate(runs):
        start = starts[n] if n < len(starts) else {}
        model, started = start.get("model"), start.get("time")
        resumed = start.get("resumed_steps")
        entries.append(ViewEntry(
            label=f"{name}: run {n + 1}" if len(runs) > 1 else name, runs=[result],
            model=model if isinstance(model, str) else None, source=name,
            started=started if isinstance(started, str) else None,
            resumed_steps=[resumed if isinstance(resumed, int) and resumed > 0 else 0],
        ))
    return entries


def _results_entries(path: str | os.PathLike[str], lines: list[tuple[int, Any]]
                     ) -> list[ViewEntry]:
    latest: dict[str, tuple[str, BatchRecord]] = {}  # a task run again: its last record
    for number, data in lines:
        where = f"{path}, line {number}"
        if not isinstance(data, dict) or "id" not in data:
            raise ConfigError(f"{where}: not a result record (an object with an id).")
        record = check_shape(BatchRecord, data, f"{where}: record")
        latest[str(record.id)] = (where, record)
    entries = []
    for where, record in latest.values():
        if record.turns:
            runs = [RunResult.from_dict(t.get("result"), f"{where}: turns[{k}].result")
                    for k, t in enumerate(record.turns)]
        elif record.result is None:  # a line that was not a task, a worker lost
            runs = []
        else:
            runs = [RunResult.from_dict(record.result, f"{where}: result")]
        entries.append(ViewEntry(
            label=str(record.id), runs=runs, shape=record.shape, passed=record.passed,
            problems=list(record.problems),
            seconds=record.seconds if "seconds" in record.model_fields_set else None,
            source=Path(path).name, status=record.status, error=record.error,
        ))
    return entries


class Redactor:
    """Masks secrets in a run before it is shown: the values of the arguments named in
    ``keys`` (case-insensitively, at any depth of a call's arguments), those values and
    ``"key": value`` / ``key=value`` pairs wherever they appear in a text (replies, observations,
    messages), and every match of ``patterns``.

    Raises:
        ConfigError: a pattern is not a valid regular expression.
    """

    def __init__(self, keys: Iterable[str] = (), patterns: Iterable[str] | None = None) -> None:
        if isinstance(keys, str):  # "password,token"
            keys = keys.split(",")
        self.keys = {k.strip().lower() for k in keys if k.strip()}
        self.patterns = list(SECRET_PATTERNS if patterns is None else patterns)
        try:
            self._compiled = [re.compile(p) for p in self.patterns]
        except re.error as exc:
            raise ConfigError(f"A redaction pattern is not a regular expression: {exc}") from exc
        self._pairs = None
        if self.keys:
            names = "|".join(re.escape(k) for k in sorted(self.keys, key=len, reverse=True))
            self._pairs = re.compile(
                r"""(?i)(["']?)\b(""" + names + r""")\b\1(\s*[:=]\s*)"""
                r"""("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[^\s"',;&}\]]+)""")

    @property
    def active(self) -> bool:
        return bool(self.keys or self.patterns)

    def run(self, result: RunResult) -> RunResult:
        """A copy of ``result`` with its secrets masked."""
        if not self.active:
            return result
        data = result.to_dict()
        values: set[str] = set()
        if self.keys:
            for step in data["steps"]:
                for call in [*step["tool_calls"], *step["results"]]:
                    for args in (call.get("args"), call.get("cleaned_args")):
                        self._collect(args, values, False)
        literals = sorted((v for v in values if len(v) >= 4), key=len, reverse=True)
        masked = self._walk(data, literals, False)
        return RunResult.from_dict(masked, "redacted run")

    def text(self, text: str, literals: Sequence[str] = ()) -> str:
        """``text`` with the secrets masked."""
        for value in literals:
            text = text.replace(value, MASK)
        if self._pairs is not None:
            text = self._pairs.sub(_mask_pair, text)
        for pattern in self._compiled:
            text = pattern.sub(MASK, text)
        return text

    def _collect(self, value: Any, found: set[str], named: bool) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                self._collect(item, found, named or str(key).lower() in self.keys)
        elif isinstance(value, list):
            for item in value:
                self._collect(item, found, named)
        elif named and value is not None and not isinstance(value, bool):
            found.add(str(value))

    def _walk(self, value: Any, literals: Sequence[str], in_args: bool) -> Any:
        if isinstance(value, str):
            return self.text(value, literals)
        if isinstance(value, list):
            return [self._walk(v, literals, in_args) for v in value]
        if isinstance(value, dict):
            return {
                k: MASK if in_args and str(k).lower() in self.keys
                else self._walk(v, literals, in_args or k in ("args", "cleaned_args"))
                for k, v in value.items()
            }
        return value


def _mask_pair(match: re.Match[str]) -> str:
    value = match.group(4)
    quote = value[0] if value[:1] in ("'", '"') else ""
    return f"{match.group(1)}{match.group(2)}{match.group(1)}{match.group(3)}{quote}{MASK}{quote}"


def render_view(
    items: RunResult | ViewEntry | Iterable[RunResult | ViewEntry],
    *,
    title: str | None = None,
    redact: Iterable[str] = (),
    patterns: Iterable[str] | None = None,
    max_chars: int = MAX_CHARS,
) -> str:
    """The HTML page of runs: one run as its own page; several as an index (one row per entry,
    filterable) followed by each run.

    Args:
        items: a run, an entry of :func:`load_view`, or several.
        title: the page's title (default: the task, or how many tasks).
        redact: argument names whose values are masked (see :class:`Redactor`).
        patterns: regular expressions masked in every text; ``None``: :data:`SECRET_PATTERNS`
            (pass ``()`` to mask none).
        max_chars: the longest text shown whole; longer ones are cut with their size shown.

    Raises:
        ConfigError: a pattern is not a valid regular expression.
    """
    if isinstance(items, (RunResult, ViewEntry)):
        items = [items]
    entries = [i if isinstance(i, ViewEntry) else ViewEntry(label=f"run {n}", runs=[i])
               for n, i in enumerate(items, 1)]
    redactor = Redactor(redact, patterns)
    entries = [dataclasses.replace(e, runs=[redactor.run(r) for r in e.runs],
                                   label=redactor.text(e.label),
                                   problems=[redactor.text(p) for p in e.problems],
                                   error=e.error and redactor.text(e.error))
               for e in entries]
    return _Page(entries, max(200, max_chars), redactor).render(title)


def write_view(
    path: str | os.PathLike[str],
    items: RunResult | ViewEntry | Iterable[RunResult | ViewEntry],
    **options: Any,
) -> Path:
    """Write :func:`render_view` of ``items`` (with ``options``) to ``path`` atomically;
    returns the path.

    Raises:
        ConfigError: the file cannot be written, or an option is invalid.
    """
    target = Path(path)
    page = render_view(items, **options)
    try:
        write_atomically(target, page)
    except OSError as exc:
        raise ConfigError(f"Cannot write the view {target}: {exc.strerror or exc}") from exc
    return target


# -- the page -----------------------------------------------------------------------------------
def _esc(text: str) -> str:
    return html.escape(safe(text.replace("\r\n", "\n")), quote=True)


def _chars(n: int) -> str:
    return f"{n:,} character{'' if n == 1 else 's'}"


def _secs(x: float) -> str:
    return f"{x:.2f} s" if x < 10 else f"{x:.1f} s"


_STATUS_KIND = {"final_answer": "ok", "max_steps": "warn", "interrupted": "warn"}


def _status(status: str) -> str:
    return f'<span class="badge {_STATUS_KIND.get(status, "bad")}">{_esc(status)}</span>'


def _passed(passed: bool | None) -> str:
    if passed is None:
        return '<span class="badge">no checks</span>'
    return '<span class="badge ok">passed</span>' if passed else \
        '<span class="badge bad">failed</span>'


class _Page:
    def __init__(self, entries: list[ViewEntry], max_chars: int, redactor: Redactor) -> None:
        self.entries, self.max_chars, self.redactor = entries, max_chars, redactor
        self.index = len(entries) > 1
        self.prompts: dict[str, tuple[str, str]] = {}  # system prompts shown, and where

    # -- the whole page ------------------------------------------------------------------------
    def render(self, title: str | None) -> str:
        if title is None:
            title = (f"{len(self.entries)} {self._kind()}s" if self.index else
                     self.entries[0].runs[-1].task if self.entries and self.entries[0].runs
                     else "no run")
        css = _asset("view.css")
        script = _asset("view.js")
        hashes = " ".join(f"'sha256-{_digest(s)}'" for s in (_EARLY_SCRIPT, script))
        policy = ("default-src 'none'; style-src 'unsafe-inline'; "
                  f"script-src {hashes}; img-src 'none'; font-src 'none'; "
                  "connect-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; "
                  "worker-src 'none'; manifest-src 'none'; form-action 'none'; base-uri 'none'")
        sources = sorted({e.source for e in self.entries if e.source})
        now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        body = self._index() if self.index else ""
        body += "".join(self._entry(n, e) for n, e in enumerate(self.entries))
        if not self.entries:
            body = '<p class="empty">The file holds no run.</p>'
        masked = []
        if self.redactor.keys:
            masked.append(f"the values of the arguments {', '.join(sorted(self.redactor.keys))}")
        if self.redactor.patterns:
            extra = len(set(self.redactor.patterns) - set(SECRET_PATTERNS))
            masked.append("API keys and tokens (sk-…, Bearer …)" +
                          (f" and {extra} pattern{'s' if extra > 1 else ''} of your own"
                           if extra else ""))
        notice = f"Masked as {MASK}: {' and '.join(masked)}. " if masked else ""
        controls = (
            '<span class="controls" data-js hidden>'
            '<button type="button" data-act="expand">Expand all</button>'
            '<button type="button" data-act="collapse">Collapse all</button>'
            '<label class="check"><input type="checkbox" id="only-problems"> only steps with '
            'problems or policy notes</label></span>'
        )
        return (
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
            '<meta name="referrer" content="no-referrer">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta name="generator" content="react-agent {_esc(__version__)}">\n'
            f"<title>{_esc(_short(title, 120))} · react-agent</title>\n"
            f"<style>\n{css}</style>\n<script>{_EARLY_SCRIPT}</script>\n</head>\n<body>\n"
            '<header class="top"><span class="brand">react-agent</span>'
            f'<span class="src">{_esc(", ".join(sources) or "run view")} · made {now}</span>'
            f'{controls}</header>\n<main class="{"many" if self.index else "single"}">\n'
            f"{body}</main>\n<footer>{_esc(notice)}Made by react-agent {_esc(__version__)}. "
            "What the model and the tools wrote is shown as text, never run.</footer>\n"
            f'<script type="application/json" id="view-data">{self._data()}</script>\n'
            f"<script>{script}</script>\n</body>\n</html>\n"
        )

    def _data(self) -> str:
        rows = []
        for e in self.entries:
            last = e.runs[-1] if e.runs else None
            usage = [r.usage for r in e.runs]
            tokens = sum(u["prompt_tokens"] + u["completion_tokens"] for u in usage)
            search = " ".join(
                [e.label, e.shape or "", *(r.task[:500] for r in e.runs),
                 (last.final_answer or "")[:500] if last else "", e.outcome,
                 *(p[:300] for p in e.problems)])
            rows.append({
                "label": e.label, "status": e.outcome, "passed": e.passed,
                "shape": e.shape, "steps": sum(u["model_calls"] for u in usage),
                "tools": sum(u["tool_calls"] for u in usage), "tokens": tokens,
                "seconds": e.seconds if e.seconds is not None else _run_seconds(e.runs),
                "search": safe(search).lower(),
            })
        data = {"mode": "index" if self.index else "run", "entries": rows}
        text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
        return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")

    # -- the index -----------------------------------------------------------------------------
    def _kind(self) -> str:
        results = any(e.passed is not None or e.shape or e.status or e.seconds is not None
                      for e in self.entries)
        return "task" if results else "run"

    def _index(self) -> str:
        entries = self.entries
        statuses = Counter(e.outcome for e in entries)
        shapes = sorted({e.shape for e in entries if e.shape})
        passed = sum(e.passed is True for e in entries)
        failed = sum(e.passed is False for e in entries)
        unscored = len(entries) - passed - failed
        seconds = [e.seconds if e.seconds is not None else _run_seconds(e.runs) for e in entries]
        longest = max(seconds, default=0.0) or 1.0
        calls = sum(r.usage["model_calls"] for e in entries for r in e.runs)
        tokens = sum(r.usage["prompt_tokens"] + r.usage["completion_tokens"]
                     for e in entries for r in e.runs)
        out = [f'<section class="index" id="index"><h1>{len(entries)} {self._kind()}s</h1>',
               '<p class="sub">']
        if passed or failed:
            out.append(f'<span class="badge ok">{passed} passed</span> '
                       f'<span class="badge bad">{failed} failed</span> ')
            if unscored:
                out.append(f'<span class="badge">{unscored} without checks</span> ')
        out.append(" · ".join(f"{_esc(s)} {n}" for s, n in statuses.most_common()))
        out.append(f" · {calls:,} model calls · {tokens:,} tokens · {_secs(sum(seconds))}</p>")
        options = "".join(f'<option value="{_esc(s)}">{_esc(s)}</option>' for s in statuses)
        shape_options = "".join(f'<option value="{_esc(s)}">{_esc(s)}</option>' for s in shapes)
        out.append(
            '<div class="filters" data-js hidden>'
            '<input type="search" id="f-text" placeholder="Filter: id, task, answer, status…" '
            'aria-label="Filter the runs">'
            f'<select id="f-status" aria-label="Status"><option value="">any status</option>'
            f"{options}</select>"
            '<select id="f-passed" aria-label="Checks"><option value="">any checks</option>'
            '<option value="true">passed</option><option value="false">failed</option>'
            '<option value="null">no checks</option></select>'
            f'<select id="f-shape" aria-label="Shape"{"" if shapes else " hidden"}>'
            f'<option value="">any shape</option>{shape_options}</select>'
            '<span class="count" id="f-count"></span></div>'
        )
        out.append(
            '<table class="runs"><thead><tr><th data-sort="label">id</th>'
            '<th data-sort="shape">shape</th><th data-sort="status">status</th>'
            '<th data-sort="passed">checks</th><th data-sort="steps">steps</th>'
            '<th data-sort="tools">tool calls</th><th data-sort="tokens">tokens</th>'
            '<th data-sort="seconds">seconds</th><th>task</th></tr></thead><tbody>'
        )
        for n, (e, secs) in enumerate(zip(entries, seconds, strict=True)):
            last = e.runs[-1] if e.runs else None
            usage = [r.usage for r in e.runs]
            tokens_e = sum(u["prompt_tokens"] + u["completion_tokens"] for u in usage)
            task = _short(e.runs[0].task, 160) if e.runs else ""
            problem = "".join(f'<span class="problem">{_esc(_short(p, 200))}</span>'
                              for p in e.problems[:3])
            error = last.error if last is not None else e.error
            if error and e.outcome != "final_answer" and error not in e.problems:
                problem += f'<span class="problem">{_esc(_short(error, 200))}</span>'
            width = 100 * secs / longest
            out.append(
                f'<tr data-i="{n}"><td><a href="#e{n}">{_esc(_short(e.label, 80))}</a></td>'
                f"<td>{_esc(e.shape or '')}</td>"
                f"<td>{_status(e.outcome)}</td><td>{_passed(e.passed)}</td>"
                f'<td class="num">{sum(u["model_calls"] for u in usage)}</td>'
                f'<td class="num">{sum(u["tool_calls"] for u in usage)}</td>'
                f'<td class="num">{tokens_e:,}</td>'
                f'<td class="num">{_secs(secs)}<span class="mini" style="width:{width:.1f}%">'
                "</span></td>"
                f'<td class="task">{_esc(task)}{problem}</td></tr>'
            )
        out.append("</tbody></table></section>\n")
        return "".join(out)

    # -- one entry: a run, or the turns of a conversation ------------------------------------
    def _entry(self, n: int, entry: ViewEntry) -> str:
        key = f"e{n}"
        out = [f'<section class="run" id="{key}">']
        if self.index:
            out.append('<nav class="back"><a href="#index">← all runs</a></nav>')
        turns = len(entry.runs)
        first = entry.runs[0] if entry.runs else None
        out.append(f"<h1>{_esc(_short(first.task, 400) if first else entry.label)}</h1>")
        sub = [entry.label]
        if entry.shape:
            sub.append(f"shape {entry.shape}")
        if turns > 1:
            sub.append(f"a conversation of {turns} turns")
        if entry.started:
            sub.append(f"started {entry.started}")
        out.append(f'<p class="sub">{_esc(" · ".join(sub))}</p>')
        if first is not None and len(first.task) > 400:
            out.append(self._fold("The whole task", first.task, "more"))
        if entry.passed is not None:
            problems = "".join(f"<li>{_esc(p)}</li>" for p in entry.problems)
            out.append(f'<p>Checks: {_passed(entry.passed)}</p>'
                       + (f'<ul class="problems">{problems}</ul>' if problems else ""))
        if not entry.runs:
            out.append(f'<p>Status: {_status(entry.outcome)}</p><div class="answer none">'
                       '<div class="label">No run</div><div class="text">'
                       f"{self._text(entry.error or 'The record holds no run.')}</div></div>")
        for t, result in enumerate(entry.runs):
            resumed = entry.resumed_steps[t] if t < len(entry.resumed_steps) else 0
            if turns > 1:
                out.append(f'<article class="turn" id="{key}t{t}"><h2>Turn {t + 1}: '
                           f"{_esc(_short(result.task, 200))}</h2>")
            out.append(self._run(f"{key}t{t}", result, entry, resumed))
            if turns > 1:
                out.append("</article>")
        out.append("</section>\n")
        return "".join(out)

    def _run(self, key: str, result: RunResult, entry: ViewEntry, resumed: int) -> str:
        u = result.usage
        facts = [
            ("Status", _status(result.status)
             + (' <span class="badge warn">best effort</span>' if result.best_effort else "")),
            ("Model", _esc(entry.model or "not recorded")),
            ("Model calls", f"{u['model_calls']}"),
            ("Tool calls", f"{u['tool_calls']}"),
            ("Model time", _secs(u["model_seconds"])),
            ("Tool time", _secs(u["tool_seconds"])),
            ("Tokens", f"{u['prompt_tokens']:,} prompt + {u['completion_tokens']:,} completion"),
        ]
        if entry.seconds is not None and len(entry.runs) == 1:
            facts.append(("Wall time", _secs(entry.seconds)))
        tools = ", ".join(result.tools) if result.tools else "not recorded"
        out = ['<dl class="facts">']
        two = ' class="two"'
        out += [f'<div{two if k in ("Tokens", "Model") else ""}><dt>{k}</dt><dd>{v}</dd></div>'
                for k, v in facts]
        out.append(f'<div class="wide"><dt>Tools shown</dt><dd>{_esc(tools)}</dd></div></dl>')
        if result.final_answer is not None:
            label = "Final answer (best effort)" if result.best_effort else "Final answer"
            out.append(f'<div class="answer"><div class="label">{label}</div>'
                       f'<div class="text">{self._text(result.final_answer)}</div></div>')
        else:
            out.append('<div class="answer none"><div class="label">No final answer</div>'
                       f'<div class="text">{self._text(result.error or result.status)}</div>'
                       "</div>")
        if result.error and result.final_answer is not None:
            out.append(f'<div class="err">{self._text(result.error)}</div>')
        if resumed:
            out.append(f'<p class="notice">This run continued a saved run: its steps 1 to '
                       f"{resumed} are those of the run it continued.</p>")
        steps = result.steps[:_MAX_STEPS]
        if steps:
            out.append(self._timeline(key, steps))
            out.append("<h2>Steps</h2>")
            out += [self._step(key, result, n, step) for n, step in enumerate(steps)]
            if len(result.steps) > len(steps):
                out.append(f'<p class="cut">{len(result.steps) - len(steps):,} more steps are '
                           "not shown.</p>")
        else:
            out.append('<p class="empty">No model call was made.</p>')
        system = next((m["content"] for m in result.messages if m["role"] == "system"), None)
        if system and system in self.prompts:  # a batch: the same prompt for many tasks
            first, label = self.prompts[system]
            out.append(f'<p class="meta">System prompt ({_chars(len(system))}): the same as '
                       f'<a href="#{first}-system">{_esc(_short(label, 80))}</a>\'s.</p>')
        elif system:
            self.prompts[system] = (key, entry.label)
            out.append(f'<details class="more" id="{key}-system"><summary>System prompt '
                       f"({_chars(len(system))})</summary>{self._pre(system)}</details>")
        return "".join(out)

    def _timeline(self, key: str, steps: list[Step]) -> str:
        totals = [s.model_seconds + sum(r.seconds for r in s.results) for s in steps]
        longest = max(totals, default=0.0) or 1.0
        median = statistics.median(totals) if totals else 0.0
        out = ['<h2>Timeline</h2><ol class="timeline">']
        for n, (step, total) in enumerate(zip(steps, totals, strict=True)):
            tools = sum(r.seconds for r in step.results)
            slow = total >= 1.0 and total >= 2 * median and len(steps) > 2
            classes = " ".join(c for c in (_problem_class(step), "slow" if slow else "") if c)
            what = _what(step, steps[n + 1] if n + 1 < len(steps) else None)
            bad = " bad" if _problem_class(step) == "problem" else ""
            title = f"model {_secs(step.model_seconds)}, tools {_secs(tools)}"
            out.append(
                f'<li class="{classes}"><a href="#{key}s{step.index}" title="{_esc(title)}">'
                f'<span class="n">step {step.index}</span>'
                f'<span class="what{bad}">{_esc(_short(what, 80))}</span>'
                f'<span class="bar"><span class="m" style="width:'
                f'{100 * step.model_seconds / longest:.2f}%"></span><span class="t" '
                f'style="width:{100 * tools / longest:.2f}%"></span></span>'
                f'<span class="secs">{_secs(total)}</span></a></li>'
            )
        out.append('</ol><div class="legend"><i class="m"></i>model<i class="t"></i>tools'
                   " (bars to scale: the longest step fills the row)</div>")
        return "".join(out)

    def _step(self, key: str, result: RunResult, n: int, step: Step) -> str:
        tools = sum(r.seconds for r in step.results)
        badges = []
        if step.origin:
            badges.append(f'<span class="badge note">extra call: {_esc(step.origin)}</span>')
        if step.reply is None:
            badges.append('<span class="badge bad">unusable reply</span>')
        elif step.stage != "direct":
            badges.append(f'<span class="badge warn">parser: {_esc(step.stage or "")}</span>')
        failed = [r for r in step.results if not r.ok]
        for r in failed:
            badges.append(f'<span class="badge {"note" if r.skipped else "bad"}">'
                          f"{_esc(r.call.name)}: {_esc(r.error or 'failed')}</span>")
        if step.finish_reason == "length":
            badges.append('<span class="badge bad">cut by the token limit</span>')
        if not step.in_history:
            badges.append('<span class="badge note">not kept in the history</span>')
        if step.notes:
            badges.append(f'<span class="badge note">{len(step.notes)} policy '
                          f'note{"s" if len(step.notes) > 1 else ""}</span>')
        classes = " ".join(c for c in ("step", _problem_class(step),
                                       "extra" if step.origin else "") if c)
        out = [f'<details class="{classes}" id="{key}s{step.index}" open><summary>'
               f'<span class="n">Step {step.index}</span>'
               f'<span class="act">{_esc(_short(_what(step, _following(result, n)), 120))}'
               f'</span>{"".join(badges)}'
               f'<span class="secs">model {_secs(step.model_seconds)}'
               f'{f" · tools {_secs(tools)}" if step.results else ""}</span></summary>'
               '<div class="body">']
        if step.thought:
            out.append(self._field("thought", "Thought", f'<div class="text">'
                                   f"{self._text(step.thought)}</div>"))
        if step.error:
            out.append(self._field("parse-error", "Unusable reply",
                                   f'<div class="err">{self._text(step.error)}</div>'))
        if step.reply is not None and (step.repairs or step.stage != "direct"):
            repairs = ", ".join(step.repairs) or "none"
            out.append(self._field("parser", "Parser", f'<div class="text">read at stage '
                                   f"<b>{_esc(step.stage or '')}</b>; repairs: "
                                   f"{_esc(repairs)}</div>"))
        if step.tool_calls:
            label = "Actions" if len(step.tool_calls) > 1 else "Action"
            out.append(self._field("action", label, "".join(
                self._call(call.name, call.args, step.results[i] if i < len(step.results)
                           else None) for i, call in enumerate(step.tool_calls))))
        if step.results:
            label = "Observations" if len(step.results) > 1 else "Observation"
            out.append(self._field("observations", label,
                                   "".join(self._observation(r) for r in step.results)))
        elif step.tool_calls:
            out.append(self._field("observations", "Observation",
                                   '<p class="empty">No result: the run stopped first.</p>'))
        if step.final_answer is not None:
            out.append(self._field("final", _answer_label(result, n, step),
                                   f'<div class="text">{self._text(step.final_answer)}</div>'))
        if step.notes or step.records:
            out.append(self._field("policies", "Policies", self._policies(step)))
        tokens = (f"{_num(step.prompt_tokens)} prompt + {_num(step.completion_tokens)} "
                  "completion tokens")
        out.append(f'<div class="meta">{tokens} · finish reason '
                   f"{_esc(step.finish_reason or 'unknown')} · model "
                   f"{_secs(step.model_seconds)}</div>")
        out.append(f'<details class="raw"><summary>Raw reply ({_chars(len(step.raw_output))})'
                   f"</summary>{self._pre(step.raw_output)}</details>")
        out.append("</div></details>")
        return "".join(out)

    def _call(self, name: str, args: dict[str, Any], result: ToolResult | None) -> str:
        out = [f'<div class="call"><code class="name">{_esc(name)}</code>'
               f"{self._pre(_json(args))}"]
        if result is not None and (result.cleaning or (result.args and result.args != args)):
            out.append(f'<div class="ran">Ran with the arguments cleaned'
                       f'{": " + _esc("; ".join(result.cleaning)) if result.cleaning else ""}'
                       f"</div>{self._pre(_json(result.args))}")
        out.append("</div>")
        return "".join(out)

    def _observation(self, r: ToolResult) -> str:
        state = "ok" if r.ok else (r.error or "failed")
        kind = "ok" if r.ok else "note" if r.skipped else "bad"
        head = (f'<div class="meta"><code>{_esc(r.call.name)}</code> '
                f'<span class="badge {kind}">{_esc(state)}</span> {_secs(r.seconds)}</div>')
        text = r.observation
        lines = text.count("\n") + 1
        if len(text) > _FOLD_CHARS or lines > _FOLD_LINES:
            preview = _short(" ".join(text.split()), 110)
            body = (f'<details class="long"><summary>{_chars(len(text))}, '
                    f'{lines:,} line{"s" if lines > 1 else ""}: <span class="preview">'
                    f"{_esc(preview)}</span></summary>{self._pre(text)}</details>")
        else:
            body = self._pre(text)
        return f'<div class="obs {"bad" if kind == "bad" else ""}">{head}{body}</div>'

    def _policies(self, step: Step) -> str:
        out = []
        if step.notes:
            out.append("<ul>" + "".join(
                f"<li><b>{_esc(label)}</b> ({_esc(policy)}): {self._text(text)}</li>"
                for policy, label, text in step.notes) + "</ul>")
        for name, record in step.records.items():
            out.append(f'<div class="meta">{_esc(name)}: {_esc(_record(name, record))}</div>')
        return "".join(out)

    # -- pieces ---------------------------------------------------------------------------------
    def _field(self, kind: str, label: str, content: str) -> str:
        return f'<div class="field {kind}"><div class="label">{_esc(label)}</div>{content}</div>'

    def _text(self, text: str) -> str:
        if len(text) <= self.max_chars:
            return _esc(text)
        return _esc(text[: self.max_chars]) + self._cut_note(len(text))

    def _pre(self, text: str) -> str:
        shown = text if len(text) <= self.max_chars else text[: self.max_chars]
        note = self._cut_note(len(text)) if len(text) > self.max_chars else ""
        return f"<pre>{_esc(shown)}</pre>{note}"

    def _fold(self, summary: str, text: str, kind: str) -> str:
        return (f'<details class="{kind}"><summary>{_esc(summary)} ({_chars(len(text))})'
                f"</summary>{self._pre(text)}</details>")

    def _cut_note(self, size: int) -> str:
        return (f'<p class="cut">Cut here: the page shows the first {self.max_chars:,} of '
                f"{_chars(size)}.</p>")


_EARLY_SCRIPT = 'document.documentElement.classList.add("js");'
"""Run before the body is read: with JavaScript, an index shows one run at a time from the start
(the other runs are never laid out)."""


def _digest(script: str) -> str:
    return base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()


def _asset(name: str) -> str:
    return resources.files(__package__ or "react_agent.harness").joinpath(
        f"{_ASSETS}/{name}").read_text(encoding="utf-8")


def _short(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _num(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, default=repr)


def _run_seconds(runs: list[RunResult]) -> float:
    return float(sum(r.usage["model_seconds"] + r.usage["tool_seconds"] for r in runs))


def _what(step: Step, following: Step | None) -> str:
    """The step in a few words: its calls, its answer (a draft when the review asked again in
    the ``following`` step, as :func:`_answer_label` says), or that it was unusable."""
    if step.reply is None:
        return "unusable reply"
    if step.tool_calls:
        return ", ".join(c.name for c in step.tool_calls)
    if step.final_answer is not None:
        prefix = {"review": "reviewed answer", "best_effort": "best-effort answer"}.get(
            step.origin or "", "draft answer" if _is_draft(step, following) else "final answer")
        return f"{prefix}: {step.final_answer}"
    return step.origin or "no action"


def _following(result: RunResult, n: int) -> Step | None:
    return result.steps[n + 1] if n + 1 < len(result.steps) else None


def _is_draft(step: Step, following: Step | None) -> bool:
    """A final answer the review then asked for again (it is not the run's answer)."""
    return step.origin is None and following is not None and following.origin == "review"


def _problem_class(step: Step) -> str:
    if step.reply is None or step.finish_reason == "length" or any(
            not r.ok and not r.skipped for r in step.results):
        return "problem"
    return "noted" if step.notes or step.origin or not step.in_history else ""


def _answer_label(result: RunResult, n: int, step: Step) -> str:
    if step.origin == "review":
        return "Final answer (asked again by the review)"
    if step.origin == "best_effort":
        return "Best-effort answer (asked for after the last step)"
    if _is_draft(step, _following(result, n)):
        return "Draft answer (the review asked again)"
    return "Final answer"


def _record(name: str, record: Any) -> str:
    """What a policy recorded on a step, in words where the policy is known."""
    if name == "answer_floor" and isinstance(record, dict):
        p = record.get("probability")
        shown = f"{p:.2f}" if isinstance(p, (int, float)) and 0 <= p <= 1 else "?"
        return (f"the model rated the final answer {shown} likely; "
                f"{'taken' if record.get('taken') else 'not taken'}")
    if name == "review" and isinstance(record, dict) \
            and isinstance(record.get("reasons", []), list):
        reasons = record.get("reasons") or []
        return "asked again because " + "; ".join(map(str, reasons)) if reasons else \
            "asked again"
    if name == "held_calls" and isinstance(record, list):
        return "held back: " + "; ".join(
            f"{c.get('name')} {json.dumps(c.get('args'), ensure_ascii=False, default=repr)}"
            if isinstance(c, dict) else str(c) for c in record)
    if name == "repeat" and record is True:
        return "a repeat of earlier calls, set aside (not run, not sent)"
    text = json.dumps(record, ensure_ascii=False, default=repr)
    return text if len(text) <= 2000 else text[:2000] + f"… ({_chars(len(text))})"
