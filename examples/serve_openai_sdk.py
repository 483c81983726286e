"""Tool calling for any model, through the openai SDK: ``react-agent serve``, driven by a client.

``react-agent serve`` is an OpenAI-compatible endpoint that accepts ``tools=`` even for a model
without function calling: it prompts the model, reads its JSON reply and answers with
``message.tool_calls`` as OpenAI would. The server never runs a tool; the client does and sends
the results back as ``role: "tool"`` messages, until the model answers. Here the server runs
in-process (``create_app`` + ``running``, which is what the command does), and the client is the
official ``openai`` package, so any framework built on it (or on the OpenAI API) works the same.

    python examples/serve_openai_sdk.py                 # the embedded model behind the endpoint
    python examples/serve_openai_sdk.py --base-url http://localhost:11434/v1  # a server's model
    python examples/serve_openai_sdk.py --scripted      # canned replies, no model needed

(Needs the ``serve`` extra: ``pip install '.[serve]'``. From the shell, the same endpoint is
``react-agent serve --port 8000``, then ``base_url="http://127.0.0.1:8000/v1"``.)
"""

from __future__ import annotations

import json

import openai
from _run import command_line, pick_model, reply_answer, reply_calls

from react_agent.serve import create_app, running

WEATHER = {"Lisbon": "sunny, 21 °C", "Oslo": "cloudy, 9 °C"}


def get_weather(city: str) -> str:
    """What the client runs when the model calls get_weather."""
    return WEATHER.get(city, f"no weather data for {city}")


FUNCTIONS = {"get_weather": get_weather}  # the client's tools by name, and their specs:
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]},
}}]
TASK = "Is it warmer in Lisbon or in Oslo right now?"

CANNED = [  # what a model might reply, one per request, for --scripted
    reply_calls("I need the weather in both cities.",
                ("get_weather", {"city": "Lisbon"}), ("get_weather", {"city": "Oslo"})),
    reply_answer("Lisbon has 21 °C, Oslo 9 °C.",
                 "It is warmer in Lisbon: 21 °C and sunny, against 9 °C in Oslo."),
]


def main() -> None:
    args = command_line(__doc__)
    app = create_app(pick_model(args, CANNED))  # the model behind the endpoint
    with running(app) as base_url:  # on a free port of 127.0.0.1, stopped at the end
        print(f"Serving at {base_url}")
        client = openai.OpenAI(base_url=base_url, api_key="not-needed")
        messages: list[dict] = [{"role": "user", "content": TASK}]
        print(f"User: {TASK}")
        for _ in range(5):  # a few rounds of tool calls at most
            message = client.chat.completions.create(
                model="react-agent", messages=messages, tools=TOOLS,
            ).choices[0].message
            if not message.tool_calls:
                print(f"Assistant: {message.content}")
                return
            print(f"Assistant (thinking): {message.content}")
            # the assistant's turn goes back with its calls (and its thought, as content) ...
            messages.append({"role": "assistant", "content": message.content,
                             "tool_calls": [call.model_dump() for call in message.tool_calls]})
            for call in message.tool_calls:  # ... followed by one result per call
                arguments = json.loads(call.function.arguments)
                result = FUNCTIONS[call.function.name](**arguments)
                print(f"Tool call: {call.function.name}({arguments}) -> {result}")
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    raise SystemExit("no answer after 5 rounds of tool calls")


if __name__ == "__main__":
    main()
