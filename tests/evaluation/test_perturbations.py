"""Perturbations: fixed inputs with a seeded rng give fixed outputs (entities with real spaCy)."""

from __future__ import annotations

import random

import pytest

from testaug.core.errors import TestAugError
from testaug.evaluation.perturbations.cases import perturb_inputs
from testaug.evaluation.perturbations.catalogue import (
    PERTURBATIONS,
    add_phrase,
    add_random_urls_handles,
    contract,
    contractions,
    expand_contractions,
    get_perturbation,
    punctuation,
    typos,
)
from testaug.evaluation.perturbations.entities import (
    change_location,
    change_names,
    change_names_joint,
    change_number,
    load_pipeline,
    parse_texts,
)

NAMES = ["Mary", "James", "Sarah", "David", "John"]


def rng(seed: int = 0) -> random.Random:
    return random.Random(seed)


@pytest.fixture(scope="module")
def nlp():
    return load_pipeline()


def test_typos_swap_one_character_with_its_right_neighbour_per_typo():
    assert typos("The flight was great.", rng(), n=3) == [
        "The flight wsa great.",
        "The flight wa sgreat.",
        "Teh flight was great.",
    ]
    assert typos("The flight was great.", rng(), typos=2) == ["The flight ws agreat."]


def test_typos_give_nothing_when_no_swap_changes_the_text():
    assert typos("aaa", rng(), n=2) == []
    assert typos("", rng()) == []


def test_the_same_seed_gives_the_same_perturbations():
    text = "The crew was friendly and the food was good."
    assert typos(text, rng(7), n=4) == typos(text, rng(7), n=4)
    assert add_random_urls_handles(text, rng(7), n=4) == add_random_urls_handles(text, rng(7), n=4)


def test_contractions_expand_and_contract_both_ways_keeping_case():
    assert expand_contractions("I don't think it's good.") == "I do not think it is good."
    assert contract("I do not think it is good.") == "I don't think it's good."
    assert expand_contractions("Don’t go. Can't stay.") == "Do not go. Cannot stay."
    assert contract("Cannot stay, I am tired.") == "Can't stay, I'm tired."
    assert contractions("We're sure you will not mind.", rng()) == [
        "We are sure you will not mind.",
        "We're sure you'll not mind.",
    ]


def test_contractions_give_nothing_without_a_contractable_phrase():
    assert contractions("Nothing here.", rng()) == []


def test_punctuation_strips_the_final_mark_or_ends_with_one_period():
    assert punctuation("Great flight!!", rng()) == ["Great flight", "Great flight."]
    assert punctuation("Great flight.", rng()) == ["Great flight"]
    assert punctuation("Great flight", rng()) == ["Great flight."]
    assert punctuation("?!", rng()) == []


def test_add_phrase_appends_prepends_or_either_distinct_phrases():
    phrases = ["You are lame.", "I abhor you."]
    assert add_phrase("Great flight.", rng(), phrases=phrases) == ["Great flight. I abhor you."]
    assert add_phrase("Great flight.", rng(), phrases=phrases, position="start") == [
        "I abhor you. Great flight."
    ]
    assert add_phrase("Great flight.", rng(), phrases=phrases, n=2, position="either") == [
        "Great flight. I abhor you.",
        "You are lame. Great flight.",
    ]
    assert len(add_phrase("Great flight.", rng(), phrases=phrases, n=5)) == 2


def test_urls_and_handles_look_like_checklists():
    assert add_random_urls_handles("Great flight.", rng(), n=3) == [
        "Great flight. @W4Acq9",
        "Great flight. https://t.co/Y1t9Ew",
        "Great flight. @GisiWg",
    ]


def test_change_names_replaces_each_first_name_with_another_name(nlp):
    assert change_names("Mary loved the flight with John Smith.", rng(), names=NAMES, n=4, nlp=nlp) == [
        "Sarah loved the flight with John Smith.",
        "Mary loved the flight with James Smith.",
        "David loved the flight with John Smith.",
        "Mary loved the flight with Sarah Smith.",
    ]  # fmt: skip


def test_change_names_replaces_every_mention_of_the_name_alike(nlp):
    text = "Is Mary taller than Mary's brother?"
    for new in change_names(text, rng(), names=NAMES, n=3, nlp=nlp):
        name = new.split()[1]
        assert name in NAMES and name != "Mary"
        assert new == text.replace("Mary", name)


def test_change_location_replaces_places_with_cities_not_in_the_text(nlp):
    cities = ["Chicago", "Boston", "Rome", "Paris"]
    assert change_location("I flew from Boston to Paris.", rng(), cities=cities, n=4, nlp=nlp) == [
        "I flew from Rome to Paris.",
        "I flew from Boston to Chicago.",
        "I flew from Chicago to Paris.",
        "I flew from Boston to Rome.",
    ]


def test_change_number_moves_numbers_within_twenty_percent_but_not_years_or_clock_times(nlp):
    text = "We waited 45 minutes for 3 bags in 2019 at 5 p.m. and 12 seats."
    assert change_number(text, rng(), n=4, nlp=nlp) == [
        "We waited 48 minutes for 3 bags in 2019 at 5 p.m. and 12 seats.",
        "We waited 45 minutes for 2 bags in 2019 at 5 p.m. and 12 seats.",
        "We waited 45 minutes for 3 bags in 2019 at 5 p.m. and 14 seats.",
        "We waited 49 minutes for 3 bags in 2019 at 5 p.m. and 12 seats.",
    ]
    assert change_number("I have 2 bags and 4 seats, booked 007.", rng(), nlp=nlp) == []


def test_entity_perturbations_take_a_parse_from_the_batched_helper(nlp):
    texts = ["Mary loved Chicago.", "We flew from Boston."]
    docs = parse_texts(texts, nlp)
    assert change_names(texts[0], rng(), names=NAMES, doc=docs[0]) == change_names(
        texts[0], rng(), names=NAMES, nlp=nlp
    )
    with pytest.raises(TestAugError, match="Doc given"):
        change_location(texts[0], rng(), cities=["Rome"], doc=docs[1])


def test_a_name_changed_in_both_texts_of_a_pair_gets_one_replacement(nlp):
    pair = ["Is Mary taller than David?", "Is David taller than Mary?"]
    assert change_names_joint(pair, rng(), names=NAMES, n=3, nlp=nlp) == [
        ("Is Sarah taller than David?", "Is David taller than Sarah?"),
        ("Is Mary taller than James?", "Is James taller than Mary?"),
        ("Is John taller than David?", "Is David taller than John?"),
    ]


def test_pairs_are_perturbed_on_the_side_asked_for(nlp):
    first, second = "Is Mary tall?", "Is Mary short?"
    options = {"names": NAMES, "nlp": nlp}
    assert perturb_inputs("change_names", first, second, rng(), which="first", n=2, **options) == [
        ("Is John tall?", "Is Mary short?"),
        ("Is Sarah tall?", "Is Mary short?"),
    ]
    assert perturb_inputs("change_names", first, second, rng(), which="both", n=2, **options) == [
        ("Is John tall?", "Is John short?"),
        ("Is Sarah tall?", "Is Sarah short?"),
    ]
    assert perturb_inputs("punctuation", first, second, rng(), which="second", n=2) == [
        ("Is Mary tall?", "Is Mary short"),
        ("Is Mary tall?", "Is Mary short."),
    ]
    assert perturb_inputs("typos", first, second, rng(), which="both", n=2) == [
        ("Is Mar ytall?", "Is Mray short?"),
        ("sI Mary tall?", "Is Mary hsort?"),
    ]


def test_a_single_input_is_perturbed_whatever_side_is_asked_for():
    assert perturb_inputs("punctuation", "Fine.", None, rng(), which="second") == [("Fine", None)]


def test_the_registry_names_every_perturbation_and_suggests_close_names():
    assert set(PERTURBATIONS) == {
        "typos",
        "contractions",
        "change_names",
        "change_location",
        "change_number",
        "punctuation",
        "add_phrase",
        "add_random_urls_handles",
        "change_neutral_words",
    }
    assert get_perturbation("change_names").needs_doc
    assert not get_perturbation("typos").needs_doc
    with pytest.raises(TestAugError, match="did you mean 'typos'"):
        get_perturbation("typo")


def test_a_perturbation_registered_from_outside_is_found_by_name_like_the_builtins():
    from testaug.evaluation.perturbations.catalogue import Perturbation, get_perturbation

    def shout(text: str, **_: object) -> list[str]:
        return [text.upper()]

    mine = Perturbation("shout", shout)
    with PERTURBATIONS.registered("shout", mine):
        assert "shout" in PERTURBATIONS and "shout" in list(PERTURBATIONS)
        assert get_perturbation("shout").function("hi") == ["HI"]
    assert "shout" not in PERTURBATIONS
    with pytest.raises(TestAugError, match="unknown perturbation 'typoss'; did you mean 'typos'"):
        get_perturbation("typoss")
