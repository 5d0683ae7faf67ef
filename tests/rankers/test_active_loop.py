"""The active loop: retrain on people's verdicts so far, re-rank what nobody judged yet."""

from __future__ import annotations

import numpy as np
import pytest

from rankers.active import labelled_from_verdicts, retrain_and_rerank
from rankers.ensemble import EnsembleConfig, ranked_candidates
from rankers.members.lexical import LexicalConfig
from testaug.core.records import Annotation
from testaug.review.verdicts import decide
from tests.tiny_models import make_candidate

LEXICAL = EnsembleConfig(name="lexical", members=(LexicalConfig(name="tfidf", min_count=1),))
GOOD = ["The view was lovely.", "The staff was lovely.", "The room was great.", "A great pilot."]
BAD = ["The view was awful.", "The staff was awful.", "The room was awful.", "An awful pilot."]
PENDING = ["The food was awful.", "The food was great.", "The seat was lovely.", "Awful crew."]


def person(candidate, valid: bool, **fields) -> Annotation:
    return Annotation(
        candidate_id=candidate.id, valid=valid, annotator="ann", origin="terminal", **fields
    )


def test_labelled_records_come_from_people_only_and_corrections_count_as_invalid():
    a, b, c, d = (make_candidate(t) for t in GOOD)
    candidates = {x.id: x for x in (a, b, c, d)}
    verdicts = decide(
        [
            person(a, True),
            person(b, False, reason="capability"),
            person(c, False, reason="label", corrected_label="negative"),
            Annotation(candidate_id=d.id, valid=True, annotator="ensemble v", origin="ranker"),
        ],
        candidates,
    )
    labelled = {item.candidate.id: item for item in labelled_from_verdicts(candidates, verdicts)}
    assert set(labelled) == {a.id, b.id, c.id}
    assert labelled[a.id].valid and not labelled[b.id].valid
    assert labelled[c.id].reason == "label" and not labelled[c.id].valid


def test_retraining_on_verdicts_moves_the_pending_candidates_like_the_invalid_ones_up(tmp_path):
    judged = [make_candidate(t) for t in GOOD + BAD]
    pending = [make_candidate(t) for t in PENDING]
    # The old ranking knows nothing: pending candidates in their given order.
    everything = judged + pending
    old = ranked_candidates(everything, {"old": np.arange(len(everything), 0, -1.0)}, version="v0")
    annotations = [person(c, c.text in GOOD) for c in judged]

    round_ = retrain_and_rerank(old, annotations, LEXICAL, tmp_path / "rankers")

    assert round_.from_people == 8 and round_.from_extra == 0
    assert {item.candidate.id for item in round_.reranked} == {c.id for c in pending}
    assert all(item.ensemble_version == round_.ensemble.version for item in round_.reranked)
    order = [item.candidate.text for item in round_.reranked]
    assert set(order[:2]) == {"The food was awful.", "Awful crew."}
    assert (tmp_path / "rankers" / "ensemble.json").exists()


def test_extra_labelled_candidates_train_too_but_people_win_on_the_same_candidate(tmp_path):
    from testaug.core.records import LabelledCandidate

    judged = [make_candidate(t) for t in GOOD + BAD]
    old = ranked_candidates(judged, {"old": np.arange(8, 0, -1.0)}, version="v0")
    extra = [LabelledCandidate(candidate=judged[0], valid=False)] + [
        LabelledCandidate(candidate=make_candidate(t), valid=True) for t in PENDING
    ]
    round_ = retrain_and_rerank(
        old, [person(judged[0], True), person(judged[4], False)], LEXICAL, tmp_path, extra=extra
    )
    assert (round_.from_people, round_.from_extra) == (2, 4)
    assert len(round_.reranked) == 6


def test_peoples_verdicts_weigh_people_weight_times_an_extra_record(tmp_path, monkeypatch):
    import rankers.active as active
    from testaug.core.records import LabelledCandidate

    judged = [make_candidate(t) for t in GOOD + BAD]
    old = ranked_candidates(judged, {"old": np.arange(8, 0, -1.0)}, version="v0")
    extra = [LabelledCandidate(candidate=make_candidate(t), valid=True) for t in PENDING]
    annotations = [person(judged[0], True), person(judged[4], False)]
    seen = []
    real = active.train_ensemble

    def spy(labelled, config, folder, *, sample_weight=None):
        seen.append((len(labelled), sample_weight))
        return real(labelled, config, folder, sample_weight=sample_weight)

    monkeypatch.setattr(active, "train_ensemble", spy)
    retrain_and_rerank(old, annotations, LEXICAL, tmp_path / "a", extra=extra)
    retrain_and_rerank(old, annotations, LEXICAL, tmp_path / "b", extra=extra, people_weight=5)
    assert seen[0] == (6, None)  # the default weighs every record alike
    assert seen[1] == (6, [1.0] * 4 + [5.0] * 2)  # extra first, then people's verdicts
    with pytest.raises(ValueError, match="people_weight"):
        retrain_and_rerank(old, annotations, LEXICAL, tmp_path / "c", people_weight=0)
