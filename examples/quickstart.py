"""Quick start: the built-in tools on a simple task, with the thought chain printed.

The built-in toolbox (the one ``react-agent run`` uses) holds a calculator, the current date and
time, and read-only file tools confined to one folder. Here that folder is a temporary one with
a shopping list in it, and the agent is asked what the list costs: it reads the file, adds up
with the calculator and answers. ``Printer`` prints each Thought, Action and Observation as the
run goes (the library itself never prints).

    python examples/quickstart.py                       # the embedded model
    python examples/quickstart.py --base-url http://localhost:11434/v1 --model qwen2.5:1.5b
    python examples/quickstart.py --scripted            # canned replies, no model needed
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from _run import command_line, pick_model, reply_answer, reply_call

from react_agent import Agent
from react_agent.harness import Printer
from react_agent.tools.builtin import builtin_toolbox

SHOPPING_LIST = "apples: 3 at 0.40\nbread: 1 at 2.25\ncoffee: 2 at 5.90\n"
TASK = "What does everything on shopping.txt cost together?"

CANNED = [  # what a model might reply, for --scripted
    reply_call("I need to read the shopping list first.", "read_file", path="shopping.txt"),
    reply_call("Now I add up quantity times price.", "calculate",
               expression="3 * 0.40 + 1 * 2.25 + 2 * 5.90"),
    reply_answer("The calculator gave the total.",
                 "Everything costs 15.25: apples 1.20, bread 2.25 and coffee 11.80."),
]


def main() -> None:
    args = command_line(__doc__)
    model = pick_model(args, CANNED)
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "shopping.txt").write_text(SHOPPING_LIST, encoding="utf-8")
        # calculate, current_datetime, list_directory, read_file, file_info, search_files
        toolbox = builtin_toolbox(root=folder)
        agent = Agent(model, toolbox, max_steps=6, callbacks=[Printer()])
        result = agent.run(TASK)
    tools_used = [call.name for step in result.steps for call in step.tool_calls]
    print(f"\nTools used: {', '.join(tools_used) or 'none'}")
    print(f"Answer: {result.final_answer}")
    raise SystemExit(0 if result.status == "final_answer" else 1)


if __name__ == "__main__":
    main()
