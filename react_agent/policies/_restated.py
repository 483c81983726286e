"""Values a draft final answer restates wrongly from a tool result: a time, a date, a signed
number, a quantity with its unit.

Small models restate a value in their own words and get it wrong on the way: a tool's
``02:22:24+09:00`` becomes "2:22 PM", ``2024-05-12`` becomes "December 5", ``-2.8`` loses its
minus, ``22°C`` becomes "22°F". :func:`read_told` reads what the tools returned and the user
said; :func:`misstated` finds the draft's values that match one of them in everything but the
hour's half of the day, the order or one field of a date, the sign, or the unit. A value
stated right somewhere (in any format), a value of the user's, a value the draft worked out
(a sum, a date some days on) and a rounded value are not faulted: a false alarm costs a model
call and can make a right answer worse, so each rule asks for a close match before it speaks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ..types import ToolResult
from ._values import RELATIVE, Date, Number, Time, keyed_numbers, read_values

MAX_FOUND = 5
"""At most this many values restated wrongly are reported for one draft."""


@dataclass(frozen=True)
class Misstated:
    """A value the draft restates wrongly.

    Attributes:
        kind: ``"time"``, ``"date"``, ``"sign"`` or ``"unit"``.
        stated: the draft's text of the value.
        returned: the result's text of the value it restates (a JSON key and its value for a
            unit a key names: ``temperature_c 14.6``).
        tool: the tool that returned it.
    """

    kind: str
    stated: str
    returned: str
    tool: str

    @property
    def reason(self) -> str:
        """Words that follow "the draft answer ...": ``states 2:22 PM where get_time returned
        2026-12-04T02:22:24+09:00``."""
        return f"states {self.stated} where {self.tool} returned {self.returned}"

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "stated": self.stated, "returned": self.returned,
                "tool": self.tool}


# -- what the run was told ------------------------------------------------------------------------
@dataclass
class Told:
    """The times, dates and numbers the tools returned (by tool) and the user said (tool
    ``None``), and the user's words of days to come or gone ("tomorrow", "十天后")."""

    times: dict[int, list[tuple[Time, str | None]]] = field(default_factory=dict)  # by minute
    dates: list[tuple[Date, str | None]] = field(default_factory=list)
    numbers: dict[Decimal, list[tuple[Number, str | None]]] = field(default_factory=dict)
    relative: bool = False
    _seen: set[tuple[Any, ...]] = field(default_factory=set, repr=False)

    def add(self, text: str, tool: str | None) -> None:
        """Read ``text``, said by the user (``tool`` ``None``) or returned by ``tool``; a value
        already held from the same source is kept once (its first text)."""
        found = read_values(text, exact=tool is not None)
        seen = self._seen
        for t in found.times:
            if _new(seen, ("t", t.hours, t.minute, t.second, tool)):
                self.times.setdefault(t.minute, []).append((t, tool))
        for d in found.dates:
            if _new(seen, ("d", d.readings, tool)):
                self.dates.append((d, tool))
        for n in [*found.numbers, *(keyed_numbers(text) if tool is not None else ())]:
            if _new(seen, ("n", n.value, n.sign == "-", n.dim, n.units, tool)):
                self.numbers.setdefault(n.value, []).append((n, tool))


def _new(seen: set[tuple[Any, ...]], key: tuple[Any, ...]) -> bool:
    """Whether ``key`` is not in ``seen`` yet (it is afterwards)."""
    if key in seen:
        return False
    seen.add(key)
    return True


def read_told(results: list[ToolResult], user: list[str]) -> Told:
    """What the successful ``results`` returned and the ``user``'s messages said, read for
    :func:`misstated`. Each text is read once, in time linear in its length."""
    told = Told(relative=any(RELATIVE.search(text) for text in user))
    for text in user:
        told.add(text, None)
    for r in results:
        if r.ok:
            told.add(r.observation, r.call.name)
    return told


def misstated(answer: str, told: Told) -> list[Misstated]:
    """The values of the draft ``answer`` that restate a value of a tool result wrongly (at
    most :data:`MAX_FOUND`), each against the result it restates:

    - *time*: the draft's time has the minutes (and seconds) of a returned time and its hour
      in the other half of the day (``02:22`` as "2:22 PM" or "下午2点22分"; ``14:05`` as
      "02:05"), and no returned time or the user's matches it;
    - *date*: the draft's date is a returned date with the month and the day swapped
      (``2024-05-12`` as "December 5"), or with one of year, month or day changed when neither
      the user nor the draft speaks of days to come or gone ("tomorrow", "十天后"); a date
      written ambiguously (``12/04/2026``) is right when either reading is;
    - *sign*: the draft states a number a result returned with the other sign: ``-2.8`` as
      "2.8" (no word of less or lower beside it: "down 3.12%", "2.8 below zero", "低4.3度"
      state the sign; no arithmetic on it: "16.9 + 6.4 = 23.3"), or ``3`` as "-3" or "零下3度";
    - *unit*: the draft states a number a result returned with a unit of the same kind, with
      another unit of that kind (``22°C`` as "22°F", ``151 km`` as "151 miles", ``96.80 EUR`` as
      "$96.80").

    A draft value that the user said, or that any result states in a way that fits, is not
    faulted; nor a value matching nothing (a value the draft worked out); and a returned
    value the draft states right somewhere is not taken as the one it restates wrongly
    elsewhere ("2:22 AM now, so 2:22 PM in 12 hours").
    """
    draft = read_values(answer, exact=False, clauses=True)
    relative = told.relative or bool(RELATIVE.search(answer))
    by_value = told.numbers.get
    checks: list[tuple[str, Sequence[Any], Callable[[Any], list[tuple[Any, str | None]]],
                       Callable[[Any, Any], bool], Callable[[Any, Any], bool]]] = [
        ("time", draft.times, lambda t: told.times.get(t.minute, []), _time_right, _time_wrong),
        ("date", draft.dates, lambda _: told.dates, _date_right,
         lambda a, b: _date_wrong(a, b, relative)),
        ("sign", [n for n in draft.numbers if n.value and not n.worked],
         lambda n: by_value(n.value, []), _sign_right, _sign_wrong),
        ("unit", [n for n in draft.numbers if n.units and n.value not in (0, 1)],
         lambda n: by_value(n.value, []), _unit_right, _unit_wrong),
    ]
    found: dict[tuple[str, str, str], Misstated] = {}
    for kind, stated, near, right, wrong in checks:
        # a returned value the draft states right is not the one it restates wrongly elsewhere
        said = {id(t) for v in stated for t, _ in near(v) if right(v, t)}
        for v in stated:
            if any(right(v, t) for t, _ in near(v)):
                continue
            for t, tool in near(v):
                if tool is not None and id(t) not in said and wrong(v, t):
                    found.setdefault((kind, v.text, t.text), Misstated(kind, v.text, t.text,
                                                                       tool))
                    break
    return list(found.values())[:MAX_FOUND]


def _time_right(a: Time, b: Time) -> bool:
    return _same_clock(a, b) and bool(a.hours & b.hours)


def _time_wrong(a: Time, b: Time) -> bool:
    """The same minutes, the hour in the other half of the day."""
    return _same_clock(a, b) and bool({(h + 12) % 24 for h in a.hours} & b.hours)


def _same_clock(a: Time, b: Time) -> bool:
    return a.minute == b.minute and (a.second is None or b.second is None or a.second == b.second)


def _matches(a: tuple[int | None, int, int], b: tuple[int | None, int, int]) -> bool:
    return a[1:] == b[1:] and (a[0] is None or b[0] is None or a[0] == b[0])


def _date_right(a: Date, b: Date) -> bool:
    return any(_matches(x, y) for x in a.readings for y in b.readings)


def _date_wrong(a: Date, b: Date, relative: bool) -> bool:
    """Month and day swapped, or (when no days to come or gone are spoken of) one of year,
    month and day changed."""
    for (y, m, d) in a.readings:
        for (ry, rm, rd) in b.readings:
            if (y is None or ry is None or y == ry) and (m, d) == (rd, rm) and m != d:
                return True
            changed = (y is not None and ry is not None and y != ry) + (m != rm) + (d != rd)
            if changed == 1 and not relative:
                return True
    return False


def _fits(a: Number, b: Number) -> bool:
    """Whether two numbers of equal value can be the same quantity: their kinds of unit do not
    differ, and a whole number has a kind of unit on both sides (a bare "3" is too common to
    tie to a result's "-3 °C")."""
    if a.dim and b.dim:
        return a.dim == b.dim
    return a.value != a.value.to_integral_value()


def _polarity(n: Number) -> str:
    """``"-"`` or ``"+"`` as the draft states it, ``"?"`` where it says less or lower beside
    a bare number ("colder by 2.8": either sign can be meant)."""
    if n.sign == "-" or (n.falls and not n.sign):
        return "-"
    return "?" if n.cue and not n.sign else "+"


def _sign_right(a: Number, b: Number) -> bool:
    polarity = _polarity(a)
    return _fits(a, b) and (polarity == "?" or (polarity == "-") == (b.sign == "-"))


def _sign_wrong(a: Number, b: Number) -> bool:
    """The other sign; a word of falling ("down 2.91%") against a sign written: ``+2.91%``."""
    polarity = _polarity(a)
    return _fits(a, b) and polarity != "?" and (polarity == "-") != (b.sign == "-") and (
        not a.falls or bool(a.sign) or b.sign == "+")


def _unit_right(a: Number, b: Number) -> bool:
    return a.dim == b.dim and (not b.units or bool(a.units & b.units))


def _unit_wrong(a: Number, b: Number) -> bool:
    return a.dim == b.dim and bool(b.units) and not a.units & b.units
