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

The page's markup, style and script are files of ``_view_assets/`` (``page.html``, the pieces of
``parts.html``, ``view.css``, ``view.js``), filled in with :class:`string.Template` from values
escaped here.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import functools
import hashlib
import html
import json
import os
import re
import statistics
import string
from collections import Counter
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from .._persist import write_atomically
from .._version import __version__
from ..errors import ConfigError
from ..types import RunResult, Step, ToolResult
from ._display import is_question, safe
from ._redaction import MASK, SECRET_PATTERNS, Redactor
from ._view_entries import ViewEntry

MAX_CHARS = 20_000
"""The longest text shown whole on the page (a reply, an observation, arguments); a longer one
is cut there, with its size shown."""

_FOLD_CHARS, _FOLD_LINES = 600, 12  # an observation longer than this is collapsed
_MAX_STEPS = 2_000  # steps shown per run; more are counted, not shown
_ASSETS = "_view_assets"


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
    return _part("badge", kind=_STATUS_KIND.get(status, "bad"), text=_esc(status))


def _passed(passed: bool | None) -> str:
    if passed is None:
        return _part("plain_badge", text="no checks")
    return _part("badge", kind="ok", text="passed") if passed else \
        _part("badge", kind="bad", text="failed")


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
        sections = [self._index()] if self.index else []
        sections += [self._entry(n, e) for n, e in enumerate(self.entries)]
        body = "".join(f"{section}\n" for section in sections)  # a line of the source each
        if not self.entries:
            body = _part("no_entries")
        masked = []
        if self.redactor.keys:
            masked.append(f"the values of the arguments {', '.join(sorted(self.redactor.keys))}")
        if self.redactor.patterns:
            extra = len(set(self.redactor.patterns) - set(SECRET_PATTERNS))
            masked.append("API keys and tokens (sk-…, Bearer …)" +
                          (f" and {extra} pattern{'s' if extra > 1 else ''} of your own"
                           if extra else ""))
        notice = f"Masked as {MASK}: {' and '.join(masked)}. " if masked else ""
        return _template("page.html").substitute(
            policy=policy, version=_esc(__version__), title=_esc(_short(title, 120)), css=css,
            early_script=_EARLY_SCRIPT, sources=_esc(", ".join(sources) or "run view"),
            now=now, controls=_part("controls"), layout="many" if self.index else "single",
            body=body, notice=_esc(notice), data=self._data(), script=script,
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
        checks = ""
        if passed or failed:
            checks = (_part("badge", kind="ok", text=f"{passed} passed") + " "
                      + _part("badge", kind="bad", text=f"{failed} failed") + " ")
            if unscored:
                checks += _part("plain_badge", text=f"{unscored} without checks") + " "
        rows = []
        for n, (e, secs) in enumerate(zip(entries, seconds, strict=True)):
            last = e.runs[-1] if e.runs else None
            usage = [r.usage for r in e.runs]
            tokens_e = sum(u["prompt_tokens"] + u["completion_tokens"] for u in usage)
            task = _short(e.runs[0].task, 160) if e.runs else ""
            problem = "".join(_part("index_problem", text=_esc(_short(p, 200)))
                              for p in e.problems[:3])
            error = last.error if last is not None else e.error
            if error and e.outcome != "final_answer" and error not in e.problems:
                problem += _part("index_problem", text=_esc(_short(error, 200)))
            rows.append(_part(
                "index_row", n=n, label=_esc(_short(e.label, 80)), shape=_esc(e.shape or ""),
                status=_status(e.outcome), passed=_passed(e.passed),
                steps=sum(u["model_calls"] for u in usage),
                tools=sum(u["tool_calls"] for u in usage), tokens=f"{tokens_e:,}",
                seconds=_secs(secs), width=f"{100 * secs / longest:.1f}", task=_esc(task),
                problems=problem,
            ))
        return _part(
            "index", count=len(entries), kind=self._kind(), checks=checks,
            statuses=" · ".join(f"{_esc(s)} {n}" for s, n in statuses.most_common()),
            calls=f"{calls:,}", tokens=f"{tokens:,}", seconds=_secs(sum(seconds)),
            status_options="".join(_part("option", value=_esc(s)) for s in statuses),
            shape_hidden="" if shapes else " hidden",
            shape_options="".join(_part("option", value=_esc(s)) for s in shapes),
            rows="".join(rows),
        )

    # -- one entry: a run, or the turns of a conversation ------------------------------------
    def _entry(self, n: int, entry: ViewEntry) -> str:
        key = f"e{n}"
        turns = len(entry.runs)
        first = entry.runs[0] if entry.runs else None
        sub = [entry.label]
        if entry.shape:
            sub.append(f"shape {entry.shape}")
        if turns > 1:
            sub.append(f"a conversation of {turns} turns")
        if entry.started:
            sub.append(f"started {entry.started}")
        checks = ""
        if entry.passed is not None:
            problems = "".join(_part("problem", text=_esc(p)) for p in entry.problems)
            checks = _part("checks", passed=_passed(entry.passed),
                           problems=_part("problems", items=problems) if problems else "")
        no_run = "" if entry.runs else _part(
            "no_run", status=_status(entry.outcome),
            text=self._text(entry.error or "The record holds no run."))
        runs = []
        for t, result in enumerate(entry.runs):
            resumed = entry.resumed_steps[t] if t < len(entry.resumed_steps) else 0
            run = self._run(f"{key}t{t}", result, entry, resumed)
            if turns > 1:
                run = _part("turn", key=f"{key}t{t}", number=t + 1,
                            task=_esc(_short(result.task, 200)), run=run)
            runs.append(run)
        return _part(
            "entry", key=key, back=_part("back") if self.index else "",
            title=_esc(_short(first.task, 400) if first else entry.label),
            sub=_esc(" · ".join(sub)),
            whole_task=self._fold("The whole task", first.task, "more")
            if first is not None and len(first.task) > 400 else "",
            checks=checks, no_run=no_run, runs="".join(runs),
        )

    def _run(self, key: str, result: RunResult, entry: ViewEntry, resumed: int) -> str:
        u = result.usage
        status = _status(result.status)
        if result.best_effort:
            status += " " + _part("badge", kind="warn", text="best effort")
        wall_time = ""
        if entry.seconds is not None and len(entry.runs) == 1:
            wall_time = _part("wall_time", seconds=_secs(entry.seconds))
        if result.final_answer is not None:
            label = "Final answer (best effort)" if result.best_effort else "Final answer"
            answer = _part("answer", label=label, text=self._text(result.final_answer))
        else:
            answer = _part("no_answer", text=self._text(result.error or result.status))
        if result.has_output:
            answer += _part("answer", label="Output (the typed value)",
                            text=self._pre(_json(result.to_dict()["output"])))
        steps = result.steps[:_MAX_STEPS]
        if steps:
            shown = _part(
                "steps", timeline=self._timeline(key, steps),
                steps="".join(self._step(key, result, n, step) for n, step in enumerate(steps)),
                cut=_part("steps_cut", count=f"{len(result.steps) - len(steps):,}")
                if len(result.steps) > len(steps) else "",
            )
        else:
            shown = _part("no_steps")
        system = next((m["content"] for m in result.messages if m["role"] == "system"), None)
        prompt = ""
        if system and system in self.prompts:  # a batch: the same prompt for many tasks
            first, label = self.prompts[system]
            prompt = _part("same_system_prompt", size=_chars(len(system)), key=first,
                           label=_esc(_short(label, 80)))
        elif system:
            self.prompts[system] = (key, entry.label)
            prompt = _part("system_prompt", key=key, size=_chars(len(system)),
                           text=self._pre(system))
        return _part(
            "run", status=status, model=_esc(entry.model or "not recorded"),
            model_calls=u["model_calls"], tool_calls=u["tool_calls"],
            model_time=_secs(u["model_seconds"]), tool_time=_secs(u["tool_seconds"]),
            tokens=f"{u['prompt_tokens']:,} prompt + {u['completion_tokens']:,} completion",
            wall_time=wall_time,
            tools=_esc(", ".join(result.tools) if result.tools else "not recorded"),
            answer=answer,
            error=_part("run_error", text=self._text(result.error))
            if result.error and result.final_answer is not None else "",
            resumed=_part("resumed", steps=resumed) if resumed else "",
            steps=shown, system=prompt,
        )

    def _timeline(self, key: str, steps: list[Step]) -> str:
        totals = [s.model_seconds + sum(r.seconds for r in s.results) for s in steps]
        longest = max(totals, default=0.0) or 1.0
        median = statistics.median(totals) if totals else 0.0
        items = []
        for n, (step, total) in enumerate(zip(steps, totals, strict=True)):
            tools = sum(r.seconds for r in step.results)
            slow = total >= 1.0 and total >= 2 * median and len(steps) > 2
            classes = " ".join(c for c in (_problem_class(step), "slow" if slow else "") if c)
            what = _what(step, steps[n + 1] if n + 1 < len(steps) else None)
            items.append(_part(
                "timeline_step", classes=classes, key=key, index=step.index,
                title=_esc(f"model {_secs(step.model_seconds)}, tools {_secs(tools)}"),
                bad=" bad" if _problem_class(step) == "problem" else "",
                what=_esc(_short(what, 80)),
                model_width=f"{100 * step.model_seconds / longest:.2f}",
                tools_width=f"{100 * tools / longest:.2f}", seconds=_secs(total),
            ))
        return _part("timeline", items="".join(items))

    def _step(self, key: str, result: RunResult, n: int, step: Step) -> str:
        tools = sum(r.seconds for r in step.results)
        badges = []
        if step.origin:
            badges.append(_part("badge", kind="note", text=f"extra call: {_esc(step.origin)}"))
        if step.reply is None and not is_question(step):
            badges.append(_part("badge", kind="bad", text="unusable reply"))
        elif step.stage not in (None, "direct"):  # (a question has no reply to parse)
            badges.append(_part("badge", kind="warn", text=f"parser: {_esc(step.stage or '')}"))
        failed = [r for r in step.results if not r.ok]
        for r in failed:
            badges.append(_part("badge", kind="note" if r.skipped else "bad",
                                text=f"{_esc(r.call.name)}: {_esc(r.error or 'failed')}"))
        if step.finish_reason == "length":
            badges.append(_part("badge", kind="bad", text="cut by the token limit"))
        if not step.in_history:
            badges.append(_part("badge", kind="note", text="not kept in the history"))
        if step.notes:
            badges.append(_part("badge", kind="note", text=f"{len(step.notes)} policy "
                                f'note{"s" if len(step.notes) > 1 else ""}'))
        classes = " ".join(c for c in ("step", _problem_class(step),
                                       "extra" if step.origin else "") if c)
        fields = []
        if step.thought:
            fields.append(self._field("thought", "Thought",
                                      _part("text", text=self._text(step.thought))))
        if step.error:
            fields.append(self._field("parse-error", "Unusable reply",
                                      _part("error", text=self._text(step.error))))
        if step.reply is not None and (step.repairs or step.stage != "direct"):
            fields.append(self._field("parser", "Parser", _part(
                "parser", stage=_esc(step.stage or ""),
                repairs=_esc(", ".join(step.repairs) or "none"))))
        if step.tool_calls:
            label = "Actions" if len(step.tool_calls) > 1 else "Action"
            fields.append(self._field("action", label, "".join(
                self._call(call.name, call.args, step.results[i] if i < len(step.results)
                           else None) for i, call in enumerate(step.tool_calls))))
        if step.results:
            label = "Observations" if len(step.results) > 1 else "Observation"
            fields.append(self._field("observations", label,
                                      "".join(self._observation(r) for r in step.results)))
        elif step.tool_calls:
            fields.append(self._field("observations", "Observation", _part("no_result")))
        if step.final_answer is not None:
            fields.append(self._field("final", _answer_label(result, n, step),
                                      _part("text", text=self._text(step.final_answer))))
        if step.notes or step.records:
            fields.append(self._field("policies", "Policies", self._policies(step)))
        return _part(
            "step", classes=classes, key=key, index=step.index,
            what=_esc(_short(_what(step, _following(result, n)), 120)), badges="".join(badges),
            model_seconds=_secs(step.model_seconds),
            tool_seconds=f" · tools {_secs(tools)}" if step.results else "",
            fields="".join(fields),
            tokens=f"{_num(step.prompt_tokens)} prompt + {_num(step.completion_tokens)} "
                   "completion tokens",
            finish_reason=_esc(step.finish_reason or "unknown"),
            size=_chars(len(step.raw_output)), raw=self._pre(step.raw_output),
        )

    def _call(self, name: str, args: dict[str, Any], result: ToolResult | None) -> str:
        cleaned = ""
        if result is not None and (result.cleaning or (result.args and result.args != args)):
            cleaned = _part("cleaned", how=": " + _esc("; ".join(result.cleaning))
                            if result.cleaning else "", args=self._pre(_json(result.args)))
        return _part("call", name=_esc(name), args=self._pre(_json(args)), cleaned=cleaned)

    def _observation(self, r: ToolResult) -> str:
        state = "ok" if r.ok else (r.error or "failed")
        kind = "ok" if r.ok else "note" if r.skipped else "bad"
        text = r.observation
        lines = text.count("\n") + 1
        if len(text) > _FOLD_CHARS or lines > _FOLD_LINES:
            body = _part("long_observation", size=_chars(len(text)),
                         lines=f'{lines:,} line{"s" if lines > 1 else ""}',
                         preview=_esc(_short(" ".join(text.split()), 110)), text=self._pre(text))
        else:
            body = self._pre(text)
        return _part("observation", bad="bad" if kind == "bad" else "", name=_esc(r.call.name),
                     kind=kind, state=_esc(state), seconds=_secs(r.seconds), body=body)

    def _policies(self, step: Step) -> str:
        out = []
        if step.notes:
            out.append(_part("notes", items="".join(
                _part("note", label=_esc(label), policy=_esc(policy), text=self._text(text))
                for policy, label, text in step.notes)))
        for name, record in step.records.items():
            out.append(_part("record", name=_esc(name), text=_esc(_record(name, record))))
        return "".join(out)

    # -- pieces ---------------------------------------------------------------------------------
    def _field(self, kind: str, label: str, content: str) -> str:
        return _part("field", kind=kind, label=_esc(label), content=content)

    def _text(self, text: str) -> str:
        if len(text) <= self.max_chars:
            return _esc(text)
        return _esc(text[: self.max_chars]) + self._cut_note(len(text))

    def _pre(self, text: str) -> str:
        shown = text if len(text) <= self.max_chars else text[: self.max_chars]
        note = self._cut_note(len(text)) if len(text) > self.max_chars else ""
        return _part("pre", text=_esc(shown), cut=note)

    def _fold(self, summary: str, text: str, kind: str) -> str:
        return _part("fold", kind=kind, summary=_esc(summary), size=_chars(len(text)),
                     text=self._pre(text))

    def _cut_note(self, size: int) -> str:
        return _part("cut", shown=f"{self.max_chars:,}", size=_chars(size))


_EARLY_SCRIPT = 'document.documentElement.classList.add("js");'
"""Run before the body is read: with JavaScript, an index shows one run at a time from the start
(the other runs are never laid out)."""


def _digest(script: str) -> str:
    return base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()


def _asset(name: str) -> str:
    return resources.files(__package__ or "react_agent.harness").joinpath(
        f"{_ASSETS}/{name}").read_text(encoding="utf-8")


@functools.cache
def _template(name: str) -> string.Template:
    """An asset of the page as a template (``$name`` values, all given: a missing one is a
    KeyError)."""
    return string.Template(_asset(name))


_PART = re.compile(r"^<!-- part: (\w+) -->$", re.MULTILINE)


@functools.cache
def _parts() -> dict[str, string.Template]:
    """The pieces of ``parts.html`` by name: the lines after each ``<!-- part: NAME -->``
    joined with nothing, each without its leading indentation."""
    pieces = _PART.split(_asset("parts.html"))[1:]  # (the comment before the first part)
    return {name: string.Template("".join(line.lstrip() for line in body.splitlines()))
            for name, body in zip(pieces[::2], pieces[1::2], strict=True)}


def _part(part: str, /, **values: object) -> str:
    return _parts()[part].substitute(values)


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
    if is_question(step):
        return f"question ({step.origin}): {step.raw_output.strip()}"
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
    if (step.reply is None and not is_question(step)) or step.finish_reason == "length" or any(
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
    if not step.in_history:
        return "Answer set aside (a policy asked again)"
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
