# ruff: noqa: E402  (imports follow the sys.path fix below)
"""Benchmark: what a generator's own labels give the triage, in the order `testaug rank`
gives, beside each part of it alone and a plain classifier on the same labels.

Two kinds of source, each held out of the prior's training:
- dense sources (data/validity/dense/): hundreds of candidates of one description from one
  generator, the shape a user's labels have when they augment one test; the prior is the
  shipped one (trained on train/), which never saw them;
- spread-out sources of data/validity (train/ + test.jsonl): a generator's candidates over
  every description; the prior is trained on every other source.

For each source, size and seed, a random sample of its labels adapts the prior exactly as
`rankers train` and `review candidates retrain` do, and the adapted ensemble ranks the
rest of the source. The figure is the share of the random-to-oracle effort gap the ranking
closes at 90% accuracy, mean and standard error over the seeds, for: the triage order
(what `rank` writes), each part of the stack alone (the best one is shown), and a plain
logistic regression on frozen MiniLM embeddings of "description, label, text" trained on
the same labels alone. Zero-shot (0 labels) is the prior's order on the whole source; in
domain is the source's own split (dense: 80% of its prompts label the rest; spread-out:
train/ labels test.jsonl). Beside it, on the sampled labels themselves, the stacked
out-of-fold review effort against each part's (the stacker is cross-fitted, so neither
saw its labels).

Targets, exit 1 on a miss: on every source and size, the triage order closes at least the
best part's share of the gap and its out-of-fold effort is at most the best part's, each
within one point on average over the draws; on dense sources, at least 60% of the gap after
100 labels, 75% after 200, 80% in domain, and 0% zero-shot.

`--cross-encoder` and `--lm-learner` add a column each: the default with each group's own
fine-tuned cross-encoder (at any size; minutes per draw on 2 cores) and with its
language-model learner (rankers.adaptation.lm_states). `--by-description` measures one description's
candidates pooled over the embedded generators as a generator of its own (every
description with at least `--min-candidates` not made by rule), against the same plain
logistic regression and the default with the prior's scores reversed (a prior worse than
random).

Run: python benchmarks/stacking.py [--dense-only | --spread-only] [--seeds 10]
[--sizes 20 50 100 200] [--cross-encoder] [--lm-learner] [--by-description] [--work DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

# benchmarks/rankers.py is named like the `rankers` package: drop this folder from the path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np
from rich.console import Console
from rich.table import Table

from rankers.adaptation.cross_encoder import GroupCrossEncoderConfig
from rankers.adaptation.groups import AdaptationConfig, adapted_scores, train_adaptation
from rankers.adaptation.lm_states import LmLearnerConfig
from rankers.adaptation.transfer import Trainings, source_of
from rankers.calibration import RULE, calibration_group
from rankers.ensemble import Ensemble, load_config, ranked_candidates
from rankers.evaluation.triage import triage_report
from testaug.core.bundled import bundled_dir
from testaug.core.jsonl import read_jsonl, read_jsonl_parts
from testaug.core.records import LabelledCandidate, TestCase, label_options

ACCURACY = 0.9
TOLERANCE = 0.01  # the triage may trail its best part by this much, on average
SOURCES = ("strong-style (hand-written)", "gemma-3-270m", "SmolLM2-135M-Instruct")
DENSE_TARGETS = {"0": 0.0, "100": 0.60, "200": 0.75, "in domain": 0.80}
DEFAULT, PLAIN = "default: the order rank gives", "plain LR on embeddings"
CROSS_ENCODER_VARIANT = "default + cross-encoder learner"
LM_VARIANT = "default + language-model learner"


class Prior(NamedTuple):
    """What the prior says of a held-out source's candidates, computed once per source."""

    ensemble: Ensemble
    cases: Sequence[TestCase]  # the seed cases its member compares candidates with
    scores: dict[str, np.ndarray]  # each member's, by member name
    position: np.ndarray  # the members' Borda position


def prior_of(ensemble: Ensemble, held: Sequence[LabelledCandidate]) -> Prior:
    candidates = [item.candidate for item in held]
    cases = ensemble.reference_for(candidates, None)
    scores = ensemble.score(candidates, reference=cases)
    position = ensemble.ensemble_score(scores)
    assert position is not None
    return Prior(ensemble, cases, scores, position)


def read_validity(data: Path) -> tuple[list[LabelledCandidate], set[str]]:
    """Every labelled candidate of `data` (train/, then test.jsonl) and test.jsonl's ids."""
    test = list(read_jsonl(data / "test.jsonl", LabelledCandidate))
    items = [*read_jsonl_parts(data / "train", LabelledCandidate), *test]
    return items, {item.candidate.id for item in test}


def read_dense(data: Path) -> dict[str, list[LabelledCandidate]]:
    """The dense sources under `data/dense/`, by file name."""
    folder = data / "dense"
    files = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    return {path.stem: list(read_jsonl(path, LabelledCandidate)) for path in files}


def in_domain_split(
    held: Sequence[LabelledCandidate], test_ids: set[str]
) -> tuple[np.ndarray, np.ndarray]:
    """The indices of `held` in train/ (the labels) and in test.jsonl (what is ranked)."""
    in_test = np.array([item.candidate.id in test_ids for item in held])
    return np.flatnonzero(~in_test), np.flatnonzero(in_test)


def prompt_split(
    held: Sequence[LabelledCandidate], share: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The candidates of a seeded `share` of the prompts (the labels), and the others."""
    prompts = sorted({item.candidate.prompt_id for item in held})
    order = np.random.default_rng(seed).permutation(len(prompts))
    kept = {prompts[i] for i in order[: round(share * len(prompts))]}
    inside = np.array([item.candidate.prompt_id in kept for item in held])
    return np.flatnonzero(inside), np.flatnonzero(~inside)


def random_split(count: int, size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`size` random indices of `count` (the labels) and the others (what is ranked)."""
    order = np.random.default_rng(seed).permutation(count)
    return order[:size], order[size:]


def gap_of(invalid: np.ndarray, scores: np.ndarray) -> float:
    """The gap an order by `scores` (highest first) closes."""
    return triage_report(invalid[np.argsort(-scores, kind="stable")], ACCURACY).gap_closed


def effort_of(invalid: np.ndarray, scores: np.ndarray) -> float:
    """The review effort of an order by `scores` (highest first)."""
    return triage_report(invalid[np.argsort(-scores, kind="stable")], ACCURACY).effort_at_target


def rank_gap(prior: Prior, held: Sequence[LabelledCandidate], index: np.ndarray, state, work):
    """The gap `rank`'s order closes on `held[index]` and each part's, by the adaptation
    `state` (None: the prior's own zero-shot state)."""
    candidates = [held[i].candidate for i in index]
    invalid = np.array([not held[i].valid for i in index])
    scores = {k: v[index] for k, v in prior.scores.items()}
    adapted = adapted_scores(
        candidates,
        prior.position[index],
        scores,
        prior.cases,
        state or prior.ensemble.manifest.adaptation,
        work,
    )
    ranked = ranked_candidates(candidates, scores, triage=(adapted.scores, adapted.basis))
    position = {c.id: i for i, c in enumerate(candidates)}
    order = np.array([position[row.candidate.id] for row in ranked])
    parts = {}
    for name, values in adapted.parts.items():
        if all(v is not None for v in values):
            parts[name] = gap_of(invalid, np.array(values, dtype=np.float64))
    return triage_report(invalid[order], ACCURACY).gap_closed, parts


class Draw(NamedTuple):
    """One draw of labels: the gap closed on the rest by the triage, by each part and by the
    plain learner, and on the labels themselves the out-of-fold effort of the stack and of
    each part."""

    default: float
    parts: dict[str, float]
    plain: float
    oof: float
    oof_parts: dict[str, float]


def draw(
    prior: Prior,
    held: Sequence[LabelledCandidate],
    split: tuple[np.ndarray, np.ndarray],
    config: AdaptationConfig,
    embedded: np.ndarray,
    work: Path,
) -> Draw:
    """Adapt the prior to the labels of `held` at `split[0]`, rank those at `split[1]`."""
    drawn, left = split
    sample = [held[i] for i in drawn]
    scores = {k: v[drawn] for k, v in prior.scores.items()}
    fitted = train_adaptation(sample, prior.position[drawn], scores, prior.cases, config, work)
    default, parts = rank_gap(prior, held, left, fitted.state, work)
    # out of fold, on the labels of the sample's largest adapted group
    groups = np.array([calibration_group(item.candidate) for item in sample])
    largest = max(fitted.parts, key=lambda g: int((groups == g).sum()), default=None)
    inside = groups == largest
    labels = np.array([not item.valid for item in sample])[inside]
    oof_parts = fitted.parts.get(largest, {}) if largest is not None else {}
    return Draw(
        default=default,
        parts=parts,
        plain=plain_gap(embedded, np.array([not i.valid for i in held]), split),
        oof=effort_of(labels, fitted.triage[inside]) if largest is not None else float("nan"),
        oof_parts={k: effort_of(labels, v) for k, v in oof_parts.items()},
    )


def plain_gap(
    texts: np.ndarray, invalid: np.ndarray, split: tuple[np.ndarray, np.ndarray]
) -> float:
    """The gap a logistic regression on the embeddings `texts` (standardised, both verdicts
    weighed alike, as scikit-learn users set it up), trained on `split[0]` alone, closes
    on `split[1]`."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    drawn, left = split
    classifier = make_pipeline(
        StandardScaler(), LogisticRegression(class_weight="balanced", max_iter=3000)
    ).fit(texts[drawn], invalid[drawn])
    return gap_of(invalid[left], classifier.decision_function(texts[left]))


def embedded_texts(held: Sequence[LabelledCandidate]) -> np.ndarray:
    """MiniLM embeddings of "description, label, text" of each candidate."""
    from rankers.members.embedding import embeddings

    texts = [
        " ".join([c.description, " or ".join(label_options(c.label)), c.text, c.text_pair or ""])
        for c in (item.candidate for item in held)
    ]
    vectors = embeddings("minilm", texts)
    return np.vstack([vectors[text] for text in texts])


class Row(NamedTuple):
    """A table row: the source, the labels and each column's figures over the draws."""

    source: str
    labels: str
    draws: list[Draw]
    extras: dict[str, list[float]]


def mean(values: Sequence[float]) -> str:
    if not values:
        return ""
    spread = np.std(values) / np.sqrt(len(values)) if len(values) > 1 else 0.0
    return f"{np.mean(values):.1%} ± {spread:.1%}"


def best_part(draws: Sequence[Draw], key: Callable[[Draw], dict[str, float]], low: bool):
    """The part best on average over the draws (lowest if `low`), and its mean."""
    names = set.intersection(*(set(key(d)) for d in draws)) if draws else set()
    means = {name: float(np.mean([key(d)[name] for d in draws])) for name in names}
    if not means:
        return None, None
    name = min(means, key=means.get) if low else max(means, key=means.get)
    return name, means[name]


def source_rows(
    name: str,
    prior: Prior,
    held: Sequence[LabelledCandidate],
    rows: Sequence[tuple[str, Sequence[tuple[np.ndarray, np.ndarray]]]],
    config: AdaptationConfig,
    variants: dict[str, AdaptationConfig],
    work: Path,
) -> list[Row]:
    """The zero-shot row and a row per size of one source."""
    invalid = np.array([not item.valid for item in held])
    zero, zero_parts = rank_gap(prior, held, np.arange(len(held)), None, work)
    out = [Row(name, "0", [Draw(zero, zero_parts, float("nan"), float("nan"), {})], {})]
    embedded = embedded_texts(held)
    for labels, splits in rows:
        draws, extras = [], {variant: [] for variant in variants}
        for split in splits:
            if len(set(invalid[split[0]].tolist())) < 2 or len(split[1]) < 10:
                continue
            draws.append(draw(prior, held, split, config, embedded, work / "adapted"))
            for variant, changed in variants.items():
                extras[variant].append(
                    draw(prior, held, split, changed, embedded, work / "variant").default
                )
        out.append(Row(name, labels, draws, extras))
    return out


def targets(rows: Sequence[Row], dense: set[str]) -> list[tuple[str, str, bool]]:
    """Each target: what, the figure, met."""
    checks = []
    for row in rows:
        default = float(np.mean([d.default for d in row.draws])) if row.draws else float("nan")
        if row.labels != "0" and row.draws:
            part, value = best_part(row.draws, lambda d: d.parts, low=False)
            if part is not None:
                met = default >= value - TOLERANCE
                checks.append(
                    (f"{row.source}, {row.labels}: the triage order against its best part "
                     f"({part}) on the rest", f"{default:.1%} vs {value:.1%}", met)
                )  # fmt: skip
            oof = float(np.nanmean([d.oof for d in row.draws]))
            part, value = best_part(row.draws, lambda d: d.oof_parts, low=True)
            if part is not None:
                checks.append(
                    (f"{row.source}, {row.labels}: stacked out-of-fold effort against its "
                     f"best part ({part})", f"{oof:.1%} vs {value:.1%}", oof <= value + TOLERANCE)
                )  # fmt: skip
        if row.source in dense:
            key = "in domain" if row.labels.startswith("in domain") else row.labels
            if key in DENSE_TARGETS:
                goal = DENSE_TARGETS[key]
                checks.append(
                    (f"{row.source}, {row.labels}: gap closed >= {goal:.0%}",
                     f"{default:.1%}", default >= goal)
                )  # fmt: skip
    return checks


def print_rows(console: Console, title: str, rows: Sequence[Row], variants: Sequence[str]) -> None:
    table = Table(title=title, title_justify="left")
    columns = ["source", "labels", DEFAULT, "best part alone", PLAIN, *variants]
    columns += ["stacked oof effort", "best part's oof effort"]
    for column in columns:
        table.add_column(
            column, justify="left" if column in ("source", "best part alone") else "right"
        )
    for row in rows:
        part, _ = best_part(row.draws, lambda d: d.parts, low=False)
        oof_part, _ = best_part(row.draws, lambda d: d.oof_parts, low=True)
        plain = [d.plain for d in row.draws if not np.isnan(d.plain)]
        table.add_row(
            row.source,
            f"{row.labels} ({len(row.draws)} draw{'s' if len(row.draws) != 1 else ''})"
            if row.labels != "0"
            else "0",
            mean([d.default for d in row.draws]),
            "" if part is None else f"{part}: {mean([d.parts[part] for d in row.draws])}",
            mean(plain),
            *(mean(row.extras.get(v, [])) for v in variants),
            mean([d.oof for d in row.draws if not np.isnan(d.oof)]),
            ""
            if oof_part is None
            else f"{oof_part}: {mean([d.oof_parts[oof_part] for d in row.draws])}",
        )
    console.print(table)


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
    for column in ("n", "prior alone", PLAIN, "default", "default, prior reversed"):
        table.add_column(column, justify="right")
    cells: dict[int, list[list[float]]] = {size: [] for size in args.sizes}
    for description in sorted(held_out):
        held = [
            as_one_generator(item) for item in made if item.candidate.description == description
        ]
        invalid = np.array([not item.valid for item in held])
        prior = prior_of(ensemble, held)
        reversed_prior = prior._replace(
            scores={k: -v for k, v in prior.scores.items()}, position=-np.asarray(prior.position)
        )
        embedded = embedded_texts(held)
        for size in args.sizes:
            for seed in range(args.seeds):
                split = random_split(len(held), size, seed)
                if len(set(invalid[split[0]])) < 2 or size >= len(held) - 10:
                    continue
                cells[size].append(
                    [
                        gap_of(invalid[split[1]], prior.position[split[1]]),
                        plain_gap(embedded, invalid, split),
                        draw(prior, held, split, adaptation, embedded, work).default,
                        draw(reversed_prior, held, split, adaptation, embedded, work).default,
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
    parser.add_argument("--sizes", nargs="+", type=int, default=[20, 50, 100, 200])
    parser.add_argument("--seeds", type=int, default=10, help="random label samples per size")
    kinds = parser.add_mutually_exclusive_group()
    kinds.add_argument("--dense-only", action="store_true", help="only the dense sources")
    kinds.add_argument("--spread-only", action="store_true", help="only the spread-out ones")
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
        "--by-description",
        action="store_true",
        help="hold out whole descriptions of the embedded generators, each as a generator",
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
    adaptation = config.adaptation
    if args.by_description:
        return by_description(items, trainings, adaptation, args, console, work / "adapted")
    variants: dict[str, AdaptationConfig] = {}
    if args.cross_encoder:
        own = GroupCrossEncoderConfig(min_labels=20, shipped_labels=True)
        variants[CROSS_ENCODER_VARIANT] = adaptation.with_learners(own)
    if args.lm_learner:
        configured = [k for k in adaptation.learners if isinstance(k, LmLearnerConfig)]
        variants[LM_VARIANT] = adaptation.with_learners(*(configured or [LmLearnerConfig()]))
    sizes = [(str(size), size) for size in args.sizes]
    rows: list[Row] = []
    dense = {} if args.spread_only else read_dense(args.data)
    if dense:
        train = [item for item in items if item.candidate.id not in test_ids]
        ensemble = trainings.ensemble(train, "train/, the shipped prior")
        for name, held in dense.items():
            splits = [
                (label, [random_split(len(held), size, s) for s in range(args.seeds)])
                for label, size in sizes
            ]
            domain = [prompt_split(held, 0.8, seed) for seed in range(min(args.seeds, 5))]
            splits.append((f"in domain ({len(domain[0][0])})", domain))
            prior = prior_of(ensemble, held)
            rows += source_rows(name, prior, held, splits, adaptation, variants, work)
        print_rows(console, _title("dense sources: one description each"), rows, list(variants))
    spread: list[Row] = []
    if not args.dense_only:
        for source in args.sources:
            held = [item for item in items if source_of(item) == source]
            others = [item for item in items if source_of(item) != source]
            if not held:
                continue
            prior = prior_of(trainings.ensemble(others, f"every source but {source}"), held)
            splits = [
                (label, [random_split(len(held), size, s) for s in range(args.seeds)])
                for label, size in sizes
            ]
            in_domain = in_domain_split(held, test_ids)
            if len(in_domain[0]) and len(in_domain[1]):
                splits.append((f"in domain ({len(in_domain[0])})", [in_domain]))
            spread += source_rows(source, prior, held, splits, adaptation, variants, work)
        print_rows(console, _title("spread-out sources"), spread, list(variants))
    checks = targets([*rows, *spread], set(dense))
    table = Table(title="targets", title_justify="left")
    for column in ("target", "measured", "met"):
        table.add_column(column)
    for what, figure, met in checks:
        table.add_row(what, figure, "met" if met else "[red]missed[/]")
    console.print(table)
    missed = sum(not met for _, _, met in checks)
    console.print(f"{len(checks) - missed} of {len(checks)} targets met")
    return 1 if missed else 0


def _title(kind: str) -> str:
    return (
        f"{kind}: gap closed at {ACCURACY:.0%} accuracy on the rest of a held-out source after "
        "n of its labels drawn at random (mean ± standard error over the draws)"
    )


if __name__ == "__main__":
    sys.exit(main())
