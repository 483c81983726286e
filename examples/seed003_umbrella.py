"""Seed 003 (百行代码从零手搓Agent): check the weather, remind me of an umbrella if it rains.

    python examples/seed003_umbrella.py                   # the embedded local model
    python examples/seed003_umbrella.py --base-url http://127.0.0.1:8080/v1 [--model NAME]
    python examples/seed003_umbrella.py --scripted        # replay the reference trajectories

Reminders sent with send_message are collected in ``tools.SENT_MESSAGES``.
"""

from _common import main
from tools import SENT_MESSAGES, seed003

if __name__ == "__main__":
    code = main("003", seed003, __doc__)
    print(f"Messages sent: {SENT_MESSAGES}")
    raise SystemExit(code)
