"""Example tools for the docs.

    react-agent run --tools docs/examples/weather_tools.py:toolbox "Is it sunny in Beijing?"
"""

from __future__ import annotations

from typing import Literal

from react_agent import Toolbox

toolbox = Toolbox()


@toolbox.tool
def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
    """Get the current weather for a city.

    Args:
        city: the city name only, e.g. "Beijing".
        unit: the temperature unit.
    """
    degrees = 22 if unit == "celsius" else 72
    return f"{city}: sunny, {degrees} degrees {unit}"


@toolbox.tool(requires_approval=True)
def send_email(to: str, subject: str, body: str) -> str:
    """Send an email. Only to an address the user gave or a tool returned.

    Args:
        to: the recipient's email address.
        subject: one line.
        body: the text of the email.
    """
    return f"sent to {to}"
