"""Self-BLEU: the fast computation equals a plain loop over sacrebleu or NLTK, to 1e-6."""

from __future__ import annotations

import math
import random

import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from testaug.core.errors import TestAugError
from testaug.diversity.self_bleu import (
    sacrebleu_tokenizer,
    sacrebleu_tokens,
    sampled_self_bleu,
    self_bleu,
    self_bleu_reference,
    self_bleu_scores,
    texygen_tokenizer,
)

WORDS = [
    "the",
    "a",
    "cat",
    "dog",
    "sat",
    "ran",
    "on",
    "mat",
    "very",
    "good",
    "bad",
    "not",
    ".",
    ",",
    "!",
    "?",
    "3.5",
    "&",
    "it's",
]


def sacrebleu_loop(texts: list[str]) -> float:
    """The definition, on sacrebleu's 0-100 scale: each text against all the others."""
    scores = [
        sacrebleu.sentence_bleu(text, texts[:i] + texts[i + 1 :]).score
        for i, text in enumerate(texts)
    ]
    return sum(scores) / len(scores)


def nltk_loop(texts: list[str]) -> float:
    """Texygen's Self-BLEU: NLTK sentence BLEU, smoothing method 1, each against the others."""
    tokens = [texygen_tokenizer()(text) for text in texts]
    scores = [
        sentence_bleu(
            tokens[:i] + tokens[i + 1 :],
            hyp,
            weights=(0.25, 0.25, 0.25, 0.25),
            smoothing_function=SmoothingFunction().method1,
        )
        for i, hyp in enumerate(tokens)
    ]
    return sum(scores) / len(scores)


def random_texts(rng: random.Random, n: int, max_words: int = 12) -> list[str]:
    texts = [" ".join(rng.choices(WORDS, k=rng.randint(0, max_words))) for _ in range(n)]
    for _ in range(n // 4):  # duplicates count as references, as in the loop
        texts.append(rng.choice(texts))
    rng.shuffle(texts)
    return texts


@pytest.mark.parametrize("seed", range(6))
def test_sacrebleu_variant_equals_the_plain_sacrebleu_loop(seed: int) -> None:
    texts = random_texts(random.Random(seed), 25)
    assert self_bleu(texts) * 100 == pytest.approx(sacrebleu_loop(texts), abs=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_texygen_variant_equals_the_plain_nltk_loop(seed: int) -> None:
    texts = random_texts(random.Random(seed), 20)
    assert self_bleu(texts, variant="texygen") == pytest.approx(nltk_loop(texts), abs=1e-6)


@pytest.mark.parametrize(
    "texts",
    [
        ["", ""],
        ["", "The cat sat."],
        ["a", "a"],
        ["a", "b", "a b"],
        ["The cat sat.", "The cat sat.", "The cat sat."],
        ["Hi", "Hello there, how are you today?", "Hi!", "  trailing space  "],
        ["It cost 3.50 &amp; more -\nthan that.", "It cost 3.50 & more than that."],
        ["one two three four five six", "one two", "three four five six seven eight nine"],
    ],
)
def test_edge_cases_match_both_loops(texts: list[str]) -> None:
    assert self_bleu(texts) * 100 == pytest.approx(sacrebleu_loop(texts), abs=1e-6)
    assert self_bleu(texts, variant="texygen") == pytest.approx(nltk_loop(texts), abs=1e-6)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab .,!", max_size=14), min_size=2, max_size=7))
def test_any_short_texts_match_the_sacrebleu_loop(texts: list[str]) -> None:
    assert self_bleu(texts) * 100 == pytest.approx(sacrebleu_loop(texts), abs=1e-6)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet="ab .,", max_size=12), min_size=2, max_size=6))
def test_any_short_texts_match_the_nltk_loop(texts: list[str]) -> None:
    assert self_bleu(texts, variant="texygen") == pytest.approx(nltk_loop(texts), abs=1e-6)


@pytest.mark.parametrize("variant", ["sacrebleu", "texygen"])
@pytest.mark.parametrize("max_order", [1, 2, 3])
def test_other_orders_match_the_reference_loop(variant: str, max_order: int) -> None:
    texts = random_texts(random.Random(max_order), 15)
    fast = self_bleu(texts, variant=variant, max_order=max_order)
    slow = self_bleu_reference(texts, variant=variant, max_order=max_order)
    assert fast == pytest.approx(slow, abs=1e-8)


@pytest.mark.parametrize("variant", ["sacrebleu", "texygen"])
def test_fewer_than_two_texts_have_self_bleu_zero(variant: str) -> None:
    assert self_bleu([], variant=variant) == 0.0
    assert self_bleu(["The cat sat."], variant=variant) == 0.0
    assert self_bleu_reference(["The cat sat."], variant=variant) == 0.0
    assert self_bleu_scores(["The cat sat."], variant=variant) == []


def test_identical_texts_score_one_and_disjoint_texts_zero() -> None:
    assert self_bleu(["the cat sat on the mat"] * 3) == pytest.approx(1.0)
    assert self_bleu(["alpha beta", "gamma delta", "epsilon zeta"]) == 0.0


def test_unknown_variant_is_an_error() -> None:
    with pytest.raises(TestAugError, match="variant"):
        self_bleu(["a", "b"], variant="bleurt")  # type: ignore[arg-type]


def test_sampled_interval_contains_the_exact_value() -> None:
    texts = random_texts(random.Random(7), 300)
    exact = self_bleu(texts)
    for seed in range(3):
        estimate = sampled_self_bleu(texts, sample=120, seed=seed)
        assert estimate.n_sampled == 120
        assert estimate.n_texts == len(texts)
        assert estimate.ci_low <= exact <= estimate.ci_high
        assert estimate.ci_high - estimate.ci_low < 0.2


def test_sample_scores_each_hypothesis_against_all_texts() -> None:
    texts = random_texts(random.Random(3), 40)
    scores = self_bleu_scores(texts)
    estimate = sampled_self_bleu(texts, sample=10, seed=5)
    chosen = sorted(random.Random(5).sample(range(len(texts)), 10))
    assert estimate.mean == pytest.approx(math.fsum(scores[i] for i in chosen) / 10, abs=1e-12)


def test_sampling_every_text_is_exact_with_a_zero_width_interval() -> None:
    texts = random_texts(random.Random(1), 30)
    estimate = sampled_self_bleu(texts, sample=1000, seed=0)
    assert estimate.n_sampled == len(texts)
    assert estimate.mean == pytest.approx(self_bleu(texts), abs=1e-12)
    assert estimate.ci_low == pytest.approx(estimate.mean)
    assert estimate.ci_high == pytest.approx(estimate.mean)


def test_sampling_is_seeded() -> None:
    texts = random_texts(random.Random(2), 100)
    assert sampled_self_bleu(texts, sample=20, seed=4) == sampled_self_bleu(
        texts, sample=20, seed=4
    )
    with pytest.raises(TestAugError, match="at least 2"):
        sampled_self_bleu(texts, sample=1, seed=0)


# Characters that sacrebleu's 13a rules treat specially: digits, dashes, periods and commas,
# the padded punctuation, entities, newlines and the <skipped> marker.
TRICKY = st.lists(
    st.sampled_from(
        ["a", "b", "7", "0", "-", ".", ",", " ", "\n", "&", "&amp;", "&quot;", "&lt;", "<skipped>",
         "'", "(", "$", "\t", "\u2028", "\x1c", "é"]
    ),
    max_size=12,
).map("".join)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(TRICKY, max_size=6))
def test_tokenizing_all_texts_at_once_gives_each_text_s_sacrebleu_tokens(texts: list[str]) -> None:
    tokenize = sacrebleu_tokenizer()
    assert sacrebleu_tokens(texts) == [tokenize(text) for text in texts]
