"""Another model: the agent on a model behind a local OpenAI-compatible server.

react-agent sends plain chat messages (never ``tools=``), so any server that speaks the OpenAI
chat API will do, whether or not its model can call functions:

- Ollama: ``ollama pull qwen2.5:1.5b``; base URL ``http://localhost:11434/v1`` (the default here)
- llama.cpp's server: ``llama-server -m model.gguf --port 8080``; ``http://localhost:8080/v1``
- vLLM: ``vllm serve Qwen/Qwen2.5-1.5B-Instruct``; ``http://localhost:8000/v1``

Without ``--model`` the server's first listed model is used. A server that is down or refuses
the request ends the run with the status ``model_error`` and the cause in ``result.error``.

    python examples/other_model.py                                   # Ollama on this machine
    python examples/other_model.py --base-url http://localhost:11434/v1 --model qwen2.5:1.5b
    python examples/other_model.py --base-url http://localhost:8080/v1  # llama.cpp's server
    python examples/other_model.py --scripted                         # canned replies
"""

from __future__ import annotations

from _run import command_line, reply_answer, reply_call

from react_agent import Agent, ScriptedModel, Toolbox
from react_agent.harness import Printer
from react_agent.models import OpenAIChatModel
from react_agent.tools.builtin import calculate

OLLAMA = "http://localhost:11434/v1"
TASK = "A bread recipe for 4 people needs 350 g of flour. How much flour is that for 7 people?"

CANNED = [  # what a model might reply, for --scripted
    reply_call("Scale the flour by 7/4.", "calculate", expression="350 / 4 * 7"),
    reply_answer("The calculator gave the amount.", "For 7 people you need 612.5 g of flour."),
]


def main() -> None:
    args = command_line(__doc__, base_url=OLLAMA)
    if args.scripted:
        model = ScriptedModel(CANNED)
    else:
        model = OpenAIChatModel(
            model=args.model,  # None: the first model the server lists
            base_url=args.base_url,
            api_key=None,  # None: $OPENAI_API_KEY, else a placeholder (local servers ignore it)
            temperature=0.0, max_tokens=512, timeout=120,
        )
        print(f"Server: {model.base_url}")
    toolbox = Toolbox()
    toolbox.add(calculate)  # the built-in calculator alone
    # A server's model may be of any size, so it gets the default policies without
    # HoldDependentCalls; for a small model behind a server, add it back with
    #     Agent(..., policies=default_policies(model, use=[HoldDependentCalls()]))
    # (both from react_agent.policies).
    agent = Agent(model, toolbox, max_steps=5, callbacks=[Printer()])
    result = agent.run(TASK)
    if result.status == "model_error":
        print(f"\nThe server failed: {result.error}")
    raise SystemExit(0 if result.status == "final_answer" else 1)


if __name__ == "__main__":
    main()
