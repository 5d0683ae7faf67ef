"""Inflection of base forms: regular rules, irregular words, and the bundled lexicons."""

from __future__ import annotations

import pytest

from testaug.core.bundled import bundled_suites, resolve_suite
from testaug.suites.inflection import inflect
from testaug.suites.load import load_suite
from testaug.suites.templates import TemplateSyntaxError, render


@pytest.mark.parametrize(
    ("base", "tag", "form"),
    [
        ("appreciate", "vbz", "appreciates"),
        ("watch", "vbz", "watches"),
        ("carry", "vbz", "carries"),
        ("enjoy", "vbd", "enjoyed"),
        ("stop", "vbd", "stopped"),
        ("visit", "vbd", "visited"),
        ("prefer", "vbn", "preferred"),
        ("fly", "vbn", "flown"),
        ("go", "vbd", "went"),
        ("hate", "vbg", "hating"),
        ("lie", "vbg", "lying"),
        ("run", "vbg", "running"),
        ("company", "nns", "companies"),
        ("air traffic controller", "nns", "air traffic controllers"),
        ("child", "nns", "children"),
        ("knife", "nns", "knives"),
        ("giraffe", "nns", "giraffes"),
        ("cafe", "nns", "cafes"),
        ("really like", "vbz", "really likes"),
        ("look forward to", "vbd", "looked forward to"),
        ("Love", "vbz", "Loves"),
    ],
)
def test_inflect_gives_the_form_of_a_base_for_a_penn_tag(base, tag, form):
    assert inflect(base, tag) == form


def test_an_unknown_inflection_is_an_error_in_inflect_and_in_templates():
    with pytest.raises(ValueError, match="unknown inflection"):
        inflect("go", "vbx")
    with pytest.raises(TemplateSyntaxError, match="unknown option"):
        render("{vbx:verb}", {"verb": "go"})


def test_inflected_slots_reproduce_the_bundled_inflected_lexicons_word_for_word():
    """Where a bundled suite keeps base verbs beside their -s and past forms, `{vbz:...}`
    and `{vbd:...}` over the base lexicon give exactly the inflected lexicon."""
    checked = 0
    for name in bundled_suites():
        words = load_suite(resolve_suite(name)).words()
        for base in words:
            for suffix, tag in (("_3sg", "vbz"), ("_past", "vbd")):
                if base + suffix in words:
                    rendered = [render(f"{{{tag}:{base}}}", {base: w}) for w in words[base]]
                    assert rendered == list(words[base + suffix]), base + suffix
                    checked += 1
    assert checked >= 4
