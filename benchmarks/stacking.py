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

Run: python benchmarks/stacking.py [--seeds 10] [--sizes 50 100 200] [--work DIR]
Exits 1 when the default closes less of the gap than the reference, averaged over the
sources and sizes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

# benchmarks/rankers.py is named like the `rankers` package: drop this folder from the path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np
from rich.console import Console
from rich.table import Table

from rankers.adaptation import AdaptationConfig, AdaptationState, adapted_scores, train_adaptation
from rankers.ensemble import Ensemble, load_config
from rankers.transfer import Trainings, source_of
from rankers.triage import triage_report
from testaug.core.bundled import bundled_dir
from testaug.core.jsonl import read_jsonl, read_jsonl_parts
from testaug.core.records import LabelledCandidate, TestCase

ACCURACY = 0.9
SOURCES = ("strong-style (hand-written)", "gemma-3-270m", "SmolLM2-135M-Instruct")
VARIANTS = (
    "reference: learner, as stacked",
    "+ embedding learner, as stacked",
    "default: + embedding learner, P(invalid)",
)


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


def gaps_after(
    prior: Prior,
    held: Sequence[LabelledCandidate],
    size: int,
    seed: int,
    config: AdaptationConfig,
    work: Path,
) -> tuple[float, float]:
    """Adapt the prior to `size` random labels of `held`; the gap it closes on the rest,
    ranked by the stacked scores and by P(invalid)."""
    order = np.random.default_rng(seed).permutation(len(held))
    drawn, left = order[:size], order[size:]
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=bundled_dir("data") / "validity")
    parser.add_argument("--config", default="offline", help="offline, paper, or a YAML file")
    parser.add_argument("--sources", nargs="+", default=list(SOURCES))
    parser.add_argument("--sizes", nargs="+", type=int, default=[50, 100, 200])
    parser.add_argument("--seeds", type=int, default=10, help="random label samples per size")
    parser.add_argument("--work", type=Path, help="folder for trained ensembles (default: temp)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    console = Console()
    items = [
        *read_jsonl_parts(args.data / "train", LabelledCandidate),
        *read_jsonl(args.data / "test.jsonl", LabelledCandidate),
    ]
    config = load_config(args.config)
    work = args.work or Path(tempfile.mkdtemp(prefix="testaug-stacking-"))
    trainings = Trainings(config, work, lambda line: console.print(line, style="dim"))
    table = Table(
        title=f"gap closed at {ACCURACY:.0%} accuracy on the rest of a held-out source, "
        f"after n of its labels drawn at random (mean ± standard error of {args.seeds} draws)",
        title_justify="left",
    )
    for column in ("held out", "n", *VARIANTS, "default - reference"):
        table.add_column(column, justify="left" if column == "held out" else "right")
    differences = []
    for source in args.sources:
        held = [item for item in items if source_of(item) == source]
        others = [item for item in items if source_of(item) != source]
        prior = prior_of(trainings.ensemble(others, f"every source but {source}"), held)
        for size in args.sizes:
            runs = []
            for embedding_learner in (False, True):
                adaptation = config.adaptation.model_copy(
                    update={"embedding_learner": embedding_learner}
                )
                runs.append(
                    np.array(
                        [
                            gaps_after(prior, held, size, seed, adaptation, work / "adapted")
                            for seed in range(args.seeds)
                        ]
                    )
                )
            columns = [runs[0][:, 0], runs[1][:, 0], runs[1][:, 1]]
            cells = [f"{g.mean():.1%} ± {g.std() / np.sqrt(len(g)):.1%}" for g in columns]
            difference = float(columns[2].mean() - columns[0].mean())
            differences.append(difference)
            table.add_row(source, str(size), *cells, f"{difference:+.1%}")
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
