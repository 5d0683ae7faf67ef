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

from testaug.adaptive.from_suite import tree_from_cases
from testaug.adaptive.tree import TestTree
from testaug.adaptive.tree_jobs import check_topic, read_tree_with_tests, tree_task_labels
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl
from testaug.core.records import Record, TestCase
from testaug.fixing.debugging.examples import Progress
from testaug.fixing.debugging.loop import fix_loop
from testaug.fixing.debugging.records import (
    FIX_REPORT_FILE,
    FixLoop,
    FixRound,
    FixRoundConfig,
    StopRule,
    round_folder,
)
from testaug.fixing.debugging.rounds import round_start
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
    tree or cases), the model of the first round, the i.i.d. file it is evaluated on, the
    task's labels, how each round runs (`round`) and when the run stops (`stop`)."""

    work: Path
    iid: Path
    tree: Path | None = None
    cases: Path | None = None
    model: str | None = None  # hf:PATH, for the first round in `work`
    iid_eval: Path | None = None
    task: str | None = None
    labels: str | None = None
    round: FixRoundConfig = FixRoundConfig()
    stop: StopRule = StopRule()


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
    config: FixConfig,
    *,
    on_progress: Progress | None = None,
    on_round: Callable[[FixRound], None] | None = None,
) -> StepOutput:
    """Rounds in `config.work` until the stop rule says so: the first from the last round's
    checkpoint there, or from `config.model` (hf:PATH); each writes `work/round-NNN/`,
    its report in fix_report.json (by role `round-NNN` in the output's files)."""
    start, number = round_start(config.work, config.model)
    tests, source = read_tests(config.tree, config.cases)
    for topic in config.round.topics:  # a mistyped topic is refused before the model loads
        check_topic(tests, topic, tree_file=source, field="--topic")
    loop = fix_loop(
        tests,
        start,
        read_iid(config.iid),
        config.work,
        config.round,
        config.stop,
        task_labels=tree_task_labels(config.task, config.labels),
        tree_file=source,
        iid_eval=read_iid(config.iid_eval) if config.iid_eval is not None else None,
        number=number,
        on_progress=on_progress,
        on_round=on_round,
    )
    reports = {
        f"round-{report.round:03d}": round_folder(config.work, report.round) / FIX_REPORT_FILE
        for report in loop.rounds
    }
    main = reports[f"round-{loop.rounds[-1].round:03d}"]
    return step_output("fix", main, len(loop.rounds), files=reports, summary=FixSummary(loop=loop))
