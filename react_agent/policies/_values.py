"""The times, dates and numbers (with their sign and unit) a text states, read as loosely as
people write them (``2:22 PM``, ``December 5``, ``-2.8``, ``22°C``, ``零下3度``), and the numbers a
JSON tool result names by its keys (``"temperature_c": 14.6``); :mod:`._restated` compares those
of a draft answer with those of the tool results."""

from __future__ import annotations

import bisect
import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from .._persist import loads

_MAX_NODES = 20_000  # JSON values walked per result for units named by keys


@dataclass(frozen=True)
class Time:
    hours: frozenset[int]  # the hours (0-23) the text can mean: two for "2:22" without AM/PM
    minute: int
    second: int | None
    text: str


@dataclass(frozen=True)
class Date:
    readings: frozenset[tuple[int | None, int, int]]  # (year or None, month, day)
    text: str


@dataclass(frozen=True)
class Number:
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
RELATIVE = re.compile(
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


def _date(readings: list[tuple[int | None, int, int]], text: str) -> Date | None:
    valid = frozenset(r for r in readings if _valid(*r))
    return Date(valid, text) if valid else None


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


def _clocks(text: str, exact: bool) -> Iterator[tuple[int, int, Time]]:
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
            yield m.start(), m.end(), Time(hours, int(m[2]), int(m[3]) if m[3] else None,
                                            _clock_text(m[0]))
    for m in _BARE_HOUR.finditer(text):
        hours = _hours(int(m[1]), m[2].casefold() + "m", True)
        if hours:
            yield m.start(), m.end(), Time(hours, 0, None, _clock_text(m[0]))
    for m in _CJK_CLOCK.finditer(text):
        minute = 30 if m[4] else int(m[3]) if m[3] else 0
        hours = _hours(int(m[2]), _MERIDIEM.get(m[1] or ""), False)
        if hours and minute < 60:
            yield m.start(), m.end(), Time(hours, minute, None, m[0].strip())


def _clock_text(text: str) -> str:
    """A clock's text without the full stop of a sentence after "PM" ("a.m." keeps its own)."""
    text = text.strip()
    return text[:-1] if text.endswith(".") and text[-3:-2] != "." else text


def _dates(text: str) -> Iterator[tuple[int, int, Date | tuple[Date, Time]]]:
    """The dates of ``text`` (with the times of ISO 8601 date-times) with their spans."""
    for m in _ISO.finditer(text):
        if (d := _date([(int(m[1]), int(m[2]), int(m[3]))], m[0])):
            if m[4] and int(m[4]) < 24 and int(m[5]) < 60:
                yield m.start(), m.end(), (d, Time(frozenset({int(m[4])}), int(m[5]),
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


def _numbers(text: str, taken: bytearray, clauses: bool) -> Iterator[Number]:
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
        yield Number(value, sign, dim, units, text[lead:stop].strip(), cue, falls, worked)


@dataclass
class Values:
    """The times, dates and numbers of one text."""

    times: list[Time] = field(default_factory=list)
    dates: list[Date] = field(default_factory=list)
    numbers: list[Number] = field(default_factory=list)


def read_values(text: str, exact: bool, clauses: bool = False) -> Values:
    """The times, dates and numbers of ``text``: each span read once, by the first reading
    that takes it (an ISO 8601 date-time before the clock inside it, a date or a time before
    the numbers in it). ``exact`` and ``clauses``: see :func:`_clocks` and :func:`_numbers`."""
    found = Values()
    taken = bytearray(len(text))
    for start, end, value in [*_dates(text), *_clocks(text, exact)]:
        if any(taken[start:end]):
            continue
        taken[start:end] = b"\x01" * (end - start)
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, Time):
                found.times.append(v)
            else:
                found.dates.append(v)
    found.numbers = list(_numbers(text, taken, clauses))
    return found


def keyed_numbers(observation: str) -> Iterator[Number]:
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
            yield Number(abs(number), "-" if number < 0 else "", dim, units, text)


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
