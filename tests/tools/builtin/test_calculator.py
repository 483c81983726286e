"""The calculator: exact arithmetic and its refusals (through the builtin
toolbox in test_builtin_tools.py)."""

from __future__ import annotations

import re

import pytest

from react_agent.tools.builtin._calculator import calculate


@pytest.mark.parametrize(
    ("expression", "result"),
    [
        ("(2 ** 8 + 100) / 3", "118.66666666666667"),
        ("2 + 3 * 4", "14"),
        ("(2 + 3) * 4", "20"),
        ("2 * 3 ** 2", "18"),
        ("2 ** 3 ** 2", "512"),  # right-associative
        ("-3 ** 2", "-9"),  # unary minus binds looser than **
        ("(-3) ** 2", "9"),
        ("-5 + +2", "-3"),
        ("--4", "4"),
        ("7 // 2", "3"),
        ("-7 // 2", "-4"),
        ("7 % 3", "1"),
        ("-7 % 3", "2"),
        ("7.5 % 2", "1.5"),
        ("8 / 2", "4.0"),
        ("1 / 4", "0.25"),
        ("0.1 + 0.2", "0.30000000000000004"),
        ("2 ** -1", "0.5"),
        ("16 ** 0.5", "4.0"),
        ("1e3 * 2", "2000.0"),
        ("1_000 + 0x10", "1016"),
        ("2 ** 100", "1267650600228229401496703205376"),
        ("3 × 4 ÷ 2", "6.0"),
        ("10 − 4", "6"),  # the Unicode minus sign
    ],
)
def test_calculate_table(expression: str, result: str) -> None:
    assert calculate(expression) == f"{expression} = {result}"


def test_calculate_strips_surrounding_spaces() -> None:
    assert calculate("  1 + 1 \n") == "1 + 1 = 2"


def test_calculate_allows_large_but_bounded_integers() -> None:
    out = calculate("2 ** 1000")
    assert out == f"2 ** 1000 = {2 ** 1000}"
    assert len(calculate("9 ** 4000").split(" = ")[1]) == 3817  # just under the digit limit


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("__import__('os')", "Function calls are not supported"),
        ("__import__('os').system('echo hi')", "not supported"),
        ("abs(-1)", "Function calls are not supported"),
        ("factorial(100000)", "Function calls are not supported"),
        ("math.factorial(100000)", "not supported"),
        ("100000!", "Cannot parse"),
        ("pi * 2", "Names such as 'pi' are not supported"),
        ("x + 1", "Names such as 'x'"),
        ("(1).real", "Attribute access"),
        ("(2).__class__", "Attribute access"),
        ("'a' * 3", "is not a number"),
        ("True + 1", "is not a number"),
        ("1j * 2", "is not a number"),
        ("[1, 2]", "not supported"),
        ("1, 000", "Commas are not supported"),
        ("1 < 2", "not supported"),
        ("1 and 2", "not supported"),
        ("not 1", "operator is not supported"),
        ("~1", "operator is not supported"),
        ("1 << 3", "operator is not supported"),
        ("6 & 3", "operator is not supported"),
        ("lambda: 1", "not supported"),
        ("2 ^ 3", "use ** for powers"),
        ("2 +", "Cannot parse"),
        ("import os", "Cannot parse"),
        ("", "empty"),
        ("   ", "empty"),
        ("(-8) ** 0.5", "not a real number"),
    ],
)
def test_calculate_refuses(expression: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        calculate(expression)


@pytest.mark.parametrize(
    "expression",
    ["9**9**9**9", "10**100000", "10 ** 4001", "2 ** (10 ** 400)", "(10 ** 3000) * (10 ** 3000)"],
)
def test_calculate_refuses_huge_integers(expression: str) -> None:
    with pytest.raises(ValueError, match="digits"):
        calculate(expression)


@pytest.mark.parametrize("expression", ["1e308 * 10", "1e999", "2.0 ** 5000", "10 ** 400 / 1.5"])
def test_calculate_refuses_float_overflow(expression: str) -> None:
    with pytest.raises(OverflowError, match="too large"):
        calculate(expression)


def test_calculate_refuses_long_and_deep_expressions() -> None:
    long = "+".join(["1"] * 251)  # 501 characters
    with pytest.raises(ValueError, match="501 characters"):
        calculate(long)
    assert calculate("+".join(["1"] * 250)).endswith(" = 250")  # 499 characters: fine
    deep = "(" * 51 + "1" + ")" * 51
    with pytest.raises(ValueError, match="51 deep"):
        calculate(deep)
    assert calculate("(" * 50 + "1" + ")" * 50).endswith(" = 1")


@pytest.mark.parametrize("expression", ["1 / 0", "1 // 0", "5 % 0", "1.5 / 0.0", "0 ** -1"])
def test_calculate_division_by_zero(expression: str) -> None:
    with pytest.raises(ZeroDivisionError, match="Division by zero"):
        calculate(expression)
