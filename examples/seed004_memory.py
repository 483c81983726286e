"""Seed 004 (手搓一个属于你自己的 Agentic AI 框架): Tokyo's weather, then AAPL's price, then
"which city did I ask about at the start?".

    python examples/seed004_memory.py                     # the embedded local model
    python examples/seed004_memory.py --base-url http://127.0.0.1:8080/v1 [--model NAME]
    python examples/seed004_memory.py --scripted          # replay the reference trajectories
"""

# The seed runs its turns on one agent with one shared memory: here the three turns are one
# Conversation (agent.chat()), so turn 2's input holds turn 1 and turn 3 can be answered from
# the history alone.

from _common import main
from tools import seed004

if __name__ == "__main__":
    raise SystemExit(main("004", seed004, __doc__))
