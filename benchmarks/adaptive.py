# ruff: noqa: E402  (imports follow the sys.path fix below)
"""Benchmark: failure-guided suggestions against random seed prompts (GitHub issue 18).

The same generator, budget and model under test for both arms; only the tests that go into
the prompts differ: AdaTest's greedy selection on failure scores (`adaptive`, AT-7) or
TestAug's uniformly random seed tests of the topic (`random`). Measured: failures found per
100 valid suggestions (valid suggestions the model fails / valid suggestions x 100), per
seed, then the mean and the spread (min to max) over seeds.

  tree      the bundled sentiment suite as a test tree, one topic per description
            (/capability/description). Each topic starts from 4 tests the model under test
            passes (AdaTest's user study, AT-E1), drawn from a seeded sample of its cases,
            and runs as a tree of its own (the selection gives tests outside a focus topic
            with 3 or more tests no weight, so this only saves time).
  rounds    R rounds; in each, every topic gets one round of K suggestions (10 prompts,
            floor(K/10) completions each, `testaug.adaptive.suggestions`). Every valid new
            suggestion joins its topic, scored (a user who accepts every valid in-topic
            test), so the next round's prompts can climb on what failed.
  simulated the simulated LM (`testaug.testing.simulated_lm`: valid cases one step from the
            prompt's last items, blind to scores) served by the scripted OpenAI-compatible
            server on 127.0.0.1, through the OpenAI backend: the real code path. Valid: in
            the topic's template product with the topic's label.
            Target: adaptive >= 2x random failures per 100 valid, for each model.
  embedded  the embedded LM (SmolLM2-135M, `testaug generate`'s default backend), which
            writes mostly invalid text. Valid: P(valid) >= 0.5 from the offline ranker
            ensemble (the count in the template product is shown too). Reported, no target:
            it is slow on a CPU, so it runs on few topics and its counts are small.

Models under test: `vader` and `spacy:eng_spacysentiment` (the sentiment defaults).

Run: python benchmarks/adaptive.py [--quick] [--json PATH] [--seeds 0 1 2 ...] [--lm simulated embedded]
Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

# benchmarks/rankers.py is named like the `rankers` package: drop this folder from the
# path so that `import rankers` finds the package, not that script.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np
from rich.console import Console
from rich.table import Table

from testaug.adaptive.from_suite import case_topic, tree_from_suite
from testaug.adaptive.scores import score_tests
from testaug.adaptive.suggestion import Suggestion, SuggestionVerdict, accepted_tests
from testaug.adaptive.suggestions import Embedder, SuggestionRoundConfig, suggestion_round
from testaug.adaptive.tree import TestTree
from testaug.core.bundled import resolve_suite
from testaug.core.records import Candidate, Suite
from testaug.evaluation.models import ModelUnderTest, load_model
from testaug.generation.backends import Backend
from testaug.generation.cache import ResponseCache
from testaug.suites.load import load_suite
from testaug.testing.benchmark import print_checks
from testaug.testing.simulated_lm import SimulatedLM, TemplateProducts

MODELS = ("vader", "spacy:eng_spacysentiment")
SELECTIONS = ("adaptive", "random")
LMS = ("simulated", "embedded")
TARGET_RATIO = 2.0
START_TESTS = 4  # passing tests each topic starts from (AT-E1)
START_POOL = 12  # cases per template sampled to find them
P_VALID = 0.5  # the embedded arm: the ensemble's P(valid) a valid suggestion reaches

Check = tuple[str, bool | None, str]
Judge = Callable[[Sequence[Suggestion], str], list[bool]]


@dataclass(frozen=True)
class Plan:
    """How much one LM arm runs: topics (None: all), rounds, K, seeds, token limit."""

    topics: int | None
    rounds: int
    suggestions: int
    seeds: tuple[int, ...]
    models: tuple[str, ...] = MODELS
    max_tokens: int = 100


@dataclass
class ArmResult:
    """One (LM, model, selection, seed) run: suggestions, valid ones, valid failing ones."""

    lm: str
    model: str
    selection: str
    seed: int
    topics: int
    suggested: int = 0
    valid: int = 0
    failing: int = 0
    in_product: int = 0  # the embedded arm: suggestions in the topic's template product
    seconds: float = 0.0
    per_round: list[dict[str, int]] = field(default_factory=list)

    @property
    def per_100(self) -> float | None:
        """Failures per 100 valid suggestions (None without a valid one)."""
        return None if self.valid == 0 else 100.0 * self.failing / self.valid


def starting_trees(
    suite: Suite, model: ModelUnderTest, seed: int, topics: int | None
) -> dict[str, tuple[TestTree, str]]:
    """Per topic: a tree of `START_TESTS` tests the model passes, drawn at random (seeded) from
    the suite's tree of a sample of its cases, and the topic's description id. A topic with
    fewer passing tests in the sample is left out (there is nothing passing to start from)."""
    pool = tree_from_suite(suite, per_template=START_POOL, seed=seed)
    described = {case_topic(d.capability, d.text): d.id for d in suite.descriptions()}
    chosen = list(described)
    if topics is not None:  # an even spread over the suite's descriptions, the same for all
        step = max(1, len(chosen) // topics)
        chosen = chosen[::step][:topics]
    out: dict[str, tuple[TestTree, str]] = {}
    for topic in chosen:
        tests = score_tests(pool.tests_in(topic), [model])
        passing = [t for t in tests if t.scores[model.name] <= 0]
        random.Random(f"{seed}:{topic}").shuffle(passing)
        if len(passing) >= START_TESTS:
            out[topic] = (TestTree(rows=tuple(passing[:START_TESTS])), described[topic])
    return out


def round_seed(seed: int, round_index: int, topic: str) -> int:
    return zlib.crc32(f"{seed}:{round_index}:{topic}".encode())


def run_arm(
    lm: str,
    model: ModelUnderTest,
    selection: str,
    seed: int,
    trees: dict[str, tuple[TestTree, str]],
    judge: Judge,
    backend: Backend,
    cache: ResponseCache,
    embed: Embedder,
    plan: Plan,
    *,
    in_product: Judge | None = None,
) -> ArmResult:
    """R rounds of K suggestions on every topic; valid new suggestions join their topic."""
    result = ArmResult(lm, model.name, selection, seed, topics=len(trees))
    started = time.perf_counter()
    current = {topic: tree for topic, (tree, _) in trees.items()}
    for round_index in range(plan.rounds):
        counts = {"suggested": 0, "valid": 0, "failing": 0}
        for topic in trees:
            settings = SuggestionRoundConfig(
                suggestions=plan.suggestions,
                selection=selection,  # type: ignore[arg-type]
                max_tokens=plan.max_tokens,
                seed=round_seed(seed, round_index, topic),
            )
            found = suggestion_round(
                current[topic], topic, model, backend, cache, embed,
                settings=settings, round=round_index,
            ).suggestions  # fmt: skip
            valid = judge(found, topic)
            kept = [s for s, ok in zip(found, valid, strict=True) if ok]
            counts["suggested"] += len(found)
            counts["valid"] += len(kept)
            counts["failing"] += sum(s.failure_score > 0 for s in kept)
            if in_product is not None:
                result.in_product += sum(in_product(found, topic))
            verdicts = [
                SuggestionVerdict(suggestion_id=s.id, decision="accept", annotator="benchmark")
                for s in kept
            ]
            current[topic] = current[topic].with_rows(accepted_tests(kept, verdicts))
        result.per_round.append(counts)
        result.suggested += counts["suggested"]
        result.valid += counts["valid"]
        result.failing += counts["failing"]
    result.seconds = time.perf_counter() - started
    return result


def product_judge(products: TemplateProducts, descriptions: dict[str, str]) -> Judge:
    """Valid: in the topic's template product, with a label its template expects."""

    def judge(found: Sequence[Suggestion], topic: str) -> list[bool]:
        return [
            all(
                products.contains(s.test.input, descriptions[topic], label=label)
                for label in s.test.expected_labels
            )
            and s.test.comparator == "should be"
            for s in found
        ]

    return judge


def minilm_embedder() -> Embedder:
    """MiniLM sentence embeddings (the ranker stage's encoder, cached per text)."""
    from rankers.members.embedding import embeddings

    def embed(texts: Sequence[str]) -> np.ndarray:
        found = embeddings("minilm", texts)
        return np.stack([found[text] for text in texts]) if texts else np.zeros((0, 384))

    return embed


def arms(
    lm: str,
    suite: Suite,
    plan: Plan,
    backend: Backend,
    cache: ResponseCache,
    embed: Embedder,
    judge_for: Callable[[dict[str, str]], tuple[Judge, Judge | None]],
    report: Callable[[str], None] = lambda line: None,
) -> list[ArmResult]:
    """Both selections, on every model and seed of the plan, with one LM."""
    results = []
    for spec in plan.models:
        model = load_model(spec, task_labels=suite.labels)
        for seed in plan.seeds:
            trees = starting_trees(suite, model, seed, plan.topics)
            descriptions = {topic: description for topic, (_, description) in trees.items()}
            judge, in_product = judge_for(descriptions)
            for selection in SELECTIONS:
                result = run_arm(
                    lm, model, selection, seed, trees, judge, backend, cache, embed, plan,
                    in_product=in_product,
                )  # fmt: skip
                report(
                    f"{lm} {spec} seed {seed} {selection}: {result.failing}/{result.valid} "
                    f"valid failing of {result.suggested} ({result.seconds:.0f} s)"
                )
                results.append(result)
    return results


def simulated_arms(
    suite: Suite,
    plan: Plan,
    embed: Embedder,
    cache_path: Path,
    report: Callable[[str], None] = lambda line: None,
) -> list[ArmResult]:
    """Both selections with the simulated LM behind the scripted server on 127.0.0.1; the LM's
    seed is the run's, so both arms of a seed see the same LM."""
    from testaug.generation.backends.openai_compatible import OpenAIBackend
    from testaug.testing.openai_server import ScriptedOpenAIServer

    products = TemplateProducts(suite)
    results: list[ArmResult] = []
    for seed in plan.seeds:
        lm = SimulatedLM(suite, seed=seed)
        with ScriptedOpenAIServer(lm) as server:
            backend = OpenAIBackend(model="simulated", api_key="bench", base_url=server.base_url)
            cache = ResponseCache(cache_path.with_name(f"{cache_path.stem}-{seed}.sqlite"))
            try:
                results += arms(
                    "simulated", suite, Plan(**{**asdict(plan), "seeds": (seed,)}), backend,
                    cache, embed, lambda d: (product_judge(products, d), None), report,
                )  # fmt: skip
            finally:
                cache.close()
    return results


def offline_ensemble():  # -> rankers.ensemble.Ensemble
    """The offline ranker ensemble, trained on the shipped labelled candidates at first use."""
    from rankers.ensemble import Ensemble
    from testaug.core.settings import Settings
    from testaug.steps.rankers import PrepareRankersConfig, prepare_rankers

    config = PrepareRankersConfig(rankers="offline", cache_root=Settings().cache_dir / "rankers")
    manifest = prepare_rankers(config)
    return Ensemble.load(manifest.path.parent)


def ensemble_judge(suite: Suite, descriptions: dict[str, str], ensemble) -> Judge:
    """Valid: the ensemble's P(valid) >= `P_VALID`, each suggestion judged as a candidate of
    its topic's suite description (as `testaug rank` judges generated cases)."""
    described = {d.id: d for d in suite.descriptions()}

    def judge(found: Sequence[Suggestion], topic: str) -> list[bool]:
        if not found:
            return []
        description = described[descriptions[topic]]
        candidates = [
            Candidate(
                task=suite.task, capability=description.capability,
                description_id=description.id, description=description.text,
                text=s.test.input, label=description.label, prompt_id=f"adapt-{s.prompt_index}",
                seed_case_ids=(), backend="local", model="SmolLM2-135M-Instruct",
            )
            for s in found
        ]  # fmt: skip
        ranked = {r.candidate.id: r.p_valid for r in ensemble.rank(candidates)}
        return [(ranked.get(c.id) or 0.0) >= P_VALID for c in candidates]

    return judge


def embedded_arms(
    suite: Suite,
    plan: Plan,
    embed: Embedder,
    cache_path: Path,
    report: Callable[[str], None] = lambda line: None,
) -> list[ArmResult]:
    """Both selections with the embedded LM (SmolLM2 in process)."""
    from testaug.core.settings import Settings
    from testaug.generation.backends import create_backend

    backend = create_backend("local", cache_dir=Settings().cache_dir)
    products = TemplateProducts(suite)
    ensemble = offline_ensemble()
    cache = ResponseCache(cache_path)
    try:
        return arms(
            "embedded", suite, plan, backend, cache, embed,
            lambda d: (ensemble_judge(suite, d, ensemble), product_judge(products, d)), report,
        )  # fmt: skip
    finally:
        cache.close()


def summary_rows(results: Sequence[ArmResult]) -> list[dict[str, object]]:
    """Per (LM, model, selection): totals, and failures per 100 valid over seeds."""
    groups: dict[tuple[str, str, str], list[ArmResult]] = {}
    for result in results:
        groups.setdefault((result.lm, result.model, result.selection), []).append(result)
    rows = []
    for (lm, model, selection), got in groups.items():
        rates = [r.per_100 for r in got if r.per_100 is not None]
        rows.append({
            "lm": lm, "model": model, "selection": selection, "seeds": len(got),
            "topics": statistics.mean(r.topics for r in got),
            "suggested": sum(r.suggested for r in got), "valid": sum(r.valid for r in got),
            "failing": sum(r.failing for r in got), "in_product": sum(r.in_product for r in got),
            "per_100_mean": statistics.mean(rates) if rates else None,
            "per_100_min": min(rates) if rates else None,
            "per_100_max": max(rates) if rates else None,
            "per_100_sd": statistics.stdev(rates) if len(rates) > 1 else None,
            "per_100_by_round": by_round(got),
        })  # fmt: skip
    return rows


def by_round(results: Sequence[ArmResult]) -> list[float | None]:
    """Failures per 100 valid suggestions in each round, over the seeds' runs together."""
    rounds = max((len(r.per_round) for r in results), default=0)
    out: list[float | None] = []
    for index in range(rounds):
        counts = [r.per_round[index] for r in results if index < len(r.per_round)]
        valid = sum(c["valid"] for c in counts)
        out.append(100.0 * sum(c["failing"] for c in counts) / valid if valid else None)
    return out


def ratios(rows: Sequence[dict[str, object]]) -> dict[tuple[str, str], float | None]:
    """Adaptive over random mean failures per 100 valid, per (LM, model)."""
    means = {(r["lm"], r["model"], r["selection"]): r["per_100_mean"] for r in rows}
    out: dict[tuple[str, str], float | None] = {}
    for lm, model, _ in means:
        adaptive, rand = means.get((lm, model, "adaptive")), means.get((lm, model, "random"))
        out[(str(lm), str(model))] = (
            None if adaptive is None or not rand else float(adaptive) / float(rand)  # type: ignore[arg-type]
        )
    return out


def number(value: object, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def print_table(console: Console, rows: Sequence[dict[str, object]], title: str) -> None:
    table = Table(title=title, title_justify="left")
    columns = ["LM", "model", "selection", "seeds", "topics", "suggested", "valid",
               "in product", "valid failing", "per 100 valid", "min to max", "by round",
               "adaptive / random"]  # fmt: skip
    for index, column in enumerate(columns):
        table.add_column(column, justify="left" if index < 3 else "right", no_wrap=index < 3)
    ratio = ratios(rows)
    for row in rows:
        r = ratio.get((str(row["lm"]), str(row["model"])))
        table.add_row(
            str(row["lm"]), str(row["model"]), str(row["selection"]), str(row["seeds"]),
            f"{row['topics']:.0f}", str(row["suggested"]), str(row["valid"]),
            str(row["in_product"]) if row["lm"] == "embedded" else "all",
            str(row["failing"]), number(row["per_100_mean"]),
            f"{number(row['per_100_min'])} to {number(row['per_100_max'])}",
            " / ".join(number(v, 0) for v in row["per_100_by_round"]),  # type: ignore[attr-defined]
            f"{r:.2f}x" if row["selection"] == "adaptive" and r is not None else "",
        )  # fmt: skip
    console.print(table)


def checks_for(rows: Sequence[dict[str, object]], models: Sequence[str]) -> list[Check]:
    ratio = ratios(rows)
    out: list[Check] = []
    for model in models:
        r = ratio.get(("simulated", model))
        out.append((
            f"simulated LM, {model}: adaptive finds >= {TARGET_RATIO:g}x the failures per 100 "
            "valid suggestions of random", None if r is None else r >= TARGET_RATIO,
            "n/a: no valid suggestion" if r is None else f"{r:.2f}x",
        ))  # fmt: skip
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer topics, seeds and rounds")
    parser.add_argument("--json", type=Path, help="write every number to this file")
    parser.add_argument("--seeds", type=int, nargs="+", help="default: 0-4 (quick: 0-2)")
    parser.add_argument("--rounds", type=int, help="default: 3")
    parser.add_argument(
        "--suggestions", type=int, help="K per topic and round; default 30 (quick 20)"
    )
    parser.add_argument("--topics", type=int, help="topics per arm (default: all; quick 9)")
    parser.add_argument(
        "--lm", nargs="+", choices=LMS, default=list(LMS), help="which LMs (default: both)"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the models are local: never ask the hub
    console = Console(width=200, soft_wrap=True)
    suite = load_suite(resolve_suite("sentiment"))
    seeds = tuple(args.seeds or ((0, 1, 2) if args.quick else (0, 1, 2, 3, 4)))
    simulated = Plan(
        topics=args.topics or (9 if args.quick else None),
        rounds=args.rounds or 3,
        suggestions=args.suggestions or (20 if args.quick else 30),
        seeds=seeds,
    )
    embedded = (
        Plan(topics=3, rounds=2, suggestions=10, seeds=(0,), max_tokens=32)
        if args.quick
        else Plan(topics=6, rounds=2, suggestions=20, seeds=(0, 1), max_tokens=32)
    )

    def report(line: str) -> None:
        console.print(f"[dim]{line}[/]", highlight=False)

    embed = minilm_embedder()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        results = []
        if "simulated" in args.lm:
            results += simulated_arms(suite, simulated, embed, Path(tmp) / "sim.sqlite", report)
        if "embedded" in args.lm:
            results += embedded_arms(suite, embedded, embed, Path(tmp) / "embedded.sqlite", report)
    rows = summary_rows(results)
    print_table(
        console, rows,
        f"failures per 100 valid suggestions (sentiment suite; simulated: {simulated.rounds} "
        f"rounds x K={simulated.suggestions} per topic, seeds {', '.join(map(str, seeds))}; "
        f"embedded: {embedded.rounds} rounds x K={embedded.suggestions} on {embedded.topics} "
        f"topics, seeds {', '.join(map(str, embedded.seeds))})",
    )  # fmt: skip
    console.print(
        "valid: simulated LM, in the topic's template product with its label; embedded LM, "
        f"P(valid) >= {P_VALID} from the offline ranker ensemble ('in product' counts those "
        "in the template product). per 100 valid: mean over seeds of valid failing / valid; "
        "by round: every seed's round together (round 1 starts from passing tests only); "
        f"wall time {time.perf_counter() - started:.0f} s on {os.cpu_count()} cores",
        highlight=False,
    )
    checks = checks_for(rows, simulated.models)
    if args.json:
        args.json.write_text(
            json.dumps({
                "plans": {"simulated": asdict(simulated), "embedded": asdict(embedded)},
                "runs": [{**asdict(r), "per_100": r.per_100} for r in results],
                "summary": rows,
                "checks": [{"target": t, "passed": p, "measured": m} for t, p, m in checks],
            }, indent=2) + "\n",
            encoding="utf-8",
        )  # fmt: skip
    return print_checks(console, checks)


if __name__ == "__main__":
    sys.exit(main())
