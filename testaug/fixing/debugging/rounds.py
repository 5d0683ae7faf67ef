"""Running a round of AdaTest's debugging loop (AT-E3): fix the failing tests, re-test
every topic, keep every seed's checkpoint and say which one the next round continues from.

One round starts from a checkpoint (a Hugging Face classifier folder): the tree is
applied to it, the tests that fail it (failure score > 0, optionally only within
some topics) become fixing examples (`debugging_examples`), an equal number of i.i.d.
examples is sampled (1:1, seeded), and the model is fine-tuned from that checkpoint on the
mixture, once per seed. The tree is applied again, and every topic's failure rate before
and after is compared (`debugging_topics`: fixed, broken, p-values).

Several seeds: each seed fine-tunes from the same start checkpoint on its own i.i.d.
sample, shuffling and dropout, and is saved to `round-NNN/seed-S/`; the per-topic "after"
rate is the mean over seeds (with its standard deviation), and the topic's label is read
from that mean. The next round continues from one seed's checkpoint (`continue_from`):
"best-iid" (the default) keeps the seed with the best i.i.d. accuracy on the held-out set
(ties: the lowest failure rate on the whole tree, then seed order); "first" keeps the first
seed. The re-test written beside the round (tree_report.json, tree.scored.jsonl) is the
kept seed's. Several rounds with a stop rule: `debugging_loop`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from testaug.adaptive.retest import TreeReport, retest_tree
from testaug.adaptive.tree import ROOT, TestTree, normalize_topic
from testaug.core.errors import InputError, Problem, TestAugError
from testaug.evaluation.models import ModelUnderTest
from testaug.fixing.debugging.examples import (
    Progress,
    fixing_examples,
    sample_iid,
    split_iid,
    train_fix,
)
from testaug.fixing.debugging.records import (
    AFTER_REPORT_FILE,
    BEFORE_REPORT_FILE,
    FIX_REPORT_FILE,
    SCORED_TREE_FILE,
    FixRound,
    FixRoundConfig,
    SeedFix,
    completed_rounds,
    read_fix_round,
    round_folder,
    seed_folder,
    write_fix_round,
)
from testaug.fixing.debugging.topics import (
    failing_by_id,
    failing_tests,
    labelled,
    rates,
    topic_p_values,
    topic_rows,
    with_significance,
)
from testaug.fixing.finetune import Classifier, load_classifier
from testaug.fixing.patching.protocol import IidExample, iid_accuracy, stat

__all__ = ["NothingToFix", "choose_kept", "fix_round", "round_start"]


class NothingToFix(TestAugError):
    """A round found no failing test it can train on: the loop can stop here."""


@dataclass
class _SeedRun:
    """One seed's fine-tuned model re-tested: its record, the re-test and the scored tree."""

    fix: SeedFix
    report: TreeReport
    scored: TestTree
    failures: dict[str, bool]


def hf_path(spec: str) -> Path:
    """The local folder an `hf:PATH` spec (or a bare path) names; InputError otherwise."""
    path = spec[3:] if spec.startswith("hf:") else spec
    path = path.split("?", 1)[0]
    if not Path(path).is_dir():
        from testaug.evaluation.models.hf import missing_folder

        why = "" if Path(path).exists() else f" ({missing_folder(path)})"
        raise InputError(
            Problem(
                f"{spec!r} is not a local Hugging Face model folder (hf:PATH){why}: the loop "
                "fine-tunes it and saves checkpoints",
                field="--start-model",
            )
        )
    return Path(path)


def round_start(work: Path, model: str | None) -> tuple[Path, int]:
    """Where the next round starts and its number: the last round's kept checkpoint when the
    work folder has one, else the `model` given (an `hf:PATH` folder)."""
    rounds = completed_rounds(work)
    if rounds:
        number, folder = rounds[-1]
        previous = read_fix_round(folder / FIX_REPORT_FILE)
        return Path(previous.checkpoint), number + 1
    if model is None:
        raise InputError(
            Problem(f"{work} has no round yet: give the model to start from", field="--start-model")
        )
    return hf_path(model), 1


def choose_kept(runs: Sequence[SeedFix], continue_from: str = "best-iid") -> tuple[SeedFix, str]:
    """The seed whose checkpoint the next round continues from, and why (in words): the
    first seed, or the best i.i.d. accuracy (ties: the lowest failure rate on the whole
    tree, then seed order)."""
    if not runs:
        raise TestAugError("no seed to keep")
    if len(runs) == 1:
        return runs[0], "the only seed"
    if continue_from == "first":
        return runs[0], "the first seed (--continue-from first)"

    def accuracy(run: SeedFix) -> float:
        return -1.0 if run.iid_after is None else run.iid_after

    def tree_rate(run: SeedFix) -> float:
        rate = run.after.get(ROOT)
        return 100.0 if rate is None else rate

    best = max(accuracy(run) for run in runs)
    tied = [run for run in runs if accuracy(run) == best]
    kept = min(tied, key=tree_rate)  # min keeps the first of equal rates: seed order
    shown = "no i.i.d. accuracy" if best < 0 else f"{100 * best:.1f}%"
    why = f"the best i.i.d. accuracy of {len(runs)} seeds ({shown})"
    if len(tied) > 1:
        why += f"; tied, the lowest failure rate on the tree ({tree_rate(kept):.1f}%)"
        if sum(tree_rate(run) == tree_rate(kept) for run in tied) > 1:
            why += "; tied again, the first in seed order"
    return kept, why


def _under_test(classifier: Classifier, task_labels: Sequence[str], source: str) -> ModelUnderTest:
    """A loaded classifier as a model under test (named `hf:<source>`)."""
    from testaug.evaluation.models.hf import HFModel

    device = str(next(classifier.model.parameters()).device)
    classifier.model.eval()
    return HFModel(
        classifier.model, classifier.tokenizer, task_labels, source=source, device=device
    )


def fix_round(
    tree: TestTree,
    start: Path,
    iid: Sequence[IidExample],
    work: Path,
    settings: FixRoundConfig | None = None,
    *,
    task_labels: Sequence[str],
    tree_file: Path | str,
    iid_eval: Sequence[IidExample] | None = None,
    number: int | None = None,
    on_progress: Progress | None = None,
) -> FixRound:
    """Run one round from checkpoint `start` and write it to `<work>/round-NNN/`: every seed's
    checkpoint (`seed-S/`), the reports before and after (the kept seed's), the tree scored
    on the start model and the kept one, and fix_report.json. `iid` is the training pool;
    `iid_eval` the accuracy set (default: a seeded half of `iid` held out, the other half
    the pool). NothingToFix when no failing test can be trained on (nothing is written)."""
    from testaug.adaptive.retest import write_tree_report
    from testaug.adaptive.tree_files import write_tree

    say = on_progress or (lambda message: None)
    settings = settings or FixRoundConfig()
    config, seeds = settings.config, tuple(dict.fromkeys(settings.seeds))
    if not tree.tests:
        raise TestAugError(f"{tree_file}: the tree has no tests")
    pool, held = split_iid(iid) if iid_eval is None else (list(iid), list(iid_eval))
    number = number or (completed_rounds(work)[-1][0] + 1 if completed_rounds(work) else 1)

    base = load_classifier(start, labels=task_labels, seed=config.seed, device=config.device)
    if base.head_replaced:
        raise TestAugError(
            f"{start}: the model's outputs cannot be read as the task's labels "
            f"({', '.join(task_labels)}); name them in its config (id2label)"
        )
    head = base.labels
    before_model = _under_test(base, task_labels, str(start))
    say(f"round {number}: re-testing {tree_file} on {before_model.name}")
    scored, before = retest_tree(
        tree,
        before_model,
        tree_file=tree_file,
        threshold=settings.threshold,
        batch_size=settings.batch_size,
    )
    failing = failing_tests(scored, before_model.name, settings.topics)
    examples, skipped = fixing_examples(
        failing, before_model, head, trainer=settings.trainer, batch_size=settings.batch_size
    )
    if not examples:
        where = f" within {', '.join(settings.topics)}" if settings.topics else ""
        left = "; ".join(f"{n} {reason}" for reason, n in skipped.items())
        raise NothingToFix(
            f"round {number}: no failing test to train on: {len(failing)} test(s) of "
            f"{tree_file} fail {before_model.name}{where}"
            + (f" and none can be trained ({left})" if left else "")
            + ". The loop can stop here, or grow the tree (testaug tree adapt) first"
        )
    iid_before = iid_accuracy(base, held, config)
    before_rates = rates(before)
    folder = round_folder(work, number)
    folder.mkdir(parents=True, exist_ok=True)

    runs: list[_SeedRun] = []
    for seed in seeds:
        sample = sample_iid(pool, len(examples), seed)
        say(f"seed {seed}: {len(examples)} fixing + {len(sample)} i.i.d. examples")
        checkpoint = seed_folder(folder, seed)
        tuned = train_fix(
            start,
            examples,
            sample,
            head=head,
            config=config.model_copy(update={"seed": seed}),
            trainer=settings.trainer,
            output_dir=checkpoint,
            on_progress=say,
        )
        after_model = _under_test(tuned, task_labels, str(checkpoint))
        rescored, after = retest_tree(
            scored,
            after_model,
            tree_file=tree_file,
            previous=before,
            threshold=settings.threshold,
            batch_size=settings.batch_size,
        )
        fixed, broken = labelled(before_rates, rates(after), settings.fail_above)
        run = SeedFix(
            seed=seed,
            model=after_model.name,
            checkpoint=str(checkpoint),
            iid_examples=len(sample),
            iid_after=iid_accuracy(tuned, held, config),
            after=rates(after),
            fixed=fixed,
            broken=broken,
        )
        runs.append(_SeedRun(run, after, rescored, failing_by_id(rescored, after_model.name)))
        del tuned, after_model

    kept_fix, why = choose_kept([run.fix for run in runs], settings.continue_from)
    kept = next(run for run in runs if run.fix is kept_fix)
    say(f"round {number}: the next round continues from seed {kept_fix.seed} ({why})")
    write_tree_report(folder / BEFORE_REPORT_FILE, before)
    write_tree_report(folder / AFTER_REPORT_FILE, kept.report)
    write_tree(folder / SCORED_TREE_FILE, kept.scored)
    fixes = [run.fix for run in runs]
    rows = topic_rows(before, fixes, examples, settings.fail_above)
    p_values = topic_p_values(
        tree, failing_by_id(scored, before_model.name), [run.failures for run in runs]
    )
    rows = with_significance(rows, p_values)
    mean_after = {row.topic: row.after.mean if row.after else None for row in rows}
    fixed, broken = labelled(before_rates, mean_after, settings.fail_above)
    iid_after = [run.iid_after for run in fixes if run.iid_after is not None]
    report = FixRound(
        round=number,
        created_at=datetime.now(UTC),
        tree_file=str(tree_file),
        start_checkpoint=str(start),
        checkpoint=kept_fix.checkpoint or "",
        seeds=seeds,
        chain_seed=kept_fix.seed,
        continue_from=settings.continue_from,
        chain_reason=why,
        model_before=before_model.name,
        model_after=kept_fix.model,
        topics_trained=tuple(normalize_topic(topic) for topic in settings.topics),
        fail_above=settings.fail_above,
        config=config,
        trainer=settings.trainer,
        failing_tests=len(failing),
        fixing_examples=len(examples),
        untrainable=skipped,
        iid_examples=len(examples),
        iid_eval_examples=len(held),
        iid_before=iid_before,
        iid_after=stat(iid_after) if iid_after else None,
        topics=tuple(rows),
        fixed=fixed,
        broken=broken,
        fixed_count=stat([float(len(run.fixed)) for run in fixes]),
        broken_count=stat([float(len(run.broken)) for run in fixes]),
        per_seed=tuple(fixes),
        rose=kept.report.changes,
        threshold=settings.threshold,
    )
    write_fix_round(folder / FIX_REPORT_FILE, report)
    return report
