import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testaug.suites.templates import (
    Slot,
    TemplateSyntaxError,
    expand,
    fill_space,
    iter_fills,
    parse,
    render,
    sample_fills,
    tags,
)

LEX = {"name": ["Ann", "Bob", "Cy"], "adj": ["old", "usual", "honest"], "noun": ["hour", "MBA"]}


def test_parse_splits_literals_and_slots_with_options():
    assert parse("I saw {a:adj} {name1}.") == (
        "I saw ",
        Slot("adj", "adj", "a"),
        " ",
        Slot("name1", "name", None),
        ".",
    )


def test_double_braces_are_literal_braces():
    assert render("{{{name}}}", {"name": "Ann"}) == "{Ann}"


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("I {like", "unbalanced '{'"),
        ("I like}", "unbalanced '}'"),
        ("I {x:name}", "unknown option 'x'"),
        ("I {1name}", "bad tag"),
        ("I {}", "bad tag"),
    ],
)
def test_malformed_templates_raise_a_clear_syntax_error(template, message):
    with pytest.raises(TemplateSyntaxError, match=message):
        parse(template)


def test_article_options_choose_by_sound_and_capitalize():
    assert render("{a:noun}", {"noun": "hour"}) == "an hour"
    assert render("{A:adj} day", {"adj": "usual"}) == "A usual day"
    assert render("{a:noun}", {"noun": "MBA"}) == "an MBA"
    assert render("{cap:name}", {"name": "ann"}) == "Ann"


def test_a_tag_used_twice_and_across_a_pair_gets_the_same_word():
    for (first, second), fills in expand(["{name} met {name}.", "Did {name} meet?"], LEX):
        assert first == f"{fills['name']} met {fills['name']}."
        assert second == f"Did {fills['name']} meet?"


def test_numbered_copies_are_filled_independently_and_distinct_by_default():
    fills = [f for _, f in expand(["{name} and {name1}"], LEX)]
    assert len(fills) == 3 * 2
    assert all(f["name"] != f["name1"] for f in fills)
    allowed_equal = [f for _, f in expand(["{name} and {name1}"], LEX, distinct=False)]
    assert len(allowed_equal) == 9
    assert any(f["name"] == f["name1"] for f in allowed_equal)


def test_sampling_needs_an_explicit_generator():
    with pytest.raises(ValueError, match=r"random\.Random"):
        list(expand(["{name}"], LEX, n=1))


def test_sampling_a_huge_product_does_not_build_it():
    words = {"w": [f"w{i}" for i in range(1000)]}
    template = " ".join(f"{{w{i or ''}}}" for i in range(8))
    space = fill_space(tags(template), words)
    assert space.count == math.perm(1000, 8)  # about 10^24 fills
    sample = list(sample_fills(space, 50, random.Random(3)))
    assert len(sample) == 50
    assert all(len(set(fill.values())) == 8 for fill in sample)


# -- properties -------------------------------------------------------------

lexicon_names = st.sampled_from(["a", "b", "c"])
words = st.lists(st.text("xyz ", min_size=1, max_size=4), min_size=1, max_size=4, unique=True)


@st.composite
def templates_and_lexicons(draw):
    lexicons = {name: draw(words) for name in ("a", "b", "c")}
    n_slots = draw(st.integers(1, 4))
    slots = []
    for _ in range(n_slots):
        name = draw(lexicon_names)
        copy = draw(st.sampled_from(["", "1", "2"]))
        option = draw(st.sampled_from(["", "a:", "cap:"]))
        slots.append(f"{{{option}{name}{copy}}}")
    template = " - ".join(slots) + "."
    return template, lexicons


def _expected_count(template, lexicons, distinct):
    by_lexicon = {}
    for tag in tags(template):
        by_lexicon.setdefault(tag.rstrip("0123456789"), set()).add(tag)
    return math.prod(
        math.perm(len(lexicons[name]), len(copies))
        if distinct
        else len(lexicons[name]) ** len(copies)
        for name, copies in by_lexicon.items()
    )


@settings(max_examples=150, deadline=None)
@given(templates_and_lexicons(), st.booleans())
def test_full_expansion_fills_every_slot_and_counts_the_product(case, distinct):
    template, lexicons = case
    space = fill_space(tags(template), lexicons, distinct)
    fills = list(iter_fills(space))
    assert len(fills) == space.count == _expected_count(template, lexicons, distinct)
    assert len({tuple(sorted(f.items())) for f in fills}) == len(fills)  # no fill twice
    for fill in fills:
        assert set(fill) == set(tags(template))
        assert "{" not in render(template, fill)


@settings(max_examples=100, deadline=None)
@given(templates_and_lexicons(), st.integers(1, 20), st.integers(0, 2**32))
def test_sampling_is_reproducible_by_seed_and_draws_from_the_product(case, n, seed):
    template, lexicons = case
    space = fill_space(tags(template), lexicons)
    first = list(sample_fills(space, n, random.Random(seed)))
    again = list(sample_fills(space, n, random.Random(seed)))
    assert first == again
    assert len(first) == min(n, space.count)
    everything = list(iter_fills(space))
    assert all(fill in everything for fill in first)
    assert len({tuple(sorted(f.items())) for f in first}) == len(first)
