# ruff: noqa: E402  (imports follow the sys.path fix below)
"""Benchmark: how the validity triage transfers, and how fast it learns a new generator.

On every labelled candidate of data/validity (train/ + test.jsonl) with the offline
ensemble; a candidate's source is its generator model, or `rule` for hard cases made by
rule. Effort is the share of a ranking people review for 90% accuracy (ACC@k, as in
testaug/triage.py); gap closed is the share of the effort gap from random order to the
perfect (oracle) order that the ranking closes, both computed on the same candidates.

  held-out source   trained on every source but S, ranking S's candidates (zero-shot:
                    the prior blended with generator-agnostic signals), next to plain
                    Borda (no adaptation) on the same candidates. Target for the
                    strong-style set and Gemma: gap closed >= 0% (goal 30%).
  labelling order   per target generator, held out: people label its candidates in
                    batches (selected: a random calibration sample of 50, then the least
                    sure, spread over descriptions; ranked: the top of the ranking;
                    random), the ensemble is retrained after each (a learner of the
                    generator's own labels stacked with the prior) and ranks the rest.
                    Target (selected order): >= 60% after 100 labels, >= 75% after 200.
  in domain         trained on train/, ranking each source's test.jsonl: >= 80% for
                    the target generators.
  own acceptance    per target generator: 100 of its candidates labelled at random, the
                    rule read from them alone; of the rest, what it accepts must be at
                    precision >= 90% in >= 95% of bootstrap resamples, and not nothing.
  acceptance        trained on train/; on test.jsonl, per calibration group with its
                    own random labels, what the rule at precision 0.9 accepts (>= 95% of
                    resamples at >= 0.9); ECE of P(valid) on test.jsonl <= 0.05.
  training time     trained on all candidates, first in the process (encoder load and
                    every text embedded), and a retraining. Target: under 5 min each.

Run: python benchmarks/triage.py [--json PATH] [--quick] [--seeds 0 1]
Exits 1 when a target is missed. An ensemble whose training set recurs is trained once.
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

from rankers.adaptation.transfer import (
    AcceptanceResult,
    HeldOut,
    Trainings,
    TrainingTime,
    acceptance_on_test,
    held_out,
    in_domain,
    prompt_subset,
    training_time,
)
from rankers.ensemble import load_config
from rankers.evaluation.labelling_order import (
    ORDERS,
    LoopAcceptance,
    LoopPoint,
    acceptance_from_labels,
    labelling_loop,
)
from testaug.core.bundled import bundled_dir
from testaug.core.jsonl import read_jsonl, read_jsonl_parts
from testaug.core.records import LabelledCandidate
from testaug.testing.benchmark import print_checks

ACCURACY = 0.9
TARGETS = ("strong-style (hand-written)", "gemma-3-270m")
ZERO_SHOT_TARGET, ZERO_SHOT_GOAL = 0.0, 0.3
LOOP_TARGETS = {100: 0.6, 200: 0.75}
IN_DOMAIN_TARGET = 0.8
OWN_LABELS = 100
PRECISION, RESAMPLE_SHARE = 0.9, 0.95
ECE_TARGET = 0.05
MINUTES_TARGET = 5.0
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
    console: Console,
    rows: Sequence[HeldOut],
    plain: dict[str, float],
    domain: dict[str, float],
    config: str,
    targets: Sequence[str],
) -> list[Check]:
    table = new_table(
        f"held-out source: effort for {ACCURACY:.0%} accuracy, {config} ensemble, zero-shot "
        "(in domain: trained on train/, ranking the source's test.jsonl)",
        ["held out", "trained on", "candidates", "invalid", "effort", "random", "oracle",
         "gap closed", "plain Borda", "target", "in domain", "target"],
    )  # fmt: skip
    checks: list[Check] = []
    for row in rows:
        target = row.source in targets
        table.add_row(
            row.source, f"{row.trained_on:,}", f"{row.n:,}", f"{row.n_invalid:,}",
            percent(row.effort, 1), percent(row.random_effort, 1), percent(row.oracle_effort, 1),
            percent(row.gap_closed), percent(plain.get(row.source)),
            f">= {ZERO_SHOT_TARGET:.0%} (goal {ZERO_SHOT_GOAL:.0%})" if target else "reported",
            percent(domain.get(row.source)), f">= {IN_DOMAIN_TARGET:.0%}" if target else "",
        )  # fmt: skip
        if target:
            checks.append(
                (f"zero-shot, {row.source} held out: gap closed >= {ZERO_SHOT_TARGET:.0%}",
                 row.gap_closed >= ZERO_SHOT_TARGET, percent(row.gap_closed))
            )  # fmt: skip
            checks.append(
                (f"zero-shot, {row.source} held out: goal {ZERO_SHOT_GOAL:.0%}",
                 row.gap_closed >= ZERO_SHOT_GOAL, percent(row.gap_closed))
            )  # fmt: skip
            got = domain.get(row.source)
            checks.append(
                (f"in domain, {row.source}: gap closed >= {IN_DOMAIN_TARGET:.0%}",
                 None if got is None else got >= IN_DOMAIN_TARGET, percent(got))
            )  # fmt: skip
    console.print(table)
    console.print(
        "plain Borda: the same members merged without per-generator stacking or the "
        "zero-shot blend (adaptation off)", highlight=False,
    )  # fmt: skip
    return checks


def loop_section(
    console: Console, points: Sequence[LoopPoint], seeds: Sequence[int], targets: Sequence[str]
) -> list[Check]:
    table = new_table(
        "labelling a held-out generator: gap closed on its candidates still unlabelled "
        f"(mean over seeds {', '.join(map(str, seeds))}; retrained after each batch)",
        ["held out", "order", "labels", "ranked", "gap closed", "seeds min-max"],
    )
    cells: dict[tuple[str, str, int], list[LoopPoint]] = {}
    for point in points:
        cells.setdefault((point.source, point.order, point.labels), []).append(point)
    for (source, order, labels), got in sorted(cells.items()):
        gaps = [p.gap_closed for p in got]
        table.add_row(
            source, order, str(labels), f"{np.mean([p.ranked for p in got]):.0f}",
            percent(float(np.mean(gaps))), f"{min(gaps):.0%} to {max(gaps):.0%}",
        )  # fmt: skip
    console.print(table)
    checks: list[Check] = []
    for source in targets:
        for labels, target in LOOP_TARGETS.items():
            got = cells.get((source, "selected", labels), [])
            gap = float(np.mean([p.gap_closed for p in got])) if got else None
            checks.append(
                (f"{source} held out, {labels} labels (selected order): gap closed >= "
                 f"{target:.0%}", None if gap is None else gap >= target,
                 "n/a: not measured" if gap is None else percent(gap))
            )  # fmt: skip
    return checks


def own_acceptance_section(console: Console, results: Sequence[LoopAcceptance]) -> list[Check]:
    table = new_table(
        f"acceptance at precision {PRECISION:.0%} from a held-out generator's own random labels",
        ["held out", "seed", "random labels", "candidates", "threshold", "accepted", "valid",
         "precision", f">= {PRECISION:.0%} in"],
    )  # fmt: skip
    checks: list[Check] = []
    for r in results:
        table.add_row(
            r.source, str(r.seed), str(r.calibration_labels), f"{r.candidates:,}",
            "-" if r.threshold is None else f"{r.threshold:.3f}", f"{r.accepted:,}",
            f"{r.valid:,}", percent(r.precision, 1), percent(r.share_at_precision, 1),
        )  # fmt: skip
        share = r.share_at_precision
        checks.append(
            (f"{r.source}, {r.calibration_labels} random labels (seed {r.seed}): accepts "
             f"something, >= {RESAMPLE_SHARE:.0%} of resamples at >= {PRECISION:.0%}",
             None if share is None else share >= RESAMPLE_SHARE,
             "accepts nothing" if share is None else f"{share:.1%} ({r.valid} of {r.accepted})")
        )  # fmt: skip
    console.print(table)
    return checks


def acceptance_section(console: Console, result: AcceptanceResult) -> list[Check]:
    table = new_table(
        f"acceptance at precision {PRECISION:.0%}: trained on {result.trained_on:,} "
        f"(train/), applied to {result.tested_on:,} (test.jsonl)",
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


def time_section(
    console: Console, timed: Sequence[tuple[str, TrainingTime]], config: str
) -> list[Check]:
    table = new_table(
        f"training time, {os.cpu_count()} cores", ["run", "config", "candidates", "wall time"]
    )
    checks: list[Check] = []
    for label, one in timed:
        minutes = one.seconds / 60
        table.add_row(
            label, config, f"{one.candidates:,}", f"{minutes:.1f} min ({one.seconds:.0f} s)"
        )
        text = f"{label} on {one.candidates:,} candidates in under {MINUTES_TARGET:g} min"
        checks.append((text, minutes < MINUTES_TARGET, f"{minutes:.1f} min"))
    console.print(table)
    return checks


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=bundled_dir("data") / "validity")
    parser.add_argument("--config", default="offline", help="offline, paper, or a YAML file")
    parser.add_argument("--json", type=Path, help="write every number to this file")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK_FRACTION * 100:.0f}%% of each source's prompts",
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1], help="loop samples")
    parser.add_argument("--orders", nargs="+", default=list(ORDERS), choices=ORDERS)
    parser.add_argument(
        "--targets", nargs="+", default=list(TARGETS), help="held-out generators with targets"
    )
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0, help="seed of --quick and the bootstrap")
    parser.add_argument("--work", type=Path, help="folder for trained ensembles (default: temp)")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the models are local: never ask the hub
    console = Console(width=150, soft_wrap=True)
    train = list(read_jsonl_parts(args.data / "train", LabelledCandidate))
    test = list(read_jsonl(args.data / "test.jsonl", LabelledCandidate))
    if args.quick:
        train = prompt_subset(train, QUICK_FRACTION, args.seed)
        test = prompt_subset(test, QUICK_FRACTION, args.seed)
    items = [*train, *test]
    config = load_config(args.config)
    plain_config = config.model_copy(
        update={"adaptation": config.adaptation.model_copy(update={"enabled": False})}
    )
    with tempfile.TemporaryDirectory() as tmp:

        def report(line: str) -> None:
            console.print(f"[dim]{line}[/]", highlight=False)

        work = args.work or Path(tmp)
        trainings = Trainings(config, work, report)
        timed = [("training (cold start)", training_time(items, trainings))]
        timed.append(("retraining, encoder loaded", training_time(items, trainings)))
        rows, rankings = held_out(items, trainings, ACCURACY)
        plain_rows, _ = held_out(
            items, Trainings(plain_config, work / "plain", report), ACCURACY, sources=args.targets
        )
        plain = {row.source: row.gap_closed for row in plain_rows}
        targets = [source for source in args.targets if source in rankings]
        points = [
            point
            for source in targets
            for order in args.orders
            for seed in args.seeds
            for point in labelling_loop(
                items, source, rankings[source], trainings, order=order, sizes=args.sizes,
                seed=seed, target=ACCURACY,
            )[0]
        ]  # fmt: skip
        own = [
            acceptance_from_labels(
                items, source, rankings[source], trainings, labels=OWN_LABELS, seed=args.seed,
                precision=PRECISION, resamples=args.resamples,
            )
            for source in targets
        ]  # fmt: skip
        domain = in_domain(train, test, trainings, ACCURACY)
        accepted = acceptance_on_test(
            train, test, trainings, precision=PRECISION, resamples=args.resamples, seed=args.seed
        )
    checks = held_out_section(console, rows, plain, domain, config.name, args.targets)
    checks += loop_section(console, points, args.seeds, args.targets)
    checks += own_acceptance_section(console, own)
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
            "target_accuracy": ACCURACY,
            "n": len(items),
            "trainings": trainings.count,
            "training_time": [{"run": label, **one.model_dump()} for label, one in timed],
            "held_out": [row.model_dump() for row in rows],
            "plain_borda_gap_closed": plain,
            "in_domain_gap_closed": domain,
            "labelling_loop": [point.model_dump() for point in points],
            "own_acceptance": [result.model_dump() for result in own],
            "acceptance": accepted.model_dump(),
            "checks": [{"target": t, "passed": p, "measured": v} for t, p, v in checks],
        }
        args.json.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return code


if __name__ == "__main__":
    sys.exit(main())
