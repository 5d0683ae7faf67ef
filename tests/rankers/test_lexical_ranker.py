"""The lexical ranker's feature sets: the conditioned set ties a candidate to its description."""

from __future__ import annotations

import json

import numpy as np

from rankers.members.lexical import LexicalConfig, LexicalRanker, train_lexical
from rankers.members.lexical_features import conditioned_features, cues_of, words_of
from testaug.core.records import LabelledCandidate
from tests.tiny_models import make_candidate

NEGATED = "A negated positive verb makes the sentence negative."
PLAIN = "A plain positive verb makes the sentence positive."
TRAIN_NOUNS = ["crew", "seat", "food", "flight", "pilot", "lounge"]


def labelled(text: str, description: str, label: str, valid: bool) -> LabelledCandidate:
    candidate = make_candidate(text, description=description).model_copy(update={"label": label})
    return LabelledCandidate(
        candidate=candidate, valid=valid, reason=None if valid else "capability"
    )


def negation_set(verb: str, nouns: list[str]) -> list[LabelledCandidate]:
    """The same sentences under two descriptions: negation is valid for one, invalid for the other."""
    items = []
    for noun in nouns:
        negated, plain = f"i do not {verb} the {noun} .", f"i {verb} the {noun} ."
        items += [
            labelled(negated, NEGATED, "negative", True),
            labelled(plain, NEGATED, "negative", False),
            labelled(plain, PLAIN, "positive", True),
            labelled(negated, PLAIN, "positive", False),
        ]
    return items


def scores_of(
    ranker: LexicalRanker, items: list[LabelledCandidate]
) -> tuple[np.ndarray, np.ndarray]:
    scores = ranker.score([item.candidate for item in items])
    valid = np.array([item.valid for item in items])
    return scores[~valid], scores[valid]


def test_conditioned_features_rank_a_missing_phenomenon_first_on_unseen_words():
    ranker = train_lexical(
        negation_set("like", TRAIN_NOUNS), LexicalConfig(name="lex", min_count=1)
    )
    invalid, valid = scores_of(ranker, negation_set("love", ["hotel", "menu", "gate"]))
    assert invalid.min() > valid.max()


def test_surface_features_cannot_tell_one_description_from_another():
    config = LexicalConfig(name="lex", features="surface", min_count=1)
    ranker = train_lexical(negation_set("like", TRAIN_NOUNS), config)
    invalid, valid = scores_of(ranker, negation_set("love", ["hotel", "menu", "gate"]))
    assert not invalid.min() > valid.max()


def test_pair_features_say_which_side_holds_a_cue_and_how_much_the_sides_share():
    pair = make_candidate("Richard is a lawyer.", pair="Richard is not a lawyer.")
    features = conditioned_features(pair)
    assert features["cue:negation:second"] == 1 and features["cue:negation:first"] == 0
    assert features["only2:not"] == 1
    assert features["overlap:4"] == 1  # 5 of 6 words shared


def test_cues_cover_contractions_and_digits():
    assert cues_of(words_of("I didn't pay 20 dollars")) == {"negation", "number"}
    assert cues_of(words_of("It rained, but we went out because we wanted to")) == {
        "contrast",
        "cause",
    }


def test_a_saved_ranker_from_before_feature_sets_loads_as_surface(tmp_path):
    items = negation_set("like", TRAIN_NOUNS)
    ranker = train_lexical(items, LexicalConfig(name="lex", features="surface", min_count=1))
    ranker.save(tmp_path)
    saved = json.loads((tmp_path / "lexical.json").read_text())
    assert saved["features"] == "surface"
    del saved["features"]
    (tmp_path / "lexical.json").write_text(json.dumps(saved))
    loaded = LexicalRanker.load(tmp_path)
    candidates = [item.candidate for item in items]
    assert loaded.feature_set == "surface"
    assert np.allclose(loaded.score(candidates), ranker.score(candidates))


def test_scores_in_small_chunks_equal_scores_in_one(monkeypatch):
    items = negation_set("like", TRAIN_NOUNS)
    ranker = train_lexical(items, LexicalConfig(name="lex", min_count=1))
    candidates = [item.candidate for item in items]
    whole = ranker.score(candidates)
    monkeypatch.setattr("rankers.members.lexical.SCORE_CHUNK", 5)
    assert np.allclose(ranker.score(candidates), whole)


TRAIN_AND_SCORE = """
import json
from rankers.members.lexical import LexicalConfig, train_lexical
from testaug.core.jsonl import read_jsonl_parts
from testaug.core.records import LabelledCandidate
from testaug.steps.rankers import default_training

items = list(read_jsonl_parts(default_training(), LabelledCandidate))[:300]
ranker = train_lexical(items, LexicalConfig(name="x", min_count=1, iterations=50))
print(json.dumps([ranker.bias, *ranker.score([i.candidate for i in items[:20]]).tolist()]))
"""


def test_training_and_scores_are_the_same_bits_whatever_the_hash_seed():
    import os
    import subprocess
    import sys

    from tests.cli_runner import HANG_TIMEOUT

    outputs = []
    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", TRAIN_AND_SCORE],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            timeout=HANG_TIMEOUT,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
