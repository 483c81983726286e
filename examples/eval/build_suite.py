"""Build ``suite.jsonl``, the public eval suite: 50 first-turn questions in five categories.

    python examples/eval/build_suite.py        # rewrites examples/eval/suite.jsonl

- ``single``: one tool is offered and fits; - ``choose``: four tools, one fits;
- ``parallel``: two independent calls are needed; - ``none``: tools are offered, none fits (the
  model must answer directly); - ``many``: all 20 tools are offered (for routing on/off).

Some specs use the loose type names of public benchmarks (``dict``, ``float``, ``int``) on
purpose: ``react-agent eval`` must accept them. Expected arguments list the accepted values;
``""`` among them means the argument may be left out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def tool(name: str, description: str, params: dict[str, Any], required: list[str]) -> dict:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "dict", "properties": params, "required": required},
    }}


def s(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


TOOLS = {t["function"]["name"]: t for t in [
    tool("get_weather", "Get the current weather for a city.",
         {"city": s("city name, e.g. Paris"),
          "unit": s("temperature unit", enum=["celsius", "fahrenheit"])}, ["city"]),
    tool("get_stock_price", "Get the latest stock price for a ticker symbol.",
         {"ticker": s("ticker symbol, e.g. AAPL")}, ["ticker"]),
    tool("convert_currency", "Convert an amount of money from one currency to another.",
         {"amount": {"type": "float", "description": "the amount"},
          "from_currency": s("ISO code, e.g. USD"), "to_currency": s("ISO code, e.g. EUR")},
         ["amount", "from_currency", "to_currency"]),
    tool("translate_text", "Translate text into another language.",
         {"text": s("the text"), "target_language": s("language name, e.g. French")},
         ["text", "target_language"]),
    tool("send_email", "Send an email.",
         {"to": s("recipient address"), "subject": s("subject line"), "body": s("the message")},
         ["to", "subject", "body"]),
    tool("search_web", "Search the web for pages about a query.",
         {"query": s("search words")}, ["query"]),
    tool("set_alarm", "Set an alarm clock.", {"time": s("time of day, HH:MM 24-hour")}, ["time"]),
    tool("play_music", "Play a song.", {"song": s("song title"), "artist": s("artist name")},
         ["song"]),
    tool("book_flight", "Book a flight.",
         {"origin": s("departure city"), "destination": s("arrival city"),
          "date": s("YYYY-MM-DD")}, ["origin", "destination", "date"]),
    tool("get_news", "Get the latest news headlines on a topic.", {"topic": s("news topic")},
         ["topic"]),
    tool("calculate", "Evaluate an arithmetic expression.",
         {"expression": s("e.g. (2 + 3) * 4")}, ["expression"]),
    tool("get_time", "Get the current time in a time zone.",
         {"timezone": s("IANA zone, e.g. Asia/Tokyo")}, ["timezone"]),
    tool("create_event", "Create a calendar event.",
         {"title": s("event title"), "date": s("YYYY-MM-DD")}, ["title", "date"]),
    tool("find_restaurant", "Find restaurants in a city.",
         {"city": s("city"), "cuisine": s("type of food, e.g. Italian")}, ["city"]),
    tool("track_package", "Track a parcel delivery.",
         {"tracking_number": s("carrier tracking number")}, ["tracking_number"]),
    tool("get_showtimes", "Get cinema showtimes of a movie in a city.",
         {"movie": s("movie title"), "city": s("city")}, ["movie", "city"]),
    tool("flight_status", "Check the status of a flight.",
         {"flight_number": s("e.g. LH400")}, ["flight_number"]),
    tool("set_reminder", "Set a reminder.",
         {"text": s("what to remember"), "minutes": {"type": "int",
                                                     "description": "minutes from now"}},
         ["text", "minutes"]),
    tool("get_population", "Get the population of a country.", {"country": s("country name")},
         ["country"]),
    tool("define_word", "Look up the dictionary definition of an English word.",
         {"word": s("the word")}, ["word"]),
]}


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": {k: v if isinstance(v, list) else [v] for k, v in args.items()}}


def pick(*names: str) -> list[dict[str, Any]]:
    return [TOOLS[n] for n in names]


OPTIONAL_C = ["", "celsius"]
ITEMS: list[tuple[str, str, list[dict], list[dict] | None]] = [
    # single: the one tool offered fits
    ("single", "What's the weather like in Paris right now?", pick("get_weather"),
     [call("get_weather", city=["Paris", "Paris, France"], unit=OPTIONAL_C)]),
    ("single", "How much is one share of NVDA trading for?", pick("get_stock_price"),
     [call("get_stock_price", ticker="NVDA")]),
    ("single", "Convert 250 US dollars to euros.", pick("convert_currency"),
     [call("convert_currency", amount=250, from_currency="USD", to_currency="EUR")]),
    ("single", "Translate 'good morning' into Spanish.", pick("translate_text"),
     [call("translate_text", text=["good morning", "Good morning"], target_language="Spanish")]),
    ("single", "Wake me up at 06:30.", pick("set_alarm"), [call("set_alarm", time=["06:30"])]),
    ("single", "What is 17 * 23 + 4?", pick("calculate"),
     [call("calculate", expression=["17 * 23 + 4", "17*23+4", "(17 * 23) + 4"])]),
    ("single", "Where is my parcel 1Z999AA10123456784?", pick("track_package"),
     [call("track_package", tracking_number="1Z999AA10123456784")]),
    ("single", "How many people live in Japan?", pick("get_population"),
     [call("get_population", country="Japan")]),
    ("single", "What does the word 'ephemeral' mean?", pick("define_word"),
     [call("define_word", word="ephemeral")]),
    ("single", "Remind me to call mum in 45 minutes.", pick("set_reminder"),
     [call("set_reminder", text=["call mum", "Call mum"], minutes=45)]),
    # choose: four tools, one fits
    ("choose", "Is it raining in London?", pick("get_stock_price", "get_weather", "play_music",
                                                 "get_news"),
     [call("get_weather", city=["London", "London, UK"], unit=OPTIONAL_C)]),
    ("choose", "Play Bohemian Rhapsody by Queen.", pick("search_web", "play_music", "set_alarm",
                                                         "send_email"),
     [call("play_music", song="Bohemian Rhapsody", artist=["", "Queen"])]),
    ("choose", "What time is it in Tokyo?", pick("get_time", "get_weather", "calculate",
                                                 "set_alarm"),
     [call("get_time", timezone=["Asia/Tokyo"])]),
    ("choose", "Any news about electric cars today?", pick("get_news", "search_web",
                                                           "get_stock_price", "translate_text"),
     [call("get_news", topic=["electric cars", "electric car", "Electric cars"])]),
    ("choose", "Is flight BA117 on time?", pick("book_flight", "flight_status", "get_weather",
                                                "track_package"),
     [call("flight_status", flight_number="BA117")]),
    ("choose", "Find me an Italian restaurant in Boston.", pick("find_restaurant", "search_web",
                                                                "get_showtimes", "book_flight"),
     [call("find_restaurant", city="Boston", cuisine="Italian")]),
    ("choose", "When is Dune playing in Chicago?", pick("get_showtimes", "get_news",
                                                        "create_event", "find_restaurant"),
     [call("get_showtimes", movie="Dune", city="Chicago")]),
    ("choose", "Put 'dentist' in my calendar on 2026-12-03.", pick("set_alarm", "create_event",
                                                                    "set_reminder", "send_email"),
     [call("create_event", title=["dentist", "Dentist"], date="2026-12-03")]),
    ("choose", "Email bob@example.com with subject 'Lunch' and say 'See you at noon'.",
     pick("send_email", "set_reminder", "create_event", "translate_text"),
     [call("send_email", to="bob@example.com", subject="Lunch", body="See you at noon")]),
    ("choose", "What's 15% of 80?", pick("convert_currency", "calculate", "get_stock_price",
                                        "get_population"),
     [call("calculate", expression=["0.15 * 80", "80 * 0.15", "15 / 100 * 80", "80 * 15 / 100",
                                    "15% * 80", "0.15*80", "80*0.15", "(80 * 0.15)",
                                    "(0.15 * 80)"])]),
    # parallel: two independent calls
    ("parallel", "What's the weather in Rome and in Madrid?", pick("get_weather"),
     [call("get_weather", city="Rome", unit=OPTIONAL_C),
      call("get_weather", city="Madrid", unit=OPTIONAL_C)]),
    ("parallel", "Give me the stock prices of AAPL and MSFT.", pick("get_stock_price"),
     [call("get_stock_price", ticker="AAPL"), call("get_stock_price", ticker="MSFT")]),
    ("parallel", "What time is it in Asia/Tokyo and in Europe/Berlin?", pick("get_time"),
     [call("get_time", timezone="Asia/Tokyo"), call("get_time", timezone="Europe/Berlin")]),
    ("parallel", "Population of Brazil and of Canada?", pick("get_population", "get_weather"),
     [call("get_population", country="Brazil"), call("get_population", country="Canada")]),
    ("parallel", "Define 'ubiquitous' and 'laconic'.", pick("define_word", "translate_text"),
     [call("define_word", word="ubiquitous"), call("define_word", word="laconic")]),
    ("parallel", "Check the weather in Oslo and the stock price of TSLA.",
     pick("get_weather", "get_stock_price"),
     [call("get_weather", city="Oslo", unit=OPTIONAL_C), call("get_stock_price", ticker="TSLA")]),
    # none: tools are offered, none fits
    ("none", "Hi! How are you today?", pick("get_weather", "get_stock_price"), None),
    ("none", "Write a haiku about autumn.", pick("calculate", "get_time"), None),
    ("none", "Who wrote Romeo and Juliet?", pick("get_stock_price", "set_alarm"), None),
    ("none", "Thanks, that's all I needed.", pick("send_email", "play_music"), None),
    ("none", "What is the capital of Italy?", pick("convert_currency", "track_package"), None),
    ("none", "Can you explain what a verb is, briefly?", pick("get_weather", "book_flight"), None),
    ("none", "Tell me a joke about cats.", pick("get_news", "calculate"), None),
    ("none", "What is 2 + 2? Answer from memory, do not use any tool.", pick("get_weather"),
     None),
    # many: all 20 tools offered
    ("many", "What's the weather in Berlin?", list(TOOLS.values()),
     [call("get_weather", city="Berlin", unit=OPTIONAL_C)]),
    ("many", "How much is AMZN stock worth?", list(TOOLS.values()),
     [call("get_stock_price", ticker="AMZN")]),
    ("many", "Convert 100 euros to Japanese yen.", list(TOOLS.values()),
     [call("convert_currency", amount=100, from_currency="EUR", to_currency="JPY")]),
    ("many", "Translate 'thank you' into German.", list(TOOLS.values()),
     [call("translate_text", text=["thank you", "Thank you"], target_language="German")]),
    ("many", "Set an alarm for 07:15.", list(TOOLS.values()), [call("set_alarm", time="07:15")]),
    ("many", "Book a flight from Paris to New York on 2026-12-20.", list(TOOLS.values()),
     [call("book_flight", origin="Paris", destination="New York", date="2026-12-20")]),
    ("many", "Latest headlines about the World Cup?", list(TOOLS.values()),
     [call("get_news", topic=["World Cup", "the World Cup"])]),
    ("many", "What is 1234 * 5678?", list(TOOLS.values()),
     [call("calculate", expression=["1234 * 5678", "1234*5678"])]),
    ("many", "Track my package 9400111899223344556677.", list(TOOLS.values()),
     [call("track_package", tracking_number="9400111899223344556677")]),
    ("many", "What's the status of flight AF22?", list(TOOLS.values()),
     [call("flight_status", flight_number="AF22")]),
    ("many", "Remind me to stretch in 30 minutes.", list(TOOLS.values()),
     [call("set_reminder", text=["stretch", "Stretch"], minutes=30)]),
    ("many", "What's the population of Germany?", list(TOOLS.values()),
     [call("get_population", country="Germany")]),
    ("many", "Define the word 'serendipity'.", list(TOOLS.values()),
     [call("define_word", word="serendipity")]),
    ("many", "Find sushi restaurants in Seattle.", list(TOOLS.values()),
     [call("find_restaurant", city="Seattle", cuisine=["sushi", "Sushi", "Japanese"])]),
    ("many", "Search the web for reviews of the Framework laptop.", list(TOOLS.values()),
     [call("search_web", query=["reviews of the Framework laptop", "Framework laptop reviews",
                                "Framework laptop review"])]),
    ("many", "Play Yesterday by The Beatles.", list(TOOLS.values()),
     [call("play_music", song="Yesterday", artist=["", "The Beatles", "Beatles"])]),
]


def main() -> None:
    path = Path(__file__).with_name("suite.jsonl")
    counts: dict[str, int] = {}
    lines = []
    for category, question, tools, expected in ITEMS:
        counts[category] = counts.get(category, 0) + 1
        item = {"id": f"{category}-{counts[category]:02d}", "category": category,
                "question": question, "tools": tools, "expected": expected}
        lines.append(json.dumps(item, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} items -> {path}: {counts}")


if __name__ == "__main__":
    main()
