"""Bracket formats: items written and read back, and replies that cannot be read."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from testaug.generation.parsing import (
    FORMATS,
    ParsedItem,
    ParseFailure,
    comparison_key,
    label_of_word,
    parse_reply,
    render_item,
)

SINGLE, PAIR, LABELLED = FORMATS["single"], FORMATS["pair"], FORMATS["labelled_pair"]
LABEL_WORDS = {
    "entailment": "Implication",
    "neutral": "Possibility",
    "contradiction": "Contradiction",
}


def reason(result: ParsedItem | ParseFailure) -> str:
    assert isinstance(result, ParseFailure), result
    return result.reason


def test_single_continuation_stopped_by_its_closing_bracket_is_read():
    assert parse_reply(" No one likes that pilot. ", SINGLE) == ParsedItem(
        "No one likes that pilot."
    )


def test_single_reply_that_closes_its_bracket_itself_ignores_what_follows():
    reply = " Great crew. }\n- { Another one. }"
    assert parse_reply(reply, SINGLE, stopped=False) == ParsedItem("Great crew.")


def test_inner_spacing_is_collapsed():
    assert parse_reply("  The   seat\n was fine. ", SINGLE).text == "The seat was fine."


def test_reply_cut_by_the_token_limit_is_unbalanced():
    result = parse_reply(" I really do think that", SINGLE, stopped=False)
    assert reason(result) == "unbalanced"
    assert "token limit" in result.detail


def test_empty_brackets_are_rejected():
    assert reason(parse_reply("   ", SINGLE)) == "empty"


def test_nested_bracket_in_a_single_sentence_is_unbalanced():
    assert reason(parse_reply(" I { like } it ", SINGLE)) == "unbalanced"


def test_pair_continuation_is_read_into_both_questions():
    reply = " Who is the best coach? }\n- { Who is the top coach? "
    assert parse_reply(reply, PAIR) == ParsedItem("Who is the best coach?", "Who is the top coach?")


def test_pair_with_one_sentence_has_wrong_arity():
    assert reason(parse_reply(" Who is the best coach? ", PAIR)) == "wrong_arity"
    assert reason(parse_reply(" Who is it? } ", PAIR)) == "wrong_arity"


def test_pair_with_three_sentences_has_wrong_arity():
    reply = " A? }\n- { B? }\n- { C? "
    assert reason(parse_reply(reply, PAIR)) == "wrong_arity"


def test_pair_with_text_between_its_sentences_is_unbalanced():
    reply = " A? } and also { B? "
    assert reason(parse_reply(reply, PAIR)) == "unbalanced"


def test_labelled_pair_continuation_gives_premise_hypothesis_and_label_word():
    reply = " Mary has a cat and a dog. }\n- Implication: { Mary has two pets. "
    assert parse_reply(reply, LABELLED) == ParsedItem(
        "Mary has a cat and a dog.", "Mary has two pets.", "Implication"
    )


def test_labelled_pair_without_hypothesis_has_wrong_arity():
    assert reason(parse_reply(" Mary has a cat. ", LABELLED)) == "wrong_arity"


def test_labelled_pair_without_label_word_is_an_unknown_label():
    reply = " Mary has a cat. }\n- { Mary has a pet. "
    assert reason(parse_reply(reply, LABELLED)) == "unknown_label"


def test_chat_answer_is_searched_for_its_first_item():
    answer = "Sure! Here is one:\n- { The food was not bad at all. }"
    parsed = parse_reply(answer, SINGLE, continuation=False, stopped=False)
    assert parsed == ParsedItem("The food was not bad at all.")


def test_chat_answer_without_brackets_is_unbalanced():
    assert reason(parse_reply("I cannot help.", SINGLE, continuation=False)) == "unbalanced"


@pytest.mark.parametrize("fmt", [SINGLE, PAIR, LABELLED], ids=lambda f: f.name)
def test_rendered_items_parse_back(fmt):
    item = render_item(
        fmt, "Is it safe?", "Is it not dangerous?" if fmt.is_pair else None, "Possibility"
    )
    parsed = parse_reply(item, fmt, continuation=False, stopped=False)
    assert parsed.text == "Is it safe?"
    if fmt.is_pair:
        assert parsed.text_pair == "Is it not dangerous?"


@pytest.mark.parametrize("fmt", [SINGLE, PAIR, LABELLED], ids=lambda f: f.name)
def test_item_after_the_opening_with_the_stop_removed_parses_back(fmt):
    item = render_item(fmt, "One.", "Two." if fmt.is_pair else None, "Contradiction")
    reply = item.removeprefix(fmt.opening)
    for stop in fmt.stop:
        reply = reply.split(stop)[0]
    reply = reply.removesuffix(fmt.closing)
    parsed = parse_reply(reply, fmt)
    assert isinstance(parsed, ParsedItem) and parsed.text == "One."


def test_label_words_map_to_labels_ignoring_case_and_spacing():
    assert label_of_word("implication", LABEL_WORDS) == "entailment"
    assert label_of_word(" POSSIBILITY ", LABEL_WORDS) == "neutral"
    assert label_of_word("Maybe", LABEL_WORDS) is None


def test_comparison_key_ignores_case_spacing_and_end_punctuation():
    assert comparison_key("No one likes it.", None) == comparison_key("no one  likes it", None)


brackety_text = st.text(alphabet=st.sampled_from(list("{}-: \nab.?Implication")), max_size=60)


@given(
    reply=st.one_of(st.text(max_size=200), brackety_text),
    continuation=st.booleans(),
    stopped=st.booleans(),
)
def test_parser_never_raises_and_never_returns_a_bracket(reply, continuation, stopped):
    for fmt in FORMATS.values():
        result = parse_reply(reply, fmt, continuation=continuation, stopped=stopped)
        if isinstance(result, ParsedItem):
            for part in (result.text, result.text_pair or "", result.label_word or ""):
                assert "{" not in part and "}" not in part
            assert result.text.strip()
            assert fmt.is_pair == (result.text_pair is not None)
        else:
            assert result.reason in {"unbalanced", "empty", "wrong_arity", "unknown_label"}
