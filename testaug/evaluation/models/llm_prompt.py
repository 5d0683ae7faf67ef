"""The prompt an LLM under test classifies a case with, and the reading of its answer.

A classify prompt is YAML (`prompts/<task>-classify.yaml` are the shipped ones):

    name: sentiment-classify
    task: sentiment
    purpose: classify
    inputs: [sentence]            # how the case's text (and its pair) is named
    synonyms: {positive: [good]}  # label -> more words an answer may use for it
    stop: ["\\n"]
    variables: {labels: ..., case: ...}
    template: |-
      ... ${labels} ... ${case} ... Sentiment:

The variables a template may use are labels (the labels to choose from, "a, b or c"),
case (one "Name: text" line per input) and task; each one used must be declared.

An answer is read tolerantly: case, punctuation, markdown and `_`/`-`/space between
words do not matter; the label words are the labels themselves, their usual aliases
(`testaug.evaluation.models.labels`) and the prompt's synonyms. The first label word in
the answer is its label (of two that start at the same place, the longer: "not
duplicate" before "duplicate"). An answer with no label word is unparseable.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from testaug.core.errors import InputError, Problem
from testaug.evaluation.models.labels import ALIASES, canonical

PURPOSE = "classify"
_FIELDS = {"name", "task", "purpose", "inputs", "synonyms", "stop", "variables", "template"}
_VALUES = {"labels", "case", "task"}


@dataclass(frozen=True)
class ClassifyPrompt:
    """A loaded classify prompt: its template, input names, label synonyms and stops."""

    name: str
    task: str
    template: str
    inputs: tuple[str, ...] = ()
    synonyms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    stop: tuple[str, ...] = ()
    path: Path | None = None

    def render(self, text: str, text_pair: str | None, labels: Sequence[str]) -> str:
        """The prompt for one case, offering `labels` (written with spaces for `_`)."""
        texts = [text] if text_pair is None else [text, text_pair]
        names = self.inputs[: len(texts)] if len(self.inputs) >= len(texts) else ()
        if not names:
            names = ("text",) if text_pair is None else ("text 1", "text 2")
        lines = [f"{n[:1].upper()}{n[1:]}: {t}" for n, t in zip(names, texts, strict=True)]
        words = [label.replace("_", " ") for label in labels]
        offered = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
        values = {"labels": offered, "case": "\n".join(lines), "task": self.task}
        return string.Template(self.template).safe_substitute(values)


def load_classify_prompt(path: Path) -> ClassifyPrompt:
    """A classify prompt file; `InputError` naming the file, line and field of each problem."""
    from testaug.core.yaml_source import load_yaml

    document = load_yaml(path)
    data = document.data if isinstance(document.data, dict) else {}
    problems = [
        document.problem((str(key),), f"unknown field (expected {', '.join(sorted(_FIELDS))})")
        for key in data
        if key not in _FIELDS
    ]
    for key in ("name", "task", "template"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            problems.append(document.problem((key,), "required, a non-empty string"))
    if data.get("purpose", PURPOSE) != PURPOSE:
        problems.append(document.problem(("purpose",), f"expected {PURPOSE!r}"))
    template = data.get("template") if isinstance(data.get("template"), str) else ""
    variables = data.get("variables") or {}
    if not isinstance(variables, dict):
        problems.append(document.problem(("variables",), "expected a mapping of name -> meaning"))
        variables = {}
    used = set(string.Template(template).get_identifiers())
    for name in sorted(used - set(variables)):
        problems.append(document.problem(("template",), f"uses ${{{name}}}, not declared"))
    for name in sorted(set(variables) - _VALUES):
        problems.append(
            document.problem(("variables", name), f"unknown (known: {', '.join(sorted(_VALUES))})")
        )
    for name in sorted(set(variables) & _VALUES - used):
        problems.append(document.problem(("variables", name), "declared but never used"))
    inputs = data.get("inputs") or []
    if not isinstance(inputs, list) or not all(isinstance(n, str) and n for n in inputs):
        problems.append(document.problem(("inputs",), "expected a list of input names"))
        inputs = []
    synonyms = data.get("synonyms") or {}
    if not isinstance(synonyms, dict) or not all(
        isinstance(words, list) and all(isinstance(w, str) and w.strip() for w in words)
        for words in synonyms.values()
    ):
        problems.append(document.problem(("synonyms",), "expected label -> a list of words"))
        synonyms = {}
    stop = data.get("stop") or []
    if not isinstance(stop, list) or not all(isinstance(s, str) and s for s in stop):
        problems.append(document.problem(("stop",), "expected a list of strings"))
        stop = []
    if problems:
        raise InputError(problems)
    return ClassifyPrompt(
        name=str(data["name"]),
        task=str(data["task"]),
        template=template,
        inputs=tuple(inputs),
        synonyms={str(label): tuple(words) for label, words in synonyms.items()},
        stop=tuple(stop),
        path=path,
    )


def classify_prompt(task: str | None = None, path: Path | None = None) -> ClassifyPrompt:
    """A classify prompt by file, or the shipped one for the task; `InputError` when the
    task has none (naming the shipped ones)."""
    from testaug.core.bundled import bundled_dir

    if path is not None:
        if not path.is_file():
            raise InputError(Problem(f"no prompt file {str(path)!r}", field="prompt"))
        return load_classify_prompt(path)
    shipped = bundled_dir("prompts") / f"{task}-{PURPOSE}.yaml"
    if not shipped.is_file():
        available = sorted(p.stem for p in bundled_dir("prompts").glob(f"*-{PURPOSE}.yaml"))
        raise InputError(
            Problem(
                f"no shipped classify prompt for task {task!r} (shipped: "
                f"{', '.join(available)}); name one with prompt=FILE",
                field="prompt",
            )
        )
    return load_classify_prompt(shipped)


def _phrase_pattern(phrase: str) -> str:
    """A regex for a phrase: its words with any run of spaces, `_` or `-` between them."""
    words = [re.escape(w) for w in re.split(r"[\s_\-]+", phrase.strip().lower()) if w]
    return r"[\s_\-]+".join(words)


class AnswerReader:
    """Reads an answer's label among `labels` (module docstring)."""

    def __init__(self, labels: Sequence[str], synonyms: dict[str, tuple[str, ...]]) -> None:
        self.labels = tuple(labels)
        by_name = {canonical(label): label for label in self.labels}
        words: dict[str, str] = {}  # phrase -> label
        for name, label in by_name.items():
            phrases = [label, name, *ALIASES.get(name, ())]
            phrases += [w for key, ws in synonyms.items() if canonical(key) == name for w in ws]
            for phrase in phrases:
                if not phrase.strip().isdigit():  # "1" is a count as often as a label
                    words.setdefault(_phrase_pattern(phrase), label)
        # Longer phrases first, so that at one place "not duplicate" wins over "duplicate".
        ordered = sorted(words, key=len, reverse=True)
        self._labels = [words[p] for p in ordered]
        self._pattern = re.compile(
            "|".join(f"(?<![\\w])({p})(?![\\w])" for p in ordered), re.IGNORECASE
        )

    def read(self, answer: str) -> str | None:
        """The answer's label; None when it holds no label word."""
        match = self._pattern.search(answer)
        if match is None:
            return None
        return self._labels[match.lastindex - 1 if match.lastindex else 0]
