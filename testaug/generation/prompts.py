"""Prompt template files: one per task and purpose, with declared variables.

A prompt file is YAML:

    name: sentiment-generate
    task: sentiment
    purpose: generate
    format: single            # the bracket format of the items (see testaug.generation.parsing)
    label_words: {...}        # labelled_pair only: label -> the word written before a hypothesis
    variables:                # every ${variable} the template uses, with what it holds
      description: the test-case description
      examples: the in-context seed cases
    template: |-
      ${description}
      ${examples}
      - {

Variables are written `${name}`; `$$` is a literal `$`. Loading checks that the
template uses exactly the declared variables and ends with the format's opening
bracket; rendering checks that it gets exactly those variables.
"""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass, field
from pathlib import Path

from testaug.core.bundled import bundled_dir
from testaug.core.errors import InputError, Problem
from testaug.core.yaml_source import YamlDocument, load_yaml
from testaug.generation.parsing import FORMATS, BracketFormat

_FIELDS = {"name", "task", "purpose", "format", "label_words", "variables", "template"}


@dataclass(frozen=True)
class PromptTemplate:
    """A loaded prompt file: its text with `${variables}`, and how its items are bracketed."""

    name: str
    task: str
    purpose: str
    format: BracketFormat
    variables: dict[str, str]
    template: str
    path: Path | None = None
    label_words: dict[str, str] = field(default_factory=dict)

    @property
    def sha(self) -> str:
        """A short hash of everything that shapes the rendered prompt."""
        payload = repr((self.template, self.format.name, sorted(self.label_words.items())))
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]

    def render(self, **values: str) -> str:
        """The template with its variables filled; an error names any missing or unknown one."""
        missing = sorted(set(self.variables) - set(values))
        unknown = sorted(set(values) - set(self.variables))
        problems = [
            Problem(f"missing value for variable ${{{name}}}", self.path, None, "variables")
            for name in missing
        ] + [
            Problem(
                f"unknown variable {name!r} (declared: {', '.join(sorted(self.variables))})",
                self.path,
                None,
                "variables",
            )
            for name in unknown
        ]
        if problems:
            raise InputError(problems)
        return string.Template(self.template).substitute(values)


def load_prompt(path: Path) -> PromptTemplate:
    """Load and check a prompt file; every problem is reported with its line and field."""
    document = load_yaml(path)
    data = document.data
    if not isinstance(data, dict):
        raise InputError(document.problem((), "expected a mapping with name, format, template"))
    problems: list[Problem] = [
        document.problem(
            (str(key),), f"unknown field (expected one of {', '.join(sorted(_FIELDS))})"
        )
        for key in data
        if key not in _FIELDS
    ]
    for key in ("name", "task", "purpose", "format", "template"):
        if not isinstance(data.get(key), str) or not data[key]:
            problems.append(document.problem((key,), "required, a non-empty string"))
    variables = data.get("variables") or {}
    if not isinstance(variables, dict) or not all(isinstance(k, str) for k in variables):
        problems.append(document.problem(("variables",), "expected a mapping of name -> meaning"))
        variables = {}
    fmt = FORMATS.get(str(data.get("format")))
    if data.get("format") and fmt is None:
        problems.append(
            document.problem(("format",), f"unknown format (expected {', '.join(FORMATS)})")
        )
    label_words = data.get("label_words") or {}
    if not isinstance(label_words, dict) or not all(
        isinstance(v, str) and v.strip() for v in label_words.values()
    ):
        problems.append(document.problem(("label_words",), "expected a mapping of label -> word"))
        label_words = {}
    if fmt is not None and fmt.name == "labelled_pair" and not label_words:
        problems.append(document.problem(("format",), "labelled_pair needs label_words"))
    template = data.get("template")
    if isinstance(template, str) and template:
        problems.extend(_check_template(document, template, variables, fmt))
    if problems:
        raise InputError(problems)
    assert fmt is not None
    return PromptTemplate(
        name=data["name"],
        task=data["task"],
        purpose=data["purpose"],
        format=fmt,
        variables={str(k): str(v) for k, v in variables.items()},
        template=template,
        path=path,
        label_words={str(k): str(v) for k, v in label_words.items()},
    )


def _check_template(
    document: YamlDocument, template: str, variables: dict, fmt: BracketFormat | None
) -> list[Problem]:
    problems: list[Problem] = []
    parsed = string.Template(template)
    if not parsed.is_valid():
        problems.append(document.problem(("template",), "a `$` that starts no ${variable}"))
        return problems
    used = set(parsed.get_identifiers())
    for name in sorted(used - set(variables)):
        problems.append(
            document.problem(("template",), f"uses ${{{name}}}, which `variables` does not declare")
        )
    for name in sorted(set(variables) - used):
        problems.append(
            document.problem(("variables", name), "declared but the template never uses it")
        )
    if fmt is not None and not template.rstrip(" ").endswith(fmt.opening):
        problems.append(
            document.problem(
                ("template",), f"must end with the {fmt.name} format's opening {fmt.opening!r}"
            )
        )
    return problems


def prompt_for(task: str, purpose: str = "generate", path: Path | None = None) -> PromptTemplate:
    """A prompt file by path, or the shipped one for the task and purpose."""
    if path is not None:
        return load_prompt(path)
    shipped = bundled_dir("prompts") / f"{task}-{purpose}.yaml"
    if not shipped.is_file():
        available = ", ".join(p.stem for p in sorted(bundled_dir("prompts").glob("*.yaml")))
        raise InputError(
            Problem(
                f"no shipped prompt for task {task!r} (shipped: {available}); pass --prompt FILE"
            )
        )
    return load_prompt(shipped)
