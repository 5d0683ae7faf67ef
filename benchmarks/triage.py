# ruff: noqa: E402  (imports follow the sys.path fix below)
"""Benchmark: how the validity triage transfers (GitHub issue 15, "Transfer is the measure").

On every labelled candidate of data/validity (train.jsonl + test.jsonl) with the offline
ensemble; a candidate's source is its generator model, or `rule` for hard cases made by
rule. Effort is the share of a ranking people review for 90% accuracy (ACC@k, as in
testaug/triage.py); gap closed is the share of the effort gap from random order to the
perfect (oracle) order that the ranking closes, both computed here on the same candidates.
The measures are in rankers/transfer.py.

  held-out source   trained on every source but S, ranking S's candidates.
                    Target: gap closed >= 50% for each generator (rule: reported).
  active loop       per held-out generator, n of its candidates (whole prompts, seeded)
                    judged by people through `retrain_and_rerank` (people's verdicts as
                    annotations, every other source as `extra`), ranking the rest of S;
                    "without labels" is the held-out ranking of the same candidates.
                    Target: mean gap closed over the seeds >= 75% after 100 labels, at
                    the shipped weight of people's verdicts (others are reported).
  acceptance        trained on train.jsonl; on test.jsonl, per calibration group, what the
                    acceptance rule at precision 0.9 accepts, its precision, and the share
                    of 1,000 bootstrap resamples of those candidates at precision >= 0.9.
                    Target: >= 95% of resamples. A group that accepts nothing is N/A: its
                    candidates all wait for people, which is safe but shows nothing, so
                    it is no pass. Target: ECE of P(valid) on test.jsonl <= 0.05.
  training time     trained on all candidates, first in the process (so it includes
                    loading the encoder and embedding every text). Target: under 15 min.

Run: python benchmarks/triage.py [--json PATH] [--quick] [--people-weight 10 ...]
Exits 1 when a target is missed. An ensemble whose training set recurs in a run is
trained once (the held-out ones are the active loop's n = 0).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

# benchmarks/rankers.py is named like the `rankers` package: drop this folder from the
# path so that `import rankers` finds the package, not that script.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np
from rich.console import Console
from rich.table import Table

from rankers.active import PEOPLE_WEIGHT
from rankers.calibration import RULE
from rankers.ensemble import load_config
from rankers.transfer import (
    AcceptanceResult,
    CurvePoint,
    HeldOut,
    Trainings,
    TrainingTime,
    acceptance_on_test,
    held_out,
    in_domain,
    learning_curve,
    prompt_subset,
    training_time,
)
from testaug.core.bundled import bundled_dir
from testaug.core.jsonl import read_jsonl
from testaug.core.records import LabelledCandidate
from testaug.testing.benchmark import print_checks

ACCURACY = 0.9
HELD_OUT_TARGET = 0.5
CURVE_TARGET, CURVE_AT = 0.75, 100
PRECISION, RESAMPLE_SHARE = 0.9, 0.95
ECE_TARGET = 0.05
MINUTES_TARGET = 15.0
QUICK_FRACTION = 0.3

Check = tuple[str, bool | None, str]


def percent(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:.{digits}%}"


def new_table(title: str, columns: Sequence[str]) -> Table:
    table = Table(title=title, title_justify="left")
    for index, column in enumerate(columns):
        table.add_column(column, justify="left" if index == 0 else "right", no_wrap=index == 0)
    return table


def held_out_section(
    console: Console, rows: Sequence[HeldOut], domain: dict[str, float], config: str
) -> list[Check]:
    table = new_table(
        f"held-out source: effort for {ACCURACY:.0%} accuracy, {config} ensemble (in domain: "
        "trained on train.jsonl, ranking the source's test.jsonl)",
        ["held out", "trained on", "candidates", "invalid", "effort", "random", "oracle",
         "gap closed", "target", "in domain"],
    )  # fmt: skip
    checks: list[Check] = []
    for row in rows:
        generator = row.source != RULE
        table.add_row(
            row.source, f"{row.trained_on:,}", f"{row.n:,}", f"{row.n_invalid:,}",
            percent(row.effort, 1), percent(row.random_effort, 1), percent(row.oracle_effort, 1),
            percent(row.gap_closed), f">= {HELD_OUT_TARGET:.0%}" if generator else "reported",
            percent(domain.get(row.source)),
        )  # fmt: skip
        if generator:
            checks.append(
                (f"held out {row.source}: gap closed >= {HELD_OUT_TARGET:.0%}",
                 row.gap_closed >= HELD_OUT_TARGET, percent(row.gap_closed))
            )  # fmt: skip
    console.print(table)
    return checks


def curve_section(
    console: Console, points: Sequence[CurvePoint], seeds: Sequence[int], sources: Sequence[str]
) -> list[Check]:
    table = new_table(
        "active loop on a held-out generator: gap closed on the rest of its candidates "
        f"(mean over seeds {', '.join(map(str, seeds))})",
        ["held out", "weight", "labels asked", "labelled", "ranked", "gap closed",
         "seeds min-max", "without labels", "change"],
    )  # fmt: skip
    cells: dict[tuple[str, float, int], list[CurvePoint]] = {}
    for point in points:
        cells.setdefault((point.source, point.people_weight, point.asked), []).append(point)
    for (source, weight, asked), got in sorted(cells.items(), key=lambda c: (c[0][1], c[0][0])):
        gaps = [p.gap_closed for p in got]
        before = float(np.mean([p.gap_closed_without_labels for p in got]))
        table.add_row(
            source, f"{weight:g}", str(asked), f"{np.mean([p.labelled for p in got]):.0f}",
            f"{np.mean([p.ranked for p in got]):.0f}", percent(float(np.mean(gaps))),
            f"{min(gaps):.0%} to {max(gaps):.0%}", percent(before),
            f"{round(100 * (float(np.mean(gaps)) - before)):+d} pts",
        )  # fmt: skip
    console.print(table)
    checks: list[Check] = []
    for source in sources:
        got = cells.get((source, PEOPLE_WEIGHT, CURVE_AT), [])
        gap = float(np.mean([p.gap_closed for p in got])) if got else None
        checks.append(
            (f"active loop, {source} held out, {CURVE_AT} labels (weight {PEOPLE_WEIGHT:g}): "
             f"gap closed >= {CURVE_TARGET:.0%}", None if gap is None else gap >= CURVE_TARGET,
             "n/a: not measured" if gap is None else percent(gap))
        )  # fmt: skip
    return checks


def acceptance_section(console: Console, result: AcceptanceResult) -> list[Check]:
    table = new_table(
        f"acceptance at precision {PRECISION:.0%}: trained on {result.trained_on:,} "
        f"(train.jsonl), applied to {result.tested_on:,} (test.jsonl)",
        ["calibration group", "candidates", "threshold", "OOF precision (low)", "accepted",
         "valid", "precision", f">= {PRECISION:.0%} in"],
    )  # fmt: skip
    checks: list[Check] = []
    for group in result.groups:
        rule = (
            "no rule" if group.threshold is None
            else f"{percent(group.oof_precision, 1)} ({percent(group.oof_lower_bound, 1)})"
        )  # fmt: skip
        table.add_row(
            group.group, f"{group.candidates:,}",
            "-" if group.threshold is None else f"{group.threshold:.3f}", rule,
            f"{group.accepted:,}", f"{group.valid:,}", percent(group.precision, 1),
            percent(group.share_at_precision, 1),
        )  # fmt: skip
        share = group.share_at_precision
        checks.append(
            (f"accepted on test, {group.group}: >= {RESAMPLE_SHARE:.0%} of {result.resamples:,} "
             f"resamples at precision >= {PRECISION:.0%}",
             None if share is None else share >= RESAMPLE_SHARE,
             "n/a: accepts nothing" if share is None
             else f"{share:.1%} ({group.valid} of {group.accepted} valid)")
        )  # fmt: skip
    console.print(table)
    console.print(
        "threshold: the rule's, on P(valid); OOF precision (low): of the out-of-fold training "
        "candidates at or above it, with its one-sided 95% lower bound; last column: the share "
        f"of {result.resamples:,} bootstrap resamples of the accepted test candidates at "
        f"precision >= {PRECISION:.0%}\n"
        f"expected calibration error of P(valid) on test.jsonl: {result.ece:.3f}",
        highlight=False,
    )
    checks.append(
        (f"ECE of P(valid) on test.jsonl <= {ECE_TARGET}", result.ece <= ECE_TARGET,
         f"{result.ece:.3f}")
    )  # fmt: skip
    return checks


def time_section(console: Console, timed: TrainingTime, config: str) -> list[Check]:
    table = new_table(
        f"training time, {os.cpu_count()} cores (a cold start: encoder load, every text embedded)",
        ["config", "candidates", "members", "folds", "wall time"],
    )
    minutes = timed.seconds / 60
    table.add_row(
        config, f"{timed.candidates:,}", str(timed.members), str(timed.folds),
        f"{minutes:.1f} min ({timed.seconds:.0f} s)",
    )  # fmt: skip
    console.print(table)
    text = f"training on {timed.candidates:,} candidates in under {MINUTES_TARGET:g} min"
    return [(text, minutes < MINUTES_TARGET, f"{minutes:.1f} min")]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=bundled_dir("data") / "validity")
    parser.add_argument("--config", default="offline", help="offline, paper, or a YAML file")
    parser.add_argument("--json", type=Path, help="write every number to this file")
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK_FRACTION:.0%} of each source's prompts"
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 50, 100, 200])
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4], help="active-loop samples"
    )
    parser.add_argument(
        "--people-weight", type=float, action="append", default=[],
        help=f"also measure the active loop at this weight (shipped: {PEOPLE_WEIGHT:g})",
    )  # fmt: skip
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0, help="seed of --quick and the bootstrap")
    parser.add_argument("--work", type=Path, help="folder for trained ensembles (default: temp)")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the models are local: never ask the hub
    console = Console(width=150, soft_wrap=True)
    weights = list(dict.fromkeys([PEOPLE_WEIGHT, *args.people_weight]))
    train = list(read_jsonl(args.data / "train.jsonl", LabelledCandidate))
    test = list(read_jsonl(args.data / "test.jsonl", LabelledCandidate))
    if args.quick:
        train = prompt_subset(train, QUICK_FRACTION, args.seed)
        test = prompt_subset(test, QUICK_FRACTION, args.seed)
    items = [*train, *test]
    config = load_config(args.config)
    with tempfile.TemporaryDirectory() as tmp:

        def report(line: str) -> None:
            console.print(f"[dim]{line}[/]", highlight=False)

        trainings = Trainings(config, args.work or Path(tmp), report)
        timed = training_time(items, trainings)  # first: a cold start, as the CLI's
        rows, rankings = held_out(items, trainings, ACCURACY)
        generators = [row.source for row in rows if row.source != RULE]
        points = [
            point
            for weight in weights
            for source in generators
            for point in learning_curve(
                items, source, rankings[source], trainings, sizes=args.sizes, seeds=args.seeds,
                people_weight=weight, target=ACCURACY,
            )
        ]  # fmt: skip
        domain = in_domain(train, test, trainings, ACCURACY)
        accepted = acceptance_on_test(
            train, test, trainings, precision=PRECISION, resamples=args.resamples, seed=args.seed
        )
    checks = held_out_section(console, rows, domain, config.name)
    checks += curve_section(console, points, args.seeds, generators)
    checks += acceptance_section(console, accepted)
    checks += time_section(console, timed, config.name)
    console.print(f"{trainings.count} trainings in this run", highlight=False)
    code = print_checks(console, checks)
    met = sum(passed is True for _, passed, _ in checks)
    console.print(f"{met} of {len(checks)} targets met", highlight=False)
    if args.json:
        summary = {
            "config": config.model_dump(mode="json"),
            "quick": args.quick,
            "seed": args.seed,
            "seeds": args.seeds,
            "sizes": args.sizes,
            "people_weights": weights,
            "target_accuracy": ACCURACY,
            "n": len(items),
            "trainings": trainings.count,
            "training_time": timed.model_dump(),
            "held_out": [row.model_dump() for row in rows],
            "in_domain_gap_closed": domain,
            "learning_curve": [point.model_dump() for point in points],
            "acceptance": accepted.model_dump(),
            "checks": [{"target": t, "passed": p, "measured": v} for t, p, v in checks],
        }
        args.json.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return code


if __name__ == "__main__":
    sys.exit(main())
