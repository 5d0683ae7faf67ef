"""testaug: grow capability-based NLP test suites.

Importing this package stays light: no torch, no prefect. The Python API (see
docs/how-to/python.md) is resolved on first use of a name::

    import testaug

    cases = testaug.expand("sentiment", per_template=2)
    summary = testaug.evaluate(cases, ["vader", my_model], out="runs/notebook")
    testaug.report("runs/notebook")
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# The Python API: name -> the module that defines it (see testaug/api/)
_EXPORTS: dict[str, str] = {
    # suites and cases
    "load_suite": "testaug.api.suites",
    "suite_names": "testaug.api.suites",
    "expand": "testaug.api.suites",
    "read_cases": "testaug.api.suites",
    "write_cases": "testaug.api.suites",
    # generation, triage, review, templates
    "generate": "testaug.api.augment",
    "rank": "testaug.api.augment",
    "review_automatically": "testaug.api.augment",
    "review_in_terminal": "testaug.api.augment",
    "push_to_label_studio": "testaug.api.augment",
    "pull_from_label_studio": "testaug.api.augment",
    "merge_reviewed": "testaug.api.augment",
    "induce_templates": "testaug.api.augment",
    "expand_templates": "testaug.api.augment",
    # measuring
    "evaluate": "testaug.api.measure",
    "measure_diversity": "testaug.api.measure",
    "report": "testaug.api.measure",
    # test trees
    "tree_from_suite": "testaug.api.trees",
    "read_tree": "testaug.api.trees",
    "write_tree": "testaug.api.trees",
    "retest": "testaug.api.trees",
    "adapt": "testaug.api.trees",
    # the whole pipeline
    "run_pipeline": "testaug.api.pipeline",
    # records
    "Suite": "testaug.core.records",
    "Capability": "testaug.core.records",
    "Description": "testaug.core.records",
    "Template": "testaug.core.records",
    "Lexicon": "testaug.core.records",
    "TestCase": "testaug.core.records",
    "Candidate": "testaug.core.records",
    "RankedCandidate": "testaug.core.records",
    "Annotation": "testaug.core.records",
    "Prediction": "testaug.core.records",
    "StepOutput": "testaug.steps.contract",
    "EvaluationSummary": "testaug.evaluation.summary",
    "ModelSummary": "testaug.evaluation.summary",
    "DiversitySummary": "testaug.diversity.measures",
    "TestTree": "testaug.adaptive.tree",
    "TreeTest": "testaug.adaptive.tree",
    "ModelUnderTest": "testaug.evaluation.models.base",
    "TestAugError": "testaug.core.errors",
    # configurations
    "BackendConfig": "testaug.generation.backend_config",
    "PromptPlan": "testaug.steps.augment",
    "GenerationConfig": "testaug.generation.sampling",
    "ReviewConfig": "testaug.review.run_files",
    "EvaluationConfig": "testaug.steps.measure",
    "SuggestionRoundConfig": "testaug.adaptive.suggestions",
    "RunConfig": "testaug.steps.config",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'testaug' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
