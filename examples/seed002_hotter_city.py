"""Seed 002 (从零手写AI Agent：不依赖LangChain): which city is hotter, a walkthrough, and a retry
after a district name the weather tool does not know.

    python examples/seed002_hotter_city.py                # the embedded local model
    python examples/seed002_hotter_city.py --base-url http://127.0.0.1:8080/v1 [--model NAME]
    python examples/seed002_hotter_city.py --scripted     # replay the reference trajectories
"""

from _common import main
from tools import seed002

if __name__ == "__main__":
    raise SystemExit(main("002", seed002, __doc__))
