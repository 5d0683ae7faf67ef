"""The step that patches a model with two suites: which suite finds more errors, by the
model's error rate on the same held-out cases before and after fine-tuning on each."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl
from testaug.core.records import Record, TestCase
from testaug.core.runs import write_json
from testaug.fixing.patching.base_model import base_model, check_base_model
from testaug.steps.contract import StepOutput, StepSummary, step_output

if TYPE_CHECKING:
    from testaug.fixing.patching.protocol import PatchingReport

# The public functions that are not steps (see tests/steps/test_step_contract.py).
HELPERS = frozenset({"patching_summary"})


class PatchSummary(StepSummary):
    """The patching protocol's two suites (its runs are the step's record count)."""

    kind: Literal["patch"] = "patch"
    suite_names: tuple[str, str]


# The options of PatchingConfig that are the fine-tuning's.
FINE_TUNING = {"epochs", "learning_rate", "batch_size", "max_length"}


class PatchingConfig(Record):
    """How `patch_suites` patches: runs (seeds 42, 43, ...), the split, the held-out share,
    and the fine-tuning (the paper's: 3 epochs, learning rate 5e-6, batch 8, 128 tokens)."""

    seeds: int = Field(default=1, ge=1)
    split: Literal["random", "func", "class", "type"] = "random"
    test_fraction: float = Field(default=0.5, ge=0.05, le=0.95)
    epochs: int = Field(default=3, ge=1)
    learning_rate: float = 5e-6
    batch_size: int = Field(default=8, ge=1)
    max_length: int = Field(default=128, ge=8)


class PatchSuitesConfig(Record):
    """What `patch_suites` compares: the two suites' cases, the model under test, the file
    the report goes to (patching.json), ordinary labelled examples (`iid`, JSONL with text
    and label) to also score each patched model's generalization on, and how
    (`patching`)."""

    suite_a: Path
    suite_b: Path
    model: str
    out: Path
    iid: Path | None = None
    patching: PatchingConfig = PatchingConfig()


def patch_suites(
    config: PatchSuitesConfig, *, on_progress: Callable[[str], None] | None = None
) -> StepOutput:
    """Which suite finds more errors: ERR% on the same held-out cases before and after
    fine-tuning `config.model` (hf:PATH[?labels=..], a path or hub id, or a shipped
    encoder) on part of each suite, over seeds; the report as JSON at `config.out`
    (`patching_summary`)."""
    suite_a, suite_b, model, out = config.suite_a, config.suite_b, config.model, config.out
    options, iid_path = config.patching, config.iid
    check_base_model(model)
    from testaug.fixing.finetune import FineTuneConfig
    from testaug.fixing.patching.protocol import IidExample, run_patching
    from testaug.suites.task_labels import task_labels_and_lexicons

    cases_a, cases_b = list(read_jsonl(suite_a, TestCase)), list(read_jsonl(suite_b, TestCase))
    if not cases_a or not cases_b:
        raise InputError(Problem("no cases", file=suite_a if not cases_a else suite_b))
    base, model_labels = base_model(model)
    report = run_patching(
        cases_a,
        cases_b,
        base,
        labels=task_labels_and_lexicons(cases_a + cases_b)[0],
        seeds=[42 + i for i in range(options.seeds)],
        strategy=options.split,
        config=FineTuneConfig(**options.model_dump(include=FINE_TUNING)),
        iid=list(read_jsonl(iid_path, IidExample)) if iid_path else None,
        on_progress=on_progress,
        test_fraction=options.test_fraction,
        model_labels=model_labels,
        suite_names=(suite_a.stem, suite_b.stem),
    )
    write_json(out, patching_summary(report))
    summary = PatchSummary(suite_names=report.suite_names)
    return step_output("patch", out, len(report.runs), summary=summary)


def patching_summary(report: PatchingReport) -> dict[str, Any]:
    """The report as JSON, with error rates and deltas in percent (ERR%, as the paper)."""
    return report.in_percent().model_dump(mode="json")
