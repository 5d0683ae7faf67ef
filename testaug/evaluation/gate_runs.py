"""The CI gate on a run folder (`testaug run`): its evaluation.json checked with the
acceptance rules the ranker accepted its cases under (from annotations.jsonl)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_json, read_jsonl
from testaug.core.records import AcceptanceRule, Annotation, Suite
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


def check_run_gate(
    run_dir: Path | str,
    config: GateConfig,
    *,
    left_out: Mapping[str, Collection[str]] | None = None,
) -> GateResult:
    """The gate on a run's evaluation; InputError when the run evaluated no model. Limits
    on groups the run left out on purpose (`left_out`, by kind) are not checked."""
    folder = RunFolder(Path(run_dir))
    if not folder.evaluation.is_file():
        raise InputError(
            Problem("no evaluation to gate: the run evaluated no model", file=folder.evaluation)
        )
    summary = read_json(folder.evaluation, EvaluationSummary)
    rules = acceptance_rules(folder.annotations)
    return check_gate(summary, config, rules=rules, left_out=left_out)


def left_out_of(suite: Suite, capabilities: Collection[str] | None) -> dict[str, set[str]]:
    """The capabilities of the suite a run restricted to `capabilities` did not evaluate,
    and their descriptions, by gate kind (nothing when it was not restricted)."""
    if not capabilities:
        return {}
    skipped = [c for c in suite.capabilities if c.name not in set(capabilities)]
    return {
        "capability": {c.name for c in skipped},
        "description": {d.text for c in skipped for d in c.descriptions},
    }
