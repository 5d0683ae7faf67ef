# ruff: noqa: E402  (imports follow the sys.path fix below)
"""Benchmark: the llm-judge member with the embedded model (SmolLM2-135M-Instruct, CPU).

Scores a seeded sample of data/validity/test.jsonl, stratified by validity (the test
set's share of invalid candidates), with a zero-shot judge and prints: the AUC of the
invalidity score, the share of replies with a parsed verdict and of scores read from
the verdict token's log-probabilities, seconds per candidate (fresh requests, after the
model is loaded), and the review effort for 90% accuracy next to random order, with
the share of the random-to-oracle gap closed (rankers/evaluation/triage.py). The "verdict text"
row scores the same replies from their parsed verdicts alone (valid 0, invalid 1, none
0.5). There is no target: it measures what a 135M model can do as a judge.

Run: python benchmarks/llm_judge.py [--n 120] [--seed 0] [--max-tokens 8] [--cache-dir DIR]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

# benchmarks/rankers.py is named like the `rankers` package: drop this folder from the
# path so that `import rankers` finds the package, not that script.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np
from rich.console import Console
from rich.table import Table

from rankers.borda import ranks_from_scores
from rankers.evaluation.triage import triage_report
from rankers.members.llm_judge import LlmJudgeConfig, LlmJudgeRanker
from testaug.core.bundled import bundled_dir
from testaug.core.jsonl import read_jsonl
from testaug.core.records import LabelledCandidate


def stratified_sample(
    items: list[LabelledCandidate], n: int, seed: int
) -> tuple[list[LabelledCandidate], LabelledCandidate]:
    """`n` candidates in the set's proportion of invalid ones, and one more to warm up on."""
    rng = random.Random(seed)
    invalid = [item for item in items if not item.valid]
    valid = [item for item in items if item.valid]
    rng.shuffle(invalid)
    rng.shuffle(valid)
    n_invalid = round(n * len(invalid) / len(items))
    sample = invalid[:n_invalid] + valid[: n - n_invalid]
    rng.shuffle(sample)
    return sample, valid[n - n_invalid]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=120)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-tokens", type=int, default=8)
    parser.add_argument("--logprobs", type=int, default=20)
    parser.add_argument("--cache-dir", type=Path, default=None, help="default: a fresh one")
    args = parser.parse_args()
    from sklearn.metrics import roc_auc_score

    items = list(read_jsonl(bundled_dir("data") / "validity" / "test.jsonl", LabelledCandidate))
    sample, warm_up = stratified_sample(items, args.n, args.seed)
    invalid = np.array([not item.valid for item in sample])
    with tempfile.TemporaryDirectory(prefix="llm-judge-") as scratch:
        config = LlmJudgeConfig(
            name="judge",
            backend="local",
            max_tokens=args.max_tokens,
            logprobs=args.logprobs,
            concurrency=1,
            cache_dir=args.cache_dir or Path(scratch),
        )
        judge = LlmJudgeRanker(config)
        judge.judge([warm_up.candidate])  # loads (and on first use converts) the model
        before = judge.stats.fresh
        started = time.perf_counter()
        verdicts = judge.judge([item.candidate for item in sample])
        seconds = time.perf_counter() - started
        fresh = judge.stats.fresh - before
    scores = {
        "judge (log-probabilities)": np.array([v.p_invalid for v in verdicts]),
        "judge (verdict text)": np.array(
            [{"valid": 0.0, "invalid": 1.0, None: 0.5}[v.verdict] for v in verdicts]
        ),
    }
    parsed = sum(v.verdict is not None for v in verdicts) / len(verdicts)
    told = sum(v.from_logprobs for v in verdicts) / len(verdicts)
    said_invalid = sum(v.verdict == "invalid" for v in verdicts)

    console = Console()
    table = Table(
        title=f"llm-judge, SmolLM2-135M-Instruct, {len(sample)} test candidates "
        f"({int(invalid.sum())} invalid), seed {args.seed}, target ACC 90%",
        title_justify="left",
    )
    for column in ("scores", "AUC", "effort", "random effort", "gap closed"):
        table.add_column(column, justify="left" if column == "scores" else "right")
    for name, values in scores.items():
        report = triage_report(invalid[np.argsort(ranks_from_scores(values), kind="stable")])
        table.add_row(
            name,
            f"{roc_auc_score(invalid, values):.3f}",
            f"{report.effort_at_target:.1%}",
            f"{report.random_effort_at_target:.1%}",
            f"{report.gap_closed:.1%}" if report.gap_closed is not None else "n/a",
        )
    console.print(table)
    console.print(
        f"verdicts parsed: {parsed:.1%} ({said_invalid} invalid); scores from log-probabilities: "
        f"{told:.1%}; {seconds / max(fresh, 1):.2f} s per candidate ({fresh} fresh requests, "
        f"max_tokens {args.max_tokens}, model loaded)",
        highlight=False,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
