"""Bracket formats: how a case is written as a list item, and how a reply is read back.

Three formats, after TestAug's prompts (Table 2 and Table 9):

- `single`:        `- { text }`
- `pair`:          `- {{ text }` then `- { text pair }}` (one outer bracket, two inner)
- `labelled_pair`: `- { premise }` then `- Implication: { hypothesis }`

A prompt ends with the format's opening (`- {` or `- {{`) and the model continues
it until a stop sequence. `parse_reply` reads the first item of a reply and never
raises: what does not fit the format comes back as a `ParseFailure` with a reason.
Text it returns never contains a bracket.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

FormatName = Literal["single", "pair", "labelled_pair"]
RejectReason = Literal[
    "unbalanced",
    "empty",
    "wrong_arity",
    "unknown_label",
    "copy_of_example",
    "duplicate",
    "too_long",
]
REJECT_REASONS: tuple[RejectReason, ...] = RejectReason.__args__  # type: ignore[attr-defined]

_LABEL_WORD = re.compile(r"^\s*-?\s*([^\s:{}][^:{}]*?)\s*:\s*$")
_SEPARATOR = re.compile(r"^\s*-?\s*$")


@dataclass(frozen=True)
class BracketFormat:
    """How a case is bracketed: the prompt's opening, what closes an item, stop sequences."""

    name: FormatName
    opening: str
    closing: str
    stop: tuple[str, ...]

    @property
    def is_pair(self) -> bool:
        return self.name != "single"


FORMATS: dict[str, BracketFormat] = {
    "single": BracketFormat("single", "- {", "}", ("}",)),
    "pair": BracketFormat("pair", "- {{", "}}", ("}}",)),
    # Stop after the hypothesis's bracket, not the premise's: "}\n- {" starts the next item.
    "labelled_pair": BracketFormat("labelled_pair", "- {", "}", ("}\n- {", "}\n\n")),
}


def render_item(
    fmt: BracketFormat, text: str, text_pair: str | None = None, label_word: str | None = None
) -> str:
    """One case written as a list item of the format (one line, or two for pairs)."""
    if fmt.name == "single":
        return f"- {{ {text} }}"
    if fmt.name == "pair":
        return f"- {{{{ {text} }}\n- {{ {text_pair} }}}}"
    return f"- {{ {text} }}\n- {label_word}: {{ {text_pair} }}"


@dataclass(frozen=True)
class ParsedItem:
    """The first item of a reply: its text, its pair, and the label word written before it."""

    text: str
    text_pair: str | None = None
    label_word: str | None = None


@dataclass(frozen=True)
class ParseFailure:
    """Why a reply holds no usable item."""

    reason: RejectReason
    detail: str


def parse_reply(
    reply: str,
    fmt: BracketFormat,
    *,
    continuation: bool = True,
    stopped: bool = True,
) -> ParsedItem | ParseFailure:
    """Read the first item of a reply in the given format; never raises.

    `continuation`: the reply continues the prompt's opening bracket (completion
    endpoints); otherwise it is a whole answer (chat) and the item is searched in it.
    `stopped`: a stop sequence ended the reply, so the closing bracket it consumed is
    put back; a reply cut by the token limit is not closed.
    """
    text = (fmt.opening + reply) if continuation else reply
    if stopped:
        text += fmt.closing
    start = text.find("{")
    if start < 0:
        return ParseFailure("unbalanced", "no opening bracket")
    group, end = _read_group(text, start)
    if group is None:
        return ParseFailure(
            "unbalanced", "no closing bracket" if stopped else "cut off by the token limit"
        )
    if fmt.name == "single":
        return _single(group)
    if fmt.name == "pair":
        return _pair(group)
    return _labelled_pair(group, text, end, stopped)


# A bracket group: the strings and nested groups between a `{` and its `}`.
Group = list["str | Group"]


def _read_group(text: str, start: int) -> tuple[Group | None, int]:
    """The balanced group opening at text[start] and the index after it, or None if unclosed."""
    stack: list[Group] = [[]]
    chunk_start = start + 1
    for index in range(start + 1, len(text)):
        char = text[index]
        if char not in "{}":
            continue
        if index > chunk_start:
            stack[-1].append(text[chunk_start:index])
        chunk_start = index + 1
        if char == "{":
            child: Group = []
            stack[-1].append(child)
            stack.append(child)
        else:
            closed = stack.pop()
            if not stack:
                return closed, index + 1
    return None, len(text)


def _is_flat(group: Group) -> bool:
    return all(isinstance(part, str) for part in group)


def _clean(group: Group) -> str:
    return " ".join("".join(part for part in group if isinstance(part, str)).split())


def _single(group: Group) -> ParsedItem | ParseFailure:
    if not _is_flat(group):
        inner = [part for part in group if not isinstance(part, str)]
        if len(inner) == 2 and all(_is_flat(part) for part in inner):
            return ParseFailure("wrong_arity", "a pair where one sentence is needed")
        return ParseFailure("unbalanced", "nested brackets")
    text = _clean(group)
    return ParsedItem(text) if text else ParseFailure("empty", "empty brackets")


def _pair(group: Group) -> ParsedItem | ParseFailure:
    inner = [part for part in group if not isinstance(part, str)]
    if not inner:
        return ParseFailure("wrong_arity", "one sentence where a pair is needed")
    if not all(_is_flat(part) for part in inner):
        return ParseFailure("unbalanced", "brackets nested too deep")
    outside = [part for part in group if isinstance(part, str)]
    if any(not _SEPARATOR.match(part) for part in outside):
        return ParseFailure("unbalanced", "text outside the inner brackets")
    if len(inner) != 2:
        return ParseFailure("wrong_arity", f"{len(inner)} sentences where a pair is needed")
    first, second = _clean(inner[0]), _clean(inner[1])
    if not first or not second:
        return ParseFailure("empty", "an empty sentence in the pair")
    return ParsedItem(first, second)


def _labelled_pair(group: Group, text: str, end: int, stopped: bool) -> ParsedItem | ParseFailure:
    if not _is_flat(group):
        return ParseFailure("unbalanced", "nested brackets")
    premise = _clean(group)
    start = text.find("{", end)
    if start < 0:
        return ParseFailure("wrong_arity", "a premise without a hypothesis")
    between = text[end:start]
    hypothesis_group, _ = _read_group(text, start)
    if hypothesis_group is None:
        return ParseFailure(
            "unbalanced", "no closing bracket" if stopped else "cut off by the token limit"
        )
    if not _is_flat(hypothesis_group):
        return ParseFailure("unbalanced", "nested brackets")
    hypothesis = _clean(hypothesis_group)
    if not premise or not hypothesis:
        return ParseFailure("empty", "an empty sentence in the pair")
    match = _LABEL_WORD.match(between)
    if match is None:
        if _SEPARATOR.match(between):
            return ParseFailure("unknown_label", "no label word before the hypothesis")
        return ParseFailure("unknown_label", f"cannot read a label word in {between.strip()!r}")
    return ParsedItem(premise, hypothesis, match.group(1))


def label_of_word(word: str, label_words: Mapping[str, str]) -> str | None:
    """The label a label word stands for (case and spacing ignored), or None."""
    wanted = " ".join(word.split()).casefold()
    for label, label_word in label_words.items():
        if " ".join(label_word.split()).casefold() == wanted:
            return label
    return None


def comparison_key(text: str, text_pair: str | None) -> tuple[str, str | None]:
    """A case's text as compared for copies and duplicates: case, spacing, end punctuation ignored."""

    def norm(value: str) -> str:
        return " ".join(value.casefold().split()).rstrip(" .!?")

    return norm(text), None if text_pair is None else norm(text_pair)
