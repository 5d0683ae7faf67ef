# ruff: noqa: E402  (imports follow the sys.path fix below)
"""Benchmark: the offline ranker members on CPU.

Prints a table of training time per epoch on 1,000 labelled candidates (the
shipped training split, cycled up to 1,000) and scoring throughput in
candidates per second, batched (64) against one at a time (the reference).

Run: python benchmarks/rankers.py [--labelled data/validity/train] [--n 1000]
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path

# This file is named like the `rankers` package: drop its folder from the path so
# that `import rankers` finds the package, not this script.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from rich.console import Console
from rich.table import Table

from rankers.ensemble import load_config
from rankers.members.cross_encoder import CrossEncoderConfig, train_cross_encoder
from rankers.members.lexical import LexicalConfig, train_lexical
from testaug.core.bundled import bundled_dir
from testaug.core.jsonl import read_jsonl_parts
from testaug.core.records import LabelledCandidate


def per_second(score, candidates, batch_size: int) -> float:
    started = time.perf_counter()
    if batch_size == 1:
        for candidate in candidates:
            score([candidate], batch_size=1)
    else:
        score(candidates, batch_size=batch_size)
    return len(candidates) / (time.perf_counter() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labelled", type=Path, default=bundled_dir("data") / "validity" / "train")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=1, help="epochs timed per member")
    parser.add_argument("--score-n", type=int, default=256, help="candidates scored")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the models are local: never ask the hub

    base = list(read_jsonl_parts(args.labelled, LabelledCandidate))
    labelled = list(itertools.islice(itertools.cycle(base), args.n))
    candidates = [item.candidate for item in labelled[: args.score_n]]
    table = Table(title=f"offline rankers on CPU: {args.n} labelled candidates")
    for column in ("member", "train s/epoch", "batched cand/s", "one-at-a-time cand/s", "speed-up"):
        table.add_column(column, justify="left" if column == "member" else "right")
    with tempfile.TemporaryDirectory() as tmp:
        for member in load_config("offline").members:
            started = time.perf_counter()
            if isinstance(member, LexicalConfig):
                ranker = train_lexical(labelled, member)
                epoch = time.perf_counter() - started  # one fit stands for an epoch
            else:
                timed = CrossEncoderConfig(**{**member.model_dump(), "epochs": args.epochs})
                ranker = train_cross_encoder(labelled, timed, Path(tmp) / member.name)
                epoch = (time.perf_counter() - started) / args.epochs
            batched = per_second(ranker.score, candidates, 64)
            single = per_second(ranker.score, candidates, 1)
            table.add_row(
                member.name,
                f"{epoch:.1f}",
                f"{batched:,.0f}",
                f"{single:,.0f}",
                f"{batched / single:.1f}x",
            )
    Console().print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
