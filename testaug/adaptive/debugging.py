"""AdaTest's debugging loop (AT-10, AT-E3): fix the failing tests, re-test every topic, repeat.

One round starts from a checkpoint (a Hugging Face classifier folder): the tree is
applied to it, the tests that fail it (failure score > 0, optionally only within
some topics) become fixing examples, an equal number of i.i.d. examples is sampled
(1:1, seeded), and the model is fine-tuned from that checkpoint on the mixture. The
tree is applied again, and every topic's failure rate before and after is compared.

"Fixed" and "broken" follow AdaTest's controlled experiment (AT-E3): a topic fails
when its failure rate is above `fail_above` percent (20 in the paper); it is fixed
when it failed before and does not after, broken when it did not fail before and
does after. The root "/" (the whole tree) is reported but not counted.

Several seeds: each seed fine-tunes from the same start checkpoint on its own i.i.d.
sample, shuffling and dropout; the per-topic "after" rate is the mean over seeds
(with its standard deviation), and the topic's label is read from that mean. The
checkpoint chain follows the first seed: its model is saved as the round's
checkpoint, and the next round in the same work folder starts from it.

Significance (AT-E3): each topic's change is tested on its tests' outcomes before and
after (a test fails when its failure score is > 0; after: the share of seeds it fails
on), paired by test, over 5,000 seeded bootstrap re-samples; `significant` reads the
topics' p-values (the root left out) with Benjamini–Hochberg at FDR 0.05. DIR tests that
cannot fail count as passing here, while the printed rates leave them out.

Training (`trainer`): "behaviour" (the default) uses BeLUGA's behaviour losses
(`evaluation.behaviour_training.train_behaviour`, vanilla method): "should be Y"
trains Y, several labels or neutral on a binary sentiment head as BeLUGA's soft
targets; "should not be Y" trains the other labels (on a binary sentiment head read
with the neutral band, "not positive" is {negative, neutral}: 2/3 negative);
"should be the same as for" (INV) is the INV loss between the original and the
changed input; DIR tests are the monotonic DIR loss on the watched label. The
fixing examples and the i.i.d. sample go into one mixture, batches mixing the kinds
as BeLUGA does. "hard" is plain cross-entropy on one label per test (the existing
fine-tuning code): "should be Y" the likeliest of Y's labels the head has, "should
not be Y" the likeliest label outside Y, INV the label the start model predicts for
the original; DIR tests are left out. Tests whose labels the head cannot be trained
on are counted as untrainable and left out.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from testaug.adaptive.retest import (
    DEFAULT_THRESHOLD,
    TREE_REPORT_FILE,
    TopicChange,
    TreeReport,
    retest_tree,
)
from testaug.adaptive.scores import THREE_WAY, predict_distinct, test_inputs
from testaug.adaptive.tree import (
    LABEL_COMPARATORS,
    ROOT,
    TestTree,
    TreeTest,
    is_within,
    normalize_topic,
)
from testaug.core.errors import InputError, Problem, TestAugError
from testaug.core.jsonl import read_json
from testaug.core.records import Label, Record, TestCase
from testaug.core.runs import write_json
from testaug.evaluation.expectations import NEUTRAL_BAND, is_binary_sentiment, predicted_labels
from testaug.evaluation.finetune import (
    Classifier,
    FineTuneConfig,
    fine_tune,
    load_classifier,
)
from testaug.evaluation.models import ModelUnderTest
from testaug.evaluation.patching import IidExample, iid_accuracy, stat
from testaug.evaluation.patching_report import Stat
from testaug.evaluation.significance import (
    ALPHA,
    BOOTSTRAP_SAMPLES,
    SEED,
    benjamini_hochberg,
    bootstrap_difference,
)

if TYPE_CHECKING:
    from testaug.evaluation.behaviour_training import TrainingMaterial

FAIL_ABOVE = 20.0  # percent: AdaTest's "a topic fails" (AT-E3)
FIX_REPORT_FILE = "fix_report.json"
BEFORE_REPORT_FILE = "tree_report.before.json"
AFTER_REPORT_FILE = TREE_REPORT_FILE  # "tree_report.json": `testaug report` picks it up
SCORED_TREE_FILE = "tree.scored.jsonl"
CHECKPOINT_DIR = "checkpoint"
IID_HOLDOUT = 0.5
_ROUND = re.compile(r"^round-(\d{3,})$")

Trainer = Literal["behaviour", "hard"]
TopicStatus = Literal["fixed", "broken", "failing", "passing", "untested"]
Progress = Callable[[str], None]


class FixExample(Record):
    """A fixing example made from a failing test: an input with the label to train (MFT), or
    an input with the original it must agree with (INV) or move against (DIR)."""

    kind: Literal["mft", "inv", "dir"] = "mft"
    text: str
    text_pair: str | None = None
    label: Label = ""  # mft: the target (several labels: BeLUGA's soft target)
    original: str = ""  # inv, dir: the other input of the test
    original_pair: str | None = None
    original_label: str = ""  # inv, dir: the start model's prediction for the original
    watched: str | None = None  # dir: the label whose probability may not move against
    direction: Literal["up", "down"] | None = None
    tolerance: float = 0.1
    test_id: str
    topic: str

    @property
    def description_id(self) -> str:
        """The example's environment for Group-DRO and the like: its topic."""
        return self.topic


class TopicFix(Record):
    """One topic before and after a round: failure rates in percent (after: over seeds)."""

    topic: str
    tests: int
    before: float | None
    after: Stat | None
    change: float | None  # after.mean - before, in points
    fixing_tests: int  # fixing examples trained from this topic and its subtopics
    status: TopicStatus
    p_value: float | None = None  # bootstrap of the change over the topic's tests (AT-E3)
    significant: bool | None = None  # Benjamini-Hochberg over the topics (not the root)


class SeedFix(Record):
    """One seed's fine-tuning: its i.i.d. accuracy, per-topic rates and labels."""

    seed: int
    model: str
    iid_examples: int
    iid_after: float | None
    after: dict[str, float | None]
    fixed: tuple[str, ...]
    broken: tuple[str, ...]


class FixRound(Record):
    """One round of the debugging loop, as written to `round-NNN/fix_report.json`."""

    round: int
    created_at: datetime
    tree_file: str
    start_checkpoint: str
    checkpoint: str  # the chain seed's fine-tuned model: the next round starts here
    seeds: tuple[int, ...]
    chain_seed: int
    model_before: str
    model_after: str
    topics_trained: tuple[str, ...] = ()  # () means every failing test of the tree
    fail_above: float = FAIL_ABOVE
    config: FineTuneConfig
    trainer: Trainer = "behaviour"
    failing_tests: int  # tests failing the start model within the trained topics
    fixing_examples: int
    untrainable: dict[str, int]  # failing tests left out, by reason
    iid_examples: int  # sampled per seed, as many as fixing examples (1:1)
    iid_eval_examples: int
    iid_before: float | None
    iid_after: Stat | None
    topics: tuple[TopicFix, ...]  # the root "/" first
    fixed: tuple[str, ...]  # read from the mean rates, as printed
    broken: tuple[str, ...]
    fixed_count: Stat  # per seed
    broken_count: Stat
    per_seed: tuple[SeedFix, ...]
    rose: tuple[TopicChange, ...] = ()  # the re-test's changes on the kept checkpoint: topics
    # newly failing (from 0%) or worse by more than `threshold` points, whatever `fail_above`
    threshold: float = DEFAULT_THRESHOLD
    fdr: float = ALPHA  # Benjamini-Hochberg's level for `significant`
    bootstrap_samples: int = BOOTSTRAP_SAMPLES

    def topic(self, topic: str) -> TopicFix | None:
        """One topic's row (None when the tree has no such topic)."""
        return next((row for row in self.topics if row.topic == topic), None)


def is_failing(rate: float | None, fail_above: float) -> bool:
    """Whether a topic fails: its failure rate is above `fail_above` percent."""
    return rate is not None and rate > fail_above


def topic_status(before: float | None, after: float | None, fail_above: float) -> TopicStatus:
    """AT-E3's labels: fixed (failing -> not failing), broken (not failing -> failing)."""
    if before is None or after is None:
        return "untested"
    was, now = is_failing(before, fail_above), is_failing(after, fail_above)
    if was and not now:
        return "fixed"
    if now and not was:
        return "broken"
    return "failing" if now else "passing"


def whole_tree_status(after: float | None, fail_above: float) -> TopicStatus:
    """The root's label: failing or passing after the round (it is never counted as fixed
    or broken)."""
    if after is None:
        return "untested"
    return "failing" if is_failing(after, fail_above) else "passing"


def labelled(
    before: dict[str, float | None], after: dict[str, float | None], fail_above: float
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The fixed and broken topics (the root left out), in `before`'s order."""
    fixed, broken = [], []
    for topic, old in before.items():
        if topic == ROOT:
            continue
        status = topic_status(old, after.get(topic), fail_above)
        if status == "fixed":
            fixed.append(topic)
        elif status == "broken":
            broken.append(topic)
    return tuple(fixed), tuple(broken)


def rates(report: TreeReport) -> dict[str, float | None]:
    """Each topic's failure rate in a report, in report order."""
    return {result.topic: result.failure_rate for result in report.topics}


def failing_by_id(scored: TestTree, model: str) -> dict[str, bool]:
    """Whether each test (by id) fails `model`: its failure score is > 0."""
    return {test.id: test.scores.get(model, 0.0) > 0 for test in scored.tests}


def topic_p_values(
    tree: TestTree,
    before: dict[str, bool],
    after: Sequence[dict[str, bool]],
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = SEED,
) -> dict[str, float | None]:
    """Each topic's bootstrap p-value (the root "/" first) that its failure rate did not
    change: its tests' failures before against the share of `after` runs they fail on."""
    out: dict[str, float | None] = {}
    for topic in [ROOT, *tree.topics()]:
        ids = [test.id for test in tree.tests if is_within(test.topic, topic)]
        if not ids or not after:
            out[topic] = None
            continue
        was = np.array([before.get(i, False) for i in ids], dtype=float)
        now = np.array([np.mean([run.get(i, False) for run in after]) for i in ids])
        out[topic] = bootstrap_difference(was, now, samples=samples, seed=seed)
    return out


def with_significance(
    rows: Sequence[TopicFix], p_values: dict[str, float | None], alpha: float = ALPHA
) -> list[TopicFix]:
    """The rows with their p-values, and `significant` from Benjamini-Hochberg over the
    topics that have one (the root gets its p-value only)."""
    tested = [
        row.topic for row in rows if row.topic != ROOT and p_values.get(row.topic) is not None
    ]
    flags = dict(zip(tested, benjamini_hochberg([p_values[t] for t in tested], alpha), strict=True))
    return [
        row.model_copy(
            update={"p_value": p_values.get(row.topic), "significant": flags.get(row.topic)}
        )
        for row in rows
    ]


def p_cell(row: TopicFix) -> str:
    """A topic's p-value as shown: "0.004 *" when significant (BH), "<0.001" below that
    (the bootstrap's floor), "-" without one."""
    if row.p_value is None:
        return "-"
    shown = "<0.001" if row.p_value < 0.001 else f"{row.p_value:.3f}"
    return shown + (" *" if row.significant else "")


def has_p_values(report: FixRound) -> bool:
    """Whether the round's topics carry p-values (reports written before them do not)."""
    return any(row.p_value is not None for row in report.topics)


def failing_tests(scored: TestTree, model: str, topics: Sequence[str] = ()) -> list[TreeTest]:
    """Tests whose failure score on `model` is > 0, within `topics` when given."""
    wanted = [normalize_topic(topic) for topic in topics]
    return [
        test
        for test in scored.tests
        if test.scores.get(model, 0.0) > 0
        and (not wanted or any(is_within(test.topic, topic) for topic in wanted))
    ]


def fixing_examples(
    tests: Sequence[TreeTest],
    model: ModelUnderTest,
    head: Sequence[str],
    *,
    trainer: Trainer = "behaviour",
    batch_size: int = 32,
) -> tuple[list[FixExample], dict[str, int]]:
    """Fixing examples for failing tests on `model` (see the module docstring), and the tests
    left out by reason. `head` are the labels the classifier can be trained on."""
    from testaug.evaluation.behaviour_losses import mft_target

    rows = predict_distinct(
        model, [item for test in tests for item in test_inputs(test)], batch_size=batch_size
    )
    labels = list(model.labels)
    examples: list[FixExample] = []
    skipped: dict[str, int] = {}

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    def trainable(label: Label) -> bool:
        try:
            mft_target(head, label)
        except TestAugError:
            return False
        return True

    def likeliest(choices: Sequence[str], row: np.ndarray) -> str:
        return max(choices, key=lambda name: row[labels.index(name)] if name in labels else -1)

    for test in tests:
        own = rows[(test.input, test.input_pair)]
        common = {"text": test.input, "text_pair": test.input_pair, "test_id": test.id,
                  "topic": test.topic}  # fmt: skip
        if test.comparator in LABEL_COMPARATORS:
            expected = test.expected_labels
            if test.comparator == "should be":
                wanted = [label for label in expected if label in head]
            else:
                wanted = [label for label in head if label not in expected]
            if trainer == "behaviour":
                space = THREE_WAY if is_binary_sentiment(labels) else labels  # neutral band
                rest = tuple(label for label in space if label not in expected)
                target: Label = expected if test.comparator == "should be" else rest
                target = target[0] if len(target) == 1 else tuple(target)
                if trainable(target):
                    examples.append(FixExample(label=target, **common))
                    continue
            if not wanted:
                skip("label not on the model's head")
                continue
            examples.append(FixExample(label=likeliest(wanted, own), **common))
            continue
        other = rows[(test.output, test.output_pair)]
        original = predicted_labels(labels, other, neutral_band=NEUTRAL_BAND)[0]
        pair = {"original": test.output, "original_pair": test.output_pair,
                "original_label": original, "tolerance": test.tolerance}  # fmt: skip
        if test.comparator == "should be the same as for":
            if trainer == "behaviour":
                examples.append(FixExample(kind="inv", **pair, **common))
            elif original in head:
                examples.append(FixExample(label=original, **common))
            else:
                skip("label not on the model's head")
            continue
        if trainer == "hard":
            skip("DIR test (needs the behaviour losses)")
        elif test.watched not in head:
            skip("label not on the model's head")
        else:
            direction = "up" if test.comparator == "should be no less than" else "down"
            examples.append(
                FixExample(kind="dir", watched=test.watched, direction=direction, **pair, **common)
            )
    return examples, skipped


def behaviour_material(
    examples: Sequence[FixExample], iid: Sequence[IidExample]
) -> TrainingMaterial:
    """BeLUGA's training material: MFT examples as cases (soft targets where they name
    several labels), INV and DIR examples as perturbation cases, and the i.i.d. sample."""
    from testaug.evaluation.behaviour_training import TrainingMaterial
    from testaug.evaluation.expectations import Expectation
    from testaug.evaluation.perturbed_cases import PerturbedCase

    cases, perturbed = [], []
    for example in examples:
        if example.kind == "mft":
            cases.append(example)
            continue
        original = TestCase(
            task="tree",
            capability=example.topic,
            description_id=example.topic,
            description=example.topic,
            text=example.original,
            text_pair=example.original_pair,
            label=example.original_label or "unknown",
        )
        if example.kind == "inv":
            expectation = Expectation.inv(example.tolerance)
        else:
            assert example.watched is not None and example.direction is not None
            expectation = Expectation.monotonic(
                example.watched, example.direction, example.tolerance
            )
        perturbed.append(
            PerturbedCase(
                original=original,
                text=example.text,
                text_pair=example.text_pair,
                perturbation=f"tree test {example.test_id}",
                test_type="INV" if example.kind == "inv" else "DIR",
                expectation=expectation,
            )
        )
    return TrainingMaterial(cases=cases, perturbed=perturbed, iid=list(iid))


def train_fix(
    start: Path,
    examples: Sequence[FixExample],
    iid: Sequence[IidExample],
    *,
    head: Sequence[str],
    config: FineTuneConfig,
    trainer: Trainer = "behaviour",
    output_dir: Path | None = None,
    on_progress: Progress | None = None,
) -> Classifier:
    """The start checkpoint fine-tuned on the fixing examples and the i.i.d. sample: with
    BeLUGA's behaviour losses (MFT soft targets, INV, DIR; `behaviour`), or plain
    cross-entropy on hard labels (`hard`, MFT-shaped examples only). Saved to `output_dir`."""
    if trainer == "hard":
        hard = [example for example in examples if example.kind == "mft"]
        if any(not isinstance(example.label, str) for example in hard):
            raise TestAugError("hard-label training needs one label per example")
        return fine_tune(
            start, [*hard, *iid], labels=head, config=config, output_dir=output_dir,
            on_progress=on_progress,
        )  # fmt: skip
    from testaug.evaluation.behaviour_training import train_behaviour

    classifier = load_classifier(
        start, labels=head, seed=config.seed, train=True, device=config.device
    )
    train_behaviour(classifier, behaviour_material(examples, iid), config, on_progress=on_progress)
    classifier.model.eval()
    if output_dir is not None:
        classifier.model.config.id2label = dict(enumerate(classifier.labels))
        classifier.model.config.label2id = {name: i for i, name in enumerate(classifier.labels)}
        classifier.model.save_pretrained(output_dir)
        classifier.tokenizer.save_pretrained(output_dir)
    return classifier


def sample_iid(pool: Sequence[IidExample], n: int, seed: int) -> list[IidExample]:
    """`n` i.i.d. examples drawn from the pool by `seed` (with replacement only when the pool
    is smaller than `n`)."""
    if n == 0:
        return []
    if not pool:
        raise TestAugError("no i.i.d. examples to mix with the fixing data")
    rng = random.Random(seed)
    if n <= len(pool):
        return rng.sample(list(pool), n)
    return rng.choices(list(pool), k=n)


def split_iid(
    iid: Sequence[IidExample], holdout: float = IID_HOLDOUT, seed: int = 0
) -> tuple[list[IidExample], list[IidExample]]:
    """The i.i.d. examples split (seeded) into a training pool and a held-out evaluation set."""
    order = list(range(len(iid)))
    random.Random(seed).shuffle(order)
    cut = round(len(iid) * holdout)
    held = sorted(order[:cut])
    pool = sorted(order[cut:])
    return [iid[i] for i in pool], [iid[i] for i in held]


def round_folder(work: Path, number: int) -> Path:
    """The folder of round `number`: `<work>/round-NNN`."""
    return Path(work) / f"round-{number:03d}"


def completed_rounds(work: Path) -> list[tuple[int, Path]]:
    """The rounds with a report in the work folder, by number."""
    found = []
    work = Path(work)
    if work.is_dir():
        for folder in work.iterdir():
            match = _ROUND.match(folder.name)
            if match and (folder / FIX_REPORT_FILE).is_file():
                found.append((int(match.group(1)), folder))
    return sorted(found)


def read_fix_round(path: Path | str) -> FixRound:
    """A round's report; InputError naming file and field."""
    return read_json(path, FixRound)


def write_fix_round(path: Path | str, report: FixRound) -> None:
    """Write a round's report as JSON, atomically."""
    write_json(Path(path), report.model_dump(mode="json"))


def last_round(work: Path) -> FixRound | None:
    """The latest round in the work folder (None before the first)."""
    rounds = completed_rounds(work)
    return read_fix_round(rounds[-1][1] / FIX_REPORT_FILE) if rounds else None


def hf_path(spec: str) -> Path:
    """The local folder an `hf:PATH` spec (or a bare path) names; InputError otherwise."""
    path = spec[3:] if spec.startswith("hf:") else spec
    path = path.split("?", 1)[0]
    if not Path(path).is_dir():
        raise InputError(
            Problem(
                f"{spec!r} is not a local Hugging Face model folder (hf:PATH): the loop "
                "fine-tunes it and saves checkpoints",
                field="--model",
            )
        )
    return Path(path)


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
    *,
    task_labels: Sequence[str],
    tree_file: Path | str,
    topics: Sequence[str] = (),
    seeds: Sequence[int] = (0,),
    config: FineTuneConfig | None = None,
    iid_eval: Sequence[IidExample] | None = None,
    fail_above: float = FAIL_ABOVE,
    threshold: float = DEFAULT_THRESHOLD,
    number: int | None = None,
    trainer: Trainer = "behaviour",
    batch_size: int = 32,
    on_progress: Progress | None = None,
) -> FixRound:
    """Run one round from checkpoint `start` and write it to `<work>/round-NNN/`: the
    checkpoint (first seed), the reports before and after, the tree scored on both models,
    and fix_report.json. `iid` is the training pool; `iid_eval` the accuracy set (default:
    a seeded half of `iid` held out, the other half the pool)."""
    from testaug.adaptive.retest import write_tree_report
    from testaug.adaptive.tree_files import write_tree

    say = on_progress or (lambda message: None)
    config = config or FineTuneConfig()
    seeds = tuple(dict.fromkeys(seeds))
    if not seeds:
        raise TestAugError("at least one seed is needed")
    if not tree.tests:
        raise TestAugError(f"{tree_file}: the tree has no tests")
    if iid_eval is None:
        pool, held = split_iid(iid)
    else:
        pool, held = list(iid), list(iid_eval)
    number = number or (completed_rounds(work)[-1][0] + 1 if completed_rounds(work) else 1)
    folder = round_folder(work, number)
    folder.mkdir(parents=True, exist_ok=True)
    checkpoint = folder / CHECKPOINT_DIR

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
        tree, before_model, tree_file=tree_file, threshold=threshold, batch_size=batch_size
    )
    failing = failing_tests(scored, before_model.name, topics)
    examples, skipped = fixing_examples(
        failing, before_model, head, trainer=trainer, batch_size=batch_size
    )
    if not examples:
        where = f" within {', '.join(topics)}" if topics else ""
        left = "; ".join(f"{n} {reason}" for reason, n in skipped.items())
        raise TestAugError(
            f"round {number}: no failing test to train on: {len(failing)} test(s) of "
            f"{tree_file} fail {before_model.name}{where}"
            + (f" and none can be trained ({left})" if left else "")
            + ". The loop can stop here, or grow the tree (testaug adapt) first"
        )
    iid_before = iid_accuracy(base, held, config)
    before_rates = rates(before)

    runs: list[SeedFix] = []
    after_reports: list[TreeReport] = []
    after_failures: list[dict[str, bool]] = []
    chain_scored = scored
    for index, seed in enumerate(seeds):
        chained = index == 0
        sample = sample_iid(pool, len(examples), seed)
        say(f"seed {seed}: {len(examples)} fixing + {len(sample)} i.i.d. examples")
        tuned = train_fix(
            start,
            examples,
            sample,
            head=head,
            config=config.model_copy(update={"seed": seed}),
            trainer=trainer,
            output_dir=checkpoint if chained else None,
            on_progress=say,
        )
        source = str(checkpoint) if chained else f"{checkpoint}#seed-{seed}"
        after_model = _under_test(tuned, task_labels, source)
        rescored, after = retest_tree(
            scored if chained else tree,
            after_model,
            tree_file=tree_file,
            previous=before,
            threshold=threshold,
            batch_size=batch_size,
        )
        if chained:
            chain_scored = rescored
            write_tree_report(folder / AFTER_REPORT_FILE, after)
        after_reports.append(after)
        after_failures.append(failing_by_id(rescored, after_model.name))
        fixed, broken = labelled(before_rates, rates(after), fail_above)
        runs.append(
            SeedFix(
                seed=seed,
                model=after_model.name,
                iid_examples=len(sample),
                iid_after=iid_accuracy(tuned, held, config),
                after=rates(after),
                fixed=fixed,
                broken=broken,
            )
        )
        del tuned, after_model

    write_tree_report(folder / BEFORE_REPORT_FILE, before)
    write_tree(folder / SCORED_TREE_FILE, chain_scored)
    rows = topic_rows(before, runs, examples, fail_above)
    p_values = topic_p_values(tree, failing_by_id(scored, before_model.name), after_failures)
    rows = with_significance(rows, p_values)
    mean_after = {row.topic: row.after.mean if row.after else None for row in rows}
    fixed, broken = labelled(before_rates, mean_after, fail_above)
    iid_after = [run.iid_after for run in runs if run.iid_after is not None]
    report = FixRound(
        round=number,
        created_at=datetime.now(UTC),
        tree_file=str(tree_file),
        start_checkpoint=str(start),
        checkpoint=str(checkpoint),
        seeds=seeds,
        chain_seed=seeds[0],
        model_before=before_model.name,
        model_after=runs[0].model,
        topics_trained=tuple(normalize_topic(topic) for topic in topics),
        fail_above=fail_above,
        config=config,
        trainer=trainer,
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
        fixed_count=stat([float(len(run.fixed)) for run in runs]),
        broken_count=stat([float(len(run.broken)) for run in runs]),
        per_seed=tuple(runs),
        rose=after_reports[0].changes,
        threshold=threshold,
    )
    write_fix_round(folder / FIX_REPORT_FILE, report)
    return report


def topic_rows(
    before: TreeReport,
    runs: Sequence[SeedFix],
    examples: Sequence[FixExample],
    fail_above: float,
) -> list[TopicFix]:
    """Each topic's row: the rate before, the mean and spread after over seeds, its label."""
    rows = []
    for result in before.topics:
        values = [run.after.get(result.topic) for run in runs]
        after = stat([v for v in values if v is not None]) if None not in values else None
        change = (
            after.mean - result.failure_rate
            if after is not None and result.failure_rate is not None
            else None
        )
        rows.append(
            TopicFix(
                topic=result.topic,
                tests=result.tests,
                before=result.failure_rate,
                after=after,
                change=change,
                fixing_tests=sum(is_within(e.topic, result.topic) for e in examples),
                status=topic_status(result.failure_rate, after.mean if after else None, fail_above)
                if result.topic != ROOT
                else whole_tree_status(after.mean if after else None, fail_above),
            )
        )
    return rows


def round_start(work: Path, model: str | None) -> tuple[Path, int]:
    """Where the next round starts and its number: the last round's checkpoint when the work
    folder has one, else the `model` given (an `hf:PATH` folder)."""
    rounds = completed_rounds(work)
    if rounds:
        number, folder = rounds[-1]
        previous = read_fix_round(folder / FIX_REPORT_FILE)
        return Path(previous.checkpoint), number + 1
    if model is None:
        raise InputError(
            Problem(f"{work} has no round yet: give the model to start from", field="--model")
        )
    return hf_path(model), 1
