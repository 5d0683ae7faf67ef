"""AdaTest's debugging loop as a step, from files to files, for `testaug tree fix` and the fix
flow: the tests (a tree, or a suite run's cases as a tree), the i.i.d. examples (JSONL: text,
text_pair, label, as `testaug evaluate patching --iid` reads them) and a work folder whose rounds
chain (`adaptive.debugging`, `adaptive.debugging_loop`). `FixConfig` is the one record of
what to run, built by the CLI or given to the flow. The step's main file is the last
round's fix_report.json; its summary holds every round of the run and why it stopped."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import Field

from testaug.adaptive.from_suite import tree_from_cases
from testaug.adaptive.retest import DEFAULT_THRESHOLD
from testaug.adaptive.tree import TestTree
from testaug.adaptive.tree_jobs import check_topic, read_tree_with_tests, tree_task_labels
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl
from testaug.core.records import Record, TestCase
from testaug.fixing.debugging.examples import Progress
from testaug.fixing.debugging.loop import fix_loop
from testaug.fixing.debugging.records import (
    FAIL_ABOVE,
    FIX_REPORT_FILE,
    IID_TOLERANCE,
    ContinueFrom,
    FixLoop,
    FixRound,
    FixRoundConfig,
    StopRule,
    Trainer,
    round_folder,
)
from testaug.fixing.debugging.rounds import round_start
from testaug.fixing.finetune import FineTuneConfig
from testaug.fixing.patching.protocol import IidExample
from testaug.steps.contract import StepOutput, StepSummary, step_output

# The public functions that are not steps (see tests/steps/test_step_contract.py).
HELPERS = frozenset({"read_iid", "read_tests"})


class FixSummary(StepSummary):
    """A run of the debugging loop: every round it ran (each also in its fix_report.json)
    and why it stopped."""

    kind: Literal["fix"] = "fix"
    loop: FixLoop


class FixConfig(Record):
    """What a run of the debugging loop does: the work folder, the i.i.d. file, the tests (a
    tree or cases), the model of the first round, the topics to train on, the seeds, the
    fine-tuning, the task's labels, AdaTest's failing threshold, the trainer, which seed's
    checkpoint the next round continues from, and when to stop (rounds, i.i.d. tolerance)."""

    work: Path
    iid: Path
    tree: Path | None = None
    cases: Path | None = None
    model: str | None = None  # hf:PATH, for the first round in `work`
    iid_eval: Path | None = None
    topics: tuple[str, ...] = ()
    seeds: int = Field(default=1, ge=1)  # seeds 0 .. seeds-1
    config: FineTuneConfig = FineTuneConfig()
    task: str | None = None
    labels: str | None = None
    fail_above: float = Field(default=FAIL_ABOVE, ge=0, le=100)
    threshold: float = DEFAULT_THRESHOLD
    trainer: Trainer = "behaviour"
    batch_size: int = Field(default=32, ge=1)  # scoring the tree
    continue_from: ContinueFrom = "best-iid"
    rounds: int = Field(default=1, ge=1)
    iid_tolerance: float = Field(default=IID_TOLERANCE, ge=0)

    def settings(self) -> FixRoundConfig:
        """How each round runs."""
        return FixRoundConfig(
            topics=self.topics,
            seeds=tuple(range(self.seeds)),
            config=self.config,
            fail_above=self.fail_above,
            threshold=self.threshold,
            trainer=self.trainer,
            batch_size=self.batch_size,
            continue_from=self.continue_from,
        )

    def stop_rule(self) -> StopRule:
        """When the run stops."""
        return StopRule(rounds=self.rounds, iid_tolerance=self.iid_tolerance)


def read_tests(tree: Path | None, cases: Path | None) -> tuple[TestTree, Path]:
    """The tests to fix and re-test: a tree file, or test cases (JSONL, e.g. a suite run's
    failing cases) as a tree with a topic per capability and description."""
    if (tree is None) == (cases is None):
        raise InputError(Problem("give either a tree or test cases", field="--tree"))
    if tree is not None:
        return read_tree_with_tests(tree), tree
    assert cases is not None
    found = list(read_jsonl(cases, TestCase))
    if not found:
        raise InputError(Problem("no test cases in the file", file=cases))
    return tree_from_cases(found), cases


def read_iid(path: Path) -> list[IidExample]:
    """The i.i.d. examples of a JSONL file; InputError when there is none."""
    examples = list(read_jsonl(path, IidExample))
    if not examples:
        raise InputError(Problem("no i.i.d. examples in the file", file=path))
    return examples


def fix_files(
    options: FixConfig,
    *,
    on_progress: Progress | None = None,
    on_round: Callable[[FixRound], None] | None = None,
) -> StepOutput:
    """Rounds in `options.work` until the stop rule says so: the first from the last round's
    checkpoint there, or from `options.model` (hf:PATH); each writes `work/round-NNN/`,
    its report in fix_report.json (by role `round-NNN` in the output's files)."""
    start, number = round_start(options.work, options.model)
    tests, source = read_tests(options.tree, options.cases)
    for topic in options.topics:  # a mistyped topic is refused before the model loads
        check_topic(tests, topic, tree_file=source, field="--topic")
    loop = fix_loop(
        tests,
        start,
        read_iid(options.iid),
        options.work,
        options.settings(),
        options.stop_rule(),
        task_labels=tree_task_labels(options.task, options.labels),
        tree_file=source,
        iid_eval=read_iid(options.iid_eval) if options.iid_eval is not None else None,
        number=number,
        on_progress=on_progress,
        on_round=on_round,
    )
    reports = {
        f"round-{report.round:03d}": round_folder(options.work, report.round) / FIX_REPORT_FILE
        for report in loop.rounds
    }
    main = reports[f"round-{loop.rounds[-1].round:03d}"]
    return step_output("fix", main, len(loop.rounds), files=reports, summary=FixSummary(loop=loop))
