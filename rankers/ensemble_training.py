"""Training a ranker ensemble: cross-fit every member, weight and calibrate on the
out-of-fold scores, save the folder (see `rankers.ensemble` for what the folder holds)."""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import shutil
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rankers.adaptation.groups import is_random_sample, train_adaptation
from rankers.calibration import fit_calibration
from rankers.config import EnsembleConfig
from rankers.ensemble import (
    MANIFEST,
    Ensemble,
    EnsembleManifest,
    MemberState,
    ProgressCallback,
    borda_position,
)
from rankers.folds import fold_assignment
from rankers.members.cross_encoder import RankerError
from rankers.members.kinds import MemberConfigLike, train_member
from rankers.members.reference import bundled_reference
from testaug.core.records import LabelledCandidate, TestCase, content_id

logger = logging.getLogger(__name__)


@functools.cache
def training_code() -> str:
    """A hash of the rankers package's source: an ensemble trained by older code (other
    features, another calibration) is another ensemble."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def ensemble_version(config: EnsembleConfig, labelled: Sequence[LabelledCandidate]) -> str:
    """A hash of the config, the training data (candidate ids and verdicts) and the code
    that trains and calibrates it."""
    data = sorted((item.candidate.id, item.valid) for item in labelled)
    return content_id("ensemble", config.model_dump(mode="json"), data, training_code())


def cross_fit_member(
    member: MemberConfigLike,
    items: Sequence[LabelledCandidate],
    folds: np.ndarray,
    n_folds: int,
    folder: Path,
    *,
    reference: Sequence[TestCase],
    sample_weight: np.ndarray | None,
    on_progress: ProgressCallback | None,
) -> np.ndarray:
    """Train one member on every fold's complement, save each fold model into `folder`, and
    return the member's out-of-fold scores of the candidates (`folds`: each one's fold)."""
    scores = np.zeros(len(items))
    for fold in range(n_folds):
        if on_progress:
            on_progress(member.name, fold, n_folds)
        inside = np.flatnonzero(folds != fold)
        outside = np.flatnonzero(folds == fold)
        model = train_member(
            member,
            [items[i] for i in inside],
            reference=reference,
            work_dir=folder / ".work" / member.name / str(fold),
            sample_weight=None if sample_weight is None else sample_weight[inside],
        )
        model.save(folder / member.name / f"fold-{fold}")
        scores[outside] = model.score([items[i].candidate for i in outside], reference=reference)
    if on_progress:
        on_progress(member.name, n_folds, n_folds)
    return scores


def train_ensemble(
    labelled: Sequence[LabelledCandidate],
    config: EnsembleConfig,
    folder: Path,
    *,
    sample_weight: Sequence[float] | None = None,
    reference: Sequence[TestCase] | None = None,
    on_progress: ProgressCallback | None = None,
) -> Ensemble:
    """Cross-fit every member on the labelled candidates, weight and calibrate the ensemble
    on the out-of-fold scores, and save it into `folder`.

    `sample_weight` weighs each candidate in training (people's verdicts on a new
    generator may count more); `reference` is the cases neighbour members compare with
    (default: the bundled suites of the candidates' tasks).
    """
    if not labelled:
        raise RankerError("no labelled candidates to train on")
    items = list(labelled)
    invalid = np.array([not item.valid for item in items])
    if invalid.all() or not invalid.any():
        raise RankerError("the labelled candidates need both valid and invalid ones")
    weights = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    cases = reference
    if cases is None:
        cases = bundled_reference(
            {item.candidate.task for item in items},
            config.reference.per_template,
            config.reference.seed,
        )
    from sklearn.metrics import roc_auc_score

    folds = fold_assignment(items, config.folds, seed=0)
    folder.mkdir(parents=True, exist_ok=True)
    seconds: dict[str, float] = {}
    states: dict[str, MemberState] = {}
    oof: dict[str, np.ndarray] = {}
    for member in config.members:
        started = time.perf_counter()
        scores = cross_fit_member(
            member,
            items,
            folds,
            config.folds,
            folder,
            reference=cases,
            sample_weight=weights,
            on_progress=on_progress,
        )
        seconds[member.name] = round(time.perf_counter() - started, 2)
        logger.info(
            "trained %s (%d folds) in %.1f s", member.name, config.folds, seconds[member.name]
        )
        oof[member.name] = scores
        auc = float(roc_auc_score(invalid, scores))  # P(an invalid one outscores a valid one)
        states[member.name] = MemberState(
            oof_scores=tuple(float(v) for v in np.sort(scores)),
            oof_auc=round(auc, 6),
            weight=1.0 if config.weighting == "plain" else round(max(auc - 0.5, 0.0), 6),
        )
    if config.weighting == "oof" and not any(state.weight for state in states.values()):
        states = {name: state.model_copy(update={"weight": 1.0}) for name, state in states.items()}
    version = ensemble_version(config, items)
    triage = borda_position(oof, states)
    adaptation = None
    if config.adaptation.enabled:
        started = time.perf_counter()
        adaptation, triage, _ = train_adaptation(
            items, triage, oof, cases, config.adaptation, folder, sample_weight=weights
        )
        seconds["adaptation"] = round(time.perf_counter() - started, 2)
        logger.info("adapted to %d generator groups", len(adaptation.groups))
    calibration = fit_calibration(
        [item.candidate for item in items],
        triage,
        [item.valid for item in items],
        method=config.calibration,
        min_group=config.min_group,
        ensemble_version=version,
        folds=config.folds,
        fold_of=folds,
        random=[is_random_sample(item) for item in items],
    )
    manifest = EnsembleManifest(
        version=version,
        config=config,
        trained_on=len(items),
        invalid=int(invalid.sum()),
        train_seconds=seconds,
        folds=config.folds,
        members=states,
        calibration=calibration,
        adaptation=adaptation,
    )
    shutil.rmtree(folder / ".work", ignore_errors=True)
    (folder / MANIFEST).write_text(manifest.model_dump_json(indent=1) + "\n", encoding="utf-8")
    return Ensemble.load(folder)


def trained_ensemble(
    config: EnsembleConfig,
    labelled: Sequence[LabelledCandidate],
    root: Path,
    *,
    on_progress: ProgressCallback | None = None,
) -> Path:
    """The folder of the ensemble of this config trained on these candidates
    (`root/<name>-<version>`), trained the first time it is asked for."""
    folder = root / f"{config.name}-{ensemble_version(config, labelled)}"
    if (folder / MANIFEST).is_file():
        return folder
    root.mkdir(parents=True, exist_ok=True)
    work = root / f".{folder.name}.{uuid.uuid4().hex}.tmp"
    try:
        train_ensemble(labelled, config, work, on_progress=on_progress)
        if (folder / MANIFEST).is_file():  # trained by another process meanwhile
            return folder
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(work, folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return folder
