"""A validity ranker that asks the suite: does the candidate sit among the seed cases of its
own description and label, or among those of another description?

Each candidate is compared (frozen MiniLM embeddings, cosine) with the reference cases of
its task: the template suite's seed cases. A pair is compared side by side and by the
relation between its sides. The features are the same for every description, so a
logistic regression over them learns a rule that carries over to descriptions, suites and
generators it never saw:

- the best and top-3 similarity to cases of its own description;
- the best similarity to cases of other descriptions, of sibling descriptions (same
  capability), and of descriptions whose label disagrees with the proposed one, and the
  margins of its own description over each;
- among its 10 nearest reference cases, the share from its own description and the share
  whose label agrees; its own description's rank among all descriptions;
- whether it fills a template of its own description under that template's label, with
  words the lexicons give those slots, or a template of another description
  (`rankers/members/template_fit.py`);
- the probability a label probe trained on the reference cases gives its proposed label
  (`rankers/members/label_probe.py`).

Reference cases whose text equals the candidate's are left out. A candidate whose
description has no reference cases keeps the features that do not need one (an indicator
says so). Saved as JSON, never a pickle.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from rankers.members.embedding import embeddings
from rankers.members.label_probe import label_probe, pair_features
from rankers.members.linear_head import LinearRanker, fit_linear_head
from rankers.members.template_fit import TemplateIndex
from testaug.core.records import Candidate, LabelledCandidate, TestCase, label_options

SIMILARITY_FEATURES = (
    "own_best",
    "own_top3",
    "other_best",
    "sibling_best",
    "disagreeing_best",
    "own_over_other",
    "own_over_sibling",
    "own_over_disagreeing",
    "knn_own",
    "knn_label_agrees",
    "own_rank_inverse",
    "own_is_nearest",
    "has_reference",
    "seed_best",
    "seed_mean",
    "description_similarity",
    "description_margin",
    "length_ratio",
    "repetition",
)
TEMPLATE_FEATURES = (
    "own_template_fit",
    "own_template_known",
    "own_template_all_known",
    "other_template_known",
)
LABEL_FEATURES = ("label_probe",)
FEATURES = SIMILARITY_FEATURES + TEMPLATE_FEATURES + LABEL_FEATURES
_LABEL_PROBE = FEATURES.index("label_probe")
NEIGHBOURS = 10
CHUNK = 256


class NeighbourConfig(BaseModel):
    """How the suite-neighbour member is built and trained."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["neighbours"] = "neighbours"
    name: str
    model: str = Field(default="minilm", description="a sentence encoder: hub id, path or minilm")
    l2: float = Field(default=1.0, gt=0, description="inverse regularisation strength C")


class _TaskReference:
    """One task's reference cases, embedded and grouped by description, and its label probe."""

    def __init__(self, cases: Sequence[TestCase], model: str) -> None:
        cases = sorted(cases, key=lambda case: case.description_id)
        self.ids = np.array([case.id for case in cases])
        self.descriptions = list(dict.fromkeys(case.description_id for case in cases))
        column = {d: i for i, d in enumerate(self.descriptions)}
        self.column_of = np.array([column[case.description_id] for case in cases])
        self.starts = np.searchsorted(self.column_of, np.arange(len(self.descriptions)))
        first = {case.description_id: case for case in reversed(cases)}
        self.capability = [first[d].capability for d in self.descriptions]
        self.labels = [set(label_options(first[d].label)) for d in self.descriptions]
        self.by_text = {first[d].description: i for i, d in enumerate(self.descriptions)}
        self.row_of = {case.id: row for row, case in enumerate(cases)}
        words = np.array([_words(case.text, case.text_pair) for case in cases], dtype=float)
        self.median_words = np.array(
            [np.median(words[self.column_of == i]) for i in range(len(self.descriptions))]
        )
        described = embeddings(model, [first[d].description for d in self.descriptions])
        self.description_vectors = np.vstack(
            [described[first[d].description] for d in self.descriptions]
        )
        texts = [case.text for case in cases] + [case.text_pair or "" for case in cases]
        vectors = embeddings(model, texts)
        self.a = np.vstack([vectors[case.text] for case in cases])
        self.pair = cases[0].text_pair is not None
        if self.pair:
            self.b = np.vstack([vectors[case.text_pair or ""] for case in cases])
            self.relation = _unit(self.a - self.b)
        self.probe = label_probe(pair_features(self.a, self.b if self.pair else None), cases, model)

    def label_agreement(
        self, a: np.ndarray, b: np.ndarray | None, part: Sequence[Candidate]
    ) -> np.ndarray:
        """The probe's probability of each candidate's proposed label."""
        return self.probe.agreement(pair_features(a, b if self.pair else None), part)

    def similarity(self, a: np.ndarray, b: np.ndarray | None) -> np.ndarray:
        """Cosine of each candidate with each reference case (pairs: sides and relation)."""
        if not self.pair or b is None:
            return a @ self.a.T
        sides = (a @ self.a.T + b @ self.b.T) / 2.0
        return (sides + _unit(a - b) @ self.relation.T) / 2.0


def _words(text: str, text_pair: str | None) -> int:
    return max(len(text.split()) + len((text_pair or "").split()), 1)


def _repetition(text: str, text_pair: str | None) -> float:
    """The share of repeated words: degenerate text repeats itself."""
    words = [w.strip(".,!?;:").lower() for w in f"{text} {text_pair or ''}".split()]
    return 1.0 - len(set(words)) / max(len(words), 1)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-9)


def neighbour_features(
    candidates: Sequence[Candidate], reference: Sequence[TestCase], model: str = "minilm"
) -> np.ndarray:
    """The feature matrix (one row per candidate, columns as in `FEATURES`)."""
    out = np.zeros((len(candidates), len(FEATURES)))
    by_task: dict[str, list[int]] = defaultdict(list)
    for index, candidate in enumerate(candidates):
        by_task[candidate.task].append(index)
    cases_by_task: dict[str, list[TestCase]] = defaultdict(list)
    for case in reference:
        cases_by_task[case.task].append(case)
    for task, indices in by_task.items():
        if not cases_by_task[task]:
            continue
        ref = _TaskReference(cases_by_task[task], model)
        chosen = [candidates[i] for i in indices]
        vectors = embeddings(model, [c.text for c in chosen] + [c.text_pair or "" for c in chosen])
        for start in range(0, len(chosen), CHUNK):
            part = chosen[start : start + CHUNK]
            a = np.vstack([vectors[c.text] for c in part])
            b = np.vstack([vectors[c.text_pair or ""] for c in part]) if ref.pair else None
            document = _unit(a + b) if b is not None else a
            rows = _task_features(ref, part, ref.similarity(a, b), document)
            out[indices[start : start + CHUNK], : len(SIMILARITY_FEATURES)] = rows
            out[indices[start : start + CHUNK], _LABEL_PROBE] = ref.label_agreement(a, b, part)
        templates = TemplateIndex(cases_by_task[task])
        fits = np.array([templates.fit(candidate) for candidate in chosen])
        out[indices, len(SIMILARITY_FEATURES) : _LABEL_PROBE] = fits
    return out


def _task_features(
    ref: _TaskReference, part: Sequence[Candidate], sim: np.ndarray, document: np.ndarray
) -> np.ndarray:
    sim = np.where(ref.ids[None, :] == np.array([c.id for c in part])[:, None], -np.inf, sim)
    best = np.maximum.reduceat(sim, ref.starts, axis=1)  # (candidates, descriptions)
    rows = np.zeros((len(part), len(SIMILARITY_FEATURES)))
    k = min(NEIGHBOURS, sim.shape[1])  # a suite may hold fewer reference cases than that
    nearest = np.argpartition(-sim, k - 1, axis=1)[:, :k]
    described = document @ ref.description_vectors.T  # (candidates, descriptions)
    for row, candidate in enumerate(part):
        seed_rows = [ref.row_of[i] for i in candidate.seed_case_ids if i in ref.row_of]
        seed_sims = sim[row, seed_rows] if seed_rows else np.zeros(0)
        seed_sims = seed_sims[np.isfinite(seed_sims)]
        words = _words(candidate.text, candidate.text_pair)
        repetition = _repetition(candidate.text, candidate.text_pair)
        proposed = set(label_options(candidate.label))
        agrees = np.array([bool(labels & proposed) for labels in ref.labels])
        own = ref.by_text.get(candidate.description)
        if candidate.description_id in ref.descriptions:
            own = ref.descriptions.index(candidate.description_id)
        scores = best[row]
        finite = np.isfinite(scores)
        neighbour_columns = ref.column_of[nearest[row]]
        disagreeing = scores[~agrees & finite].max(initial=-1.0)
        knn_label = agrees[neighbour_columns].mean()
        if own is None:
            other = scores[finite].max(initial=-1.0)
            generic = [0, 0, 0, 0, np.log(words / np.median(ref.median_words)), repetition]
            rows[row] = [0, 0, other, 0, disagreeing, 0, 0, 0, 0, knn_label, 0, 0, 0, *generic]
            continue
        others = finite.copy()
        others[own] = False
        siblings = others & np.array([cap == candidate.capability for cap in ref.capability])
        own_sims = sim[row, ref.column_of == own]
        own_sims = own_sims[np.isfinite(own_sims)]
        own_best = own_sims.max(initial=-1.0)
        other_best = scores[others].max(initial=-1.0)
        sibling_best = scores[siblings].max(initial=other_best)
        rows[row] = [
            own_best,
            np.sort(own_sims)[-3:].mean() if own_sims.size else -1.0,
            other_best,
            sibling_best,
            disagreeing,
            own_best - other_best,
            own_best - sibling_best,
            own_best - disagreeing,
            (neighbour_columns == own).mean(),
            knn_label,
            1.0 / (1.0 + (scores[finite] > own_best).sum()),
            float(own_best >= other_best),
            1.0,
            seed_sims.max(initial=own_best),
            seed_sims.mean() if seed_sims.size else own_best,
            described[row, own],
            described[row, own] - np.delete(described[row], own).max(initial=-1.0),
            np.log(words / ref.median_words[own]),
            repetition,
        ]
    return rows


class NeighbourRanker(LinearRanker):
    """Logistic regression over suite-neighbour features, judged against the reference cases."""

    file_name = "neighbours.json"
    feature_count = len(FEATURES)

    def features(
        self, candidates: Sequence[Candidate], reference: Sequence[TestCase], batch_size: int
    ) -> np.ndarray:
        return neighbour_features(candidates, reference, self.model)


def train_neighbours(
    labelled: Sequence[LabelledCandidate],
    config: NeighbourConfig,
    *,
    reference: Sequence[TestCase],
    sample_weight: np.ndarray | None = None,
) -> NeighbourRanker:
    """Fit the logistic-regression head on the candidates' suite-neighbour features."""
    x = neighbour_features([item.candidate for item in labelled], reference, config.model)
    invalid = np.array([0 if item.valid else 1 for item in labelled])
    head = fit_linear_head(x, invalid, l2=config.l2, sample_weight=sample_weight)
    return NeighbourRanker(config.name, config.model, head)
