"""The tools of the four seed tutorials, with their fake data copied word for word.

Each seed gets its own Toolbox (names, descriptions and JSON Schemas as in
``tests/data/seed_scenarios.json``)::

    react-agent run --tools tests/data/seeds/tools.py:seed003 "查一下北京今天的天气"

Every string a tool returns is the seed's, byte for byte: the scenario checks compare them exactly.
"""

from __future__ import annotations

from typing import Any

from react_agent import Toolbox


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


# -- seed 000: 从零手写一个 Agent 框架 ----------------------------------------------------
WEATHER_000 = {
    "北京": "晴，22°C，东南风 3 级，空气质量良",
    "上海": "多云，25°C，东风 2 级，空气质量优",
    "广州": "小雨，28°C，南风 4 级，空气质量中",
    "深圳": "晴，27°C，西南风 3 级，空气质量良",
}
KNOWLEDGE_000 = {  # searched in this order
    "python": (
        "Python 是一种高级编程语言，以简洁易读著称，广泛用于 AI/ML、Web 开发、自动化脚本等领域。"
    ),
    "agent": "AI Agent 是一种能感知环境、做决策、执行行动的自主系统，通过 LLM 提供推理能力。",
    "langchain": "LangChain 是一个构建 LLM 应用的开源框架，提供工具链、记忆、Agent 等抽象。",
}
CALC_CHARS = set("0123456789+-*/().% ")


def get_weather_000(city: str) -> str:
    return WEATHER_000.get(city, f"抱歉，暂无 {city} 的天气数据")


def calculate_000(expression: str) -> str:
    if not set(expression) <= CALC_CHARS:
        return "错误：不支持的字符，只允许数字和基本运算符"
    try:
        result = eval(expression, {"__builtins__": {}}, {})  # only digits and operators reach here
    except ZeroDivisionError:
        return "错误：除数不能为零"
    except Exception as e:
        return f"计算出错：{e}"
    return f"{expression} = {result}"


def search_knowledge(query: str) -> str:
    for key, text in KNOWLEDGE_000.items():
        if key in query.lower():
            return text
    return f"知识库中未找到关于 '{query}' 的相关信息"


seed000 = Toolbox()
seed000.add(
    get_weather_000, name="get_weather", description="查询指定城市的当前天气和温度。",
    parameters=_schema({"city": {"type": "string"}}, ["city"]),
)
seed000.add(
    calculate_000, name="calculate",
    description=(
        "计算数学表达式。支持加减乘除、幂运算。\n示例：'2 + 3 * 4'、'(10 + 5) / 3'、'2 ** 10'"
    ),
    parameters=_schema({"expression": {"type": "string"}}, ["expression"]),
)
seed000.add(
    search_knowledge, name="search_knowledge", description="搜索知识库，查找相关信息。",
    parameters=_schema({"query": {"type": "string"}}, ["query"]),
)


# -- seed 002: 从零手写AI Agent：不依赖LangChain (values as stored: punctuation lost) ------
WEATHER_002 = {"北京": "晴25度", "上海": "多云28度", "广州": "小雨30度"}


def get_weather_002(city: str) -> str:
    return WEATHER_002.get(city, f"暂时查不到{city}的天气")


def calculate_002(expression: str) -> str:
    try:
        if not set(expression) <= CALC_CHARS:  # not in the seed: keeps eval to plain arithmetic
            raise ValueError("不支持的字符，只允许数字和基本运算符")
        return str(eval(expression, {"__builtins__": {}}, {}))
    except Exception as e:
        return f"计算失败{e}"


seed002 = Toolbox()
seed002.add(
    get_weather_002, name="get_weather", description="查询城市天气。只传城市名不要带区县。",
    parameters=_schema({"city": {"type": "string"}}, ["city"]),
)
seed002.add(
    calculate_002, name="calculate", description="计算数学表达式如23*4。",
    parameters=_schema({"expression": {"type": "string"}}, ["expression"]),
)


# -- seed 003: 百行代码从零手搓Agent --------------------------------------------------------------
WEATHER_003 = {
    "北京": "晴，气温15-25℃，西北风2级",
    "上海": "多云，气温18-28℃，东南风1级",
    "广州": "雷阵雨，气温23-32℃，南风3级",
}
SENT_MESSAGES: list[str] = []
"""What send_message was asked to send (the seed prints it; the library never prints)."""


def get_weather_003(city: str) -> str:
    return WEATHER_003.get(city, f"未找到{city}的天气信息")


def send_message(content: str) -> str:
    SENT_MESSAGES.append(content)
    return "消息发送成功"


seed003 = Toolbox()
seed003.add(
    get_weather_003, name="get_weather", description="获取指定城市的当前天气信息",
    parameters=_schema({"city": {"type": "string", "description": "字符串，城市名称"}}, ["city"]),
)
seed003.add(
    send_message, name="send_message", description="发送一条文本消息",
    parameters=_schema(
        {"content": {"type": "string", "description": "字符串，消息内容"}}, ["content"]
    ),
)


# -- seed 004: 手搓一个属于你自己的 Agentic AI 框架 (tools return dicts, sent as JSON) ------
def get_current_weather(location: str, unit: str = "celsius") -> dict[str, Any]:
    if "tokyo" in location.lower():
        return {"location": "Tokyo", "temperature": 10, "unit": "celsius"}  # unit is ignored
    return {"location": location, "temperature": "unknown"}


def get_stock_price(ticker: str) -> dict[str, Any]:
    if ticker.upper() == "AAPL":
        return {"ticker": "AAPL", "price": 150.0}
    return {"ticker": ticker, "price": "unknown"}


seed004 = Toolbox()
seed004.add(
    get_current_weather, name="get_current_weather",
    description="Get the current weather in a given location.",
    parameters=_schema(
        {"location": {"type": "string"}, "unit": {"type": "string", "default": "celsius"}},
        ["location"],
    ),
)
seed004.add(
    get_stock_price, name="get_stock_price",
    description="Get the latest stock price for a given ticker symbol.",
    parameters=_schema({"ticker": {"type": "string"}}, ["ticker"]),
)


TOOLBOXES: dict[str, Toolbox] = {"000": seed000, "002": seed002, "003": seed003, "004": seed004}
