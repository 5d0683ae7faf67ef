"""AdaTest's minimal prompt notation (AT-6) and the parsing of one completion."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from testaug.adaptive.prompting import (
    STOP,
    Malformed,
    PromptLayout,
    clean,
    parse_completion,
    render_prompt,
)
from testaug.adaptive.tree import TreeTest

LABELS = ("negative", "neutral", "positive")


def mft(text: str, output: str = "positive", comparator: str = "should not be") -> TreeTest:
    return TreeTest(topic="/Negation", input=text, comparator=comparator, output=output)


def test_a_prompt_of_one_expectation_lists_only_the_inputs_and_opens_the_next_item():
    prompt = render_prompt([mft("I expected better."), mft("I wanted to like this.")])
    assert prompt.text == '"I expected better."\n"I wanted to like this."\n"'
    assert prompt.layout.fields == ("input",)
    assert prompt.layout.shared == {"comparator": "should not be", "output": "positive"}
    assert STOP == '"\n'


def test_fields_that_differ_are_shown_on_every_line():
    prompt = render_prompt([mft("I expected better."), mft("Not bad at all.", output="negative")])
    assert prompt.text == ('"I expected better." "positive"\n"Not bad at all." "negative"\n"')
    mixed = render_prompt(
        [mft("Not good.", "positive"), mft("Not bad.", "negative", comparator="should be")]
    )
    assert mixed.text.splitlines()[0] == '"Not good." "should not be" "positive"'
    assert mixed.layout.fields == ("input", "comparator", "output")


def test_pairs_show_both_texts_before_the_expectation():
    tests = [
        TreeTest(topic="/Q", input="How do I cook rice?", input_pair="How is rice cooked?",
                 output="duplicate"),
        TreeTest(topic="/Q", input="Who are you?", input_pair="Who is he?",
                 output="not_duplicate"),
    ]  # fmt: skip
    prompt = render_prompt(tests)
    assert prompt.text.splitlines()[0] == '"How do I cook rice?" "How is rice cooked?" "duplicate"'
    parsed = parse_completion(
        'What is love?" "What does love mean?" "duplicate',
        prompt.layout,
        topic="/Q",
        labels=("duplicate", "not_duplicate"),
    )
    assert isinstance(parsed, TreeTest)
    assert (parsed.input, parsed.input_pair, parsed.output) == (
        "What is love?",
        "What does love mean?",
        "duplicate",
    )


def test_a_directional_comparator_names_its_label():
    tests = [
        TreeTest(topic="/D", input=f"I love it{'!' * i}", comparator="should be no less than",
                 output="I love it.", watched="positive")
        for i in range(1, 3)
    ]  # fmt: skip
    prompt = render_prompt(tests)
    assert prompt.layout.shared["comparator"] == "should be no less positive than"
    parsed = parse_completion("I adore it!!!", prompt.layout, topic="/D", labels=LABELS)
    assert isinstance(parsed, TreeTest)
    assert (parsed.comparator, parsed.watched, parsed.output) == (
        "should be no less than",
        "positive",
        "I love it.",
    )


def test_a_completion_is_refilled_from_the_prompts_shared_fields():
    layout = render_prompt([mft("a"), mft("b")]).layout
    parsed = parse_completion("It was not great.", layout, topic="/Negation", labels=LABELS)
    assert isinstance(parsed, TreeTest)
    assert (parsed.comparator, parsed.output, parsed.labeler, parsed.topic) == (
        "should not be",
        "positive",
        "imputed",
        "/Negation",
    )


def test_a_completion_that_reached_the_end_of_text_keeps_its_last_quote_out():
    layout = PromptLayout(fields=("input", "output"), shared={"comparator": "should be"})
    parsed = parse_completion('Meh." "Neutral"', layout, topic="/A", labels=LABELS)
    assert isinstance(parsed, TreeTest) and (parsed.input, parsed.output) == ("Meh.", "neutral")


def test_malformed_completions_come_back_with_their_reason():
    layout = PromptLayout(fields=("input", "comparator", "output"))
    cases = {
        "truncated": ('A long story" "should', True),
        "empty": ("   ", False),
        "wrong_arity": ('Only the input" "positive', False),
        "unknown_comparator": ('Nice." "is probably" "positive', False),
        "unknown_label": ('Nice." "should be" "happy', False),
    }
    for reason, (text, truncated) in cases.items():
        parsed = parse_completion(text, layout, topic="/A", labels=LABELS, truncated=truncated)
        assert isinstance(parsed, Malformed), reason
        assert parsed.reason == reason and parsed.detail
    blank = parse_completion('Nice." "" "positive', layout, topic="/A", labels=LABELS)
    assert isinstance(blank, Malformed) and blank.reason == "empty"


def test_only_the_first_line_of_a_completion_counts():
    layout = PromptLayout(
        fields=("input",), shared={"comparator": "should be", "output": "neutral"}
    )
    parsed = parse_completion('It is a chair.\n"Another one."\n', layout, topic="/A")
    assert isinstance(parsed, TreeTest) and parsed.input == "It is a chair."


def test_quotes_and_line_breaks_in_a_field_cannot_break_the_notation():
    prompt = render_prompt([mft('She said "hi"\nand left'), mft("plain")])
    assert prompt.text.splitlines()[0] == "\"She said 'hi' and left\""


# Any text, control characters, quotes and every kind of line break included, the last two
# drawn often (and the notation's own separators among them): the notation cleans a field
# (a double quote becomes an apostrophe, runs of white space one space), so it must parse
# back to its clean form.
QUOTES_AND_BREAKS = ['"', "'", '" "', '"\n', "\n", "\r", "\r\n", "\t", "\x0b", "\x85", "\u2028"]
text = (
    st.lists(
        st.one_of(st.characters(blacklist_categories=("Cs",)), st.sampled_from(QUOTES_AND_BREAKS)),
        min_size=1,
        max_size=20,
    )
    .map("".join)
    .filter(lambda s: bool(clean(s)))
)


@st.composite
def prompt_tests(draw) -> list[TreeTest]:
    pair = draw(st.booleans())
    kind = draw(st.sampled_from(["label", "same", "less"]))
    count = draw(st.integers(min_value=1, max_value=7))
    tests = []
    for _ in range(count):
        fields = {"topic": "/T", "input": draw(text)}
        if pair:
            fields["input_pair"] = draw(text)
        if kind == "label":
            fields["comparator"] = draw(st.sampled_from(["should be", "should not be"]))
            fields["output"] = "|".join(
                draw(st.lists(st.sampled_from(LABELS), min_size=1, max_size=2, unique=True))
            )
        else:
            fields["comparator"] = (
                "should be the same as for" if kind == "same" else "should be no less than"
            )
            fields["output"] = draw(text)
            if pair:
                fields["output_pair"] = draw(text)
            if kind == "less":
                fields["watched"] = draw(st.sampled_from(LABELS))
        tests.append(TreeTest(**fields))
    return tests


@settings(max_examples=150, deadline=None)
@given(prompt_tests())
def test_every_line_of_a_prompt_parses_back_to_its_test(tests):
    prompt = render_prompt(tests)
    lines = prompt.text.split(STOP)
    assert lines[-1] == '"' and len(lines) == len(tests) + 1
    for line, test in zip(lines, tests, strict=False):
        assert line.startswith('"')
        parsed = parse_completion(line[1:], prompt.layout, topic="/T", labels=LABELS)
        assert isinstance(parsed, TreeTest), parsed
        keep = ("input", "input_pair", "comparator", "output", "output_pair", "watched")
        expected = {
            name: clean(value) if name not in ("comparator", "watched") and value else value
            for name, value in test.model_dump(include=set(keep)).items()
        }
        assert parsed.model_dump(include=set(keep)) == expected
