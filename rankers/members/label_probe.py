"""Does a candidate's text carry its proposed label, as the seed cases read it?

A label probe is a multinomial logistic regression on frozen MiniLM embeddings, trained on
one task's reference cases (the template suite's seed cases) to predict each case's label
from its text: the sentence (a single text), or both sides and how they relate (a pair:
a, b, a * b and |a - b|). A candidate's agreement is the probability the probe gives its
proposed label (summed over the options of a label such as "positive or neutral").

It reads no generator's labels, so its direction holds for every generator: a slipped
polarity, a wrong label or a pair whose sides do not relate as the label says lowers it.
On the bundled data it separates valid from invalid sentiment candidates better than
the labels of the nearest seed cases do (AUC 0.66 against 0.58 on the strong-style set,
0.69 against 0.62 on SmolLM2's); on pairs it is mixed (better on NLI pairs of the
embedded generators, worse on paraphrase pairs).

Where a task's reference cases hold fewer than two labels there is nothing to learn: every
candidate of it gets agreement 1 / (number of labels), that is no evidence.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from testaug.core.records import Candidate, TestCase, content_id, label_options

_PROBES: dict[str, LabelProbe] = {}
_PROBE_LIMIT = 32  # probes kept per process (one per task and reference set)


def pair_features(a: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """The probe's input: the sentence, or both sides and how they relate."""
    if b is None:
        return a
    return np.hstack([a, b, a * b, np.abs(a - b)])


class LabelProbe:
    """P(label | text) for one task, from its reference cases; where they hold fewer than
    two labels there is nothing to learn, and every candidate gets 1 / (number of labels)."""

    def __init__(self, x: np.ndarray, cases: Sequence[TestCase]) -> None:
        from sklearn.linear_model import LogisticRegression

        rows, labels, weights = [], [], []
        for row, case in enumerate(cases):
            options = label_options(case.label)
            for option in options:  # a case of several labels counts once in all
                rows.append(row)
                labels.append(option)
                weights.append(1.0 / len(options))
        self.labels = sorted(set(labels))
        self.classifier = None
        if len(self.labels) >= 2:
            self.classifier = LogisticRegression(C=1.0, max_iter=2000)
            self.classifier.fit(x[rows], labels, sample_weight=np.array(weights))
            self.labels = [str(label) for label in self.classifier.classes_]

    def agreement(self, x: np.ndarray, candidates: Sequence[Candidate]) -> np.ndarray:
        """The probability of each candidate's proposed label (0 for labels it never saw)."""
        if self.classifier is None:
            return np.full(len(candidates), 1.0 / max(len(self.labels), 1))
        if not len(candidates):
            return np.zeros(0)
        probabilities = self.classifier.predict_proba(x)
        column = {label: i for i, label in enumerate(self.labels)}
        return np.array(
            [
                sum(probabilities[row, column[o]] for o in label_options(c.label) if o in column)
                for row, c in enumerate(candidates)
            ]
        )


def label_probe(x: np.ndarray, cases: Sequence[TestCase], model: str) -> LabelProbe:
    """The probe of one task's reference cases (`x`: their `pair_features`), trained once
    per process."""
    key = content_id("label-probe", model, sorted((case.id, case.label) for case in cases))
    if key not in _PROBES:
        if len(_PROBES) >= _PROBE_LIMIT:
            _PROBES.pop(next(iter(_PROBES)))
        _PROBES[key] = LabelProbe(x, cases)
    return _PROBES[key]
