"""Token saving of history compression on a 20-turn scripted conversation.

    python benchmarks/compression.py [--turns 20] [--budget 2000] [--keep-last 2]

Each turn asks for one fact; the scripted model calls a lookup tool (a ~450-character result),
then answers; when the conversation summarises, the model returns a two-sentence summary.
Reported: prompt tokens sent to the model over the whole conversation (all turns, summaries
included) and the history size before the last turn, with and without compression. Tokens are
estimated as in ``Conversation.history_tokens`` (ASCII characters / 4).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from react_agent import Agent, Message, ScriptedModel, Toolbox
from react_agent.agent._conversation import Conversation, estimate_tokens


def respond(messages: Sequence[Message]) -> str:
    last = messages[-1]["content"]
    if last.startswith("Summarize the conversation"):
        return "The user asked for facts one by one; the lookup tool returned each value."
    if last.startswith("Observation:"):
        answer = f"The value is {last.split()[1]}."
        return json.dumps({"thought": "I have it.", "action": {"final_answer": answer}})
    key = last.split()[-1].rstrip("?")
    action = {"name": "lookup", "args": {"key": key}}
    return json.dumps({"thought": "Look it up.", "action": action})


def toolbox() -> Toolbox:
    tb = Toolbox()

    @tb.tool
    def lookup(key: str) -> str:
        """Look a fact up."""
        return f"{key} = {len(key) * 7}. " + "Details of the record follow. " * 15

    return tb


def converse(turns: int, budget: int | None, keep_last: int) -> tuple[int, int, int]:
    model = ScriptedModel([respond] * (turns * 4))
    chat = Conversation(Agent(model, toolbox()), max_history_tokens=budget, keep_last=keep_last)
    history_before_last = 0
    for n in range(1, turns + 1):
        if n == turns:
            history_before_last = chat.history_tokens()
        chat.ask(f"What is fact{n}?")
    sent = sum(estimate_tokens(m["content"]) for call in model.calls for m in call)
    return sent, history_before_last, len(chat.compressions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--keep-last", type=int, default=2)
    args = parser.parse_args()
    plain = converse(args.turns, None, args.keep_last)
    packed = converse(args.turns, args.budget, args.keep_last)
    print(f"{args.turns}-turn scripted conversation, budget {args.budget} tokens, "
          f"keep_last {args.keep_last}:")
    print(f"  prompt tokens sent, all turns:  {plain[0]:7d} without   {packed[0]:7d} with "
          f"compression  ({1 - packed[0] / plain[0]:.0%} saved, {packed[2]} summaries)")
    print(f"  history before the last turn:   {plain[1]:7d} without   {packed[1]:7d} with "
          f"({1 - packed[1] / plain[1]:.0%} smaller)")


if __name__ == "__main__":
    main()
