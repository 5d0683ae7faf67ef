"""The seeds' WordNet category: its other members become candidates, with a boost."""

from __future__ import annotations

from pathlib import Path

import pytest

from testaug.editor.candidates import CandidatePool, degree_phrases, graded_mask
from testaug.editor.categories import seed_category
from testaug.editor.wordnet import DEBIAN_DATA, DEBIAN_LEXNAMES_PAGE, install_wordnet, load_wordnet
from testaug.steps.suggest import DEGREE_SOURCE, add_seed_candidates, seed_forms

needs_debian_wordnet = pytest.mark.skipif(
    not (DEBIAN_DATA / "data.noun").is_file() or not DEBIAN_LEXNAMES_PAGE.is_file(),
    reason="Debian's wordnet-base is not installed (apt-get install wordnet-base)",
)


@pytest.fixture(scope="module")
def wn(tmp_path_factory: pytest.TempPathFactory):
    cache: Path = tmp_path_factory.mktemp("cache")
    install_wordnet(cache, apt=False)
    return load_wordnet(cache)


def test_the_seeds_inflections_are_not_new_words():
    forms = seed_forms(["sparrow", "love"])
    assert {"sparrows", "loved", "loves", "loving"} <= forms
    assert "sparrow" not in forms and "love" not in forms


def test_verbs_are_graded_by_each_degree_adverb_and_phrases_are_left_alone():
    phrases = degree_phrases(["love", "enjoy", "really like"])
    assert phrases[:2] == ["really love", "really enjoy"]
    assert "absolutely love" in phrases and not any("really like" in p for p in phrases)


@needs_debian_wordnet
def test_birds_give_the_bird_category_with_other_birds_and_without_the_seeds(wn):
    seeds = ["robin", "sparrow", "crow", "owl", "pigeon"]
    category = seed_category(wn, seeds, "NOUN")
    assert category is not None and category.synsets == ["bird.n.01"]
    assert category.seeds_covered == 5 and category.names == ["bird"]
    assert {"woodpecker", "magpie", "eagle", "parrot"} <= set(category.words)
    assert not set(seeds) & set(category.words)


@needs_debian_wordnet
def test_the_most_specific_category_that_holds_the_most_seeds_wins(wn):
    songbirds = seed_category(wn, ["robin", "sparrow", "crow"], "NOUN")
    assert songbirds is not None and songbirds.synsets == ["oscine.n.01"]
    assert "finch" in songbirds.words and "owl" not in songbirds.words


@needs_debian_wordnet
def test_plural_seeds_give_plural_members(wn):
    category = seed_category(wn, ["elephants", "horses", "tigers", "lions", "bears"], "NOUN")
    assert category is not None
    assert {"giraffes", "zebras", "camels"} <= set(category.words)
    assert "giraffe" not in category.words


@needs_debian_wordnet
def test_adjectives_find_their_category_through_clusters_and_related_nouns(wn):
    nationalities = seed_category(wn, ["American", "Canadian", "British", "Irish", "German"], "ADJ")
    assert nationalities is not None and "country.n.02" in nationalities.synsets
    assert {"Italian", "Japanese", "Swedish"} <= set(nationalities.words)
    colours = seed_category(wn, ["black", "white", "gray", "blue", "green"], "ADJ")
    assert colours is not None and "chromatic.a.03" in colours.synsets
    assert {"red", "yellow", "purple"} <= set(colours.words)


@needs_debian_wordnet
def test_seeds_that_share_only_a_vague_ancestor_have_no_category(wn):
    assert seed_category(wn, ["banana", "democracy", "violin"], "NOUN") is None
    assert seed_category(wn, ["bird"], "NOUN") is None


@needs_debian_wordnet
def test_a_category_too_large_is_passed_over_for_a_smaller_shared_one(wn):
    seeds = ["robin", "sparrow", "crow", "owl", "pigeon"]
    narrow = seed_category(wn, seeds, "NOUN", max_words=1000)  # bird.n.01 has 1,732
    assert narrow is not None and narrow.synsets == ["oscine.n.01"]
    assert narrow.seeds_covered == 3 and len(narrow.words) <= 1000
    assert seed_category(wn, seeds, "NOUN", max_words=400) is None  # songbirds: 499


@needs_debian_wordnet
def test_seed_candidates_join_the_pool_with_a_boost_for_one_word_members(wn):
    pool = CandidatePool()
    boost, category, note = add_seed_candidates(
        pool, ["robin", "sparrow", "crow", "owl", "pigeon"], pos="NOUN", wn=wn, category_weight=5.0
    )
    assert category is not None and note is not None and "bird.n.01" in note
    assert boost["woodpecker"] == 5.0 and pool.sources["woodpecker"] == ["wordnet:bird.n.01"]
    compound = next(w for w in boost if " " in w)
    assert boost[compound] == -5.0 and boost["bird"] == -5.0
    verbs = CandidatePool()
    boost, category, note = add_seed_candidates(
        verbs, ["love", "enjoy"], pos="VERB", wn=None, masked_text="I {mask} this seat."
    )
    assert verbs.sources["really love"] == [DEGREE_SOURCE]
    assert boost["really love"] == 5.0 and category is None and note is None


def test_a_mask_after_a_degree_adverb_gets_no_graded_phrases():
    assert graded_mask("I really {mask} the flight.") and not graded_mask("I {mask} it.")
    pool = CandidatePool()
    boost, _, _ = add_seed_candidates(
        pool, ["love"], pos="VERB", wn=None, masked_text="I Really {mask} the flight."
    )
    assert boost == {} and "really love" not in pool.sources
