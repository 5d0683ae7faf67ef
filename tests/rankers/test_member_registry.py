"""Member kinds come from a registry: a kind registered outside the library trains, saves and
loads through `train_member` and `load_member`; an unknown kind names the known ones."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal, get_args

import numpy as np
import pytest
from pydantic import BaseModel, ConfigDict

from rankers.config import MemberConfig
from rankers.members.cross_encoder import RankerError
from rankers.members.kinds import MEMBER_KINDS, MemberKind, load_member, train_member
from testaug.core.records import Candidate, LabelledCandidate, TestCase
from tests.tiny_models import make_candidate, make_labelled


class LengthConfig(BaseModel):
    """A member that calls long candidates invalid when the long ones were invalid in training."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["length"] = "length"
    name: str = "length"


class LengthRanker:
    """Scores a candidate by its word count, signed by what training saw."""

    def __init__(self, name: str, sign: float) -> None:
        self.name = name
        self.sign = sign

    def score(
        self,
        candidates: Sequence[Candidate],
        *,
        batch_size: int = 64,
        reference: Sequence[TestCase] = (),
    ) -> np.ndarray:
        return self.sign * np.array([len(c.text.split()) for c in candidates], dtype=float)

    def save(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        (path / "length.json").write_text(json.dumps({"sign": self.sign}))


def train_length(
    config: LengthConfig,
    labelled: Sequence[LabelledCandidate],
    *,
    reference: Sequence[TestCase],
    work_dir: Path,
    sample_weight: np.ndarray | None,
) -> LengthRanker:
    lengths = np.array([len(item.candidate.text.split()) for item in labelled], dtype=float)
    invalid = np.array([not item.valid for item in labelled])
    return LengthRanker(config.name, 1.0 if lengths[invalid].mean() > lengths.mean() else -1.0)


def load_length(config: LengthConfig, path: Path) -> LengthRanker:
    sign = json.loads((path / "length.json").read_text())["sign"]
    return LengthRanker(config.name, sign)


@pytest.fixture
def length_kind() -> Iterator[None]:
    with MEMBER_KINDS.registered("length", MemberKind(train=train_length, load=load_length)):
        yield


def test_a_registered_member_kind_trains_saves_and_loads(length_kind, tmp_path):
    labelled = make_labelled(
        ["good .", "fine ."], ["this is a long bad one .", "also long and bad ."]
    )
    member = train_member(LengthConfig(), labelled, reference=(), work_dir=tmp_path / "work")
    member.save(tmp_path / "length")
    loaded = load_member(LengthConfig(), tmp_path / "length")
    candidates = [make_candidate("short ."), make_candidate("a much longer candidate here .")]
    scores = loaded.score(candidates)
    assert np.array_equal(scores, member.score(candidates))
    assert scores[1] > scores[0]


def test_an_unknown_member_kind_names_the_known_kinds(tmp_path):
    with pytest.raises(
        RankerError,
        match=r"unknown ranker member kind 'length' \(expected one of lexical, embedding, "
        r"neighbours, cross-encoder, llm-judge\)",
    ):
        load_member(LengthConfig(), tmp_path)


def test_every_member_kind_a_config_can_name_is_registered():
    union = get_args(MemberConfig)[0]
    kinds = {member.model_fields["kind"].default for member in get_args(union)}
    assert kinds == set(MEMBER_KINDS.names())
