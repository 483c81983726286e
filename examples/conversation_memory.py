"""A conversation with long-term memory: what the user said earlier shapes a later answer.

Two kinds of memory are at work:

- the conversation: ``chat = agent.chat()`` keeps the turns in one history, so the second
  question is answered from what the user said in the first (older turns are summarised when
  the history grows past a token budget);
- long-term memory: ``memory_tools(user_id, root=...)`` adds ``remember(fact)`` and
  ``recall(query)``, which keep facts in a JSON file per user (here in a temporary folder). A
  new conversation starts with an empty history, yet can recall what an earlier one stored.

    python examples/conversation_memory.py              # the embedded model
    python examples/conversation_memory.py --base-url http://localhost:8080/v1
    python examples/conversation_memory.py --scripted   # canned replies, no model needed
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from _run import command_line, pick_model, reply_answer, reply_call

from react_agent import Agent
from react_agent.harness import Printer
from react_agent.tools.builtin import memory_tools

FIRST_CONVERSATION = [
    "Hi, I'm Dana. I'm vegetarian and allergic to peanuts; please remember that.",
    "Tonight's menu has a peanut pad thai and a mushroom risotto. Which one should I order?",
]
LATER_CONVERSATION = "Suggest a quick snack for me. Check what you know about me first."

CANNED = [  # what a model might reply, for --scripted
    reply_call("The user wants me to keep this fact.", "remember",
               fact="Dana is vegetarian and allergic to peanuts."),
    reply_answer("The fact is stored.",
                 "Remembered, Dana: you are vegetarian and allergic to peanuts."),
    reply_answer("Dana said earlier she is vegetarian and allergic to peanuts.",
                 "The mushroom risotto: the pad thai has peanuts, which you are allergic to."),
    reply_call("I should look up what I know about the user.", "recall", query=""),
    reply_answer("Dana is vegetarian and allergic to peanuts.",
                 "As you are vegetarian and allergic to peanuts: hummus with carrot sticks."),
]


def main() -> None:
    args = command_line(__doc__)
    model = pick_model(args, CANNED)
    with tempfile.TemporaryDirectory() as folder:
        toolbox = memory_tools("dana", root=folder)  # remember, recall
        agent = Agent(model, toolbox, max_steps=5, callbacks=[Printer(show_task=False)])

        print("--- a conversation: the turns share one history")
        chat = agent.chat()
        for question in FIRST_CONVERSATION:
            print(f"You: {question}")
            chat.ask(question)

        print("\n--- a new conversation: an empty history, the same memory file")
        print(f"You: {LATER_CONVERSATION}")
        result = agent.chat().ask(LATER_CONVERSATION)

        facts = json.loads(Path(folder, "dana.json").read_text(encoding="utf-8"))["facts"]
        print(f"\nRemembered facts: {[fact['fact'] for fact in facts]}")
    raise SystemExit(0 if result.status == "final_answer" else 1)


if __name__ == "__main__":
    main()
