"""The CI gate on a run folder (`testaug run`): its evaluation.json checked with the
acceptance rules the ranker accepted its cases under (from annotations.jsonl)."""

from __future__ import annotations

from pathlib import Path

from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_json, read_jsonl
from testaug.core.records import AcceptanceRule, Annotation
from testaug.core.run_folder import RunFolder
from testaug.evaluation.gate import GateConfig, GateResult, check_gate
from testaug.evaluation.summary import EvaluationSummary


def acceptance_rules(path: Path | str) -> list[AcceptanceRule]:
    """The distinct rules the ranker accepted candidates under, from an annotations file
    (none when the file does not exist)."""
    path = Path(path)
    if not path.is_file():
        return []
    rules = (a.acceptance for a in read_jsonl(path, Annotation) if a.origin == "ranker")
    return list(dict.fromkeys(rule for rule in rules if rule is not None))


def check_run_gate(run_dir: Path | str, config: GateConfig) -> GateResult:
    """The gate on a run's evaluation; InputError when the run evaluated no model."""
    folder = RunFolder(Path(run_dir))
    if not folder.evaluation.is_file():
        raise InputError(
            Problem("no evaluation to gate: the run evaluated no model", file=folder.evaluation)
        )
    summary = read_json(folder.evaluation, EvaluationSummary)
    return check_gate(summary, config, rules=acceptance_rules(folder.annotations))
