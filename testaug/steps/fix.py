"""A round of AdaTest's debugging loop as a step, from files to files, for `testaug fix` and
the fix flow: the tests (a tree, or a suite run's cases as a tree), the i.i.d. examples
(JSONL: text, text_pair, label, as `testaug patch-eval --iid` reads them) and a work folder
whose rounds chain (`adaptive.debugging`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from testaug.adaptive.debugging import (
    FAIL_ABOVE,
    FixRound,
    Progress,
    Trainer,
    fix_round,
    round_start,
)
from testaug.adaptive.from_suite import tree_from_cases
from testaug.adaptive.retest import DEFAULT_THRESHOLD
from testaug.adaptive.tree import TestTree
from testaug.adaptive.tree_jobs import read_tree_with_tests, tree_task_labels
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl
from testaug.core.records import TestCase
from testaug.evaluation.finetune import FineTuneConfig
from testaug.evaluation.patching import IidExample


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
    work: Path,
    iid: Path,
    *,
    tree: Path | None = None,
    cases: Path | None = None,
    model: str | None = None,
    iid_eval: Path | None = None,
    topics: Sequence[str] = (),
    seeds: Sequence[int] = (0,),
    config: FineTuneConfig | None = None,
    task: str | None = None,
    labels: str | None = None,
    fail_above: float = FAIL_ABOVE,
    threshold: float = DEFAULT_THRESHOLD,
    trainer: Trainer = "behaviour",
    batch_size: int = 32,
    on_progress: Progress | None = None,
) -> FixRound:
    """One round in `work`: from the last round's checkpoint there, or from `model` (hf:PATH)
    for the first; writes `work/round-NNN/` and returns its report."""
    start, number = round_start(work, model)
    tests, source = read_tests(tree, cases)
    return fix_round(
        tests,
        start,
        read_iid(iid),
        work,
        task_labels=tree_task_labels(task, labels),
        tree_file=source,
        topics=topics,
        seeds=seeds,
        config=config,
        iid_eval=read_iid(iid_eval) if iid_eval is not None else None,
        fail_above=fail_above,
        threshold=threshold,
        number=number,
        trainer=trainer,
        batch_size=batch_size,
        on_progress=on_progress,
    )
