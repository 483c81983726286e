"""``react-agent chat``: a conversation of several turns on the terminal (``/reset``, ``/save``,
``/exit``)."""

from __future__ import annotations

import argparse
import sys

from ..agent import Conversation
from ..harness import Printer
from ._session import Session


def chat(args: argparse.Namespace) -> int:
    printer = Printer(sys.stdout, tokens=args.stream, show_task=False)
    with Session(args, printer) as session:
        agent = session.agent()
        options = {"max_history_tokens": args.max_history_tokens}
        chat = (
            Conversation.load(agent, args.load, **options) if args.load
            else agent.chat(**options)
        )
        if args.load:
            print(f"(continuing {args.load}: {len(chat.turns)} earlier turn(s))")
        print("Chat with the agent. Commands: /reset, /save FILE, /exit.", file=sys.stderr)
        while True:
            try:
                line = input("You: ").strip()
            except (EOFError, KeyboardInterrupt):
                print()
                return 0
            if line in ("/exit", "/quit"):
                return 0
            if line == "/reset":
                chat.reset()
                print("(the conversation was cleared)")
            elif line.startswith("/save"):
                path = line[len("/save"):].strip()
                if path:
                    chat.save(path)
                    print(f"(saved to {path})")
                else:
                    print("(usage: /save FILE)")
            elif line.startswith("/"):
                print("(commands: /reset, /save FILE, /exit)")
            elif line:
                for _ in chat.iter(line):
                    pass
