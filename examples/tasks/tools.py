"""Deterministic fake tools for the multi-step task suite (``dev.jsonl``, ``test.jsonl``).

Each factory returns a fresh :class:`FakeToolbox`, so every task starts with an empty record of
side effects (``toolbox.sent``: the emails and text messages the tools were asked to send)::

    react-agent run --tools examples/tasks/tools.py:weather "Do I need an umbrella in Paris?"

=================  =============================================================================
factory            tools
=================  =============================================================================
``weather()``      get_weather, get_forecast, convert_units
``money()``        convert_currency, get_exchange_rate, get_stock_price, calculate
``office()``       lookup_contact, send_email, send_sms
``shop()``         search_products, get_product, get_order, search_orders, send_email,
                   convert_currency, calculate
``travel()``       get_weather, get_forecast, search_flights, search_hotels, convert_currency,
                   convert_units, calculate
``assistant()``    get_weather, get_forecast, get_stock_price, lookup_contact, send_email, send_sms
``everything()``   all 16 tools
=================  =============================================================================

The data is made up. Cities answer to their English and Chinese names (``"Paris"`` and
``"巴黎"``; a Chinese name gets Chinese condition words). Money and unit conversions are
computed with :mod:`decimal` and rounded half-up to 2 decimals, so each has one right string.
Wrong arguments raise ``ValueError`` with a message saying what to send instead.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any

from react_agent import Toolbox
from react_agent.tools.builtin._calculator import evaluate

Record = dict[str, Any]


class FakeToolbox(Toolbox):
    """A Toolbox whose side-effect tools record what they did.

    Attributes:
        sent: one dict per email or text message sent, in order:
            ``{"tool": "send_email", "to": ..., "subject": ..., "body": ...}`` or
            ``{"tool": "send_sms", "phone": ..., "text": ...}``.
    """

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[Record] = []


# -- numbers --------------------------------------------------------------------------------------
def _money(value: Decimal) -> str:
    """``value`` rounded half-up to 2 decimals, as text (``"118.39"``)."""
    return str(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _number(value: float | int) -> str:
    """A number as the user would write it: ``26.2``, ``5``, ``1284.75``."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _decimal(value: float | int) -> Decimal:
    return Decimal(_number(value))


# -- weather --------------------------------------------------------------------------------------
# English name, Chinese name, condition (en, zh), temperature °C, chance of rain %, humidity %,
# wind km/h.
CITIES: list[tuple[str, str, str, str, float, int, int, float]] = [
    ("Paris", "巴黎", "light rain", "小雨", 14.6, 80, 87, 13.2),
    ("London", "伦敦", "overcast", "阴", 11.3, 35, 78, 18.5),
    ("New York", "纽约", "sunny", "晴", 23.6, 5, 52, 9.7),
    ("Tokyo", "东京", "light rain", "小雨", 19.2, 70, 83, 11.4),
    ("Berlin", "柏林", "partly cloudy", "多云", 8.7, 20, 66, 15.1),
    ("Sydney", "悉尼", "sunny", "晴", 26.1, 10, 58, 21.3),
    ("Madrid", "马德里", "sunny", "晴", 24.7, 3, 31, 7.8),
    ("Singapore", "新加坡", "thunderstorms", "雷阵雨", 31.2, 65, 84, 10.6),
    ("Toronto", "多伦多", "snow showers", "阵雪", -2.8, 60, 74, 24.9),
    ("Beijing", "北京", "sunny", "晴", 17.4, 2, 28, 12.4),
    ("Shanghai", "上海", "moderate rain", "中雨", 21.7, 90, 92, 16.3),
    ("Guangzhou", "广州", "thunderstorms", "雷阵雨", 29.3, 85, 88, 9.2),
    ("Shenzhen", "深圳", "cloudy", "多云", 27.8, 30, 79, 14.5),
    ("Chengdu", "成都", "overcast", "阴", 16.9, 45, 81, 5.3),
    ("Hangzhou", "杭州", "light rain", "小雨", 18.5, 75, 89, 8.8),
    ("Harbin", "哈尔滨", "sunny", "晴", -6.4, 0, 45, 19.6),
]

# Tomorrow, the day after, the day after that: condition (en, zh), high °C, low °C, rain %.
FORECASTS: dict[str, list[tuple[str, str, float, float, int]]] = {
    "Paris": [("showers", "阵雨", 15.8, 9.2, 60), ("partly cloudy", "多云", 17.1, 8.4, 20),
              ("sunny", "晴", 19.3, 9.7, 5)],
    "London": [("light rain", "小雨", 12.4, 7.9, 65), ("overcast", "阴", 13.0, 8.2, 40),
               ("partly cloudy", "多云", 14.6, 7.5, 15)],
    "New York": [("partly cloudy", "多云", 24.9, 16.2, 15),
                 ("thunderstorms", "雷阵雨", 22.3, 17.8, 70), ("sunny", "晴", 25.6, 16.9, 5)],
    "Tokyo": [("moderate rain", "中雨", 18.1, 14.3, 85), ("light rain", "小雨", 20.4, 15.0, 55),
              ("cloudy", "多云", 22.7, 15.8, 20)],
    "Berlin": [("cloudy", "多云", 9.6, 3.1, 25), ("light rain", "小雨", 11.2, 4.6, 60),
               ("partly cloudy", "多云", 13.5, 5.2, 15)],
    "Sydney": [("sunny", "晴", 25.4, 17.3, 5), ("partly cloudy", "多云", 23.8, 16.6, 20),
               ("showers", "阵雨", 21.9, 15.4, 65)],
    "Madrid": [("sunny", "晴", 26.2, 12.8, 0), ("sunny", "晴", 27.5, 13.9, 0),
               ("partly cloudy", "多云", 25.1, 13.1, 10)],
    "Singapore": [("thunderstorms", "雷阵雨", 31.6, 25.9, 75), ("showers", "阵雨", 30.8, 26.1, 60),
                  ("thunderstorms", "雷阵雨", 31.9, 25.7, 70)],
    "Toronto": [("light snow", "小雪", -1.4, -7.2, 55), ("cloudy", "多云", 0.8, -5.9, 20),
                ("sunny", "晴", 2.3, -6.6, 5)],
    "Beijing": [("sunny", "晴", 19.8, 8.6, 0), ("partly cloudy", "多云", 21.2, 10.3, 10),
                ("light rain", "小雨", 16.4, 9.1, 60)],
    "Shanghai": [("light rain", "小雨", 22.9, 17.6, 70), ("overcast", "阴", 24.1, 18.3, 35),
                 ("sunny", "晴", 26.0, 18.9, 5)],
    "Guangzhou": [("thunderstorms", "雷阵雨", 30.7, 24.8, 80), ("showers", "阵雨", 31.2, 25.1, 60),
                  ("cloudy", "多云", 32.4, 25.6, 25)],
    "Shenzhen": [("showers", "阵雨", 28.6, 23.9, 60), ("cloudy", "多云", 29.4, 24.2, 25),
                 ("sunny", "晴", 30.1, 24.6, 10)],
    "Chengdu": [("light rain", "小雨", 17.5, 12.9, 65), ("overcast", "阴", 18.8, 13.4, 40),
                ("cloudy", "多云", 20.2, 13.7, 20)],
    "Hangzhou": [("moderate rain", "中雨", 19.6, 15.2, 85), ("light rain", "小雨", 21.3, 15.8, 60),
                 ("cloudy", "多云", 23.7, 16.1, 20)],
    "Harbin": [("sunny", "晴", -2.1, -8.9, 0), ("light snow", "小雪", -4.6, -13.2, 50),
               ("cloudy", "多云", -3.0, -11.7, 15)],
}
DAY_NAMES = {
    "en": ["tomorrow", "day after tomorrow", "in 3 days"], "zh": ["明天", "后天", "大后天"],
}

# Short names a weather service does not resolve: the message names the full one.
CITY_NICKNAMES = {
    "nyc": "New York", "ny": "New York", "big apple": "New York", "帝都": "北京", "魔都": "上海",
    "羊城": "广州", "蓉城": "成都", "冰城": "哈尔滨",
}


def _city(raw: str) -> tuple[tuple[str, str, str, str, float, int, int, float], str]:
    """The city record for a name in English or Chinese, and the language of that name.

    ``"Paris, France"`` and ``"北京市"`` are read as ``"Paris"`` and ``"北京"``.

    Raises:
        ValueError: an unknown name, a nickname or abbreviation, or a district.
    """
    name = raw.strip()
    head = name.split(",")[0].split("，")[0].strip()
    for record in CITIES:
        english, chinese = record[0], record[1]
        if head.casefold() == english.casefold():
            return record, "en"
        if head in (chinese, chinese + "市"):
            return record, "zh"
    nickname = CITY_NICKNAMES.get(head.casefold())
    if nickname:
        raise ValueError(f"no city {raw!r}; use the full city name such as {nickname!r}")
    inside = [r[1] for r in CITIES if r[1] in head] + [
        r[0] for r in CITIES if r[0].casefold() in head.casefold()
    ]
    if inside:
        raise ValueError(
            f"no city {raw!r}: pass the city name only, without district or street, "
            f"e.g. {inside[0]!r}"
        )
    known = ", ".join(f"{r[0]} ({r[1]})" for r in CITIES)
    raise ValueError(f"no weather data for {raw!r}; cities with data: {known}")


def get_weather(city: str) -> Record:
    """Current weather: ``{"city", "condition", "temperature_c", "chance_of_rain": "80%",
    "humidity", "wind_kph"}``, in the language of the city name given. Raises ValueError (see
    :func:`_city`)."""
    record, lang = _city(city)
    english, chinese, cond_en, cond_zh, temp, rain, humidity, wind = record
    return {
        "city": chinese if lang == "zh" else english,
        "condition": cond_zh if lang == "zh" else cond_en,
        "temperature_c": temp,
        "chance_of_rain": f"{rain}%",
        "humidity": f"{humidity}%",
        "wind_kph": wind,
    }


def get_forecast(city: str, days: int = 3) -> Record:
    """``{"city", "forecast": [{"day", "condition", "high_c", "low_c", "chance_of_rain"}]}`` for
    1-3 days starting tomorrow. Raises ValueError: days out of range, or an unknown city."""
    if not 1 <= days <= 3:
        raise ValueError(f"days must be 1, 2 or 3 (the forecast covers 3 days), got {days}")
    record, lang = _city(city)
    daily = [
        {"day": day, "condition": cond_zh if lang == "zh" else cond_en, "high_c": high,
         "low_c": low, "chance_of_rain": f"{rain}%"}
        for day, (cond_en, cond_zh, high, low, rain) in zip(
            DAY_NAMES[lang], FORECASTS[record[0]], strict=True
        )
    ]
    return {"city": record[1] if lang == "zh" else record[0], "forecast": daily[:days]}


# -- units ----------------------------------------------------------------------------------------
# unit -> (kind, factor to the kind's base unit); temperatures are handled apart.
UNITS: dict[str, tuple[str, Decimal]] = {
    "km": ("length", Decimal(1000)), "m": ("length", Decimal(1)), "cm": ("length", Decimal("0.01")),
    "mi": ("length", Decimal("1609.344")), "ft": ("length", Decimal("0.3048")),
    "in": ("length", Decimal("0.0254")),
    "kg": ("mass", Decimal(1)), "g": ("mass", Decimal("0.001")),
    "lb": ("mass", Decimal("0.45359237")), "oz": ("mass", Decimal("0.028349523125")),
    "jin": ("mass", Decimal("0.5")),
    "l": ("volume", Decimal(1)), "ml": ("volume", Decimal("0.001")),
    "gal": ("volume", Decimal("3.785411784")),
    "°C": ("temperature", Decimal(1)), "°F": ("temperature", Decimal(1)),
    "K": ("temperature", Decimal(1)),
}
UNIT_ALIASES: dict[str, str] = {
    **{a: "km" for a in ("km", "kilometer", "kilometers", "kilometre", "kilometres", "公里",
                         "千米")},
    **{a: "m" for a in ("m", "meter", "meters", "metre", "metres", "米")},
    **{a: "cm" for a in ("cm", "centimeter", "centimeters", "centimetre", "centimetres", "厘米")},
    **{a: "mi" for a in ("mi", "mile", "miles", "英里")},
    **{a: "ft" for a in ("ft", "foot", "feet", "英尺")},
    **{a: "in" for a in ("in", "inch", "inches", "英寸")},
    **{a: "kg" for a in ("kg", "kilogram", "kilograms", "公斤", "千克")},
    **{a: "g" for a in ("g", "gram", "grams", "克")},
    **{a: "lb" for a in ("lb", "lbs", "pound", "pounds", "磅")},
    **{a: "oz" for a in ("oz", "ounce", "ounces", "盎司")},
    **{a: "jin" for a in ("jin", "斤")},
    **{a: "l" for a in ("l", "liter", "liters", "litre", "litres", "升")},
    **{a: "ml" for a in ("ml", "milliliter", "milliliters", "millilitre", "millilitres", "毫升")},
    **{a: "gal" for a in ("gal", "gallon", "gallons", "加仑")},
    **{a: "°C" for a in ("c", "°c", "℃", "celsius", "degrees celsius", "摄氏度")},
    **{a: "°F" for a in ("f", "°f", "℉", "fahrenheit", "degrees fahrenheit", "华氏度")},
    **{a: "K" for a in ("k", "kelvin")},
}


def _unit(raw: str) -> str:
    unit = UNIT_ALIASES.get(raw.strip().casefold())
    if unit is None:
        known = ", ".join(UNITS)
        raise ValueError(f"unknown unit {raw!r}; use one of: {known}")
    return unit


def _to_celsius(value: Decimal, unit: str) -> Decimal:
    if unit == "°F":
        return (value - 32) * 5 / 9
    return value - Decimal("273.15") if unit == "K" else value


def _from_celsius(value: Decimal, unit: str) -> Decimal:
    if unit == "°F":
        return value * 9 / 5 + 32
    return value + Decimal("273.15") if unit == "K" else value


def convert_units(value: float, from_unit: str, to_unit: str) -> str:
    """``"36.8 °C = 98.24 °F"`` (result rounded half-up to 2 decimals). Raises ValueError: an
    unknown unit, or units of different kinds."""
    source, target = _unit(from_unit), _unit(to_unit)
    kind, factor = UNITS[source]
    other, other_factor = UNITS[target]
    if kind != other:
        raise ValueError(
            f"cannot convert {source} to {target}: one is a {kind}, the other a {other}"
        )
    amount = _decimal(value)
    if kind == "temperature":
        result = _from_celsius(_to_celsius(amount, source), target)
    else:
        result = amount * factor / other_factor
    return f"{_number(value)} {source} = {_money(result)} {target}"


# -- money ----------------------------------------------------------------------------------------
# Units of each currency that one US dollar buys.
PER_USD: dict[str, Decimal] = {
    "USD": Decimal(1), "EUR": Decimal("0.9213"), "GBP": Decimal("0.7894"),
    "JPY": Decimal("151.37"), "CNY": Decimal("7.2436"), "HKD": Decimal("7.8124"),
    "CHF": Decimal("0.8817"), "CAD": Decimal("1.3652"), "AUD": Decimal("1.5318"),
    "SGD": Decimal("1.3471"), "KRW": Decimal("1378.55"),
}
CURRENCY_NAMES: dict[str, str] = {
    **{a: "USD" for a in ("dollar", "dollars", "us dollar", "us dollars", "us$", "$", "美元",
                          "美金")},
    **{a: "EUR" for a in ("euro", "euros", "€", "欧元")},
    **{a: "GBP" for a in ("pound", "pounds", "pound sterling", "sterling", "£", "英镑")},
    **{a: "JPY" for a in ("yen", "japanese yen", "日元", "日币")},
    **{a: "CNY" for a in ("yuan", "rmb", "renminbi", "chinese yuan", "人民币", "元", "¥", "块")},
    **{a: "HKD" for a in ("hong kong dollar", "hong kong dollars", "港币", "港元")},
    **{a: "CHF" for a in ("franc", "francs", "swiss franc", "swiss francs", "瑞士法郎")},
    **{a: "CAD" for a in ("canadian dollar", "canadian dollars", "加元", "加币")},
    **{a: "AUD" for a in ("australian dollar", "australian dollars", "澳元", "澳币")},
    **{a: "SGD" for a in ("singapore dollar", "singapore dollars", "新加坡元", "新币")},
    **{a: "KRW" for a in ("won", "korean won", "韩元")},
}
RATE_CONTEXT = Context(prec=6, rounding=ROUND_HALF_UP)


def _currency(raw: str) -> str:
    code = raw.strip().upper()
    if code in PER_USD:
        return code
    named = CURRENCY_NAMES.get(raw.strip().casefold())
    if named:
        raise ValueError(f"unknown currency {raw!r}; use the ISO 4217 code {named!r}")
    raise ValueError(
        f"unknown currency {raw!r}; use a 3-letter ISO 4217 code, one of: {', '.join(PER_USD)}"
    )


def _rate(source: str, target: str) -> Decimal:
    """Units of ``target`` per unit of ``source``, to 6 significant digits."""
    return RATE_CONTEXT.create_decimal(PER_USD[target] / PER_USD[source]).normalize()


def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
    """``"128.5 USD = 118.39 EUR (rate: 1 USD = 0.9213 EUR)"``: the amount times the rate shown
    (6 significant digits), rounded half-up to 2 decimals. Raises ValueError: a currency that
    is not an ISO 4217 code on file (the message names the code for a currency name), or a
    negative amount."""
    source, target = _currency(from_currency), _currency(to_currency)
    if amount < 0:
        raise ValueError(f"amount must not be negative, got {amount}")
    rate = _rate(source, target)
    result = _money(_decimal(amount) * rate)
    return f"{_number(amount)} {source} = {result} {target} (rate: 1 {source} = {rate:f} {target})"


def get_exchange_rate(base: str, quote: str) -> str:
    """``"1 USD = 7.2436 CNY"`` (6 significant digits). Raises ValueError like
    :func:`convert_currency`."""
    source, target = _currency(base), _currency(quote)
    return f"1 {source} = {_rate(source, target):f} {target}"


# ticker -> company, price, currency, change today in %
STOCKS: dict[str, tuple[str, str, str, str]] = {
    "AAPL": ("Apple Inc.", "189.84", "USD", "+1.27%"),
    "MSFT": ("Microsoft Corp.", "417.32", "USD", "-0.48%"),
    "NVDA": ("NVIDIA Corp.", "903.56", "USD", "+2.91%"),
    "TSLA": ("Tesla Inc.", "171.05", "USD", "-3.12%"),
    "GOOGL": ("Alphabet Inc. (Google)", "156.28", "USD", "+0.64%"),
    "AMZN": ("Amazon.com Inc.", "182.41", "USD", "+0.35%"),
    "BABA": ("Alibaba Group / 阿里巴巴", "74.63", "USD", "-1.05%"),
    "600519.SS": ("Kweichow Moutai / 贵州茅台", "1703.62", "CNY", "-0.86%"),
    "0700.HK": ("Tencent Holdings / 腾讯控股", "368.42", "HKD", "+1.63%"),
    "7203.T": ("Toyota Motor / 丰田汽车", "3412.00", "JPY", "-0.22%"),
}
TICKER_ALIASES = {"600519.SH": "600519.SS"}
COMPANY_TICKERS: dict[str, str] = {
    **{a: "AAPL" for a in ("apple", "apple inc.", "apple inc", "苹果")},
    **{a: "MSFT" for a in ("microsoft", "微软")},
    **{a: "NVDA" for a in ("nvidia", "英伟达")},
    **{a: "TSLA" for a in ("tesla", "特斯拉")},
    **{a: "GOOGL" for a in ("google", "alphabet", "谷歌")},
    **{a: "AMZN" for a in ("amazon", "亚马逊")},
    **{a: "BABA" for a in ("alibaba", "阿里巴巴", "阿里")},
    **{a: "600519.SS" for a in ("moutai", "kweichow moutai", "茅台", "贵州茅台")},
    **{a: "0700.HK" for a in ("tencent", "腾讯", "腾讯控股")},
    **{a: "7203.T" for a in ("toyota", "丰田", "丰田汽车")},
}


def get_stock_price(ticker: str) -> Record:
    """``{"ticker", "company", "price": "189.84", "currency", "change_today": "+1.27%"}``.
    Raises ValueError: a company name instead of a ticker (the message names the ticker), a
    ticker without its exchange suffix, or an unknown ticker."""
    symbol = ticker.strip().upper()
    symbol = TICKER_ALIASES.get(symbol, symbol)
    if symbol not in STOCKS:
        by_name = COMPANY_TICKERS.get(ticker.strip().casefold())
        if by_name:
            raise ValueError(
                f"{ticker!r} is a company name, not a ticker symbol; use {by_name!r} "
                f"({STOCKS[by_name][0]})"
            )
        listed = [s for s in STOCKS if s.split(".")[0] == symbol]
        if listed:
            raise ValueError(f"ticker {ticker!r} needs its exchange suffix; use {listed[0]!r}")
        raise ValueError(
            f"unknown ticker {ticker!r}; pass a ticker symbol such as 'AAPL' or '0700.HK'"
        )
    company, price, currency, change = STOCKS[symbol]
    return {"ticker": symbol, "company": company, "price": price, "currency": currency,
            "change_today": change}


def calculate(expression: str) -> str:
    """``"<expression> = <result>"``, floats rounded to 10 decimals (``"31.2-24.7 = 6.5"``).
    Raises what :func:`react_agent.tools.builtin._calculator.evaluate` raises."""
    value = evaluate(expression)
    if isinstance(value, float):
        text = f"{round(value, 10):.10f}".rstrip("0").rstrip(".")
    else:
        text = str(value)
    return f"{expression} = {text}"


# -- contacts and messages ------------------------------------------------------------------------
# name, other spellings, department, email, phone, office
CONTACTS: list[tuple[str, tuple[str, ...], str, str, str, str]] = [
    ("Priya Raman", (), "Engineering", "priya.raman@northwind.example", "+1 415 555 0143",
     "San Francisco"),
    ("Tom Becker", (), "Sales", "tom.becker@northwind.example", "+49 30 5550 7781", "Berlin"),
    ("Bob Okafor", ("Robert Okafor",), "Sales", "bob.okafor@northwind.example",
     "+1 646 555 0199", "New York"),
    ("Bob Lindqvist", ("Robert Lindqvist",), "Finance", "bob.lindqvist@northwind.example",
     "+46 8 5550 1234", "Stockholm"),
    ("Hannah Schmidt", (), "HR", "hannah.schmidt@northwind.example", "+49 89 5550 3318",
     "Munich"),
    ("Kenji Watanabe", ("渡边健二",), "Operations", "kenji.watanabe@northwind.example",
     "+81 3 5550 2671", "Tokyo"),
    ("李娜", ("Li Na",), "市场部 / Marketing", "li.na@northwind.example", "+86 138 0013 5726",
     "上海"),
    ("王磊", ("Wang Lei",), "采购部 / Purchasing", "wang.lei@northwind.example",
     "+86 139 1024 8831", "广州"),
    ("王芳", ("Wang Fang",), "财务部 / Finance", "wang.fang@northwind.example",
     "+86 186 2277 4410", "北京"),
    ("陈晓明", ("Chen Xiaoming",), "技术部 / Engineering", "chen.xiaoming@northwind.example",
     "+86 150 0021 6658", "深圳"),
    ("张伟", ("Zhang Wei",), "销售部 / Sales", "zhang.wei@northwind.example", "+86 137 6650 1294",
     "成都"),
    ("赵敏", ("Zhao Min",), "人事部 / HR", "zhao.min@northwind.example", "+86 135 8812 0457",
     "哈尔滨"),
]


def lookup_contact(name: str) -> Record:
    """``{"name", "department", "email", "phone", "office"}`` for a full name, another spelling
    or a unique first name or surname. Raises ValueError: no match, or several (named)."""
    wanted = name.strip().casefold()
    if not wanted:
        raise ValueError("name is empty; pass a person's name, e.g. 'Priya Raman' or '李娜'")
    names = [(c, [c[0].casefold(), *(a.casefold() for a in c[1])]) for c in CONTACTS]
    found = [c for c, spellings in names if wanted in spellings]
    if not found:
        found = [c for c, spellings in names if any(wanted in s.split() or (
            not s.isascii() and s.startswith(wanted)) for s in spellings)]
    if len(found) > 1:
        choices = ", ".join(f"{c[0]} ({c[2]})" for c in found)
        raise ValueError(
            f"{len(found)} contacts match {name!r}: {choices}; call lookup_contact again with "
            "the full name"
        )
    if not found:
        raise ValueError(
            f"no contact matches {name!r}; pass only a person's name (first name or full name), "
            "e.g. 'Priya Raman' or '李娜'"
        )
    full, _, department, email, phone, office = found[0]
    return {"name": full, "department": department, "email": email, "phone": phone,
            "office": office}


EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
PHONE = re.compile(r"^\+?[\d\s().-]{7,}$")


def send_email(sent: list[Record], to: str, subject: str, body: str) -> str:
    """Record the email in ``sent``; a confirmation line. Raises ValueError: ``to`` is not an
    email address (e.g. a person's name), or the body is empty."""
    address = to.strip()
    if not EMAIL.match(address):
        raise ValueError(
            f"'to' must be an email address like 'name@example.com', got {to!r}; "
            "look the address up first"
        )
    if not body.strip():
        raise ValueError("body is empty; write the message to send")
    sent.append({"tool": "send_email", "to": address, "subject": subject, "body": body})
    return f"Email sent to {address} (subject: {subject!r})."


def send_sms(sent: list[Record], phone: str, text: str) -> str:
    """Record the text message in ``sent``; a confirmation line. Raises ValueError: ``phone``
    is not a phone number, or the text is empty."""
    number = phone.strip()
    if not PHONE.match(number) or sum(ch.isdigit() for ch in number) < 7:
        raise ValueError(
            f"'phone' must be a phone number like '+1 415 555 0143', got {phone!r}; "
            "look the number up first"
        )
    if not text.strip():
        raise ValueError("text is empty; write the message to send")
    sent.append({"tool": "send_sms", "phone": number, "text": text})
    return f"Text message sent to {number} ({len(text)} characters)."


# -- shop -----------------------------------------------------------------------------------------
# id -> name, Chinese name, price, currency, in stock, rating
PRODUCTS: dict[str, tuple[str, str, str, str, int, float]] = {
    "P-1001": ("Aurora X2 noise-cancelling headphones", "Aurora X2 降噪耳机", "249.90", "USD",
               14, 4.6),
    "P-1002": ("Kestrel 27-inch 4K monitor", "Kestrel 27 英寸 4K 显示器", "389.49", "EUR", 6, 4.5),
    "P-1003": ("Trailhead 45 L hiking backpack", "Trailhead 45 升登山背包", "119.95", "GBP", 22,
               4.4),
    "P-1004": ("Brewmaster pour-over coffee set", "Brewmaster 手冲咖啡套装", "4280.00", "JPY", 9,
               4.7),
    "P-1005": ("Lumen smart desk lamp", "Lumen 智能台灯", "319.50", "CNY", 31, 4.2),
    "P-1006": ("Nimbus ultralight umbrella", "Nimbus 超轻雨伞", "34.75", "USD", 58, 4.3),
    "P-1007": ("Stride running shoes", "Stride 跑鞋", "139.99", "USD", 0, 4.1),
    "P-1008": ("Pocket espresso maker", "便携意式咖啡机", "89.90", "EUR", 12, 3.9),
    "P-1009": ("Orbit wireless mouse", "Orbit 无线鼠标", "27.49", "USD", 40, 4.0),
    "P-1010": ("Kestrel 24-inch monitor", "Kestrel 24 英寸显示器", "219.90", "EUR", 17, 4.3),
    "P-1011": ("Aurora X1 headphones", "Aurora X1 耳机", "179.90", "USD", 25, 4.2),
    "P-1012": ("Forge mechanical keyboard", "Forge 机械键盘", "589.00", "CNY", 8, 4.8),
}

ORDERS: dict[str, Record] = {
    "A-1042": {"customer": "Maria Gonzalez", "email": "maria.gonzalez@mailbox.example",
               "status": "shipped", "items": ["1 x Aurora X2 noise-cancelling headphones (P-1001)"],
               "total": "249.90 USD", "ordered_on": "2024-05-12", "carrier": "DHL Express",
               "tracking_number": "JD014600003", "estimated_delivery": "2024-05-17"},
    "A-1057": {"customer": "刘洋", "email": "liu.yang@mailbox.example", "status": "processing",
               "items": ["2 x Lumen smart desk lamp (P-1005)"], "total": "639.00 CNY",
               "ordered_on": "2024-05-15", "estimated_ship_date": "2024-05-18"},
    "A-1063": {"customer": "James O'Neil", "email": "james.oneil@mailbox.example",
               "status": "delivered", "items": ["1 x Trailhead 45 L hiking backpack (P-1003)"],
               "total": "119.95 GBP", "ordered_on": "2024-05-06", "delivered_on": "2024-05-11",
               "signed_by": "J. O'Neil"},
    "A-2086": {"customer": "周婷", "email": "zhou.ting@mailbox.example", "status": "shipped",
               "items": ["1 x Forge mechanical keyboard (P-1012)"], "total": "589.00 CNY",
               "ordered_on": "2024-05-11", "carrier": "SF Express (顺丰速运)",
               "tracking_number": "SF1402776635", "estimated_delivery": "2024-05-16"},
    "A-2091": {"customer": "Lucas Martin", "email": "lucas.martin@mailbox.example",
               "status": "cancelled", "items": ["1 x Pocket espresso maker (P-1008)"],
               "total": "89.90 EUR", "ordered_on": "2024-05-04",
               "refund": "89.90 EUR refunded to the original card on 2024-05-09"},
    "A-2117": {"customer": "孙浩", "email": "sun.hao@mailbox.example", "status": "delayed",
               "items": ["1 x Kestrel 24-inch monitor (P-1010)"], "total": "219.90 EUR",
               "ordered_on": "2024-05-10", "note": "held at customs; new estimate 2024-05-21"},
}


def _record_id(raw: str, records: dict[str, Any], kind: str) -> str:
    """The id as stored (``"a-1042"`` -> ``"A-1042"``).

    Raises:
        ValueError: an id of the wrong form (just digits, ``"#1042"``) or one not on file.
    """
    key = raw.strip().upper()
    if key in records:
        return key
    prefix = next(iter(records))[:2]
    if not re.fullmatch(r"[A-Z]-\d{4}", key):
        raise ValueError(
            f"unknown {kind} id {raw!r}; {kind} ids look like '{prefix}' followed by four "
            f"digits, e.g. '{prefix}1234'"
        )
    raise ValueError(f"no {kind} {raw!r} on file; check the id")


def search_products(query: str) -> list[Record] | str:
    """Products whose English or Chinese name holds every word of ``query`` (else any word):
    ``[{"product_id", "name", "price", "currency"}]``, or a sentence saying none matched."""
    words = query.casefold().split()
    if not words:
        raise ValueError("query is empty; pass a keyword such as 'monitor' or '耳机'")

    def text(item: tuple[str, str, str, str, int, float]) -> str:
        return f"{item[0]} {item[1]}".casefold()

    hits = [pid for pid, item in PRODUCTS.items() if all(w in text(item) for w in words)]
    hits = hits or [pid for pid, item in PRODUCTS.items() if any(w in text(item) for w in words)]
    if not hits:
        return (f"no products match {query!r}; try a shorter keyword such as a brand or a "
                "product type (e.g. 'monitor', '耳机')")
    return [{"product_id": pid, "name": PRODUCTS[pid][0], "price": PRODUCTS[pid][2],
             "currency": PRODUCTS[pid][3]} for pid in hits]


def get_product(product_id: str) -> Record:
    """``{"product_id", "name", "name_zh", "price", "currency", "in_stock", "rating"}``. Raises
    ValueError: an id of the wrong form or not on file."""
    pid = _record_id(product_id, PRODUCTS, "product")
    name, name_zh, price, currency, stock, rating = PRODUCTS[pid]
    return {"product_id": pid, "name": name, "name_zh": name_zh, "price": price,
            "currency": currency, "in_stock": stock, "rating": rating}


def get_order(order_id: str) -> Record:
    """The order with its customer, email, items, total, status and shipping or refund details.
    Raises ValueError: an id of the wrong form (``"1042"``) or not on file."""
    oid = _record_id(order_id, ORDERS, "order")
    return {"order_id": oid, **ORDERS[oid]}


def search_orders(customer: str) -> list[Record] | str:
    """``[{"order_id", "status", "total", "ordered_on"}]`` of the customers whose name holds
    ``customer``, or a sentence saying there are none."""
    wanted = customer.strip().casefold()
    hits = [{"order_id": oid, "status": o["status"], "total": o["total"],
             "ordered_on": o["ordered_on"]}
            for oid, o in ORDERS.items() if wanted and wanted in o["customer"].casefold()]
    return hits or f"no orders for a customer named {customer!r}"


# -- travel ---------------------------------------------------------------------------------------
# (from, to) in English -> flight, departs, arrives (local times), price, currency
FLIGHTS: dict[tuple[str, str], list[tuple[str, str, str, str, str]]] = {
    ("Beijing", "Shanghai"): [("CA1501", "08:00", "10:15", "1240.00", "CNY"),
                              ("MU5138", "07:30", "09:40", "1086.00", "CNY"),
                              ("HO1252", "13:45", "16:00", "1128.00", "CNY")],
    ("Shanghai", "Tokyo"): [("MU523", "09:15", "13:05", "2864.00", "CNY"),
                            ("NH920", "14:20", "18:10", "3215.00", "CNY")],
    ("Paris", "London"): [("AF1680", "07:15", "07:40", "142.30", "EUR"),
                          ("BA309", "11:05", "11:25", "168.75", "EUR")],
    ("New York", "Toronto"): [("AC761", "06:45", "08:20", "189.40", "USD"),
                              ("DL4870", "17:10", "18:50", "204.15", "USD")],
    ("Guangzhou", "Singapore"): [("CZ351", "08:40", "12:55", "1876.00", "CNY"),
                                 ("SQ851", "15:30", "19:40", "2143.00", "CNY")],
}
# city in English -> hotel, price per night, currency, rating
HOTELS: dict[str, list[tuple[str, str, str, float]]] = {
    "Tokyo": [("Hotel Sakura Shinjuku", "18640", "JPY", 4.3),
              ("Asakusa River Inn", "12380", "JPY", 4.1), ("Ginza Grand", "41900", "JPY", 4.7)],
    "Paris": [("Hôtel Lumière Marais", "189.50", "EUR", 4.4),
              ("Gare du Nord Budget", "96.80", "EUR", 3.6)],
    "Shanghai": [("外滩江景酒店 The Bund Riverside", "1288", "CNY", 4.6),
                 ("静安精品酒店 Jing'an Boutique", "756", "CNY", 4.4)],
    "New York": [("Midtown Loft", "289.00", "USD", 4.2),
                 ("Brooklyn Bridge Suites", "214.50", "USD", 4.0)],
}


def search_flights(origin: str, destination: str) -> list[Record]:
    """``[{"flight", "departs", "arrives", "price", "currency"}]``. Raises ValueError: an unknown
    city, or a route not served (the message lists the routes)."""
    start, end = _city(origin)[0][0], _city(destination)[0][0]
    if (start, end) not in FLIGHTS:
        routes = ", ".join(f"{a} -> {b}" for a, b in FLIGHTS)
        raise ValueError(f"no flights from {origin!r} to {destination!r}; routes served: {routes}")
    return [{"flight": f, "departs": d, "arrives": a, "price": p, "currency": c}
            for f, d, a, p, c in FLIGHTS[(start, end)]]


def search_hotels(city: str) -> list[Record]:
    """``[{"hotel", "price_per_night", "currency", "rating"}]``. Raises ValueError: an unknown
    city or one without hotels (the message lists those with hotels)."""
    name = _city(city)[0][0]
    if name not in HOTELS:
        raise ValueError(f"no hotels on file for {city!r}; cities with hotels: {', '.join(HOTELS)}")
    return [{"hotel": h, "price_per_night": p, "currency": c, "rating": r}
            for h, p, c, r in HOTELS[name]]


# -- registration ---------------------------------------------------------------------------------
def _schema(required: list[str], **properties: Record) -> Record:
    return {"type": "object", "properties": properties, "required": required}


def _text(description: str) -> Record:
    return {"type": "string", "description": description}


def _num(description: str) -> Record:
    return {"type": "number", "description": description}


CITY = _text("city name in English or Chinese, e.g. 'Paris' or '巴黎'")
CURRENCY = "3-letter ISO 4217 currency code"
SPECS: dict[str, tuple[Callable[..., Any], str, Record]] = {
    "get_weather": (
        get_weather,
        "Get the current weather in a city: condition, temperature (°C), chance of rain, "
        "humidity and wind.",
        _schema(["city"], city=CITY),
    ),
    "get_forecast": (
        get_forecast,
        "Get the daily forecast for the next days, starting tomorrow: condition, high and low "
        "(°C) and chance of rain for each day.",
        _schema(["city"], city=CITY, days={"type": "integer", "minimum": 1, "maximum": 3,
                                           "default": 3,
                                           "description": "how many days, 1 to 3"}),
    ),
    "convert_units": (
        convert_units,
        "Convert a value between units of length (km, miles, m, feet, inches), mass (kg, "
        "pounds, g, ounces, 斤), volume (litres, gallons) or temperature (°C, °F, K); the "
        "result is rounded to 2 decimals.",
        _schema(["value", "from_unit", "to_unit"], value=_num("the value to convert"),
                from_unit=_text("unit of the value, e.g. 'km', 'mi', 'kg', 'lb', '°C', '°F'"),
                to_unit=_text("unit to convert to")),
    ),
    "convert_currency": (
        convert_currency,
        "Convert an amount of money from one currency to another at today's rate, rounded to "
        "2 decimals.",
        _schema(["amount", "from_currency", "to_currency"], amount=_num("the amount of money"),
                from_currency=_text(f"{CURRENCY} of the amount, e.g. 'USD'"),
                to_currency=_text(f"{CURRENCY} to convert to, e.g. 'EUR'")),
    ),
    "get_exchange_rate": (
        get_exchange_rate,
        "Get today's exchange rate: how many units of the quote currency one unit of the base "
        "currency buys.",
        _schema(["base", "quote"], base=_text(f"{CURRENCY}, e.g. 'USD'"),
                quote=_text(f"{CURRENCY}, e.g. 'JPY'")),
    ),
    "get_stock_price": (
        get_stock_price,
        "Get the latest share price of a listed company by its ticker symbol.",
        _schema(["ticker"], ticker=_text("ticker symbol, e.g. 'AAPL', '0700.HK', '600519.SS'")),
    ),
    "calculate": (
        calculate,
        "Evaluate an arithmetic expression: numbers, + - * / // % ** and parentheses.",
        _schema(["expression"], expression=_text("e.g. '(12.5 + 3) * 4'")),
    ),
    "lookup_contact": (
        lookup_contact,
        "Look up a colleague in the company directory: department, email address, phone "
        "number and office.",
        _schema(["name"], name=_text("the person's name, e.g. 'Priya Raman' or '李娜'")),
    ),
    "send_email": (
        send_email,
        "Send an email.",
        _schema(["to", "subject", "body"], to=_text("the recipient's email address"),
                subject=_text("subject line"), body=_text("the message text")),
    ),
    "send_sms": (
        send_sms,
        "Send a text message (SMS) to a phone number.",
        _schema(["phone", "text"], phone=_text("the recipient's phone number"),
                text=_text("the message text")),
    ),
    "search_products": (
        search_products,
        "Search the shop's catalogue by keyword; returns matching products with their ids "
        "and prices.",
        _schema(["query"], query=_text("keywords, e.g. 'headphones' or '显示器'")),
    ),
    "get_product": (
        get_product,
        "Get one product's details by product id: price, currency, stock and rating.",
        _schema(["product_id"], product_id=_text("product id, e.g. 'P-1001'")),
    ),
    "get_order": (
        get_order,
        "Get an order by its order id: customer, email, items, total, status and shipping.",
        _schema(["order_id"], order_id=_text("the order id")),
    ),
    "search_orders": (
        search_orders,
        "Find the orders of a customer by the customer's name.",
        _schema(["customer"], customer=_text("the customer's name")),
    ),
    "search_flights": (
        search_flights,
        "Search the next direct flights between two cities, with prices.",
        _schema(["origin", "destination"], origin=_text("departure city, e.g. 'Paris'"),
                destination=_text("arrival city, e.g. 'London'")),
    ),
    "search_hotels": (
        search_hotels,
        "Search hotels in a city, with the price per night.",
        _schema(["city"], city=CITY),
    ),
}
SIDE_EFFECTS = {"send_email", "send_sms"}
"""Tools that take the toolbox's ``sent`` list as their first argument."""


def _toolbox(*names: str) -> FakeToolbox:
    toolbox = FakeToolbox()
    for name in names:
        func, description, parameters = SPECS[name]
        if name in SIDE_EFFECTS:
            func = functools.partial(func, toolbox.sent)
        toolbox.add(func, name=name, description=description, parameters=parameters)
    return toolbox


def weather() -> FakeToolbox:
    """Current weather, forecasts and unit conversion."""
    return _toolbox("get_weather", "get_forecast", "convert_units")


def money() -> FakeToolbox:
    """Currency conversion, exchange rates, share prices and a calculator."""
    return _toolbox("convert_currency", "get_exchange_rate", "get_stock_price", "calculate")


def office() -> FakeToolbox:
    """The company directory, email and text messages."""
    return _toolbox("lookup_contact", "send_email", "send_sms")


def shop() -> FakeToolbox:
    """An online shop's support desk: catalogue, orders, email, currency and a calculator."""
    return _toolbox("search_products", "get_product", "get_order", "search_orders",
                    "send_email", "convert_currency", "calculate")


def travel() -> FakeToolbox:
    """Trip planning: weather, flights, hotels, currency, units and a calculator."""
    return _toolbox("get_weather", "get_forecast", "search_flights", "search_hotels",
                    "convert_currency", "convert_units", "calculate")


def assistant() -> FakeToolbox:
    """A personal assistant: weather, share prices, the directory, email and text messages."""
    return _toolbox("get_weather", "get_forecast", "get_stock_price", "lookup_contact",
                    "send_email", "send_sms")


def everything() -> FakeToolbox:
    """All 16 tools at once (for the many-tools tasks)."""
    return _toolbox(*SPECS)
