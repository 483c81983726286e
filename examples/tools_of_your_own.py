"""Tools of your own: two typed Python functions become tools, and one task needs both.

``@toolbox.tool`` turns a function into a tool: the name is the function's, the description is
the docstring's first part, and the JSON Schema of the arguments comes from the type hints
(``Literal`` becomes an ``enum``; a parameter with a default is optional) with each argument
described by the docstring's ``Args:`` section. The script prints what the model is shown of
the tools, then runs a task that needs a price lookup and then a conversion of that price.
A tool that raises (an unknown product) does not stop the run: the model gets the error as the
observation and can try again.

    python examples/tools_of_your_own.py                # the embedded model
    python examples/tools_of_your_own.py --base-url http://localhost:8080/v1
    python examples/tools_of_your_own.py --scripted     # canned replies, no model needed
"""

from __future__ import annotations

from typing import Literal

from _run import command_line, pick_model, reply_answer, reply_call

from react_agent import Agent, Toolbox
from react_agent.harness import Printer

PRICES_USD = {"trailhead 30": 89.00, "summit 45": 149.00, "city 20": 59.50}
USD_RATES = {"EUR": 0.92, "GBP": 0.79, "JPY": 151.40}

toolbox = Toolbox()


@toolbox.tool
def get_price(product: str) -> dict[str, object]:
    """Look up the price of a backpack in our shop, in US dollars.

    Args:
        product: the backpack's name, e.g. "Summit 45".
    """
    price = PRICES_USD.get(product.strip().lower())
    if price is None:
        raise ValueError(f"no backpack called {product!r}; we sell Trailhead 30, Summit 45 "
                         "and City 20")
    return {"product": product, "price": price, "currency": "USD"}


@toolbox.tool
def convert_usd(amount: float, currency: Literal["EUR", "GBP", "JPY"]) -> str:
    """Convert an amount of US dollars into another currency at today's rate.

    Args:
        amount: the amount in US dollars.
        currency: the currency to convert into.
    """
    return f"{amount:.2f} USD = {amount * USD_RATES[currency]:.2f} {currency}"


TASK = "How much is the Trailhead 30 backpack in euros?"

CANNED = [  # what a model might reply, for --scripted
    reply_call("First I need the backpack's price.", "get_price", product="Trailhead 30"),
    reply_call("It costs 89 USD; now I convert that into euros.", "convert_usd",
               amount=89.0, currency="EUR"),
    reply_answer("I have the price in euros.",
                 "The Trailhead 30 costs 89.00 USD, which is 81.88 EUR."),
]


def main() -> None:
    args = command_line(__doc__)
    print("The tools, as the system prompt shows them to the model:")
    print(toolbox.describe(), end="\n\n")
    agent = Agent(pick_model(args, CANNED), toolbox, max_steps=6, callbacks=[Printer()])
    result = agent.run(TASK)
    raise SystemExit(0 if result.status == "final_answer" else 1)


if __name__ == "__main__":
    main()
