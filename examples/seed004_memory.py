"""Seed 004 (手搓一个属于你自己的 Agentic AI 框架): Tokyo's weather, then AAPL's price, then
"which city did I ask about at the start?".

    python examples/seed004_memory.py                     # the embedded local model
    python examples/seed004_memory.py --base-url http://127.0.0.1:8080/v1 [--model NAME]
    python examples/seed004_memory.py --scripted          # replay the reference trajectories
"""

# The seed runs its turns on one agent with one shared memory. There is no conversation API
# yet, so each turn runs here as a separate task: turn 2's memory check is not made, and a real
# model cannot answer turn 3 ("Which city did I ask about at the start?"), which needs memory.
# The scripted replay passes all three. Switch to a Conversation once the library has one.

from _common import main
from tools import seed004

if __name__ == "__main__":
    raise SystemExit(main("004", seed004, __doc__))
