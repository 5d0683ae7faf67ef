"""Ranker ensembles: configured in YAML, trained into a folder, merged by Borda count.

A trained ensemble folder holds one subfolder per member and `ensemble.json`
(the config, the version, what it was trained on and how long each member took).
The version is a hash of the config and the ids of the training candidates, so
the same data and config always give the same version.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from rankers.cross_encoder import CrossEncoderConfig, CrossEncoderRanker, RankerError
from rankers.cross_encoder import train_cross_encoder as _train_cross_encoder
from rankers.lexical import LexicalConfig, LexicalRanker, train_lexical
from testaug.borda import aggregate
from testaug.errors import InputError
from testaug.records import Candidate, LabelledCandidate, RankedCandidate, content_id
from testaug.yaml_source import load_yaml

logger = logging.getLogger(__name__)

CONFIG_DIR = Path(__file__).parent / "configs"
MANIFEST = "ensemble.json"

MemberConfig = Annotated[CrossEncoderConfig | LexicalConfig, Field(discriminator="kind")]


class EnsembleConfig(BaseModel):
    """A named list of member rankers."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    members: tuple[MemberConfig, ...] = Field(min_length=1)


class EnsembleManifest(BaseModel):
    """What a trained ensemble folder holds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str
    config: EnsembleConfig
    trained_on: int
    invalid: int
    train_seconds: dict[str, float]


def shipped_configs() -> list[str]:
    """Names of the ensemble configs under rankers/configs/."""
    return sorted(p.stem for p in CONFIG_DIR.glob("*.yaml"))


def load_config(name_or_path: str | Path) -> EnsembleConfig:
    """An ensemble config by shipped name (offline, paper) or YAML file path."""
    path = Path(name_or_path)
    if not path.is_file():
        path = CONFIG_DIR / f"{name_or_path}.yaml"
    if not path.is_file():
        raise RankerError(
            f"no ensemble config {str(name_or_path)!r} (shipped: {', '.join(shipped_configs())})"
        )
    document = load_yaml(path)
    try:
        return EnsembleConfig.model_validate(document.data)
    except ValueError as exc:
        errors = getattr(exc, "errors", lambda: [])()
        raise InputError(
            [document.problem(tuple(e["loc"]), e["msg"]) for e in errors]
            or [document.problem((), str(exc))]
        ) from exc


Ranker = CrossEncoderRanker | LexicalRanker


class Ensemble:
    """Trained member rankers and their version; ranks candidates by Borda count."""

    def __init__(self, members: Sequence[Ranker], manifest: EnsembleManifest) -> None:
        self.members = list(members)
        self.manifest = manifest

    @property
    def version(self) -> str:
        return self.manifest.version

    @classmethod
    def load(cls, folder: Path) -> Ensemble:
        """Load a trained ensemble folder."""
        path = folder / MANIFEST
        if not path.is_file():
            raise RankerError(
                f"{folder} is not a trained ensemble (no {MANIFEST}); train one first"
            )
        manifest = EnsembleManifest.model_validate_json(path.read_text(encoding="utf-8"))
        members: list[Ranker] = []
        for member in manifest.config.members:
            if isinstance(member, LexicalConfig):
                members.append(LexicalRanker.load(folder / member.name))
            else:
                members.append(
                    CrossEncoderRanker.load(
                        member.name, folder / member.name, max_length=member.max_length
                    )
                )
        return cls(members, manifest)

    def score(
        self, candidates: Sequence[Candidate], *, batch_size: int = 64
    ) -> dict[str, np.ndarray]:
        """Every member's invalidity scores, by member name."""
        return {m.name: m.score(candidates, batch_size=batch_size) for m in self.members}

    def rank(
        self, candidates: Sequence[Candidate], *, batch_size: int = 64
    ) -> list[RankedCandidate]:
        """The candidates ordered most-likely-invalid first, with scores, Borda points, rank."""
        scores = self.score(candidates, batch_size=batch_size)
        return ranked_candidates(candidates, scores, version=self.version)


def ranked_candidates(
    candidates: Sequence[Candidate], scores: dict[str, np.ndarray], *, version: str | None = None
) -> list[RankedCandidate]:
    """Candidates with their member scores, merged by Borda count, in rank order."""
    if not candidates:
        return []
    result = aggregate(scores)
    return [
        RankedCandidate(
            candidate=candidates[i],
            scores={name: float(values[i]) for name, values in scores.items()},
            borda_points=float(result.points[i]),
            rank=int(result.rank[i]),
            ensemble_version=version,
        )
        for i in result.order
    ]


def ensemble_version(config: EnsembleConfig, labelled: Sequence[LabelledCandidate]) -> str:
    """A hash of the config and the training data (candidate ids and verdicts)."""
    data = sorted((item.candidate.id, item.valid) for item in labelled)
    return content_id("ensemble", config.model_dump(mode="json"), data)


def train_ensemble(
    labelled: Sequence[LabelledCandidate],
    config: EnsembleConfig,
    folder: Path,
    *,
    on_member: Callable[[str], None] | None = None,
) -> Ensemble:
    """Train every member on the labelled candidates and save the ensemble into `folder`."""
    if not labelled:
        raise RankerError("no labelled candidates to train on")
    folder.mkdir(parents=True, exist_ok=True)
    members: list[Ranker] = []
    seconds: dict[str, float] = {}
    for member in config.members:
        if on_member:
            on_member(member.name)
        started = time.perf_counter()
        if isinstance(member, LexicalConfig):
            ranker: Ranker = train_lexical(labelled, member)
        else:
            ranker = _train_cross_encoder(labelled, member, folder / ".work" / member.name)
        ranker.save(folder / member.name)
        seconds[member.name] = round(time.perf_counter() - started, 2)
        logger.info("trained %s in %.1f s", member.name, seconds[member.name])
        members.append(ranker)
    manifest = EnsembleManifest(
        version=ensemble_version(config, labelled),
        config=config,
        trained_on=len(labelled),
        invalid=sum(not item.valid for item in labelled),
        train_seconds=seconds,
    )
    shutil.rmtree(folder / ".work", ignore_errors=True)
    (folder / MANIFEST).write_text(manifest.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return Ensemble(members, manifest)


def trained_ensemble(
    config: EnsembleConfig,
    labelled: Sequence[LabelledCandidate],
    root: Path,
    *,
    on_member: Callable[[str], None] | None = None,
) -> Path:
    """The folder of the ensemble of this config trained on these candidates
    (`root/<name>-<version>`), trained the first time it is asked for."""
    folder = root / f"{config.name}-{ensemble_version(config, labelled)}"
    if (folder / MANIFEST).is_file():
        return folder
    root.mkdir(parents=True, exist_ok=True)
    work = root / f".{folder.name}.{uuid.uuid4().hex}.tmp"
    try:
        train_ensemble(labelled, config, work, on_member=on_member)
        if (folder / MANIFEST).is_file():  # trained by another process meanwhile
            return folder
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(work, folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return folder


__all__ = [
    "Ensemble",
    "EnsembleConfig",
    "EnsembleManifest",
    "load_config",
    "ranked_candidates",
    "shipped_configs",
    "train_ensemble",
    "trained_ensemble",
]
