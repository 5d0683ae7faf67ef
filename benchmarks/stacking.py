# ruff: noqa: E402  (imports follow the sys.path fix below)
"""Benchmark: what a generator's own labels give the stacking, part by part, averaged over
many random samples of those labels.

For each held-out source of data/validity (train/ + test.jsonl), the offline ensemble is
trained on every other source (the prior). Then, for each size and seed, a random sample of
the held-out source's labels adapts it exactly as `rankers train` and `review candidates
pull` do (the group's learners trained on the sample alone, each part weighted by its
out-of-fold AUC there), and the adapted ensemble ranks the rest of that source's candidates.
The figure is the share of the random-to-oracle effort gap the ranking closes at 90%
accuracy, mean and standard error over the seeds.

Three variants in the same run: the reference (the stacking of earlier versions: one
learner, ranked by the stacked score itself), the same with the embedding learner, and the
default (with it, and ranked by P(invalid) read from each group's own labels, so that
groups share one scale where a source spans several generator settings). Unlike the
labelling loop of benchmarks/triage.py (one deterministic order of labels per generator),
the mean over random samples says whether a part helps or merely won a draw.
`--cross-encoder` adds a fourth: the default with each group's own fine-tuned
cross-encoder (rankers.group_cross_encoder; minutes per draw on 2 cores), and `--lm-learner`
one with each group's language-model learner (rankers.lm_states, from 100 labels; a
forward pass of the embedded model per candidate, once per run). `--in-domain`
adds a row per source: adapted to all of its train/ labels, ranking its test.jsonl.

`--by-description` measures another shape: one description's candidates as a generator of
their own (every description with at least 100 candidates not made by rule, each pooled
over its generators into one group), the prior trained without any of those descriptions.
Beside the default it ranks by a plain logistic regression on frozen MiniLM embeddings of
"description, label, text" trained on the same labels alone (the learner the issue behind
this work measured), and by the default again with the prior's scores reversed: a prior
worse than random, as the shipped one was on a stronger generator's candidates.

Run: python benchmarks/stacking.py [--seeds 10] [--sizes 50 100 200] [--cross-encoder]
[--lm-learner] [--in-domain] [--by-description] [--work DIR]
Exits 1 when the default closes less of the gap than the reference, averaged over the
sources and sizes (with --by-description: than the plain logistic regression).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

# benchmarks/rankers.py is named like the `rankers` package: drop this folder from the path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np
from rich.console import Console
from rich.table import Table

from rankers.adaptation import AdaptationConfig, AdaptationState, adapted_scores, train_adaptation
from rankers.calibration import RULE
from rankers.ensemble import Ensemble, load_config
from rankers.group_cross_encoder import GroupCrossEncoderConfig
from rankers.lm_states import LmLearnerConfig
from rankers.transfer import Trainings, source_of
from rankers.triage import triage_report
from testaug.core.bundled import bundled_dir
from testaug.core.jsonl import read_jsonl, read_jsonl_parts
from testaug.core.records import LabelledCandidate, TestCase, label_options

ACCURACY = 0.9
SOURCES = ("strong-style (hand-written)", "gemma-3-270m", "SmolLM2-135M-Instruct")
VARIANTS = (
    "reference: learner, as stacked",
    "+ embedding learner, as stacked",
    "default: + embedding learner, P(invalid)",
)
CROSS_ENCODER_VARIANT = "default + cross-encoder learner"
LM_VARIANT = "default + language-model learner"


def as_stacked(state: AdaptationState) -> AdaptationState:
    """The state ranking by the stacked scores themselves (no P(invalid) curves)."""
    groups = {k: g.model_copy(update={"invalid_curve": ()}) for k, g in state.groups.items()}
    return state.model_copy(update={"zero_shot_curve": (), "groups": groups})


class Prior(NamedTuple):
    """What the prior says of a held-out source's candidates, computed once per source."""

    cases: Sequence[TestCase]  # the seed cases its member compares candidates with
    scores: dict[str, np.ndarray]  # each member's, by member name
    position: np.ndarray  # the members' Borda position


def prior_of(ensemble: Ensemble, held: Sequence[LabelledCandidate]) -> Prior:
    candidates = [item.candidate for item in held]
    cases = ensemble.reference_for(candidates, None)
    scores = ensemble.score(candidates, reference=cases)
    position = ensemble.ensemble_score(scores)
    assert position is not None
    return Prior(cases, scores, position)


def read_validity(data: Path) -> tuple[list[LabelledCandidate], set[str]]:
    """Every labelled candidate of `data` (train/, then test.jsonl) and test.jsonl's ids."""
    test = list(read_jsonl(data / "test.jsonl", LabelledCandidate))
    items = [*read_jsonl_parts(data / "train", LabelledCandidate), *test]
    return items, {item.candidate.id for item in test}


def in_domain_split(
    held: Sequence[LabelledCandidate], test_ids: set[str]
) -> tuple[np.ndarray, np.ndarray]:
    """The indices of `held` in train/ (the labels) and in test.jsonl (what is ranked)."""
    in_test = np.array([item.candidate.id in test_ids for item in held])
    return np.flatnonzero(~in_test), np.flatnonzero(in_test)


def random_split(count: int, size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`size` random indices of `count` (the labels) and the others (what is ranked)."""
    order = np.random.default_rng(seed).permutation(count)
    return order[:size], order[size:]


def gaps_after(
    prior: Prior,
    held: Sequence[LabelledCandidate],
    split: tuple[np.ndarray, np.ndarray],
    config: AdaptationConfig,
    work: Path,
) -> tuple[float, float]:
    """Adapt the prior to the labels of `held` at `split[0]`; the gap it closes on those at
    `split[1]`, ranked by the stacked scores and by P(invalid)."""
    drawn, left = split
    sample, rest = [held[i] for i in drawn], [held[i] for i in left]

    def part(index: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        return prior.position[index], {k: v[index] for k, v in prior.scores.items()}

    state, _ = train_adaptation(sample, *part(drawn), prior.cases, config, work)
    invalid = np.array([not item.valid for item in rest])
    gaps = []
    for ranked_by in (as_stacked(state), state):
        adapted = adapted_scores(
            [i.candidate for i in rest], *part(left), prior.cases, ranked_by, work
        )
        ranked = invalid[np.argsort(-np.asarray(adapted.scores), kind="stable")]
        gaps.append(triage_report(ranked, ACCURACY).gap_closed)
    return gaps[0], gaps[1]


def variant_gaps(
    prior: Prior,
    held: Sequence[LabelledCandidate],
    splits: Sequence[tuple[np.ndarray, np.ndarray]],
    adaptation: AdaptationConfig,
    cross_encoder: bool,
    lm_learner: bool,
    work: Path,
) -> list[np.ndarray]:
    """The gap each variant closes on each split (labels, ranked): the reference, + the
    embedding learner, the default and, with `cross_encoder` and `lm_learner`, the default
    with each group's own cross-encoder and with its language-model learner."""

    def gaps(config: AdaptationConfig) -> np.ndarray:
        return np.array([gaps_after(prior, held, s, config, work / "adapted") for s in splits])

    without = gaps(adaptation.model_copy(update={"embedding_learner": False}))
    default = gaps(adaptation.model_copy(update={"embedding_learner": True}))
    columns = [without[:, 0], default[:, 0], default[:, 1]]
    if cross_encoder:
        least = min(len(labels) for labels, _ in splits)
        own = GroupCrossEncoderConfig(min_labels=max(min(least, 200), 20))
        columns.append(gaps(adaptation.model_copy(update={"cross_encoder": own}))[:, 1])
    if lm_learner:
        lm = adaptation.lm_learner or LmLearnerConfig()
        columns.append(gaps(adaptation.model_copy(update={"lm_learner": lm}))[:, 1])
    return columns


def plain_gap(
    texts: np.ndarray, invalid: np.ndarray, split: tuple[np.ndarray, np.ndarray]
) -> float:
    """The gap a logistic regression on the embeddings `texts`, trained on `split[0]` alone,
    closes on `split[1]`."""
    from sklearn.linear_model import LogisticRegression

    drawn, left = split
    classifier = LogisticRegression(max_iter=3000).fit(texts[drawn], invalid[drawn])
    order = np.argsort(-classifier.decision_function(texts[left]), kind="stable")
    return triage_report(invalid[left][order], ACCURACY).gap_closed


def as_one_generator(item: LabelledCandidate) -> LabelledCandidate:
    """The candidate as written by one new generator (one calibration group)."""
    candidate = item.candidate.model_copy(
        update={"backend": "openai", "model": "held-out description", "temperature": None}
    )
    return item.model_copy(update={"candidate": candidate})


def by_description(
    items: Sequence[LabelledCandidate],
    trainings: Trainings,
    adaptation: AdaptationConfig,
    args: argparse.Namespace,
    console: Console,
    work: Path,
) -> int:
    """The --by-description table (adapted ensembles under `work`); 1 when the default closes
    less than the plain learner."""
    from rankers.embedding import embeddings

    made = [item for item in items if source_of(item) != RULE]
    counts = Counter(item.candidate.description for item in made)
    held_out = {text for text, count in counts.items() if count >= args.min_candidates}
    others = [item for item in items if item.candidate.description not in held_out]
    ensemble = trainings.ensemble(others, f"all but {len(held_out)} descriptions")
    table = Table(
        title=f"gap closed at {ACCURACY:.0%} accuracy on the rest of one description's "
        f"candidates after n of its labels drawn at random (mean over {len(held_out)} "
        f"descriptions of {args.seeds} draws each)",
        title_justify="left",
    )
    for column in (
        "n",
        "prior alone",
        "plain LR on embeddings",
        "default",
        "default, prior reversed",
    ):
        table.add_column(column, justify="right")
    cells: dict[int, list[list[float]]] = {size: [] for size in args.sizes}
    for description in sorted(held_out):
        held = [
            as_one_generator(item) for item in made if item.candidate.description == description
        ]
        invalid = np.array([not item.valid for item in held])
        prior = prior_of(ensemble, held)
        reversed_prior = Prior(
            prior.cases, {k: -v for k, v in prior.scores.items()}, -np.asarray(prior.position)
        )
        texts = [
            " ".join(
                [c.description, " or ".join(label_options(c.label)), c.text, c.text_pair or ""]
            )
            for c in (item.candidate for item in held)
        ]
        vectors = embeddings("minilm", texts)
        embedded = np.vstack([vectors[text] for text in texts])
        for size in args.sizes:
            for seed in range(args.seeds):
                split = random_split(len(held), size, seed)
                if len(set(invalid[split[0]])) < 2 or size >= len(held) - 10:
                    continue
                ranked = invalid[split[1]][np.argsort(-prior.position[split[1]], kind="stable")]
                cells[size].append(
                    [
                        triage_report(ranked, ACCURACY).gap_closed,
                        plain_gap(embedded, invalid, split),
                        gaps_after(prior, held, split, adaptation, work)[1],
                        gaps_after(reversed_prior, held, split, adaptation, work)[1],
                    ]
                )
    differences = []
    for size, rows in cells.items():
        if not rows:
            continue
        means = np.mean(rows, axis=0)
        differences.append(means[2] - means[1])
        table.add_row(f"{size} ({len(rows)} draws)", *(f"{m:.1%}" for m in means))
    console.print(table)
    met = bool(differences) and float(np.mean(differences)) >= 0
    console.print(
        f"default against the plain logistic regression, mean over sizes: "
        f"{np.mean(differences):+.1%} of the gap -> {'PASS' if met else 'FAIL'} (>= 0)"
    )
    return 0 if met else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=bundled_dir("data") / "validity")
    parser.add_argument("--config", default="offline", help="offline, paper, or a YAML file")
    parser.add_argument("--sources", nargs="+", default=list(SOURCES))
    parser.add_argument("--sizes", nargs="+", type=int, default=[50, 100, 200])
    parser.add_argument("--seeds", type=int, default=10, help="random label samples per size")
    parser.add_argument(
        "--cross-encoder",
        action="store_true",
        help="also measure the default with each group's own fine-tuned cross-encoder",
    )
    parser.add_argument(
        "--lm-learner",
        action="store_true",
        help="also measure the default with each group's language-model learner",
    )
    parser.add_argument(
        "--in-domain",
        action="store_true",
        help="also adapt to the source's train/ labels and rank its test.jsonl candidates",
    )
    parser.add_argument(
        "--by-description",
        action="store_true",
        help="hold out whole descriptions, each as a generator of its own (see above)",
    )
    parser.add_argument(
        "--min-candidates",
        type=int,
        default=100,
        help="with --by-description: the candidates a description needs to be held out",
    )
    parser.add_argument("--work", type=Path, help="folder for trained ensembles (default: temp)")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    console = Console()
    items, test_ids = read_validity(args.data)
    config = load_config(args.config)
    work = args.work or Path(tempfile.mkdtemp(prefix="testaug-stacking-"))
    trainings = Trainings(config, work, lambda line: console.print(line, style="dim"))
    if args.by_description:
        return by_description(items, trainings, config.adaptation, args, console, work / "adapted")
    table = Table(
        title=f"gap closed at {ACCURACY:.0%} accuracy on the rest of a held-out source, "
        f"after n of its labels drawn at random (mean ± standard error of {args.seeds} draws)",
        title_justify="left",
    )
    variants = [
        *VARIANTS,
        *([CROSS_ENCODER_VARIANT] if args.cross_encoder else []),
        *([LM_VARIANT] if args.lm_learner else []),
    ]
    for column in ("held out", "n", *variants, "default - reference"):
        table.add_column(column, justify="left" if column == "held out" else "right")
    differences = []
    for source in args.sources:
        held = [item for item in items if source_of(item) == source]
        others = [item for item in items if source_of(item) != source]
        prior = prior_of(trainings.ensemble(others, f"every source but {source}"), held)
        rows = [
            (str(size), [random_split(len(held), size, s) for s in range(args.seeds)])
            for size in args.sizes
        ]
        if args.in_domain:
            in_domain = in_domain_split(held, test_ids)
            rows.append((f"in domain ({len(in_domain[0])})", [in_domain]))
        for name, splits in rows:
            columns = variant_gaps(
                prior, held, splits, config.adaptation, args.cross_encoder, args.lm_learner, work
            )
            cells = [f"{g.mean():.1%} ± {g.std() / np.sqrt(len(g)):.1%}" for g in columns]
            difference = float(columns[2].mean() - columns[0].mean())  # the default's
            if len(splits) > 1:
                differences.append(difference)
            table.add_row(source, name, *cells, f"{difference:+.1%}")
    console.print(table)
    mean = float(np.mean(differences))
    met = mean >= 0
    console.print(
        f"default against reference, mean over sources and sizes: {mean:+.1%} of the gap "
        f"-> {'PASS' if met else 'FAIL'} (>= 0)"
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
