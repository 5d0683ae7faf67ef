"""Does a candidate instantiate a template of the suite? Features for the neighbour member.

A candidate that fills a template of its own description, proposed with that template's
label, shows the description's construction by the suite's own definition; one whose
fills are words the suite's lexicons give those slots is a template case outright. A
candidate that fills a template of another description instead is a case of that one.
The templates and the words of each slot come from the reference cases (template cases
keep their template and fills), so any suite brings its own.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from testaug.core.records import Candidate, TestCase, label_options

SLOT = re.compile(r"\{([^{}]+)\}")
MAX_FILL_WORDS = 4


def _normal(text: str) -> str:
    """Lower case, single spaces, plain apostrophes and quotes (ends kept as they are)."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
    return re.sub(r"\s+", " ", text.replace("\u201d", '"').lower())


def _slot_name(spec: str) -> str:
    """The lexicon a slot draws from: `{vbz:pos_verb}` -> pos_verb, `{city1}` -> city."""
    return spec.rpartition(":")[2].rstrip("0123456789")


def _pattern(template: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    """A regular expression that a filled template matches, and its slots' lexicon names."""
    regex, names, position = "", [], 0
    for match in SLOT.finditer(template):
        regex += re.escape(_normal(template[position : match.start()]))
        spec = match.group(1)
        article = r"an? " if spec.partition(":")[0] == "a" else ""
        regex += article + r"(.+?)"
        names.append(_slot_name(spec))
        position = match.end()
    regex += re.escape(_normal(template[position:]))
    return re.compile(regex), tuple(names)


@dataclass(frozen=True)
class _Template:
    description_id: str
    labels: frozenset[str]
    patterns: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]  # one per side


class TemplateIndex:
    """The templates of a task's reference cases, and the words seen in each lexicon."""

    def __init__(self, cases: Sequence[TestCase]) -> None:
        seen: dict[tuple[str, str, str | None], _Template] = {}
        self.words: dict[str, set[str]] = defaultdict(set)
        for case in cases:
            if not case.template:
                continue
            for spec, value in case.fills.items():
                self.words[_slot_name(spec)].add(_normal(value).strip())
            key = (case.description_id, case.template, case.template_pair)
            if key not in seen:
                sides = [case.template] + ([case.template_pair] if case.template_pair else [])
                seen[key] = _Template(
                    case.description_id,
                    frozenset(label_options(case.label)),
                    tuple(_pattern(side) for side in sides),
                )
        self.templates = list(seen.values())

    def fit(self, candidate: Candidate) -> tuple[float, float, float, float]:
        """(fits a template of its own description under that template's label, the share
        of its fills that the lexicons give those slots, whether they all are, the same
        share for the best fit of another description's template: 0 where none fits)."""
        sides = [_normal(candidate.text).strip()]
        if candidate.text_pair is not None:
            sides.append(_normal(candidate.text_pair).strip())
        proposed = frozenset(label_options(candidate.label))
        own, known, other = 0.0, 0.0, 0.0
        for template in self.templates:
            fills = _fills(template, sides)
            if fills is None:
                continue
            share = sum(value in self.words[name] for name, value in fills) / max(len(fills), 1)
            if template.description_id != candidate.description_id:
                other = max(other, share)
            elif template.labels == proposed:
                own, known = 1.0, max(known, share)
        return own, known, float(known == 1.0), other


def _fills(template: _Template, sides: list[str]) -> list[tuple[str, str]] | None:
    """The (lexicon, word) fills when every side matches its template; None otherwise."""
    if len(sides) != len(template.patterns):
        return None
    fills: list[tuple[str, str]] = []
    for (pattern, names), side in zip(template.patterns, sides, strict=True):
        match = pattern.fullmatch(side)
        if match is None:
            return None
        values = match.groups()
        if any(len(value.split()) > MAX_FILL_WORDS for value in values):
            return None
        fills.extend(zip(names, values, strict=True))
    return fills
