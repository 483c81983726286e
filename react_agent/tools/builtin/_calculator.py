"""The calculator tool: exact arithmetic on numbers, refusing anything else.

:func:`calculate` parses the expression with :mod:`ast` and evaluates only numbers, the
arithmetic operators and parentheses, with bounds on length, nesting and result size, so a model
cannot make it run code or stall. Its errors (``ValueError``, ``ZeroDivisionError``,
``OverflowError``) say what to write instead; the invoker turns them into observations.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable

__all__ = ["calculate", "evaluate"]

MAX_EXPRESSION_CHARS = 500
"""Longest expression (characters) :func:`calculate` accepts."""

MAX_NESTING = 50
"""Deepest parenthesis nesting :func:`calculate` accepts."""

MAX_INT_DIGITS = 4000
"""Largest integer result (decimal digits) :func:`calculate` computes; bigger ones are refused
before the work is done. Kept under CPython's default 4300-digit ``int -> str`` limit."""

_LOG10_2 = math.log10(2)

_BIN_OPS: dict[type[ast.operator], tuple[str, Callable[[float, float], float]]] = {
    ast.Add: ("+", operator.add),
    ast.Sub: ("-", operator.sub),
    ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv),
    ast.FloorDiv: ("//", operator.floordiv),
    ast.Mod: ("%", operator.mod),
    ast.Pow: ("**", operator.pow),
}
_UNARY_OPS: dict[type[ast.unaryop], Callable[[float], float]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_UNICODE_OPS = {"×": "*", "÷": "/", "−": "-"}  # times, divide, the Unicode minus sign
_SUPPORTED = "numbers, + - * / // % ** and parentheses"


def calculate(expression: str) -> str:
    """Evaluate arithmetic exactly. Supports numbers, + - * / // (floor division),
    % (remainder), ** (power) and parentheses, e.g. "(2 ** 8 + 100) / 3". No variables or
    functions; for a square root use ** 0.5.

    Args:
        expression: the arithmetic expression, e.g. "(2 ** 8 + 100) / 3".

    Returns:
        ``"<expression> = <result>"``: integers in full, floats as Python's ``repr``
        (e.g. ``"(2 ** 8 + 100) / 3 = 118.66666666666667"``, ``"8 / 2 = 4.0"``).

    Raises:
        ValueError: the expression is empty, longer than 500 characters, nested deeper than 50
            parentheses, not valid arithmetic, uses anything but numbers and the operators above
            (``^`` is refused with a hint to use ``**``), gives an integer of more than 4000
            digits or a non-real (complex) result.
        ZeroDivisionError: division, floor division or remainder by zero (or 0 to a negative
            power).
        OverflowError: a float result is too large to represent.
    """
    value = evaluate(expression)
    result = repr(value) if isinstance(value, float) else str(value)
    return f"{expression.strip()} = {result}"


def evaluate(expression: str) -> int | float:
    """The value of the arithmetic ``expression``, with the checks and errors of
    :func:`calculate` (which formats it for the model)."""
    text = expression.strip()
    if not text:
        raise ValueError('The expression is empty; write one like "(2 ** 8 + 100) / 3".')
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ValueError(
            f"The expression is {len(text)} characters long; the limit is {MAX_EXPRESSION_CHARS}."
            " Split the calculation into smaller steps."
        )
    if "^" in text:
        raise ValueError("'^' is not supported; use ** for powers, e.g. 2 ** 8.")
    for symbol, replacement in _UNICODE_OPS.items():
        text = text.replace(symbol, replacement)
    depth = deepest = 0
    for char in text:
        depth += (char == "(") - (char == ")")
        deepest = max(deepest, depth)
    if deepest > MAX_NESTING:
        raise ValueError(
            f"The expression nests parentheses {deepest} deep; the limit is {MAX_NESTING}."
        )
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ValueError(
            f"Cannot parse {expression.strip()!r} as arithmetic; use only {_SUPPORTED}, "
            'e.g. "(2 ** 8 + 100) / 3".'
        ) from exc
    return _evaluate(tree.body, text)


def _evaluate(node: ast.AST, text: str) -> int | float:
    """Evaluate one node of an arithmetic AST, refusing anything else."""
    if isinstance(node, ast.Constant):
        if type(node.value) in (int, float):
            return _checked(node.value)
        raise ValueError(f"{node.value!r} is not a number; the calculator only works on numbers.")
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY_OPS:
        return _checked(_UNARY_OPS[type(node.op)](_evaluate(node.operand, text)))
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN_OPS:
        symbol, func = _BIN_OPS[type(node.op)]
        left, right = _evaluate(node.left, text), _evaluate(node.right, text)
        if symbol == "**":
            _check_power(left, right)
        try:
            value = func(left, right)
        except ZeroDivisionError:
            raise ZeroDivisionError(
                f"Division by zero in {ast.get_source_segment(text, node) or text!r}."
            ) from None
        except OverflowError:
            raise OverflowError(
                f"{ast.get_source_segment(text, node) or text!r} is too large to compute."
            ) from None
        return _checked(value)
    raise ValueError(_refusal(node))


def _check_power(base: float, exponent: float) -> None:
    """Refuse an integer power whose result would have more than MAX_INT_DIGITS digits."""
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
        digits = exponent * math.log10(abs(base)) if exponent.bit_length() < 64 else math.inf
        if digits > MAX_INT_DIGITS:
            size = f"about {digits:.3g}" if math.isfinite(digits) else "far too many"
            raise ValueError(
                f"That power would have {size} digits; integer results are limited to "
                f"{MAX_INT_DIGITS} digits."
            )


def _checked(value: object) -> int | float:
    if isinstance(value, complex):
        raise ValueError(
            "The result is not a real number (e.g. a fractional power of a negative number)."
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise OverflowError("The result is too large for a floating-point number.")
    if isinstance(value, int) and value.bit_length() * _LOG10_2 > MAX_INT_DIGITS:
        raise ValueError(f"The result has more than {MAX_INT_DIGITS} digits; that is the limit.")
    return value  # type: ignore[return-value]


def _refusal(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return (
            f"Names such as {node.id!r} are not supported; write the numbers themselves "
            f"(only {_SUPPORTED})."
        )
    if isinstance(node, ast.Call):
        return (
            f"Function calls are not supported (only {_SUPPORTED}); for a square root use ** 0.5."
        )
    if isinstance(node, ast.Attribute):
        return f"Attribute access such as '.{node.attr}' is not supported (only {_SUPPORTED})."
    if isinstance(node, (ast.BinOp, ast.UnaryOp)):
        return f"That operator is not supported; use only {_SUPPORTED} (** for powers)."
    if isinstance(node, ast.Tuple):
        return "Commas are not supported; write 1000 rather than 1,000, one expression per call."
    return f"{type(node).__name__} is not supported in an expression; use only {_SUPPORTED}."
