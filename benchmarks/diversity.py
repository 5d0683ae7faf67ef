"""Benchmark: Self-BLEU and unique dependency paths on cases of the shipped sentiment suite.

Prints a table:
  Self-BLEU (sacrebleu)  the plain loop over sacrebleu.sentence_bleu on --reference-n
                         cases (quadratic: the reference), against testaug's exact
                         computation on the same cases and on --n cases, and a sampled
                         estimate on --n cases with its 95% interval
  Self-BLEU (texygen)    the plain NLTK loop on --texygen-n cases against testaug's
  Self-BLEU at scale     testaug exact at each of --scale-sizes texts (distinct texts and
                         text pairs of the three shipped suites, about 690k, repeated
                         beyond that), with the RSS high-water mark of this process
  dependency paths       sentences per second, one nlp() call per sentence (the
                         reference, on --one-by-one-n sentences) against batched nlp.pipe
                         in one process and in --n-process forked processes (default:
                         the CPUs this process may use), each with its CPU seconds

Targets: the same values (to 1e-6 on sacrebleu's 0-100 scale), at least 50x faster
than the loop at 1,000 cases, --n cases in under a minute, batched parsing giving
the same paths as one call per sentence, several processes giving the paths of one
process at >= 1,500 sentences/s, Self-BLEU of the largest --scale-sizes (1M) in under 60 s. The load average is printed with the table: on a
busy machine the wall-clock rates fall, the CPU seconds per sentence much less.

Run: python benchmarks/diversity.py [--n 5000] [--reference-n 1000] [--n-process 2]
     [--scale-sizes 100000,300000,1000000] ("" leaves the scale rows out)
Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from testaug.core.bundled import resolve_suite
from testaug.diversity.dependency_paths import available_cpus, load_parser, paths_per_text
from testaug.diversity.self_bleu import sampled_self_bleu, self_bleu, self_bleu_reference
from testaug.suites.cases import expand_suite, template_case_counts
from testaug.suites.load import load_suite
from testaug.testing.benchmark import print_checks


def suite_texts(n: int, seed: int = 0) -> list[str]:
    """n distinct case texts of the shipped sentiment suite, a seeded sample across templates."""
    suite = load_suite(resolve_suite("sentiment"))
    per_template = -(-n // len(template_case_counts(suite))) + 5
    texts = [case.text for case in expand_suite(suite, per_template=per_template, seed=seed)]
    random.Random(seed).shuffle(texts)
    if len(texts) < n:
        raise SystemExit(f"the suite gives only {len(texts)} cases")
    return texts[:n]


def many_texts(n: int, seed: int = 0) -> list[str]:
    """n texts: the distinct texts and text pairs of the shipped suites, shuffled, repeated
    as needed (about 690,000 are distinct)."""
    seen: dict[str, None] = {}
    for name, per_template in (("sentiment", 8000), ("nli", 3000), ("paraphrase", 3000)):
        for case in expand_suite(load_suite(resolve_suite(name)), per_template=per_template):
            seen[case.text] = None
            if case.text_pair:
                seen[case.text_pair] = None
        if len(seen) >= n:
            break
    texts = list(seen)
    random.Random(seed).shuffle(texts)
    return (texts * -(-n // len(texts)))[:n]


def timed(function: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds taken and the result, with sacrebleu's tokenizer caches emptied first."""
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
    from sacrebleu.tokenizers.tokenizer_re import TokenizerRegexp

    Tokenizer13a.__call__.cache_clear()
    TokenizerRegexp.__call__.cache_clear()
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--reference-n", type=int, default=1000)
    parser.add_argument("--texygen-n", type=int, default=300)
    parser.add_argument("--sample", type=int, default=500)
    parser.add_argument("--one-by-one-n", type=int, default=500)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--n-process", type=int, default=available_cpus())
    parser.add_argument("--parse-target", type=float, default=1500.0)
    parser.add_argument("--scale-sizes", default="100000,300000,1000000")
    args = parser.parse_args()

    texts = suite_texts(args.n)
    small, tiny = texts[: args.reference_n], texts[: args.texygen_n]
    rates: dict[int, float] = {}
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    table = Table(
        title=f"diversity: cases of the shipped sentiment suite (n = {args.n:,}); "
        f"{available_cpus()} CPUs, load average {load}"
    )
    for column in ("measure", "method", "cases", "seconds", "value", "vs reference"):
        table.add_column(column, justify="left" if column in ("measure", "method") else "right")

    fast_small, value_small = timed(lambda: self_bleu(small))
    fast_big, value_big = timed(lambda: self_bleu(texts))
    sampled_s, estimate = timed(lambda: sampled_self_bleu(texts, sample=args.sample, seed=0))
    loop_s, loop_value = timed(lambda: self_bleu_reference(small))
    speedup = loop_s / fast_small
    rows = [
        ("Self-BLEU-4 sacrebleu", "plain loop (reference)", len(small), loop_s, loop_value, ""),
        ("", "testaug exact", len(small), fast_small, value_small, f"{speedup:,.0f}x"),
        ("", "testaug exact", len(texts), fast_big, value_big, ""),
    ]
    interval = f"{estimate.mean:.4f} [{estimate.ci_low:.4f}, {estimate.ci_high:.4f}]"
    rows.append(("", f"sampled ({estimate.n_sampled})", len(texts), sampled_s, interval, ""))

    tex_loop_s, tex_loop = timed(lambda: self_bleu_reference(tiny, variant="texygen"))
    tex_fast_s, tex_fast = timed(lambda: self_bleu(tiny, variant="texygen"))
    tex_big_s, tex_big = timed(lambda: self_bleu(texts, variant="texygen"))
    rows += [
        ("Self-BLEU-4 texygen", "plain NLTK loop (reference)", len(tiny), tex_loop_s, tex_loop, ""),
        ("", "testaug exact", len(tiny), tex_fast_s, tex_fast, f"{tex_loop_s / tex_fast_s:,.0f}x"),
        ("", "testaug exact", len(texts), tex_big_s, tex_big, ""),
    ]

    scale_sizes = [int(size) for size in args.scale_sizes.split(",") if size]
    scale_seconds: dict[int, float] = {}
    if scale_sizes:
        pool = many_texts(max(scale_sizes))
        for size in sorted(scale_sizes):
            seconds, value = timed(lambda size=size: self_bleu(pool[:size]))
            scale_seconds[size] = seconds
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            rows.append(
                ("Self-BLEU-4 at scale", f"testaug exact; peak RSS {peak:,.0f} MiB", size, seconds,
                 value, f"{1000 * seconds / size:.3f} s per 1k")
            )  # fmt: skip
        del pool

    nlp = load_parser()
    paths_per_text(texts[:50], nlp, n_process=1)  # warm up
    few = texts[: args.one_by_one_n]
    one_s, one = timed(lambda: [paths_per_text([t], nlp, batch_size=1)[0] for t in few])
    rate_one = len(few) / one_s
    method = "one nlp() per sentence"
    rows.append(("dependency paths", method, len(few), one_s, f"{rate_one:,.0f} sent/s", ""))
    parsed: dict[int, list[frozenset[tuple[str, ...]]]] = {}
    for n_process in dict.fromkeys((1, args.n_process)):
        cpu_before = cpu_seconds()
        seconds, parsed[n_process] = timed(
            lambda n_process=n_process: paths_per_text(
                texts, nlp, batch_size=args.batch_size, n_process=n_process
            )
        )
        cpu = cpu_seconds() - cpu_before
        n_paths = len(set().union(*parsed[n_process]))
        rates[n_process] = len(texts) / seconds
        rows.append(
            (
                "",
                f"nlp.pipe, batch {args.batch_size}, {n_process} process(es)",
                len(texts),
                seconds,
                f"{rates[n_process]:,.0f} sent/s; {cpu:.1f} CPU s "
                f"({len(texts) * n_process / cpu:,.0f}/s on free cores); {n_paths} paths",
                f"{rates[n_process] / rate_one:.1f}x",
            )
        )
    for measure, method, n, seconds, value, versus in rows:
        shown = f"{value:.6f}" if isinstance(value, float) else str(value)
        table.add_row(measure, method, f"{n:,}", f"{seconds:.3f}", shown, versus)
    console = Console()
    console.print(table)

    checks = [
        (
            "exact Self-BLEU equals the sacrebleu loop (0-100 scale)",
            abs(value_small - loop_value) * 100 <= 1e-6,
            f"diff {abs(value_small - loop_value) * 100:.2e}",
        ),
        (
            "texygen Self-BLEU equals the NLTK loop",
            abs(tex_fast - tex_loop) <= 1e-6,
            f"diff {abs(tex_fast - tex_loop):.2e}",
        ),
        (
            f"at least 50x faster than the loop at {len(small):,} cases",
            speedup >= 50,
            f"{speedup:,.0f}x",
        ),
        (f"{len(texts):,} cases in under a minute", fast_big < 60, f"{fast_big:.2f} s"),
        *(
            [
                (
                    f"Self-BLEU of {max(scale_sizes):,} texts in under a minute",
                    scale_seconds[max(scale_sizes)] < 60,
                    f"{scale_seconds[max(scale_sizes)]:.1f} s",
                )
            ]
            if scale_sizes
            else []
        ),
        (
            "sampled interval contains the exact value",
            estimate.ci_low <= value_big <= estimate.ci_high,
            interval,
        ),
        (
            "batched parsing gives the same paths",
            parsed[1][: len(few)] == one,
            f"{len(few)} sentences",
        ),
        (
            f"{args.n_process} processes give the paths of one process",
            parsed[args.n_process] == parsed[1],
            f"{len(texts):,} sentences",
        ),
        (
            f"{args.n_process} processes parse at least {args.parse_target:,.0f} sentences/s",
            rates[args.n_process] >= args.parse_target,
            f"{rates[args.n_process]:,.0f}/s against {rates[1]:,.0f}/s in one process "
            f"({rates[args.n_process] / rates[1]:.2f}x), load average {load}",
        ),
    ]
    return print_checks(console, checks)


if __name__ == "__main__":
    sys.exit(main())
