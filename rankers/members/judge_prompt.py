"""The judge's prompt file: its template, how each task's inputs are named, its stops.

A judge prompt is YAML (`prompts/judge-validity.yaml` is the shipped one):

    name: judge-validity
    purpose: judge
    inputs: {nli: [premise, hypothesis], paraphrase: [question 1, question 2]}
    stop: ["\\n\\n"]
    variables: {description: ..., label: ..., case: ...}
    template: |-
      ... ${description} ... ${label} ... ${case} ... verdict:

The variables a template may use are description, label, case (one "Name: text" line
per input), task and capability; each one used must be declared.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path

from testaug.core.errors import InputError, Problem
from testaug.core.records import Candidate, label_options

DEFAULT_PROMPT = "judge-validity"


_PROMPT_FIELDS = {"name", "purpose", "inputs", "stop", "variables", "template"}
_VALUES = {"description", "label", "case", "task", "capability"}


@dataclass(frozen=True)
class JudgePrompt:
    """A loaded judge prompt: its template, the names of each task's inputs, its stops."""

    name: str
    template: str
    inputs: dict[str, tuple[str, ...]]
    stop: tuple[str, ...]

    def render(self, candidate: Candidate) -> str:
        """The prompt for one candidate."""
        pair = candidate.text_pair is not None
        names = self.inputs.get(candidate.task) or (("text 1", "text 2") if pair else ("text",))
        texts = [candidate.text, candidate.text_pair] if pair else [candidate.text]
        lines = [
            f"{(names[i] if i < len(names) else f'text {i + 1}').capitalize()}: {text}"
            for i, text in enumerate(texts)
        ]
        values = {
            "description": candidate.description,
            "label": " or ".join(label_options(candidate.label)).replace("_", " "),
            "case": "\n".join(lines),
            "task": candidate.task,
            "capability": candidate.capability,
        }
        return string.Template(self.template).safe_substitute(values)


def load_judge_prompt(name_or_path: str | Path) -> JudgePrompt:
    """A judge prompt by shipped name or file; InputError naming the line and field."""
    from testaug.core.bundled import bundled_dir
    from testaug.core.yaml_source import load_yaml

    path = Path(name_or_path)
    if not path.is_file():
        path = bundled_dir("prompts") / f"{name_or_path}.yaml"
    if not path.is_file():
        raise InputError(Problem(f"no judge prompt {str(name_or_path)!r}", field="prompt"))
    document = load_yaml(path)
    data = document.data if isinstance(document.data, dict) else {}
    problems = [
        document.problem(
            (str(key),), f"unknown field (expected {', '.join(sorted(_PROMPT_FIELDS))})"
        )
        for key in data
        if key not in _PROMPT_FIELDS
    ]
    template, variables = data.get("template"), data.get("variables") or {}
    if not isinstance(template, str) or not template.strip():
        problems.append(document.problem(("template",), "required, a non-empty string"))
        template = ""
    used = set(string.Template(template).get_identifiers())
    if not isinstance(variables, dict):
        problems.append(document.problem(("variables",), "expected a mapping of name -> meaning"))
        variables = {}
    for name in sorted(used - set(variables)):
        problems.append(document.problem(("template",), f"uses ${{{name}}}, not declared"))
    for name in sorted(set(variables) - _VALUES):
        problems.append(
            document.problem(("variables", name), f"unknown (known: {', '.join(sorted(_VALUES))})")
        )
    for name in sorted(set(variables) & _VALUES - used):
        problems.append(document.problem(("variables", name), "declared but never used"))
    inputs = data.get("inputs") or {}
    if not isinstance(inputs, dict) or not all(
        isinstance(v, list) and v and all(isinstance(n, str) for n in v) for v in inputs.values()
    ):
        problems.append(document.problem(("inputs",), "expected task -> a list of input names"))
        inputs = {}
    stop = data.get("stop") or []
    if not isinstance(stop, list) or not all(isinstance(s, str) and s for s in stop):
        problems.append(document.problem(("stop",), "expected a list of strings"))
        stop = []
    if problems:
        raise InputError(problems)
    return JudgePrompt(
        name=str(data.get("name") or path.stem),
        template=template,
        inputs={str(task): tuple(names) for task, names in inputs.items()},
        stop=tuple(stop),
    )
