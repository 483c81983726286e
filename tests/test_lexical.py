"""Tests for react_agent._lexical: the word matching behind memory recall and tool routing."""

from __future__ import annotations

from react_agent._lexical import is_cjk, matches, overlap, rank, terms


def test_terms() -> None:
    assert terms("What is the get_stock_price of AAPL?") == {"stock", "price", "aapl"}
    assert terms("北京天气 in Beijing") == {"北", "京", "天", "气", "beijing"}
    assert terms("a I x 7") == {"7"}  # stop words and single letters go, digits stay


def test_is_cjk_takes_letters_of_cjk_scripts_not_their_punctuation() -> None:
    assert all(is_cjk(c) for c in "天気ーカナ한々")
    assert not any(is_cjk(c) for c in "。、（Ａa1 ")
    assert terms("ラーメン。") == {"ラ", "ー", "メ", "ン"}  # the full stop is no term


def test_matches_longer_forms_only_for_real_words() -> None:
    assert matches("live", {"lives"}) and matches("lives", {"live"})
    assert not matches("car", {"cartoon"})  # under four letters: exact only
    assert overlap({"weather", "paris"}, {"weathers", "london"}) == 1


def test_rank_weighs_rare_words_more() -> None:
    docs = ["weather of a city", "stock price of a company", "price of a city flight"]
    scores = rank("city price", docs)
    assert scores[2] > scores[0] > 0 and scores[2] > scores[1] > 0
    assert rank("nothing shared", docs) == [0.0, 0.0, 0.0]
