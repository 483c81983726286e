"""Seed 000 (从零手写一个 Agent 框架): weather, a calculator and a knowledge base, four tasks.

    python examples/seed000_agent_basics.py               # the embedded local model
    python examples/seed000_agent_basics.py --base-url http://127.0.0.1:8080/v1 [--model NAME]
    python examples/seed000_agent_basics.py --scripted    # replay the reference trajectories
"""

from _common import main
from tools import seed000

if __name__ == "__main__":
    raise SystemExit(main("000", seed000, __doc__))
