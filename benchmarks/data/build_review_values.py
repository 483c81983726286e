"""Write review_values.jsonl: draft final answers labelled for the review's check of values
restated wrongly (``benchmarks/review_values.py`` measures it on them)::

    python benchmarks/data/build_review_values.py    # rewrite benchmarks/data/review_values.jsonl

Each line: ``id``, ``half`` (``dev``: tuned on; ``test``: measured once), ``lang``, ``kind``
(``time``, ``date``, ``sign``, ``unit``, or ``none`` for an answer with no such value at
stake), ``label`` (``wrong``: the draft restates a value of a tool result wrongly; ``fine``:
it does not), ``why`` (what the case is), ``task``, ``results`` (``[tool, args,
observation]``, every one a successful call) and ``draft``. The tool results follow the shapes
of the project's task suites (``examples/tasks/tools.py``), its seed tools, the built-in
date/time tool and the MCP time server; the drafts, the sentences a 1.5B model writes.

The halves are drawn once, before the check was written: stratified by (kind, label), a fixed
seed, so each half has every kind of right and wrong restatement.
"""

# ruff: noqa: E501 (the width of CJK text in the case table)
from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "review_values.jsonl"

Result = tuple[str, dict[str, Any], str]

# -- tool results ---------------------------------------------------------------------------------
TOKYO_NOW: Result = ("get_current_time", {"timezone": "Asia/Tokyo"},
                     '{"timezone": "Asia/Tokyo", "datetime": "2026-12-04T02:22:24+09:00", '
                     '"day_of_week": "Friday", "is_dst": false}')
LISBON_NOW: Result = ("current_datetime", {"timezone": "Europe/Lisbon"},
                      "2026-12-04T14:05:51+00:00 (Friday)")
UTC_LATE: Result = ("current_datetime", {"timezone": "UTC"}, "2026-12-04T23:40:10+00:00 (Friday)")
SEOUL_MIDNIGHT: Result = ("current_datetime", {"timezone": "Asia/Seoul"},
                          "2026-12-05T00:15:02+09:00 (Saturday)")
NY_NOON: Result = ("current_datetime", {"timezone": "America/New_York"},
                   "2026-12-04T12:30:00-05:00 (Friday)")
LOCAL_NOW: Result = ("current_datetime", {}, "2026-12-04T19:16:23+00:00 (Friday)")
CONVERT_TIME: Result = ("convert_time", {"source_timezone": "Asia/Shanghai", "time": "14:00",
                                         "target_timezone": "America/New_York"},
                        '{"source": {"timezone": "Asia/Shanghai", "datetime": '
                        '"2026-12-04T14:00:00+08:00", "day_of_week": "Friday", "is_dst": false}, '
                        '"target": {"timezone": "America/New_York", "datetime": '
                        '"2026-12-04T01:00:00-05:00", "day_of_week": "Friday", "is_dst": false}, '
                        '"time_difference": "-13.0h"}')
FLIGHTS_BJ_SH: Result = ("search_flights", {"origin": "Beijing", "destination": "Shanghai"},
                         '[{"flight": "CA1501", "departs": "08:00", "arrives": "10:15", '
                         '"price": "1240.00", "currency": "CNY"}, {"flight": "MU5138", '
                         '"departs": "07:30", "arrives": "09:40", "price": "1086.00", '
                         '"currency": "CNY"}, {"flight": "HO1252", "departs": "13:45", '
                         '"arrives": "16:00", "price": "1128.00", "currency": "CNY"}]')
FLIGHTS_SH_TK: Result = ("search_flights", {"origin": "上海", "destination": "东京"},
                         '[{"flight": "MU523", "departs": "09:15", "arrives": "13:05", '
                         '"price": "2864.00", "currency": "CNY"}, {"flight": "NH920", '
                         '"departs": "14:20", "arrives": "18:10", "price": "3215.00", '
                         '"currency": "CNY"}]')
FLIGHTS_NY_TO: Result = ("search_flights", {"origin": "New York", "destination": "Toronto"},
                         '[{"flight": "AC761", "departs": "06:45", "arrives": "08:20", '
                         '"price": "189.40", "currency": "USD"}, {"flight": "DL4870", '
                         '"departs": "17:10", "arrives": "18:50", "price": "204.15", '
                         '"currency": "USD"}]')
EVENT: Result = ("get_event", {"title": "design review"},
                 '{"event": "Design review", "date": "2026-03-07", "start": "15:00", '
                 '"end": "16:30", "room": "4B"}')
STANDUP: Result = ("get_event", {"title": "standup"},
                   "Standup: every weekday 9:30 AM - 9:45 AM, room 2A, next on 7 December 2026")
ORDER_1042: Result = ("get_order", {"order_id": "A-1042"},
                      '{"order_id": "A-1042", "customer": "Maria Gonzalez", "status": "shipped", '
                      '"items": ["1 x Aurora X2 noise-cancelling headphones (P-1001)"], '
                      '"total": "249.90 USD", "ordered_on": "2024-05-12", "carrier": '
                      '"DHL Express", "tracking_number": "JD014600003", '
                      '"estimated_delivery": "2024-05-17"}')
ORDER_2117: Result = ("get_order", {"order_id": "A-2117"},
                      '{"order_id": "A-2117", "customer": "孙浩", "status": "delayed", '
                      '"items": ["1 x Kestrel 24-inch monitor (P-1010)"], "total": "219.90 EUR", '
                      '"ordered_on": "2024-05-10", "note": "held at customs; new estimate '
                      '2024-05-21"}')
ORDER_2091: Result = ("get_order", {"order_id": "A-2091"},
                      '{"order_id": "A-2091", "customer": "Lucas Martin", "status": "cancelled", '
                      '"items": ["1 x Pocket espresso maker (P-1008)"], "total": "89.90 EUR", '
                      '"ordered_on": "2024-05-04", "refund": "89.90 EUR refunded to the original '
                      'card on 2024-05-09"}')
INVOICE: Result = ("get_invoice", {"invoice_id": "INV-204"},
                   "Invoice INV-204 is due on 4 December 2026; amount 1,250.00 EUR, unpaid.")
SHIPMENT_US: Result = ("get_shipment", {"id": "S-88"},
                       '{"shipment": "S-88", "ship_date": "12/04/2026", "weight_kg": 3.5}')
TORONTO: Result = ("get_weather", {"city": "Toronto"},
                   '{"city": "Toronto", "condition": "snow showers", "temperature_c": -2.8, '
                   '"chance_of_rain": "60%", "humidity": "74%", "wind_kph": 24.9}')
TORONTO_ZH: Result = ("get_weather", {"city": "多伦多"},
                      '{"city": "多伦多", "condition": "阵雪", "temperature_c": -2.8, '
                      '"chance_of_rain": "60%", "humidity": "74%", "wind_kph": 24.9}')
HARBIN_ZH: Result = ("get_weather", {"city": "哈尔滨"},
                     '{"city": "哈尔滨", "condition": "晴", "temperature_c": -6.4, '
                     '"chance_of_rain": "0%", "humidity": "45%", "wind_kph": 19.6}')
CHENGDU_ZH: Result = ("get_weather", {"city": "成都"},
                      '{"city": "成都", "condition": "阴", "temperature_c": 16.9, '
                      '"chance_of_rain": "45%", "humidity": "81%", "wind_kph": 5.3}')
HARBIN: Result = ("get_weather", {"city": "Harbin"},
                  '{"city": "Harbin", "condition": "sunny", "temperature_c": -6.4, '
                  '"chance_of_rain": "0%", "humidity": "45%", "wind_kph": 19.6}')
CHENGDU: Result = ("get_weather", {"city": "Chengdu"},
                   '{"city": "Chengdu", "condition": "overcast", "temperature_c": 16.9, '
                   '"chance_of_rain": "45%", "humidity": "81%", "wind_kph": 5.3}')
CALC_DIFF: Result = ("calculate", {"expression": "16.9 - (-6.4)"}, "16.9 - (-6.4) = 23.3")
HARBIN_FORECAST: Result = ("get_forecast", {"city": "哈尔滨", "days": 2},
                           '{"city": "哈尔滨", "forecast": [{"day": "明天", "condition": "晴", '
                           '"high_c": -2.1, "low_c": -8.9, "chance_of_rain": "0%"}, {"day": '
                           '"后天", "condition": "小雪", "high_c": -4.6, "low_c": -13.2, '
                           '"chance_of_rain": "50%"}]}')
TORONTO_FORECAST: Result = ("get_forecast", {"city": "Toronto", "days": 2},
                            '{"city": "Toronto", "forecast": [{"day": "tomorrow", "condition": '
                            '"light snow", "high_c": -1.4, "low_c": -7.2, "chance_of_rain": '
                            '"55%"}, {"day": "day after tomorrow", "condition": "cloudy", '
                            '"high_c": 0.8, "low_c": -5.9, "chance_of_rain": "20%"}]}')
BEIJING: Result = ("get_weather", {"city": "Beijing"},
                   '{"city": "Beijing", "condition": "sunny", "temperature_c": 17.4, '
                   '"chance_of_rain": "2%", "humidity": "28%", "wind_kph": 12.4}')
SHANGHAI: Result = ("get_weather", {"city": "Shanghai"},
                    '{"city": "Shanghai", "condition": "moderate rain", "temperature_c": 21.7, '
                    '"chance_of_rain": "90%", "humidity": "92%", "wind_kph": 16.3}')
CALC_NEG: Result = ("calculate", {"expression": "17.4 - 21.7"}, "17.4 - 21.7 = -4.3")
TSLA: Result = ("get_stock_price", {"ticker": "TSLA"},
                '{"ticker": "TSLA", "company": "Tesla Inc.", "price": "171.05", '
                '"currency": "USD", "change_today": "-3.12%"}')
MSFT: Result = ("get_stock_price", {"ticker": "MSFT"},
                '{"ticker": "MSFT", "company": "Microsoft Corp.", "price": "417.32", '
                '"currency": "USD", "change_today": "-0.48%"}')
NVDA: Result = ("get_stock_price", {"ticker": "NVDA"},
                '{"ticker": "NVDA", "company": "NVIDIA Corp.", "price": "903.56", '
                '"currency": "USD", "change_today": "+2.91%"}')
TENCENT: Result = ("get_stock_price", {"ticker": "0700.HK"},
                   '{"ticker": "0700.HK", "company": "Tencent Holdings / 腾讯控股", '
                   '"price": "368.42", "currency": "HKD", "change_today": "+1.63%"}')
MOUTAI: Result = ("get_stock_price", {"ticker": "600519.SS"},
                  '{"ticker": "600519.SS", "company": "Kweichow Moutai / 贵州茅台", '
                  '"price": "1703.62", "currency": "CNY", "change_today": "-0.86%"}')
BALANCE: Result = ("get_balance", {"account": "checking"},
                   '{"account": "checking", "balance": -152.40, "currency": "EUR"}')
DEAD_SEA: Result = ("get_elevation", {"place": "Dead Sea shore"},
                    "Dead Sea shore: elevation -430 m")
MOUNTAIN_HUT: Result = ("get_weather", {"city": "Zugspitze"},
                        "Zugspitze summit: clear, 3 °C, wind 40 km/h")
SEED_BJ: Result = ("get_weather", {"city": "北京"}, "晴，22°C，东南风 3 级，空气质量良")
SEED_GZ: Result = ("get_weather", {"city": "广州"}, "雷阵雨，气温23-32℃，南风3级")
SEED_TOKYO: Result = ("get_current_weather", {"location": "Tokyo"},
                      '{"location": "Tokyo", "temperature": 10, "unit": "celsius"}')
C_TO_F: Result = ("convert_units", {"value": 36.8, "from_unit": "°C", "to_unit": "°F"},
                  "36.8 °C = 98.24 °F")
KM_TO_MI: Result = ("convert_units", {"value": 5, "from_unit": "km", "to_unit": "mi"},
                    "5 km = 3.11 mi")
LB_TO_KG: Result = ("convert_units", {"value": 10, "from_unit": "lb", "to_unit": "kg"},
                    "10 lb = 4.54 kg")
F_TO_C: Result = ("convert_units", {"value": 22, "from_unit": "°F", "to_unit": "°C"},
                  "22 °F = -5.56 °C")
USD_EUR: Result = ("convert_currency", {"amount": 128.5, "from_currency": "USD",
                                        "to_currency": "EUR"},
                   "128.5 USD = 118.39 EUR (rate: 1 USD = 0.9213 EUR)")
CNY_JPY: Result = ("convert_currency", {"amount": 500, "from_currency": "CNY",
                                        "to_currency": "JPY"},
                   "500 CNY = 10448.67 JPY (rate: 1 CNY = 20.8973 JPY)")
RATE: Result = ("get_exchange_rate", {"base": "USD", "quote": "CNY"}, "1 USD = 7.2436 CNY")
HOTELS_TOKYO: Result = ("search_hotels", {"city": "Tokyo"},
                        '[{"hotel": "Hotel Sakura Shinjuku", "price_per_night": "18640", '
                        '"currency": "JPY", "rating": 4.3}, {"hotel": "Asakusa River Inn", '
                        '"price_per_night": "12380", "currency": "JPY", "rating": 4.1}]')
HOTELS_PARIS: Result = ("search_hotels", {"city": "Paris"},
                        '[{"hotel": "Hôtel Lumière Marais", "price_per_night": "189.50", '
                        '"currency": "EUR", "rating": 4.4}, {"hotel": "Gare du Nord Budget", '
                        '"price_per_night": "96.80", "currency": "EUR", "rating": 3.6}]')
MONITOR: Result = ("get_product", {"product_id": "P-1002"},
                   '{"product_id": "P-1002", "name": "Kestrel 27-inch 4K monitor", "name_zh": '
                   '"Kestrel 27 英寸 4K 显示器", "price": "389.49", "currency": "EUR", '
                   '"in_stock": 6, "rating": 4.5}')
PARIS: Result = ("get_weather", {"city": "Paris"},
                 '{"city": "Paris", "condition": "light rain", "temperature_c": 14.6, '
                 '"chance_of_rain": "80%", "humidity": "87%", "wind_kph": 13.2}')
PARIS_FORECAST: Result = ("get_forecast", {"city": "Paris", "days": 1},
                          '{"city": "Paris", "forecast": [{"day": "tomorrow", "condition": '
                          '"showers", "high_c": 15.8, "low_c": 9.2, "chance_of_rain": "60%"}]}')
ROUTE: Result = ("get_route", {"origin": "Lyon", "destination": "Geneva"},
                 '{"route": "Lyon -> Geneva", "distance_km": 151, "duration": "1 h 52 min"}')
RUN_LOG: Result = ("get_run", {"date": "yesterday"},
                   "Run on 2026-12-03: 8.4 miles in 1:12:30, average pace 8:38 per mile")
PI: Result = ("calculate", {"expression": "22 / 7"}, "22 / 7 = 3.1428571429")
LINES: Result = ("file_info", {"path": "README.md"}, "README.md: 173 lines, 7,204 bytes")
TIMES3: Result = ("calculate", {"expression": "173 * 3"}, "173 * 3 = 519")
ROOM: Result = ("get_thermostat", {"room": "server room"},
                "server room: 18 °C, humidity 40%, set point 20 °C")
BATTERY: Result = ("get_device", {"device": "sensor-7"},
                   '{"device": "sensor-7", "battery": "12%", "last_seen": "2026-12-04 06:10", '
                   '"temperature_c": -1}')


CASES: list[dict[str, Any]] = []


def case(id_: str, lang: str, kind: str, label: str, why: str, task: str,
         results: list[Result], draft: str) -> None:
    CASES.append({"id": id_, "lang": lang, "kind": kind, "label": label, "why": why,
                  "task": task, "results": [list(r) for r in results], "draft": draft})


W, F = "wrong", "fine"

# -- times ----------------------------------------------------------------------------------------
T = "What time is it in Tokyo?"
case("time-mcp-readme", "en", "time", W, "02:22:24 restated as 02:22:24 PM (the README's run)",
     T, [TOKYO_NOW], "The current time in Tokyo is 02:22:24 PM.")
case("time-mcp-pm", "en", "time", W, "02:22 as 2:22 PM", T, [TOKYO_NOW],
     "It is 2:22 PM in Tokyo right now.")
case("time-mcp-24h", "en", "time", F, "the same 24h time, with the date", T, [TOKYO_NOW],
     "It is 02:22:24 in Tokyo (Friday, December 4, 2026).")
case("time-mcp-am", "en", "time", F, "02:22 as 2:22 AM", T, [TOKYO_NOW],
     "The current time in Tokyo is 2:22 AM on Friday.")
case("time-mcp-iso", "en", "time", F, "copied ISO text", T, [TOKYO_NOW],
     "In Tokyo it is 2026-12-04T02:22:24+09:00.")
case("time-mcp-zh-pm", "zh", "time", W, "02:22 as 下午2点22分", "东京现在几点？", [TOKYO_NOW],
     "东京现在是下午2点22分。")
case("time-mcp-zh-am", "zh", "time", F, "02:22 as 凌晨2点22分", "东京现在几点？", [TOKYO_NOW],
     "东京现在是凌晨2点22分（2026年12月4日，星期五）。")
case("time-mcp-zh-24h", "zh", "time", F, "02:22:24 copied", "东京现在几点？", [TOKYO_NOW],
     "东京现在的时间是 02:22:24，星期五。")
case("time-mcp-zh-wrong-24h", "zh", "time", W, "02:22 as 14:22", "东京现在几点？", [TOKYO_NOW],
     "东京现在是14:22。")
L = "What time is it in Lisbon right now?"
case("time-lisbon-12h", "en", "time", F, "14:05 as 2:05 PM", L, [LISBON_NOW],
     "It's 2:05 PM in Lisbon.")
case("time-lisbon-24h", "en", "time", F, "14:05 with the date written out", L, [LISBON_NOW],
     "It is 14:05 in Lisbon on Friday, 4 December 2026.")
case("time-lisbon-am", "en", "time", W, "14:05 as 2:05 AM", L, [LISBON_NOW],
     "It's 2:05 AM in Lisbon.")
case("time-lisbon-02", "en", "time", W, "14:05 as 02:05", L, [LISBON_NOW],
     "The current time in Lisbon is 02:05:51.")
case("time-lisbon-zh-pm", "zh", "time", F, "14:05 as 下午2点05分", "里斯本现在几点了？",
     [LISBON_NOW], "里斯本现在是下午2点05分。")
case("time-lisbon-zh-am", "zh", "time", W, "14:05 as 上午2点05分", "里斯本现在几点了？",
     [LISBON_NOW], "里斯本现在是上午2点05分，星期五。")
case("time-lisbon-zh-24h", "zh", "time", F, "14:05 copied", "里斯本现在几点了？", [LISBON_NOW],
     "里斯本现在是 14:05。")
U = "What is the time in UTC?"
case("time-utc-pm", "en", "time", F, "23:40 as 11:40 PM", U, [UTC_LATE],
     "The current UTC time is 11:40 PM (23:40:10).")
case("time-utc-am", "en", "time", W, "23:40 as 11:40 AM", U, [UTC_LATE],
     "It is 11:40 AM UTC on Friday, December 4, 2026.")
case("time-utc-lower-pm", "en", "time", F, "23:40 as 11:40pm", U, [UTC_LATE],
     "It's 11:40pm UTC.")
case("time-utc-pm-dots", "en", "time", W, "23:40 as 11:40 a.m.", U, [UTC_LATE],
     "It's 11:40 a.m. in UTC.")
S = "首尔现在几点？"
case("time-seoul-midnight-am", "en", "time", F, "00:15 as 12:15 AM",
     "What time is it in Seoul?", [SEOUL_MIDNIGHT], "It's 12:15 AM on Saturday in Seoul.")
case("time-seoul-midnight-pm", "en", "time", W, "00:15 as 12:15 PM",
     "What time is it in Seoul?", [SEOUL_MIDNIGHT], "It is 12:15 PM in Seoul.")
case("time-seoul-midnight-00", "zh", "time", F, "00:15 copied", S, [SEOUL_MIDNIGHT],
     "首尔现在是 00:15，星期六。")
case("time-seoul-midnight-zh", "zh", "time", F, "00:15 as 凌晨12点15分", S, [SEOUL_MIDNIGHT],
     "首尔现在是凌晨12点15分。")
case("time-seoul-midnight-zh-wrong", "zh", "time", W, "00:15 as 中午12点15分", S, [SEOUL_MIDNIGHT],
     "首尔现在是中午12点15分，2026年12月5日。")
N = "What time is it in New York?"
case("time-ny-noon-pm", "en", "time", F, "12:30 as 12:30 PM", N, [NY_NOON],
     "It is 12:30 PM in New York.")
case("time-ny-noon-am", "en", "time", W, "12:30 as 12:30 AM", N, [NY_NOON],
     "It's 12:30 AM in New York (Friday).")
case("time-ny-noon-zh", "zh", "time", F, "12:30 as 中午12点30分", "纽约现在几点？", [NY_NOON],
     "纽约现在是中午12点30分。")
case("time-ny-noon-zh-half", "zh", "time", F, "12:30 as 12点半", "纽约现在几点？", [NY_NOON],
     "纽约现在是12点半，星期五。")
case("time-ny-offset-sign", "en", "time", F, "the offset stated as UTC-5", N, [NY_NOON],
     "It is 12:30 PM in New York (UTC-5).")
C = "When it is 2 PM in Shanghai today, what time is it in New York?"
case("time-convert-right", "en", "time", F, "both times right, difference as hours behind", C,
     [CONVERT_TIME], "When it is 2:00 PM in Shanghai, it is 1:00 AM in New York, 13 hours behind.")
case("time-convert-pm", "en", "time", W, "01:00 as 1:00 PM", C, [CONVERT_TIME],
     "When it is 2 PM in Shanghai, it is 1:00 PM in New York.")
case("time-convert-diff", "en", "sign", F, "-13.0h as a difference of 13 hours", C,
     [CONVERT_TIME], "It is 1:00 AM in New York; the time difference is 13 hours.")
case("time-convert-zh", "zh", "time", F, "01:00 as 凌晨1点", "上海今天下午2点时，纽约是几点？",
     [CONVERT_TIME], "上海下午2点时，纽约是凌晨1点，比上海晚13个小时。")
case("time-convert-zh-wrong", "zh", "time", W, "01:00 as 下午1点", "上海今天下午2点时，纽约是几点？",
     [CONVERT_TIME], "上海下午2点的时候，纽约是下午1点。")
FL = "Which flight from Beijing to Shanghai leaves first, and when does it land?"
case("time-flight-am", "en", "time", F, "07:30/09:40 as AM", FL, [FLIGHTS_BJ_SH],
     "The earliest flight is MU5138, departing at 7:30 AM and arriving at 9:40 AM, for 1086.00 "
     "CNY.")
case("time-flight-copied", "en", "time", F, "times copied", FL, [FLIGHTS_BJ_SH],
     "MU5138 leaves first: it departs at 07:30 and lands at 09:40.")
case("time-flight-pm-wrong", "en", "time", W, "07:30 as 7:30 PM", FL, [FLIGHTS_BJ_SH],
     "The first flight is MU5138, which departs at 7:30 PM and arrives at 9:40 PM.")
FL2 = "Is there an afternoon flight from Beijing to Shanghai? When does it arrive?"
case("time-flight-afternoon", "en", "time", F, "13:45/16:00 as PM", FL2, [FLIGHTS_BJ_SH],
     "Yes, HO1252 departs at 1:45 PM and arrives at 4:00 PM, for 1128.00 CNY.")
case("time-flight-afternoon-wrong", "en", "time", W, "16:00 as 4:00 AM", FL2, [FLIGHTS_BJ_SH],
     "Yes: HO1252 leaves at 13:45 and arrives at 4:00 AM.")
case("time-flight-afternoon-bare", "en", "time", F, "16:00 as 4 pm", FL2, [FLIGHTS_BJ_SH],
     "Yes, HO1252 at 1:45 pm, landing at 4 pm.")
case("time-flight-zh-wrong", "zh", "time", W, "13:45 as 凌晨1点45分", "北京到上海下午有航班吗？几点到？",
     [FLIGHTS_BJ_SH], "有，HO1252 凌晨1点45分起飞，下午4点到达。")
case("time-flight-zh-right", "zh", "time", F, "13:45/16:00 as 下午", "北京到上海下午有航班吗？几点到？",
     [FLIGHTS_BJ_SH], "有，HO1252 下午1点45分起飞，下午4点到达，票价1128.00元。")
case("time-flight-zh-copied", "zh", "time", F, "07:30/09:40 copied", "北京飞上海最早的航班是几点？",
     [FLIGHTS_BJ_SH], "最早的航班是 MU5138，07:30 起飞，09:40 到达，票价 1086.00 元。")
case("time-flight-duration", "en", "none", F, "a duration worked out from two times",
     "How long is the CA1501 flight from Beijing to Shanghai?", [FLIGHTS_BJ_SH],
     "CA1501 departs at 08:00 and arrives at 10:15, so the flight takes 2 hours 15 minutes.")
case("time-flight-nh-wrong", "en", "time", W, "14:20 as 2:20 AM",
     "What are the flights from Shanghai to Tokyo?", [FLIGHTS_SH_TK],
     "There are two flights: MU523 at 9:15 AM (arrives 1:05 PM) and NH920 at 2:20 AM "
     "(arrives 6:10 PM).")
case("time-flight-nh-right", "en", "time", F, "both flights in 12h form",
     "What are the flights from Shanghai to Tokyo?", [FLIGHTS_SH_TK],
     "There are two flights: MU523 at 9:15 AM (arrives 1:05 PM) and NH920 at 2:20 PM "
     "(arrives 6:10 PM).")
case("time-flight-zh-evening", "zh", "time", F, "18:10 as 晚上6点10分", "上海飞东京的NH920几点到？",
     [FLIGHTS_SH_TK], "NH920 下午2点20分起飞，晚上6点10分到达东京。")
case("time-flight-zh-morning-wrong", "zh", "time", W, "18:10 as 早上6点10分",
     "上海飞东京的NH920几点到？", [FLIGHTS_SH_TK], "NH920 14:20 起飞，早上6点10分到达东京。")
case("time-flight-user-time", "en", "time", F, "a time from the user's message",
     "I finish work at 5:30 PM. Which New York to Toronto flight can I still catch?",
     [FLIGHTS_NY_TO],
     "You finish at 5:30 PM, so AC761 (6:45 AM) is too early; take DL4870 at 5:10 PM... "
     "no, it leaves at 17:10, before 5:30 PM, so neither flight works today.")
case("time-flight-ny-wrong", "en", "time", W, "06:45 as 6:45 PM",
     "What is the cheapest flight from New York to Toronto?", [FLIGHTS_NY_TO],
     "The cheapest flight is AC761 at 189.40 USD, leaving at 6:45 PM and arriving at 8:20 PM.")
case("time-flight-ny-right", "en", "time", F, "06:45 as 6:45 in the morning",
     "What is the cheapest flight from New York to Toronto?", [FLIGHTS_NY_TO],
     "AC761 is the cheapest (189.40 USD); it leaves at 6:45 in the morning and lands at 8:20.")
E = "When is the design review?"
case("time-event-right", "en", "time", F, "15:00-16:30 as 3:00-4:30 PM", E, [EVENT],
     "The design review is on March 7, 2026, from 3:00 PM to 4:30 PM in room 4B.")
case("time-event-am", "en", "time", W, "15:00-16:30 as AM", E, [EVENT],
     "The design review is on March 7, 2026, from 3:00 AM to 4:30 AM in room 4B.")
case("time-event-zh-right", "zh", "time", F, "15:00-16:30 as 下午3点到4点半", "设计评审是什么时候？",
     [EVENT], "设计评审在2026年3月7日下午3点到4点半，在4B会议室。")
case("time-event-zh-wrong", "zh", "time", W, "15:00 as 上午3点", "设计评审是什么时候？", [EVENT],
     "设计评审在2026年3月7日上午3点开始，4点半结束，地点4B。")
case("time-standup-right", "en", "time", F, "9:30 AM copied with the next date",
     "When is the next standup?", [STANDUP],
     "The next standup is on 7 December 2026 at 9:30 AM in room 2A.")
case("time-standup-24", "en", "time", F, "9:30 AM as 09:30", "When is the next standup?",
     [STANDUP], "The next standup is on 2026-12-07 at 09:30 in room 2A.")
case("time-standup-wrong", "en", "time", W, "9:30 AM as 9:30 PM", "When is the next standup?",
     [STANDUP], "The next standup is on December 7, 2026, at 9:30 PM in room 2A.")
case("time-standup-zh-wrong", "zh", "time", W, "9:30 AM as 21:30", "下次站会是什么时候？",
     [STANDUP], "下次站会是2026年12月7日21:30，在2A会议室。")
case("time-run-duration", "en", "none", F, "a duration and a pace, not clock times",
     "How was my run yesterday?", [RUN_LOG],
     "Yesterday (2026-12-03) you ran 8.4 miles in 1:12:30, at an average pace of 8:38 per mile.")
case("time-user-train", "en", "time", F, "the user's 14:22 stated as 2:22 PM",
     "My train leaves at 14:22 Tokyo time. What time is it in Tokyo now?", [TOKYO_NOW],
     "It is 2:22 AM in Tokyo now; your train at 2:22 PM leaves in 12 hours.")
case("time-device-last-seen", "en", "time", W, "06:10 as 6:10 PM",
     "When was sensor-7 last seen, and how is its battery?", [BATTERY],
     "Sensor-7 was last seen on 2026-12-04 at 6:10 PM; its battery is at 12%.")
case("time-device-last-seen-right", "en", "time", F, "06:10 as 6:10 AM",
     "When was sensor-7 last seen, and how is its battery?", [BATTERY],
     "Sensor-7 was last seen at 6:10 AM on December 4, 2026, with 12% battery left.")

# -- dates ----------------------------------------------------------------------------------------
OQ = "When will order A-1042 arrive?"
case("date-order-right", "en", "date", F, "2024-05-17 as May 17, 2024", OQ, [ORDER_1042],
     "Order A-1042 has shipped with DHL Express and should arrive on May 17, 2024.")
case("date-order-right-dmy", "en", "date", F, "2024-05-17 as 17 May 2024", OQ, [ORDER_1042],
     "Order A-1042 was shipped by DHL Express (tracking JD014600003); estimated delivery: "
     "17 May 2024.")
case("date-order-swap", "en", "date", W, "2024-05-12 as December 5, 2024", OQ, [ORDER_1042],
     "Order A-1042 was placed on December 5, 2024 and should arrive on May 17, 2024.")
case("date-order-month", "en", "date", W, "2024-05-17 as June 17", OQ,
     [ORDER_1042], "Order A-1042 is shipped and will arrive on June 17, 2024.")
case("date-order-day", "en", "date", W, "2024-05-17 as May 27", OQ, [ORDER_1042],
     "Your order A-1042 has shipped and should be delivered on May 27, 2024.")
case("date-order-ambiguous-ok", "en", "date", F, "2024-05-17 as 17/05/2024", OQ, [ORDER_1042],
     "Order A-1042 has shipped; the estimated delivery date is 17/05/2024.")
case("date-order-us-ok", "en", "date", F, "2024-05-17 as 05/17/2024", OQ, [ORDER_1042],
     "It has shipped and should arrive on 05/17/2024.")
case("date-order-zh", "zh", "date", F, "2024-05-17 as 2024年5月17日", "订单A-1042什么时候到？",
     [ORDER_1042], "订单A-1042已由DHL Express发货，预计2024年5月17日送达。")
case("date-order-zh-wrong", "zh", "date", W, "2024-05-17 as 5月7日", "订单A-1042什么时候到？",
     [ORDER_1042], "订单A-1042已发货，预计5月7日送达。")
case("date-order-zh-year", "zh", "date", W, "2024-05-17 as 2025年5月17日", "订单A-1042什么时候到？",
     [ORDER_1042], "您的订单A-1042已发货，预计2025年5月17日到达。")
case("date-order-zh-noyear", "zh", "date", F, "2024-05-17 as 5月17号", "订单A-1042什么时候到？",
     [ORDER_1042], "已经发货了，预计5月17号到。")
case("date-order-days", "en", "date", F, "a number of days worked out from two dates",
     "How many days after ordering will A-1042 arrive?", [ORDER_1042],
     "It was ordered on 2024-05-12 and should arrive on 2024-05-17, 5 days later.")
case("date-order-user-today", "en", "date", F, "today's date from the user",
     "Today is May 14, 2024. How long until order A-1042 arrives?", [ORDER_1042],
     "Today is May 14, 2024 and the delivery is expected on May 17, 2024, so 3 more days.")
D = "What is the status of order A-2117?"
case("date-delayed-right", "en", "date", F, "the new estimate as May 21", D, [ORDER_2117],
     "Order A-2117 is delayed: it is held at customs, with a new estimate of May 21, 2024.")
case("date-delayed-swap", "en", "date", W, "2024-05-21 as 2024-05-12", D, [ORDER_2117],
     "Order A-2117 is delayed (held at customs); the new estimate is 2024-05-12.")
case("date-delayed-zh", "zh", "date", F, "2024-05-21 as 5月21日", "订单A-2117怎么样了？",
     [ORDER_2117], "订单A-2117延误了，目前在海关被扣留，新的预计时间是2024年5月21日。")
case("date-delayed-zh-wrong", "zh", "date", W, "2024-05-10 as 2024年10月5日",
     "订单A-2117是哪天下的？", [ORDER_2117], "订单A-2117是2024年10月5日下的，现在延误了。")
R = "Was I refunded for order A-2091?"
case("date-refund-right", "en", "date", F, "2024-05-09 as 9 May", R, [ORDER_2091],
     "Yes: order A-2091 was cancelled and 89.90 EUR was refunded to your card on 9 May 2024.")
case("date-refund-wrong", "en", "date", W, "2024-05-09 as September 5", R, [ORDER_2091],
     "Yes, 89.90 EUR was refunded to the original card on September 5, 2024.")
case("date-refund-wrong-unit", "en", "unit", W, "89.90 EUR as 89.90 USD", R, [ORDER_2091],
     "Yes, the order was cancelled and 89.90 USD was refunded on 2024-05-09.")
Y = "What's today's date?"
case("date-today-right", "en", "date", F, "the date written out", Y, [LOCAL_NOW],
     "Today is Friday, December 4, 2026.")
case("date-today-us", "en", "date", F, "as 12/04/2026", Y, [LOCAL_NOW], "Today is 12/04/2026.")
case("date-today-eu", "en", "date", F, "as 04/12/2026", Y, [LOCAL_NOW],
     "Today's date is 04/12/2026 (Friday).")
case("date-today-swap", "en", "date", W, "as April 12, 2026", Y, [LOCAL_NOW],
     "Today is Friday, April 12, 2026.")
case("date-today-month", "en", "date", W, "as 4 November 2026", Y, [LOCAL_NOW],
     "Today is 4 November 2026.")
case("date-today-year", "en", "date", W, "as December 4, 2025", Y, [LOCAL_NOW],
     "Today's date is December 4, 2025.")
case("date-today-dots", "en", "date", F, "as 04.12.2026", Y, [LOCAL_NOW],
     "Today is Friday, 04.12.2026.")
case("date-tomorrow", "en", "date", F, "tomorrow's date worked out", "What's the date tomorrow?",
     [LOCAL_NOW], "Today is Friday, so tomorrow is Saturday, December 5, 2026.")
case("date-ten-days", "en", "date", F, "a date ten days on, worked out",
     "What's the date 10 days from today?", [LOCAL_NOW],
     "10 days from today is December 14, 2026.")
case("date-today-zh", "zh", "date", F, "as 2026年12月4日", "今天几号？", [LOCAL_NOW],
     "今天是2026年12月4日，星期五。")
case("date-today-zh-wrong", "zh", "date", W, "as 2026年11月4日", "今天几号？", [LOCAL_NOW],
     "今天是2026年11月4日，星期五。")
case("date-today-zh-short", "zh", "date", F, "as 12月4号", "今天几号？", [LOCAL_NOW],
     "今天是12月4号。")
case("date-ten-days-zh", "zh", "date", F, "ten days on, worked out", "十天后是几号？", [LOCAL_NOW],
     "今天是12月4日，十天后是2026年12月14日。")
case("date-weekend-zh", "zh", "date", F, "the coming Sunday worked out", "这周日是几号？",
     [LOCAL_NOW], "今天是星期五，这周日是2026年12月6日。")
case("date-event-right", "en", "date", F, "2026-03-07 as 7 March 2026", E, [EVENT],
     "The design review is on 7 March 2026, 15:00-16:30, room 4B.")
case("date-event-swap", "en", "date", W, "2026-03-07 as July 3, 2026", E, [EVENT],
     "The design review is on July 3, 2026 from 15:00 to 16:30 in room 4B.")
case("date-event-zh-swap", "zh", "date", W, "2026-03-07 as 2026年7月3日", "设计评审是哪天？",
     [EVENT], "设计评审在2026年7月3日，15:00到16:30，4B会议室。")
case("date-event-slash-ok", "en", "date", F, "2026-03-07 as 3/7/2026", E, [EVENT],
     "The design review is on 3/7/2026 from 15:00 to 16:30 in room 4B.")
IQ = "When is invoice INV-204 due, and how much is it?"
case("date-invoice-right", "en", "date", F, "4 December 2026 as 2026-12-04", IQ, [INVOICE],
     "Invoice INV-204 is due on 2026-12-04; the amount is 1,250.00 EUR and it is unpaid.")
case("date-invoice-day", "en", "date", W, "4 December as 14 December", IQ, [INVOICE],
     "Invoice INV-204 (1,250.00 EUR, unpaid) is due on 14 December 2026.")
case("date-invoice-unit", "en", "unit", W, "1,250.00 EUR as USD", IQ, [INVOICE],
     "INV-204 is due on 4 December 2026, amount 1,250.00 USD.")
case("date-invoice-zh", "zh", "date", F, "as 2026年12月4日, amount 1250欧元", "发票INV-204什么时候到期？金额多少？",
     [INVOICE], "发票INV-204的到期日是2026年12月4日，金额1250欧元，尚未支付。")
SH = "When did shipment S-88 ship?"
case("date-us-format-right", "en", "date", F, "12/04/2026 as December 4, 2026", SH, [SHIPMENT_US],
     "Shipment S-88 shipped on December 4, 2026.")
case("date-us-format-other-reading", "en", "date", F,
     "12/04/2026 as April 12 (the other reading of an ambiguous date)", SH, [SHIPMENT_US],
     "Shipment S-88 shipped on April 12, 2026; it weighs 3.5 kg.")
case("date-us-format-wrong", "en", "date", W, "12/04/2026 as December 14", SH, [SHIPMENT_US],
     "S-88 shipped on December 14, 2026.")
case("date-run-right", "en", "date", F, "2026-12-03 restated", "How far did I run yesterday?",
     [RUN_LOG], "On December 3, 2026 you ran 8.4 miles.")
case("date-device-right", "zh", "date", F, "2026-12-04 06:10 as 12月4日早上6点10分",
     "sensor-7 最后一次在线是什么时候？", [BATTERY], "sensor-7 最后一次在线是12月4日早上6点10分，电量12%。")
case("date-device-wrong", "zh", "date", W, "2026-12-04 as 12月14日",
     "sensor-7 最后一次在线是什么时候？", [BATTERY], "sensor-7 最后在线时间是2026年12月14日 06:10，电量12%。")
case("date-user-birthday", "en", "date", F, "a date from the user",
     "My birthday is on 12 December. What's the date today?", [LOCAL_NOW],
     "Today is December 4, 2026, so your birthday on 12 December is 8 days away.")

# -- signs ----------------------------------------------------------------------------------------
TW = "What's the weather like in Toronto?"
case("sign-toronto-right", "en", "sign", F, "-2.8 copied", TW, [TORONTO],
     "Toronto has snow showers and -2.8 °C, with a 60% chance of precipitation.")
case("sign-toronto-minus-word", "en", "sign", F, "-2.8 as minus 2.8", TW, [TORONTO],
     "It's snowing in Toronto, minus 2.8 degrees Celsius.")
case("sign-toronto-below", "en", "sign", F, "-2.8 as 2.8 degrees below zero", TW, [TORONTO],
     "Snow showers in Toronto, 2.8 degrees below zero.")
case("sign-toronto-dropped", "en", "sign", W, "-2.8 as 2.8", TW, [TORONTO],
     "Toronto has snow showers and 2.8 °C.")
case("sign-toronto-dropped-json", "en", "sign", W, "-2.8 as 2.8, more values", TW, [TORONTO],
     "The weather in Toronto is snow showers, the temperature is 2.8°C, humidity 74% and wind "
     "24.9 km/h.")
case("sign-toronto-zh-right", "zh", "sign", F, "-2.8 as 零下2.8度", "多伦多天气怎么样？",
     [TORONTO_ZH], "多伦多现在阵雪，气温零下2.8度，湿度74%。")
case("sign-toronto-zh-wrong", "zh", "sign", W, "-2.8 as 2.8℃", "多伦多天气怎么样？", [TORONTO_ZH],
     "多伦多现在阵雪，气温2.8℃，降水概率60%。")
case("sign-toronto-zh-minus", "zh", "sign", F, "-2.8℃ copied", "多伦多天气怎么样？", [TORONTO_ZH],
     "多伦多：阵雪，-2.8℃。")
case("sign-toronto-zh-fu", "zh", "sign", F, "-2.8 as 负2.8度", "多伦多冷不冷？", [TORONTO_ZH],
     "多伦多很冷，气温负2.8度，还在下阵雪。")
case("sign-toronto-round", "en", "sign", F, "-2.8 rounded to about -3", TW, [TORONTO],
     "It's about -3 °C in Toronto with snow showers.")
case("sign-toronto-unicode-minus", "en", "sign", F, "-2.8 with a Unicode minus", TW, [TORONTO],
     "Toronto: snow showers, −2.8 °C.")
HC = "哈尔滨和成都现在哪里更冷？差多少度？"
case("sign-harbin-right", "zh", "sign", F, "-6.4 as 零下6.4度, difference worked out", HC,
     [HARBIN_ZH, CHENGDU_ZH, CALC_DIFF], "哈尔滨更冷：哈尔滨零下6.4度，成都16.9度，相差23.3度。")
case("sign-harbin-dropped", "zh", "sign", W, "-6.4 as 6.4℃", HC, [HARBIN_ZH, CHENGDU_ZH, CALC_DIFF],
     "哈尔滨气温6.4℃，成都16.9℃，哈尔滨更冷，相差23.3度。")
case("sign-harbin-diff-only", "zh", "none", F, "only the worked-out difference and names", HC,
     [HARBIN_ZH, CHENGDU_ZH, CALC_DIFF], "哈尔滨比成都冷23.3度（-6.4℃ 对 16.9℃）。")
HCE = "Which is colder right now, Harbin or Chengdu, and by how much?"
case("sign-harbin-en-right", "en", "sign", F, "-6.4 copied, the difference worked out", HCE,
     [HARBIN, CHENGDU, CALC_DIFF],
     "Harbin is colder: -6.4 °C against 16.9 °C in Chengdu, a difference of 23.3 °C.")
case("sign-harbin-en-sum", "en", "sign", F, "6.4 as a term of the sum that gives the difference",
     HCE, [HARBIN, CHENGDU, CALC_DIFF],
     "Harbin is colder. The difference is 16.9 + 6.4 = 23.3 degrees.")
case("sign-harbin-en-dropped", "en", "sign", W, "-6.4 as 6.4 °C", HCE, [HARBIN, CHENGDU, CALC_DIFF],
     "Harbin is 6.4 °C and Chengdu is 16.9 °C, so Harbin is colder by 23.3 °C.")
case("sign-harbin-en-colder", "en", "sign", F, "-6.4 as 6.4 degrees below zero", HCE,
     [HARBIN, CHENGDU, CALC_DIFF],
     "Harbin is colder at 6.4 degrees below zero; Chengdu is 16.9 degrees, 23.3 degrees warmer.")
case("sign-harbin-forecast-right", "zh", "sign", F, "lows as 零下", "哈尔滨明天最低气温多少？",
     [HARBIN_FORECAST], "哈尔滨明天晴，最高零下2.1度，最低零下8.9度。")
case("sign-harbin-forecast-wrong", "zh", "sign", W, "-8.9 as 8.9度", "哈尔滨明天最低气温多少？",
     [HARBIN_FORECAST], "哈尔滨明天晴，最低气温8.9度，最高-2.1度。")
case("sign-harbin-forecast-zh-minus", "zh", "sign", F, "-8.9 as -8.9°C", "哈尔滨明天最低气温多少？",
     [HARBIN_FORECAST], "明天哈尔滨最低 -8.9°C，最高 -2.1°C，晴。")
TF = "What's the forecast low in Toronto tomorrow?"
case("sign-toronto-low-wrong", "en", "sign", W, "-7.2 as 7.2", TF, [TORONTO_FORECAST],
     "Tomorrow in Toronto: light snow, high -1.4 °C and low 7.2 °C.")
case("sign-toronto-low-right", "en", "sign", F, "-7.2 copied", TF, [TORONTO_FORECAST],
     "Tomorrow's low in Toronto is -7.2 °C, with light snow.")
case("sign-toronto-high-positive", "en", "sign", W, "0.8 as -0.8",
     "Will it be above freezing in Toronto the day after tomorrow?", [TORONTO_FORECAST],
     "No, the day after tomorrow the high in Toronto is -0.8 °C, cloudy.")
case("sign-toronto-high-positive-right", "en", "sign", F, "0.8 copied",
     "Will it be above freezing in Toronto the day after tomorrow?", [TORONTO_FORECAST],
     "Yes, just: the high is 0.8 °C the day after tomorrow (low -5.9 °C).")
BS = "Is Beijing warmer than Shanghai right now?"
case("sign-calc-colder", "en", "sign", F, "-4.3 as 4.3 colder", BS, [BEIJING, SHANGHAI, CALC_NEG],
     "No. Beijing is 17.4 °C and Shanghai 21.7 °C, so Beijing is 4.3 °C colder.")
case("sign-calc-difference", "en", "sign", F, "-4.3 copied as the difference", BS,
     [BEIJING, SHANGHAI, CALC_NEG],
     "No: 17.4 - 21.7 = -4.3, so Beijing is cooler than Shanghai (21.7 °C).")
case("sign-calc-warmer", "en", "sign", W, "-4.3 read as 4.3 warmer (the wrong side)", BS,
     [BEIJING, SHANGHAI, CALC_NEG],
     "Yes, Beijing (17.4 °C) is 4.3 °C warmer than Shanghai (21.7 °C).")
case("sign-calc-zh", "zh", "sign", F, "-4.3 as 低4.3度", "北京比上海暖和吗？", [BEIJING, SHANGHAI, CALC_NEG],
     "不，北京17.4℃，上海21.7℃，北京比上海低4.3度。")
ST = "How is Tesla stock doing today?"
case("sign-stock-down", "en", "sign", F, "-3.12% as down 3.12%", ST, [TSLA],
     "Tesla (TSLA) is at 171.05 USD, down 3.12% today.")
case("sign-stock-copied", "en", "sign", F, "-3.12% copied", ST, [TSLA],
     "TSLA trades at 171.05 USD, change today -3.12%.")
case("sign-stock-up", "en", "sign", W, "-3.12% as up 3.12%", ST, [TSLA],
     "Tesla is at 171.05 USD, up 3.12% today.")
case("sign-stock-bare", "en", "sign", W, "-3.12% as a change of 3.12%", ST, [TSLA],
     "Tesla is trading at 171.05 USD with a change of 3.12% today.")
case("sign-stock-fell", "en", "sign", F, "-3.12% as fell 3.12%", ST, [TSLA],
     "Tesla's stock fell 3.12% today to 171.05 USD.")
case("sign-stock-zh-down", "zh", "sign", F, "-3.12% as 下跌3.12%", "特斯拉今天股价怎么样？", [TSLA],
     "特斯拉股价171.05美元，今天下跌3.12%。")
case("sign-stock-zh-up", "zh", "sign", W, "-3.12% as 涨了3.12%", "特斯拉今天股价怎么样？", [TSLA],
     "特斯拉现在171.05美元，今天涨了3.12%。")
case("sign-stock-zh-bare", "zh", "sign", W, "-0.86% as 0.86%", "茅台今天涨跌幅是多少？", [MOUTAI],
     "贵州茅台今天的涨跌幅是0.86%，股价1703.62元。")
case("sign-stock-zh-bare-right", "zh", "sign", F, "-0.86% copied", "茅台今天涨跌幅是多少？",
     [MOUTAI], "贵州茅台股价1703.62元，今日涨跌幅-0.86%。")
case("sign-stock-nvda-flip", "en", "sign", W, "+2.91% as -2.91%", "How did NVIDIA do today?",
     [NVDA], "NVIDIA is at 903.56 USD, -2.91% today.")
case("sign-stock-nvda-right", "en", "sign", F, "+2.91% as 2.91% up", "How did NVIDIA do today?",
     [NVDA], "NVIDIA is trading at 903.56 USD, up 2.91% today.")
case("sign-stock-nvda-words", "zh", "sign", W, "+2.91% as 下跌2.91%", "英伟达今天表现如何？",
     [NVDA], "英伟达股价903.56美元，今天下跌2.91%。")
MN = "Which one's trading higher, Microsoft or Nvidia, and how did each do today?"
case("sign-two-stocks-right", "en", "sign", F, "one down, one up", MN, [MSFT, NVDA],
     "Nvidia is higher at 903.56 USD (+2.91% today); Microsoft is at 417.32 USD (-0.48%).")
case("sign-two-stocks-wrong", "en", "sign", W, "-0.48% as +0.48%", MN, [MSFT, NVDA],
     "Nvidia is higher at 903.56 USD (+2.91% today); Microsoft is at 417.32 USD (+0.48%).")
case("sign-two-stocks-gap", "en", "none", F, "a gap worked out", MN, [MSFT, NVDA],
     "NVIDIA (903.56 USD) trades 486.24 USD higher than Microsoft (417.32 USD).")
BA = "What's the balance of my checking account?"
case("sign-balance-dropped", "en", "sign", W, "-152.40 as 152.40", BA, [BALANCE],
     "Your checking account balance is 152.40 EUR.")
case("sign-balance-overdrawn", "en", "sign", F, "-152.40 as overdrawn by 152.40", BA, [BALANCE],
     "Your checking account is overdrawn by 152.40 EUR.")
case("sign-balance-copied", "en", "sign", F, "-152.40 copied", BA, [BALANCE],
     "The checking account balance is -152.40 EUR.")
case("sign-balance-zh-wrong", "zh", "sign", W, "-152.40 as 余额152.40欧元", "我的支票账户余额是多少？",
     [BALANCE], "您的支票账户余额为152.40欧元。")
case("sign-balance-zh-right", "zh", "sign", F, "-152.40 as 透支152.40欧元", "我的支票账户余额是多少？",
     [BALANCE], "您的支票账户已透支152.40欧元（余额-152.40欧元）。")
DS = "What is the elevation of the Dead Sea shore?"
case("sign-elevation-below", "en", "sign", F, "-430 m as 430 m below sea level", DS, [DEAD_SEA],
     "The Dead Sea shore lies 430 m below sea level.")
case("sign-elevation-dropped", "en", "sign", W, "-430 m as 430 m", DS, [DEAD_SEA],
     "The elevation of the Dead Sea shore is 430 m.")
case("sign-elevation-zh", "zh", "sign", F, "-430 as 海拔-430米", "死海岸边海拔多少？", [DEAD_SEA],
     "死海岸边的海拔是-430米，低于海平面430米。")
ZG = "How cold is it on the Zugspitze?"
case("sign-positive-to-below", "en", "sign", W, "3 °C as 3 below zero", ZG, [MOUNTAIN_HUT],
     "It is clear on the Zugspitze summit, 3 degrees below zero, with wind at 40 km/h.")
case("sign-positive-to-minus", "zh", "sign", W, "3 °C as 零下3度", "楚格峰山顶冷吗？", [MOUNTAIN_HUT],
     "楚格峰山顶晴，零下3度，风速40公里每小时。")
case("sign-positive-right", "en", "sign", F, "3 °C copied", ZG, [MOUNTAIN_HUT],
     "The Zugspitze summit is clear and 3 °C, with 40 km/h wind.")
case("sign-user-temp", "en", "sign", F, "the user's -3 and a result -2.8",
     "It's -3 °C here in Montreal. Is Toronto any warmer?", [TORONTO],
     "Slightly: Toronto is at -2.8 °C, 0.2 degrees warmer than your -3 °C.")
case("sign-f-to-c-right", "en", "sign", F, "-5.56 copied with the user's 22 °F",
     "What is 22 °F in Celsius?", [F_TO_C], "22 °F is -5.56 °C.")
case("sign-f-to-c-wrong", "en", "sign", W, "-5.56 as 5.56", "What is 22 °F in Celsius?", [F_TO_C],
     "22 °F equals 5.56 °C.")
case("sign-f-to-c-zh", "zh", "sign", F, "-5.56 as 零下5.56摄氏度", "22华氏度是多少摄氏度？",
     [F_TO_C], "22华氏度等于零下5.56摄氏度。")
case("sign-device-wrong", "en", "sign", W, "-1 °C as 1 °C", "Is sensor-7 freezing?", [BATTERY],
     "No, sensor-7 reads 1 °C; its battery is at 12%.")

# -- units ----------------------------------------------------------------------------------------
BJ = "北京今天天气怎么样？"
case("unit-seed-right", "zh", "unit", F, "22°C copied", BJ, [SEED_BJ],
     "北京今天晴，22°C，东南风3级，空气质量良。")
case("unit-seed-degrees", "zh", "unit", F, "22°C as 22度", BJ, [SEED_BJ], "北京今天晴天，气温22度。")
case("unit-seed-celsius-word", "zh", "unit", F, "22°C as 22摄氏度", BJ, [SEED_BJ],
     "北京今天天气晴朗，气温22摄氏度，空气质量良。")
case("unit-seed-fahrenheit", "zh", "unit", W, "22°C as 22°F", BJ, [SEED_BJ],
     "北京今天晴，22°F，东南风3级。")
case("unit-seed-fahrenheit-word", "zh", "unit", W, "22°C as 22华氏度", BJ, [SEED_BJ],
     "北京今天晴，气温22华氏度，空气质量良。")
case("unit-seed-range", "zh", "unit", F, "a range 23-32℃ copied", "广州天气怎么样？", [SEED_GZ],
     "广州雷阵雨，气温23-32℃，南风3级。")
case("unit-seed-range-words", "zh", "unit", F, "a range 23-32℃ as 23到32度", "广州天气怎么样？",
     [SEED_GZ], "广州今天有雷阵雨，气温23到32度，记得带伞。")
case("unit-seed-range-f", "zh", "unit", W, "a range 23-32℃ as 23-32°F", "广州天气怎么样？",
     [SEED_GZ], "广州雷阵雨，气温23-32°F。")
TK = "What's the weather in Tokyo?"
case("unit-seed-tokyo-right", "en", "unit", F, "10 with unit celsius as 10 °C", TK, [SEED_TOKYO],
     "The weather in Tokyo is 10 °C.")
case("unit-seed-tokyo-words", "en", "unit", F, "10 celsius as 10 degrees Celsius", TK,
     [SEED_TOKYO], "The weather in Tokyo is 10 degrees Celsius.")
case("unit-seed-tokyo-f", "en", "unit", W, "10 celsius as 10 degrees Fahrenheit", TK,
     [SEED_TOKYO], "It is 10 degrees Fahrenheit in Tokyo.")
case("unit-seed-tokyo-bare", "en", "unit", F, "10 celsius as 10 degrees", TK, [SEED_TOKYO],
     "The weather in Tokyo is 10 degrees.")
CF = "What is 36.8 °C in Fahrenheit?"
case("unit-convert-right", "en", "unit", F, "36.8 °C = 98.24 °F copied", CF, [C_TO_F],
     "36.8 °C is 98.24 °F.")
case("unit-convert-words", "en", "unit", F, "in words", CF, [C_TO_F],
     "36.8 degrees Celsius equals 98.24 degrees Fahrenheit.")
case("unit-convert-swapped", "en", "unit", W, "98.24 °F as 98.24 °C", CF, [C_TO_F],
     "36.8 °C is 98.24 °C in Fahrenheit.")
case("unit-convert-zh", "zh", "unit", F, "as 摄氏度/华氏度", "36.8摄氏度是多少华氏度？", [C_TO_F],
     "36.8摄氏度等于98.24华氏度。")
case("unit-convert-zh-wrong", "zh", "unit", W, "98.24 °F as 98.24摄氏度", "36.8摄氏度是多少华氏度？",
     [C_TO_F], "36.8摄氏度换算后是98.24摄氏度。")
case("unit-convert-rounded", "en", "unit", F, "98.24 °F rounded to 98.2 °F", CF, [C_TO_F],
     "36.8 °C is about 98.2 °F, a normal body temperature.")
KM = "How many miles is 5 km?"
case("unit-km-right", "en", "unit", F, "5 km = 3.11 mi as miles", KM, [KM_TO_MI],
     "5 km is 3.11 miles.")
case("unit-km-swapped", "en", "unit", W, "as 5 miles is 3.11 km", KM, [KM_TO_MI],
     "5 miles is 3.11 km.")
case("unit-km-zh", "zh", "unit", F, "as 公里/英里", "5公里是多少英里？", [KM_TO_MI],
     "5公里约等于3.11英里。")
case("unit-km-zh-wrong", "zh", "unit", W, "3.11 mi as 3.11公里", "5公里是多少英里？", [KM_TO_MI],
     "5公里等于3.11公里。")
case("unit-lb-right", "zh", "unit", F, "10 lb = 4.54 kg as 磅/公斤", "10磅是多少公斤？", [LB_TO_KG],
     "10磅等于4.54公斤。")
case("unit-lb-wrong", "en", "unit", W, "as 10 kg is 4.54 lb", "How many kilograms is 10 pounds?",
     [LB_TO_KG], "10 kg is 4.54 lb.")
case("unit-lb-kilos", "en", "unit", F, "4.54 kg as 4.54 kilos", "How many kilograms is 10 lb?",
     [LB_TO_KG], "10 lb is about 4.54 kilos.")
CU = "How much is 128.5 USD in euros?"
case("unit-currency-right", "en", "unit", F, "copied", CU, [USD_EUR], "128.5 USD is 118.39 EUR.")
case("unit-currency-symbols", "en", "unit", F, "with symbols", CU, [USD_EUR],
     "$128.50 is about €118.39 at a rate of 0.9213.")
case("unit-currency-zh", "zh", "unit", F, "as 美元/欧元", "128.5美元是多少欧元？", [USD_EUR],
     "128.5美元约合118.39欧元（汇率1美元=0.9213欧元）。")
case("unit-currency-gbp", "en", "unit", W, "118.39 EUR as 118.39 GBP", CU, [USD_EUR],
     "128.5 USD converts to 118.39 GBP.")
case("unit-currency-zh-wrong", "zh", "unit", W, "118.39 EUR as 118.39美元", "128.5美元是多少欧元？",
     [USD_EUR], "128.5美元等于118.39美元。")
case("unit-currency-rounded", "en", "unit", F, "118.39 rounded to 118", CU, [USD_EUR],
     "That's about €118.")
case("unit-currency-euros-word", "en", "unit", F, "118.39 euros", CU, [USD_EUR],
     "128.5 US dollars is 118.39 euros today.")
case("unit-yen-right", "zh", "unit", F, "10448.67 JPY as 日元", "500人民币能换多少日元？", [CNY_JPY],
     "500人民币可以换10448.67日元。")
case("unit-yen-symbol", "en", "unit", F, "10448.67 JPY as ¥10,448.67",
     "How many yen do I get for 500 CNY?", [CNY_JPY], "500 CNY gets you ¥10,448.67.")
case("unit-yen-wrong", "en", "unit", W, "500 CNY as 500 JPY", "How many yen do I get for 500 CNY?",
     [CNY_JPY], "500 JPY is 10448.67 JPY.")
case("unit-rate-right", "zh", "unit", F, "1 USD = 7.2436 CNY as 人民币", "美元兑人民币汇率是多少？",
     [RATE], "1美元可以兑换7.2436人民币。")
case("unit-rate-wrong", "en", "unit", W, "7.2436 CNY as 7.2436 EUR", "What is the USD to CNY rate?",
     [RATE], "1 USD = 7.2436 EUR.")
HT = "How much is Hotel Sakura Shinjuku per night?"
case("unit-hotel-right", "en", "unit", F, "18640 JPY", HT, [HOTELS_TOKYO],
     "Hotel Sakura Shinjuku costs 18640 JPY per night.")
case("unit-hotel-yen-sign", "en", "unit", F, "as ¥18,640", HT, [HOTELS_TOKYO],
     "Hotel Sakura Shinjuku is ¥18,640 a night (rated 4.3).")
case("unit-hotel-usd", "en", "unit", W, "18640 JPY as 18640 USD", HT, [HOTELS_TOKYO],
     "Hotel Sakura Shinjuku costs 18640 USD per night.")
case("unit-hotel-zh", "zh", "unit", F, "as 日元", "新宿樱花酒店一晚多少钱？", [HOTELS_TOKYO],
     "新宿樱花酒店（Hotel Sakura Shinjuku）每晚18640日元。")
case("unit-hotel-zh-yuan", "zh", "unit", W, "18640 JPY as 18640 元 (yuan)", "新宿樱花酒店一晚多少钱？",
     [HOTELS_TOKYO], "Hotel Sakura Shinjuku 每晚 18640 元，评分4.3。")
case("unit-hotel-paris-total", "en", "none", F, "a total worked out",
     "How much would 3 nights at the cheaper Paris hotel cost?", [HOTELS_PARIS],
     "Gare du Nord Budget is 96.80 EUR a night, so 3 nights cost 290.40 EUR.")
case("unit-hotel-paris-wrong", "en", "unit", W, "96.80 EUR as $96.80",
     "Which Paris hotel is cheaper?", [HOTELS_PARIS],
     "Gare du Nord Budget is cheaper at $96.80 per night.")
case("unit-hotel-paris-right", "en", "unit", F, "96.80 EUR as €96.80", "Which Paris hotel is cheaper?",
     [HOTELS_PARIS], "Gare du Nord Budget is cheaper, at €96.80 a night (vs €189.50).")
MO = "How much is the Kestrel 27-inch monitor?"
case("unit-product-right", "en", "unit", F, "389.49 EUR", MO, [MONITOR],
     "The Kestrel 27-inch 4K monitor costs 389.49 EUR, and 6 are in stock.")
case("unit-product-usd", "en", "unit", W, "389.49 EUR as 389.49 USD", MO, [MONITOR],
     "The Kestrel 27-inch 4K monitor is 389.49 USD.")
case("unit-product-zh", "zh", "unit", F, "as 欧元", "Kestrel 27 英寸显示器多少钱？", [MONITOR],
     "Kestrel 27 英寸 4K 显示器售价389.49欧元，库存6台。")
case("unit-product-zh-wrong", "zh", "unit", W, "389.49 EUR as 389.49美元", "Kestrel 27 英寸显示器多少钱？",
     [MONITOR], "这款显示器售价389.49美元，评分4.5。")
case("unit-product-inch", "en", "none", F, "27-inch is the name, not a value",
     "Is the Kestrel monitor in stock?", [MONITOR],
     "Yes, 6 Kestrel 27-inch 4K monitors are in stock at 389.49 EUR.")
case("unit-stock-hkd", "en", "unit", F, "368.42 HKD copied", "What's Tencent's share price?",
     [TENCENT], "Tencent (0700.HK) trades at 368.42 HKD, up 1.63% today.")
case("unit-stock-hkd-zh", "zh", "unit", F, "as 港元", "腾讯股价多少？", [TENCENT],
     "腾讯控股股价368.42港元，今天上涨1.63%。")
case("unit-stock-hkd-usd", "en", "unit", W, "368.42 HKD as 368.42 USD", "What's Tencent's share price?",
     [TENCENT], "Tencent's share price is 368.42 USD.")
case("unit-stock-cny-right", "zh", "unit", F, "1703.62 CNY as 元", "茅台股价多少？", [MOUTAI],
     "贵州茅台股价1703.62元，今天下跌0.86%。")
case("unit-stock-cny-usd", "zh", "unit", W, "1703.62 CNY as 1703.62美元", "茅台股价多少？", [MOUTAI],
     "贵州茅台现在的股价是1703.62美元，下跌0.86%。")
PW = "Paris weather now, and tomorrow's high?"
case("unit-weather-c", "en", "unit", F, "14.6 as °C", PW, [PARIS, PARIS_FORECAST],
     "Paris has light rain at 14.6 °C now; tomorrow's high is 15.8 °C with showers.")
case("unit-weather-f", "en", "unit", W, "14.6 as °F", PW, [PARIS, PARIS_FORECAST],
     "Paris: light rain, 14.6°F; tomorrow showers with a high of 15.8°F.")
case("unit-weather-bare", "en", "unit", F, "14.6 as degrees", PW, [PARIS, PARIS_FORECAST],
     "Light rain in Paris, 14.6 degrees; tomorrow up to 15.8 degrees with showers.")
case("unit-wind-right", "en", "unit", F, "wind_kph as km/h", "How windy is it in Paris?", [PARIS],
     "The wind in Paris is 13.2 km/h, with light rain.")
case("unit-wind-mph", "en", "unit", W, "wind_kph as mph", "How windy is it in Paris?", [PARIS],
     "The wind in Paris is 13.2 mph.")
case("unit-wind-zh", "zh", "unit", F, "wind_kph as 公里/小时", "巴黎风大吗？", [PARIS],
     "巴黎现在风速13.2公里/小时，有小雨。")
case("unit-weather-converted", "en", "unit", F, "14.6 °C converted to 58.3 °F",
     "What's the temperature in Paris in Fahrenheit?", [PARIS],
     "It's 14.6 °C in Paris, which is about 58.3 °F.")
RT = "How far is it from Lyon to Geneva?"
case("unit-route-km", "en", "unit", F, "151 km", RT, [ROUTE],
     "Lyon to Geneva is 151 km, about 1 h 52 min by road.")
case("unit-route-miles", "en", "unit", W, "151 km as 151 miles", RT, [ROUTE],
     "It is 151 miles from Lyon to Geneva, about 1 hour 52 minutes.")
case("unit-route-converted", "en", "unit", F, "151 km as about 94 miles (151 km)", RT, [ROUTE],
     "About 94 miles (151 km), 1 h 52 min.")
case("unit-route-zh", "zh", "unit", F, "151 km as 151公里", "里昂到日内瓦多远？", [ROUTE],
     "里昂到日内瓦151公里，开车大约1小时52分钟。")
case("unit-route-zh-wrong", "zh", "unit", W, "151 km as 151英里", "里昂到日内瓦多远？", [ROUTE],
     "里昂到日内瓦大约151英里，需要1小时52分钟。")
case("unit-run-miles", "en", "unit", F, "8.4 miles", "How far did I run yesterday?", [RUN_LOG],
     "You ran 8.4 miles yesterday in 1:12:30.")
case("unit-run-km", "en", "unit", W, "8.4 miles as 8.4 km", "How far did I run yesterday?",
     [RUN_LOG], "You ran 8.4 km yesterday, in 1 hour 12 minutes.")
case("unit-room-right", "en", "unit", F, "18 °C and set point 20 °C",
     "Is the server room at its set point?", [ROOM],
     "No: the server room is at 18 °C, below its set point of 20 °C.")
case("unit-room-wrong", "en", "unit", W, "18 °C as 18 °F", "How warm is the server room?", [ROOM],
     "The server room is at 18°F with 40% humidity.")
case("unit-shipment-kg", "en", "unit", F, "weight_kg 3.5 as 3.5 kg", "How heavy is shipment S-88?",
     [SHIPMENT_US], "Shipment S-88 weighs 3.5 kg.")
case("unit-shipment-lb", "en", "unit", W, "weight_kg 3.5 as 3.5 lb", "How heavy is shipment S-88?",
     [SHIPMENT_US], "Shipment S-88 weighs 3.5 lb and shipped on 12/04/2026.")
case("unit-user-amount", "en", "unit", F, "the user's own 100 EUR budget next to a USD price",
     "I have a budget of 100 EUR. Can I afford the Stride running shoes at 139.99 USD?",
     [USD_EUR], "No: 128.5 USD is 118.39 EUR, and your budget is 100 EUR.")

# -- answers with no such value at stake ----------------------------------------------------------
case("none-lines", "en", "none", F, "the README's printed run",
     "How many lines does README.md have, times 3?", [LINES, TIMES3],
     "README.md has 173 lines, which is 173 * 3 = 519 lines.")
case("none-pi", "en", "none", F, "a rounded quotient", "What is 22 divided by 7?", [PI],
     "22 / 7 is about 3.14.")
case("none-pi-zh", "zh", "none", F, "a rounded quotient", "22除以7等于多少？", [PI],
     "22除以7约等于3.142857。")
case("none-umbrella", "en", "none", F, "a plain weather answer", "Do I need an umbrella in Paris?",
     [PARIS], "Yes, there is light rain in Paris (80% chance of rain, 14.6 °C), so bring an "
     "umbrella.")
case("none-umbrella-zh", "zh", "none", F, "a plain weather answer", "巴黎要带伞吗？", [PARIS],
     "要带伞，巴黎现在小雨，降雨概率80%，气温14.6度。")
case("none-hotels-compare", "en", "none", F, "a worked-out difference of two prices",
     "How much cheaper is the Asakusa River Inn than Hotel Sakura Shinjuku?", [HOTELS_TOKYO],
     "Asakusa River Inn (12380 JPY) is 6260 JPY cheaper per night than Hotel Sakura Shinjuku "
     "(18640 JPY).")
case("none-rain-sum", "zh", "none", F, "a worked-out average",
     "巴黎今天和明天的平均降雨概率是多少？", [PARIS, PARIS_FORECAST],
     "今天80%，明天60%，平均降雨概率是70%。")
case("none-battery-low", "en", "none", F, "a percentage restated", "Does sensor-7 need a new battery?",
     [BATTERY], "Yes, sensor-7's battery is at 12%, so replace it soon.")
case("none-order-zh", "zh", "none", F, "an order's total and carrier", "订单A-1042多少钱？谁在送？",
     [ORDER_1042], "订单A-1042总价249.90美元，由DHL Express配送。")
case("none-stock-gap-zh", "zh", "none", F, "a worked-out gap in Chinese", "英伟达比微软每股贵多少？",
     [MSFT, NVDA], "英伟达每股903.56美元，微软417.32美元，英伟达每股贵486.24美元。")


def split(cases: list[dict[str, Any]], seed: int = 38) -> list[dict[str, Any]]:
    """Each case with its ``half``: within each (kind, label) group, in id order, shuffled with
    ``seed`` and dealt alternately to dev and test."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for c in cases:
        groups[(c["kind"], c["label"])].append(c)
    rng = random.Random(seed)
    halves: dict[str, str] = {}
    for key in sorted(groups):
        members = sorted(groups[key], key=lambda c: c["id"])
        rng.shuffle(members)
        for n, c in enumerate(members):
            halves[c["id"]] = "dev" if n % 2 == 0 else "test"
    return [{"id": c["id"], "half": halves[c["id"]], **{k: v for k, v in c.items() if k != "id"}}
            for c in cases]


def render() -> str:
    ids = [c["id"] for c in CASES]
    if len(ids) != len(set(ids)):
        raise SystemExit("duplicate case ids")
    return "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in split(CASES))


if __name__ == "__main__":
    OUT.write_text(render(), encoding="utf-8")
    print(f"wrote {len(CASES)} cases to {OUT}")
