"""AdaTest's minimal prompt notation and the parsing of one completion.

A prompt is a list, one test a line, each field in double quotes, and nothing else:

    "I expected better." "should not be" "positive"
    "I wanted to like this." "should not be" "positive"
    "

The LM continues the open quote with one next item and stops at the end of its
line (`STOP`, a quote and a newline). The fields of a line, in order:

    input, input_pair (pair tasks), comparator, output, output_pair (pair comparisons)

A DIR comparator names its label: "should be no less positive than". The
comparator, output and output_pair are left out of every line when they are the
same for all of the prompt's tests (the inputs never are), so a prompt of one
expectation is a plain list of inputs; a pair task's line starts with both texts
(`"How do I cook rice?" "What is the way to cook rice?" "should be" "duplicate"`).

The prompt's `PromptLayout` says which fields its lines show and the shared values
of those left out; a completion is split on `" "` into exactly the shown fields
and refilled from the shared ones. What does not give a valid test comes back
as a `Malformed` with a reason, never an exception. Double quotes and line breaks
inside a field are shown as `'` and a space, so they cannot break the notation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from testaug.adaptive.tree import INPUT_COMPARATORS, LABEL_COMPARATORS, Comparator, TreeTest
from testaug.core.records import Record

STOP = '"\n'
QUOTE = '"'
SEPARATOR = '" "'
FieldName = Literal["input", "input_pair", "comparator", "output", "output_pair"]
ALWAYS_SHOWN: tuple[FieldName, ...] = ("input", "input_pair")
MalformedReason = Literal[
    "truncated", "empty", "wrong_arity", "unknown_comparator", "unknown_label", "invalid"
]
MALFORMED_REASONS: tuple[str, ...] = MalformedReason.__args__  # type: ignore[attr-defined]
_DIRECTIONAL = re.compile(r"^should be no (less|more) (.+) than$", re.IGNORECASE)


class PromptLayout(Record):
    """Which fields a prompt's lines show, in order, and the values shared by the rest."""

    fields: tuple[FieldName, ...]
    shared: dict[str, str] = Field(default_factory=dict)
    tolerance: float = 0.1  # DIR and INV tests: the prompt's first test's tolerance

    @model_validator(mode="after")
    def _complete(self) -> PromptLayout:
        missing = [
            name
            for name in ("input", "comparator", "output")
            if name not in self.fields and name not in self.shared
        ]
        if missing or "input" not in self.fields:
            raise ValueError(f"a layout shows the input and shows or shares {missing}")
        return self


class RenderedPrompt(Record):
    """A prompt's text, its layout, and the tests it shows (in prompt order)."""

    text: str
    layout: PromptLayout
    test_ids: tuple[str, ...]


@dataclass(frozen=True)
class Malformed:
    """Why a completion gives no test."""

    reason: MalformedReason
    detail: str


def clean(text: str) -> str:
    """A field as the notation shows it: one line, no double quotes, single spaces."""
    return " ".join(text.replace(QUOTE, "'").split())


def comparator_text(test: TreeTest) -> str:
    """The comparator as a line shows it; DIR comparators name their label."""
    if test.comparator in ("should be no less than", "should be no more than"):
        direction = test.comparator.split()[3]
        return f"should be no {direction} {test.watched} than"
    return test.comparator


def read_comparator(text: str) -> tuple[Comparator, str | None] | None:
    """A comparator as a line shows it, read back as (comparator, watched label)."""
    text = " ".join(text.split())
    for comparator in (*LABEL_COMPARATORS, "should be the same as for"):
        if text.lower() == comparator:
            return comparator, None
    found = _DIRECTIONAL.match(text)
    if found is None:
        return None
    direction = found.group(1).lower()
    comparator = "should be no less than" if direction == "less" else "should be no more than"
    return comparator, found.group(2).strip()


def test_fields(test: TreeTest) -> dict[FieldName, str]:
    """The fields of a test's line (only those its shape has), as the notation shows them."""
    fields: dict[FieldName, str] = {"input": clean(test.input)}
    if test.input_pair is not None:
        fields["input_pair"] = clean(test.input_pair)
    fields["comparator"] = comparator_text(test)
    fields["output"] = clean(test.output)
    if test.input_pair is not None and test.comparator in INPUT_COMPARATORS:
        fields["output_pair"] = clean(test.output_pair or "")
    return fields


def render_prompt(tests: Sequence[TreeTest]) -> RenderedPrompt:
    """The prompt that lists `tests` in order and opens the next item."""
    if not tests:
        raise ValueError("a prompt needs at least one test")
    rows = [test_fields(test) for test in tests]
    names = list(rows[0])
    if any(list(row) != names for row in rows):
        raise ValueError("a prompt's tests must have one shape (all pairs or none, one kind)")
    shown = tuple(
        name for name in names if name in ALWAYS_SHOWN or len({row[name] for row in rows}) > 1
    )
    shared = {name: rows[0][name] for name in names if name not in shown}
    lines = [QUOTE + SEPARATOR.join(row[name] for name in shown) + STOP for row in rows]
    layout = PromptLayout(fields=shown, shared=shared, tolerance=tests[0].tolerance)
    return RenderedPrompt(
        text="".join(lines) + QUOTE, layout=layout, test_ids=tuple(t.id for t in tests)
    )


def parse_completion(
    text: str,
    layout: PromptLayout,
    *,
    topic: str,
    labels: Sequence[str] | None = None,
    truncated: bool = False,
    source: str = "suggestion",
) -> TreeTest | Malformed:
    """The test one completion writes (labeler "imputed", in `topic`), or why there is none.
    `labels` (the task's) are checked for label outputs and DIR labels, case-insensitively;
    `truncated` says the completion was cut off by its token limit."""
    if truncated:
        return Malformed("truncated", "cut off by the token limit before the end of its line")
    line = text.split("\n", 1)[0].strip()
    if line.startswith(QUOTE):  # a chat model may repeat the opening quote
        line = line[1:]
    if line.endswith(QUOTE):  # the end of text came before the stop sequence
        line = line[:-1]
    if not line.strip():
        return Malformed("empty", "no text before the end of the line")
    parts = [part.strip() for part in line.split(SEPARATOR)]
    if len(parts) != len(layout.fields):
        return Malformed(
            "wrong_arity",
            f"{len(parts)} fields, expected {len(layout.fields)} ({', '.join(layout.fields)})",
        )
    values = {**layout.shared, **dict(zip(layout.fields, parts, strict=True))}
    empty = [name for name in layout.fields if not values[name]]
    if empty:
        return Malformed("empty", f"field {empty[0]} is empty")
    comparator = read_comparator(values["comparator"])
    if comparator is None:
        return Malformed("unknown_comparator", f"{values['comparator']!r} is not a comparator")
    name, watched = comparator
    output = values["output"]
    if labels is not None:
        known = {label.lower(): label for label in labels}
        wanted = output.split("|") if name in LABEL_COMPARATORS else []
        wanted += [watched] if watched is not None else []
        unknown = [word for word in wanted if word.strip().lower() not in known]
        if unknown:
            return Malformed(
                "unknown_label", f"{unknown[0].strip()!r} is not a label ({', '.join(labels)})"
            )
        if name in LABEL_COMPARATORS:
            output = "|".join(known[word.strip().lower()] for word in output.split("|"))
        if watched is not None:
            watched = known[watched.lower()]
    try:
        return TreeTest(
            topic=topic,
            input=values["input"],
            input_pair=values.get("input_pair"),
            comparator=name,
            output=output,
            output_pair=values.get("output_pair"),
            watched=watched,
            tolerance=layout.tolerance,
            labeler="imputed",
            source=source,
        )
    except ValidationError as exc:
        return Malformed("invalid", exc.errors()[0]["msg"])
