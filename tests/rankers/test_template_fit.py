"""Template fit: does a candidate fill a template of its own description, with the words the
suite's lexicons give those slots, or a template of another description?"""

from __future__ import annotations

import pytest

from rankers.members.template_fit import TemplateIndex
from testaug.core.bundled import resolve_suite
from testaug.core.records import Candidate, TestCase
from testaug.suites.cases import expand_suite
from testaug.suites.load import load_suite


@pytest.fixture(scope="module")
def reference() -> list[TestCase]:
    return list(expand_suite(load_suite(resolve_suite("sentiment")), per_template=5, seed=0))


def candidate(case: TestCase, text: str, *, label=None, like: TestCase | None = None) -> Candidate:
    """A generated candidate with `text`, proposed under the description of `like` (or case)."""
    owner = like or case
    return Candidate(
        task=case.task,
        capability=owner.capability,
        description_id=owner.description_id,
        description=owner.description,
        text=text,
        label=label or owner.label,
        prompt_id="p",
        seed_case_ids=(),
        backend="fake",
        model="gen",
    )


def case_of(reference: list[TestCase], template: str) -> TestCase:
    return next(case for case in reference if case.template == template)


def test_a_fill_of_its_own_template_with_lexicon_words_fits_fully(reference):
    case = case_of(reference, "The {air_noun} was {pos_adj}.")
    own, known, all_known, _ = TemplateIndex(reference).fit(candidate(case, case.text))
    assert (own, known, all_known) == (1.0, 1.0, 1.0)


def test_a_new_word_in_a_slot_fits_with_part_of_its_words_known(reference):
    case = case_of(reference, "The {air_noun} was {pos_adj}.")
    new_text = case.text.replace(case.fills["air_noun"], "zeppelin")
    own, known, all_known, _ = TemplateIndex(reference).fit(candidate(case, new_text))
    assert own == 1.0
    assert (known, all_known) == (0.5, 0.0)


def test_the_right_text_under_a_wrong_label_does_not_fit_its_own_template(reference):
    case = case_of(reference, "The {air_noun} was {pos_adj}.")
    fits = TemplateIndex(reference).fit(candidate(case, case.text, label="negative"))
    assert fits[:3] == (0.0, 0.0, 0.0)


def test_a_case_of_another_description_fits_that_description_with_known_words(reference):
    positive = case_of(reference, "The {air_noun} was {pos_adj}.")
    negated = case_of(reference, "The {air_thing} was not {mild_pos_adj}.")
    own, known, _, other = TemplateIndex(reference).fit(
        candidate(negated, negated.text, like=positive)
    )
    assert own == 1.0  # the skeleton fits ...
    assert known < 1.0  # ... but "not ..." is no {pos_adj}
    assert other == 1.0


def test_case_curly_apostrophes_and_spacing_do_not_matter(reference):
    case = next(c for c in reference if "'" in c.text and c.template)
    text = "  " + case.text.replace("'", "\u2019").upper() + " "
    own, known, _, _ = TemplateIndex(reference).fit(candidate(case, text.strip()))
    assert (own, known) == (1.0, 1.0)


def test_free_text_fits_no_template(reference):
    case = reference[0]
    fits = TemplateIndex(reference).fit(candidate(case, "Honestly, the whole trip went by fast."))
    assert fits == (0.0, 0.0, 0.0, 0.0)
