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

import bisect
import datetime as dt
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from .._persist import loads
from ..types import ToolResult

MAX_FOUND = 5
"""At most this many values restated wrongly are reported for one draft."""

_MAX_NODES = 20_000  # JSON values walked per result for units named by keys


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


# -- the values of a text -------------------------------------------------------------------------
@dataclass(frozen=True)
class _Time:
    hours: frozenset[int]  # the hours (0-23) the text can mean: two for "2:22" without AM/PM
    minute: int
    second: int | None
    text: str


@dataclass(frozen=True)
class _Date:
    readings: frozenset[tuple[int | None, int, int]]  # (year or None, month, day)
    text: str


@dataclass(frozen=True)
class _Number:
    value: Decimal  # without its sign
    sign: str  # "-", "+" or "" (none written)
    dim: str | None  # "temperature", "length", "currency", ...; None without a unit
    units: frozenset[str]  # empty: no unit, or only the dimension ("degrees", "度")
    text: str
    cue: bool = False  # its clause holds a word of less or lower ("down", "colder", "低")
    falls: bool = False  # a word of falling just before it ("down 2.91%", "下跌2.91%")
    worked: bool = False  # an operand of arithmetic written in the text ("16.9 + 6.4 = ...")


_MONTHS = {name: n for n, names in enumerate((
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
    ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sept", "sep"),
    ("october", "oct"), ("november", "nov"), ("december", "dec")), 1) for name in names}
_ORDINAL = r"(?:st|nd|rd|th)?"

_ISO = re.compile(r"(?<![\d.])(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?"
                  r"(?:Z|[+-]\d{2}:?\d{2})?)?(?![\d])")
_YMD = re.compile(r"(?<![\d.])(\d{4})[/.](\d{1,2})[/.](\d{1,2})(?![\d])")
_SLASHED = re.compile(r"(?<![\d/.])(\d{1,2})/(\d{1,2})/(\d{4})(?![\d/])")
_DOTTED = re.compile(r"(?<![\d/.])(\d{1,2})\.(\d{1,2})\.(\d{4})(?![\d.])")
_DAY_MONTH = re.compile(  # 4 December 2026, 4th of Dec (the word is a month's: see _MONTHS)
    rf"\b(\d{{1,2}}){_ORDINAL} {{1,2}}(?:of )?([A-Za-z]{{3,9}})\b\.?(?:,? {{1,2}}(\d{{4}})\b)?")
_MONTH_DAY = re.compile(  # December 4, 2026; Dec. 4th
    rf"\b([A-Za-z]{{3,9}})\b\.? {{1,2}}(\d{{1,2}}){_ORDINAL}\b(?:,? {{1,2}}(\d{{4}})\b)?")
_CJK_DATE = re.compile(r"(?:(\d{4}) ?年 ?)?(\d{1,2}) ?月 ?(\d{1,2}) ?[日号號]")

_ZH_HALF = "凌晨|早上|早晨|清晨|上午|中午|下午|傍晚|晚上|夜里|半夜"
_CLOCK = re.compile(r"(?<![\d:.])(\d{1,2}):(\d{2})(?::(\d{2}))?(?![\d:])"
                    r"(?:\s?([AaPp])\.?\s?[Mm]\b\.?)?")
_BARE_HOUR = re.compile(r"(?<![\d:.])(\d{1,2})\s?([AaPp])\.?\s?[Mm]\b\.?")
_CJK_CLOCK = re.compile(rf"({_ZH_HALF})? ?(\d{{1,2}}) ?[点點时時](?: ?(\d{{1,2}}) ?分|(半))?")
_ZH_HALF_BEFORE = re.compile(rf"({_ZH_HALF}) ?$")
_MERIDIEM = {"凌晨": "am", "早上": "am", "早晨": "am", "清晨": "am", "上午": "am", "中午": "noon",
             "下午": "pm", "傍晚": "pm", "晚上": "evening"}

_NUMBER = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])|(?<![\d.,])\d+(?:\.\d+)?")

# unit spellings after a number: spelling -> (dimension, units it can mean)
_CURRENCIES = ("USD", "EUR", "GBP", "JPY", "CNY", "RMB", "HKD", "CHF", "CAD", "AUD", "SGD", "KRW",
               "NZD", "TWD", "INR", "SEK", "NOK", "DKK", "MXN", "BRL", "RUB", "ZAR", "THB")
_DOLLARS = frozenset({"USD", "HKD", "CAD", "AUD", "SGD", "NZD", "TWD", "MXN"})
_UNITS: dict[str, tuple[str, frozenset[str]]] = {}


def _spell(dim: str, units: frozenset[str] | str, *spellings: str) -> None:
    unit_set = frozenset({units}) if isinstance(units, str) else units
    for s in spellings:
        _UNITS[s.casefold()] = (dim, unit_set)


_spell("temperature", "C", "°C", "° C", "ºC", "℃", "degrees Celsius", "degree Celsius",
       "degrees C", "Celsius", "centigrade", "摄氏度", "摄氏")
_spell("temperature", "F", "°F", "° F", "ºF", "℉", "degrees Fahrenheit", "degree Fahrenheit",
       "degrees F", "Fahrenheit", "华氏度", "华氏")
_spell("temperature", "K", "kelvin")
_spell("temperature", frozenset(), "°", "degrees", "degree", "度")
_spell("speed", "km/h", "km/h", "kph", "kmh", "km per hour", "kilometers per hour",
       "kilometres per hour", "公里/小时", "公里每小时", "千米/小时", "千米每小时")
_spell("speed", "mph", "mph", "miles per hour", "英里/小时", "英里每小时")
_spell("speed", "m/s", "m/s", "米/秒", "米每秒")
_spell("length", "km", "km", "kilometers", "kilometres", "kilometer", "kilometre", "公里", "千米")
_spell("length", "mi", "mi", "miles", "mile", "英里")
_spell("length", "m", "m", "meters", "metres", "meter", "metre", "米")
_spell("length", "cm", "cm", "centimeters", "centimetres", "厘米")
_spell("length", "mm", "mm", "millimeters", "millimetres", "毫米")
_spell("length", "ft", "ft", "feet", "foot", "英尺")
_spell("length", "in", "inches", "inch", "英寸")
_spell("mass", "kg", "kg", "kilograms", "kilogram", "kilos", "kilo", "公斤", "千克")
_spell("mass", "g", "g", "grams", "gram", "克")
_spell("mass", "lb", "lb", "lbs", "磅")
_spell("mass", "oz", "oz", "ounces", "ounce", "盎司")
_spell("mass", "jin", "斤")
_spell("volume", "l", "l", "liters", "litres", "liter", "litre", "升")
_spell("volume", "ml", "ml", "milliliters", "millilitres", "毫升")
_spell("volume", "gal", "gal", "gallons", "gallon", "加仑")
_spell("percent", "%", "%", "％", "percent", "per cent")
_spell("duration", frozenset(), "hours", "hour", "hrs", "h", "minutes", "minute", "mins", "min",
       "seconds", "days", "day", "weeks", "nights", "night", "小时", "分钟", "秒", "天", "晚")
for _code in _CURRENCIES:
    _spell("currency", "CNY" if _code == "RMB" else _code, _code)
_spell("currency", _DOLLARS, "dollars", "dollar")
_spell("currency", "USD", "US dollars", "US dollar", "美元", "美金")
_spell("currency", "EUR", "euros", "euro", "欧元")
_spell("currency", "JPY", "yen", "日元", "日币", "円")
_spell("currency", "CNY", "yuan", "renminbi", "人民币", "元", "块")
_spell("currency", "HKD", "Hong Kong dollars", "港元", "港币")
_spell("currency", "GBP", "pounds sterling", "sterling", "英镑")
_spell("currency", "KRW", "won", "韩元")
_spell("currency", "CAD", "Canadian dollars", "加元", "加币")
_spell("currency", "AUD", "Australian dollars", "澳元", "澳币")
_spell("currency", "SGD", "Singapore dollars", "新加坡元", "新币")
_spell("currency", "CHF", "Swiss francs", "francs", "瑞士法郎")
_UNIT_AFTER = re.compile(
    r"[ \t]?-?[ \t]?(" + "|".join(re.escape(s) for s in sorted(_UNITS, key=len, reverse=True))
    + r")(?![A-Za-z])", re.IGNORECASE)
_SIGNS_BEFORE = {"US$": frozenset({"USD"}), "HK$": frozenset({"HKD"}),
                 "C$": frozenset({"CAD"}), "CA$": frozenset({"CAD"}), "A$": frozenset({"AUD"}),
                 "AU$": frozenset({"AUD"}), "S$": frozenset({"SGD"}),
                 "NZ$": frozenset({"NZD"}), "$": _DOLLARS, "€": frozenset({"EUR"}),
                 "£": frozenset({"GBP"}), "¥": frozenset({"JPY", "CNY"}),
                 "￥": frozenset({"JPY", "CNY"}), "₩": frozenset({"KRW"}),
                 "₹": frozenset({"INR"})}
_UNIT_BEFORE = re.compile(
    r"(" + "|".join(re.escape(s) for s in sorted(_SIGNS_BEFORE, key=len, reverse=True))
    + r"|\b(?:" + "|".join(_CURRENCIES) + r"))[ \t]?[-−+]?$")

# a key's last word that names the unit of its number: "temperature_c", "wind_kph", "price_usd"
_KEY_UNITS = {"c": "°C", "celsius": "°C", "f": "°F", "fahrenheit": "°F", "kph": "km/h",
              "kmh": "km/h", "mph": "mph", "km": "km", "mi": "mi", "miles": "mi", "m": "m",
              "kg": "kg", "lb": "lb", "lbs": "lb", "g": "g", "pct": "%", "percent": "%",
              **{code.casefold(): code for code in _CURRENCIES}}
_MONEY_KEYS = re.compile(r"price|total|amount|balance|cost|fare|fee|subtotal|value")
_MEASURE_KEYS = re.compile(r"temp|value|reading|high|low|distance|weight|speed|amount")

_NEGATIVE_BEFORE = re.compile(r"(?:minus|negative|负|零下)\s*$", re.IGNORECASE)
_BELOW_ZERO = re.compile(
    r"[^,;.!?，。；！？\n]{0,12}?(?:below|under)\s+(?:zero|freezing|sea level)", re.IGNORECASE)
_LESS = re.compile(
    r"\b(?:minus|negative|below|under|down\w*|drop\w*|fell|fall\w*|lost|lose|loss\w*|declin\w*|"
    r"decreas\w*|lower|less|colder|cooler|behind|earlier|overdrawn|owe[sd]?|debt|deficit|short"
    r"|slip\w*|slid|dip\w*|shed|difference|apart|gap|than|sank|sunk|reduc\w*|off)\b"
    r"|零下|负|跌|降|减|少|低|冷|亏|欠|透支|落后|晚|慢|差|比|缩|回落", re.IGNORECASE)
_FALLS = re.compile(r"(?:\b(?:down|fell|dropped|drops?|falls?|fallen|lost|declined|decreased|slid|"
                    r"sank)(?:\s+by)?|下跌了?|跌了?|下降了?|降了?|减少了?)\s*$", re.IGNORECASE)
_NOT_LESS = re.compile(r"涨跌|降雨|降水|多少|最低|最高|晚上|今晚|每晚")  # words holding one
_CLAUSE_END = re.compile(r"[,;!?，。；！？\n()（）、]|\.(?=\s|$)")
_OPERATORS = "+-−*/×÷="
_RELATIVE = re.compile(
    r"\b(?:tomorrow|yesterday|ago|later|from now|from today|after|before|until|since|days?|"
    r"weeks?|months?|years?|weekend|(?:this|next|last|coming)\s+(?:mon|tues|wednes|thurs|fri|"
    r"satur|sun)day)\b|明天|昨天|后天|前天|天后|天前|周后|周前|月后|月前|年后|年前|下周|上周|这周|本周|"
    r"周末|下个|上个|之后|以后|之前|以前|几天|多少天|下星期|上星期|这个星期", re.IGNORECASE)


def _valid(year: int | None, month: int, day: int) -> bool:
    try:
        dt.date(year if year is not None else 2000, month, day)  # (2000: 29 February exists)
    except ValueError:
        return False
    return True


def _date(readings: list[tuple[int | None, int, int]], text: str) -> _Date | None:
    valid = frozenset(r for r in readings if _valid(*r))
    return _Date(valid, text) if valid else None


def _hours(hour: int, half: str | None, exact: bool) -> frozenset[int]:
    """The hours of the day ``hour`` can mean, written with ``half`` of the day (``"am"``,
    ``"pm"``, ``"noon"``, ``"evening"`` or ``None``); ``exact``: a clock without a half of
    the day reads as the 24-hour clock."""
    if hour > 24:
        return frozenset()
    if 1 <= hour <= 12:
        if half == "am":
            return frozenset({hour % 12})
        if half == "pm":
            return frozenset({hour % 12 + 12})
        if half == "noon":
            return frozenset({hour if hour >= 11 else hour + 12})
        if half == "evening" and hour >= 5:
            return frozenset({(hour + 12) % 24})
        if not exact:
            return frozenset({hour % 12, hour % 12 + 12})
    return frozenset({hour % 24})


def _clocks(text: str, exact: bool) -> Iterator[tuple[int, int, _Time]]:
    """The clock times of ``text`` with their spans. ``exact``: a time written with two digits
    and no half of the day is on the 24-hour clock (how tools write it); otherwise "10:15" may
    be either half of the day."""
    for m in _CLOCK.finditer(text):
        hour, latin = int(m[1]), m[4]
        half = (latin.casefold() + "m") if latin else None
        if half is None and (zh := _ZH_HALF_BEFORE.search(text, max(0, m.start() - 4),
                                                          m.start())):
            half = _MERIDIEM.get(zh[1])
        strict = (exact and len(m[1]) == 2) or m[1].startswith("0") or hour == 0 or hour > 12
        hours = _hours(hour, half, strict)
        if hours and int(m[2]) < 60:
            yield m.start(), m.end(), _Time(hours, int(m[2]), int(m[3]) if m[3] else None,
                                            _clock_text(m[0]))
    for m in _BARE_HOUR.finditer(text):
        hours = _hours(int(m[1]), m[2].casefold() + "m", True)
        if hours:
            yield m.start(), m.end(), _Time(hours, 0, None, _clock_text(m[0]))
    for m in _CJK_CLOCK.finditer(text):
        minute = 30 if m[4] else int(m[3]) if m[3] else 0
        hours = _hours(int(m[2]), _MERIDIEM.get(m[1] or ""), False)
        if hours and minute < 60:
            yield m.start(), m.end(), _Time(hours, minute, None, m[0].strip())


def _clock_text(text: str) -> str:
    """A clock's text without the full stop of a sentence after "PM" ("a.m." keeps its own)."""
    text = text.strip()
    return text[:-1] if text.endswith(".") and text[-3:-2] != "." else text


def _dates(text: str) -> Iterator[tuple[int, int, _Date | tuple[_Date, _Time]]]:
    """The dates of ``text`` (with the times of ISO 8601 date-times) with their spans."""
    for m in _ISO.finditer(text):
        if (d := _date([(int(m[1]), int(m[2]), int(m[3]))], m[0])):
            if m[4] and int(m[4]) < 24 and int(m[5]) < 60:
                yield m.start(), m.end(), (d, _Time(frozenset({int(m[4])}), int(m[5]),
                                                    int(m[6]) if m[6] else None, m[0]))
            else:
                yield m.start(), m.end(), d
    for m in _YMD.finditer(text):
        if (d := _date([(int(m[1]), int(m[2]), int(m[3]))], m[0])):
            yield m.start(), m.end(), d
    for m in _SLASHED.finditer(text):  # 12/04/2026: December 4 or 12 April
        a, b, y = int(m[1]), int(m[2]), int(m[3])
        if (d := _date([(y, a, b), (y, b, a)], m[0])):
            yield m.start(), m.end(), d
    for m in _DOTTED.finditer(text):  # 04.12.2026: day, month, year
        if (d := _date([(int(m[3]), int(m[2]), int(m[1]))], m[0])):
            yield m.start(), m.end(), d
    for m in _DAY_MONTH.finditer(text):
        year = int(m[3]) if m[3] else None
        month = _MONTHS.get(m[2].casefold())
        if month and (d := _date([(year, month, int(m[1]))], m[0])):
            yield m.start(), m.end(), d
    for m in _MONTH_DAY.finditer(text):
        year = int(m[3]) if m[3] else None
        month = _MONTHS.get(m[1].casefold())
        if month and (d := _date([(year, month, int(m[2]))], m[0])):
            yield m.start(), m.end(), d
    for m in _CJK_DATE.finditer(text):
        year = int(m[1]) if m[1] else None
        if (d := _date([(year, int(m[2]), int(m[3]))], m[0])):
            yield m.start(), m.end(), d


def _sign(text: str, start: int) -> tuple[str, int, bool] | None:
    """The sign written before the number at ``start``: ``(sign, lead, operand)`` with
    ``sign`` ``"-"``, ``"+"`` or ``""``, ``lead`` where the number's text begins (its sign
    or "minus", "零下"), ``operand``: the number follows an operator of arithmetic
    ("16.9 - 6.4", "= 23.3"). ``None``: the digits belong to a name ("A-12", "UTC-5",
    "CA1501")."""
    before = text[start - 1:start]
    if _in_name(before):
        return None
    if before in ("-", "\u2212", "+"):
        prior = text[start - 2:start - 1]
        if _in_name(prior):
            return None
        if prior.isdigit() or prior in (")", "]"):
            return "", start, before == "+"  # a range or a hyphen (15-25); a sum (3+4)
        if prior.isspace() and (_before(text, start - 1).isdigit()
                                or _before(text, start - 1) in (")", "]")):
            return "", start, True  # 16.9 - 6.4
        return ("+" if before == "+" else "-"), start - 1, False
    if (word := _NEGATIVE_BEFORE.search(text, max(0, start - 12), start)):
        return "-", word.start(), False
    return "", start, _before(text, start) in _OPERATORS


def _in_name(char: str) -> bool:
    return (char.isascii() and char.isalpha()) or char in ("_", "#")


def _before(text: str, index: int) -> str:
    """The last character before ``index`` that is not a space (within 4 characters)."""
    return text[max(0, index - 4):index].rstrip()[-1:]


def _numbers(text: str, taken: bytearray, clauses: bool) -> Iterator[_Number]:
    """The numbers of ``text`` outside the spans ``taken`` by dates and times, each with its
    sign and its unit; with ``clauses`` (a draft), also whether its clause says less or lower,
    whether a word of falling comes just before it and whether it is an operand of
    arithmetic."""
    ends = [m.end() for m in _CLAUSE_END.finditer(text)] if clauses else []
    cues: dict[int, bool] = {}  # by clause
    for m in _NUMBER.finditer(text):
        start, end = m.span()
        if taken[start]:
            continue
        signed = _sign(text, start)
        glued = text[end:end + 1]
        if signed is None or (_in_name(glued) and not _UNIT_AFTER.match(text, end)):
            continue  # a name (CA1501, 4B), not a number with its unit (151km)
        sign, lead, operand = signed
        value = Decimal(m[0].replace(",", ""))
        dim, units, stop = None, frozenset[str](), end
        if (after := _UNIT_AFTER.match(text, end)):
            dim, units = _UNITS[after[1].casefold()]
            stop = after.end()
        elif (prefix := _UNIT_BEFORE.search(text, max(0, lead - 5), lead)):
            dim, lead = "currency", prefix.start()
            units = _SIGNS_BEFORE.get(prefix[1]) or frozenset(
                {"CNY" if prefix[1] == "RMB" else prefix[1]})
        if not sign and _BELOW_ZERO.match(text, stop):
            sign = "-"
        cue = worked = falls = False
        if clauses:
            n = bisect.bisect_right(ends, start)
            if n not in cues:
                clause = text[ends[n - 1] if n else 0:ends[n] if n < len(ends) else len(text)]
                cues[n] = bool(_LESS.search(_NOT_LESS.sub(" ", clause)))
            cue = cues[n]
            worked = operand or text[stop:stop + 3].lstrip()[:1] in tuple(_OPERATORS)
            falls = bool(_FALLS.search(text, max(0, lead - 12), lead))
        yield _Number(value, sign, dim, units, text[lead:stop].strip(), cue, falls, worked)


@dataclass
class _Text:
    """The times, dates and numbers of one text."""

    times: list[_Time] = field(default_factory=list)
    dates: list[_Date] = field(default_factory=list)
    numbers: list[_Number] = field(default_factory=list)


def _read(text: str, exact: bool, clauses: bool = False) -> _Text:
    """The times, dates and numbers of ``text``: each span read once, by the first reading
    that takes it (an ISO 8601 date-time before the clock inside it, a date or a time before
    the numbers in it). ``exact`` and ``clauses``: see :func:`_clocks` and :func:`_numbers`."""
    found = _Text()
    taken = bytearray(len(text))
    for start, end, value in [*_dates(text), *_clocks(text, exact)]:
        if any(taken[start:end]):
            continue
        taken[start:end] = b"\x01" * (end - start)
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, _Time):
                found.times.append(v)
            else:
                found.dates.append(v)
    found.numbers = list(_numbers(text, taken, clauses))
    return found


def _keyed(observation: str) -> Iterator[_Number]:
    """The numbers of a JSON result whose unit its key names (``"temperature_c": 14.6``), or a
    key beside it (``"price": "18640", "currency": "JPY"``; ``"unit": "celsius"``)."""
    if observation.lstrip()[:1] not in ("{", "["):
        return
    try:
        data = loads(observation)
    except ValueError:
        return
    stack, walked = [data], 0
    while stack and walked < _MAX_NODES:
        node = stack.pop()
        walked += 1
        if isinstance(node, list):
            stack.extend(node)
        if not isinstance(node, dict):
            continue
        currency = node.get("currency")
        unit = node.get("unit")
        for key, value in node.items():
            if isinstance(value, (dict, list)):
                stack.append(value)
                continue
            number = _plain_number(value)
            if number is None or not isinstance(key, str):
                continue
            spelled = _KEY_UNITS.get(key.rsplit("_", 1)[-1].casefold()) if "_" in key else None
            text = f"{key} {value}"
            if spelled is None and isinstance(currency, str) and _MONEY_KEYS.search(key):
                spelled = currency
                text = f"{key} {value} {currency}"
            if spelled is None and isinstance(unit, str) and _MEASURE_KEYS.search(key):
                spelled = unit
                text = f"{key} {value} {unit}"
            if spelled is None or spelled.casefold() not in _UNITS:
                continue
            dim, units = _UNITS[spelled.casefold()]
            yield _Number(abs(number), "-" if number < 0 else "", dim, units, text)


def _plain_number(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    if isinstance(value, str) and not re.fullmatch(r"[-+]?\d{1,15}(?:\.\d{1,15})?", value):
        return None
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        return None
    return number if number.is_finite() else None  # (JSON may hold NaN and Infinity)


# -- what the run was told ------------------------------------------------------------------------
@dataclass
class Told:
    """The times, dates and numbers the tools returned (by tool) and the user said (tool
    ``None``), and the user's words of days to come or gone ("tomorrow", "十天后")."""

    times: dict[int, list[tuple[_Time, str | None]]] = field(default_factory=dict)  # by minute
    dates: list[tuple[_Date, str | None]] = field(default_factory=list)
    numbers: dict[Decimal, list[tuple[_Number, str | None]]] = field(default_factory=dict)
    relative: bool = False
    _seen: set[tuple[Any, ...]] = field(default_factory=set, repr=False)

    def add(self, text: str, tool: str | None) -> None:
        """Read ``text``, said by the user (``tool`` ``None``) or returned by ``tool``; a value
        already held from the same source is kept once (its first text)."""
        found = _read(text, exact=tool is not None)
        seen = self._seen
        for t in found.times:
            if _new(seen, ("t", t.hours, t.minute, t.second, tool)):
                self.times.setdefault(t.minute, []).append((t, tool))
        for d in found.dates:
            if _new(seen, ("d", d.readings, tool)):
                self.dates.append((d, tool))
        for n in [*found.numbers, *(_keyed(text) if tool is not None else ())]:
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
    told = Told(relative=any(_RELATIVE.search(text) for text in user))
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
    draft = _read(answer, exact=False, clauses=True)
    relative = told.relative or bool(_RELATIVE.search(answer))
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


def _time_right(a: _Time, b: _Time) -> bool:
    return _same_clock(a, b) and bool(a.hours & b.hours)


def _time_wrong(a: _Time, b: _Time) -> bool:
    """The same minutes, the hour in the other half of the day."""
    return _same_clock(a, b) and bool({(h + 12) % 24 for h in a.hours} & b.hours)


def _same_clock(a: _Time, b: _Time) -> bool:
    return a.minute == b.minute and (a.second is None or b.second is None or a.second == b.second)


def _matches(a: tuple[int | None, int, int], b: tuple[int | None, int, int]) -> bool:
    return a[1:] == b[1:] and (a[0] is None or b[0] is None or a[0] == b[0])


def _date_right(a: _Date, b: _Date) -> bool:
    return any(_matches(x, y) for x in a.readings for y in b.readings)


def _date_wrong(a: _Date, b: _Date, relative: bool) -> bool:
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


def _fits(a: _Number, b: _Number) -> bool:
    """Whether two numbers of equal value can be the same quantity: their kinds of unit do not
    differ, and a whole number has a kind of unit on both sides (a bare "3" is too common to
    tie to a result's "-3 °C")."""
    if a.dim and b.dim:
        return a.dim == b.dim
    return a.value != a.value.to_integral_value()


def _polarity(n: _Number) -> str:
    """``"-"`` or ``"+"`` as the draft states it, ``"?"`` where it says less or lower beside
    a bare number ("colder by 2.8": either sign can be meant)."""
    if n.sign == "-" or (n.falls and not n.sign):
        return "-"
    return "?" if n.cue and not n.sign else "+"


def _sign_right(a: _Number, b: _Number) -> bool:
    polarity = _polarity(a)
    return _fits(a, b) and (polarity == "?" or (polarity == "-") == (b.sign == "-"))


def _sign_wrong(a: _Number, b: _Number) -> bool:
    """The other sign; a word of falling ("down 2.91%") against a sign written: ``+2.91%``."""
    polarity = _polarity(a)
    return _fits(a, b) and polarity != "?" and (polarity == "-") != (b.sign == "-") and (
        not a.falls or bool(a.sign) or b.sign == "+")


def _unit_right(a: _Number, b: _Number) -> bool:
    return a.dim == b.dim and (not b.units or bool(a.units & b.units))


def _unit_wrong(a: _Number, b: _Number) -> bool:
    return a.dim == b.dim and bool(b.units) and not a.units & b.units
