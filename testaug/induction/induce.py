"""Template induction (TestAug 4.3): where an accepted generated case reuses a slot word of
the seed cases that prompted it, that word becomes the slot again, and the case a template.

A slot word matches by its words or their lemmas (spaCy), so "appreciate" also matches
"appreciates": the new slot keeps the inflection (`{vbz:pos_verb}`). Multi-word values
match as a run of tokens; an "a"/"an" before a slot becomes `{a:slot}` so the article
agrees with every lexicon word; only content words (nouns, verbs, adjectives) become
slots. Every template is checked: filled with the original words it gives back the case.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from testaug.core.errors import format_path
from testaug.core.records import Label, Record, TestCase, TestType, content_id, description_id
from testaug.core.spacy_pipeline import check_parse_lengths
from testaug.suites.inflection import TAGS as INFLECTIONS
from testaug.suites.inflection import inflect
from testaug.suites.provenance import Provenance, case_provenance, is_verified
from testaug.suites.templates import lexicon_of, render
from testaug.suites.templates import tags as slot_tags

logger = logging.getLogger(__name__)

CONTENT_POS = {"NOUN", "PROPN", "VERB", "ADJ"}
REASONS = ("no_seed_fills", "no_slot_word", "roundtrip")


class InducedTemplate(Record):
    """A template made from an accepted generated case, with where it came from."""

    id: str
    task: str
    capability: str
    description_id: str
    description: str
    label: Label
    test_type: TestType = "MFT"
    text: str
    text_pair: str | None = None
    slots: dict[str, str]
    case_id: str
    seed_template_ids: tuple[str, ...]
    case_provenance: Provenance | None = None  # None in files written before it was kept


@dataclass(frozen=True)
class SlotWord:
    """A word that filled a slot in a seed case: its tag, its tokens and their lemmas."""

    tag: str
    word: str
    lemmas: tuple[str, ...]
    base_form: bool


@dataclass(frozen=True)
class Match:
    """A run of tokens in a generated text that a slot word fills: [start, end) in chars."""

    start: int
    end: int
    slot: SlotWord
    option: str | None


@dataclass
class InductionResult:
    """The templates made, and why the other cases gave none."""

    templates: list[InducedTemplate] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)


def slot_words(seeds: Sequence[TestCase], parsed: Mapping[str, Any]) -> list[SlotWord]:
    """The slot words of seed cases, with lemmas read from each seed's own parse."""
    words: dict[tuple[str, str], SlotWord] = {}
    for seed in seeds:
        docs = [d for d in (parsed.get(seed.text), parsed.get(seed.text_pair or "")) if d]
        for tag, word in seed.fills.items():
            if (tag, word) in words or not word.strip():
                continue
            tokens = _find(docs, word)
            lemmas = (
                tuple(t.lemma_.lower() for t in tokens) if tokens else tuple(word.lower().split())
            )
            base = tuple(word.lower().split()) == lemmas
            words[(tag, word)] = SlotWord(tag, word, lemmas, base)
    return list(words.values())


def _find(docs: Sequence[Any], word: str) -> list[Any]:
    """The tokens of the first occurrence of `word` (as whole tokens) in the docs."""
    wanted = [w.lower() for w in word.split()]
    for doc in docs:
        lowers = [t.lower_ for t in doc]
        for i in range(len(doc) - len(wanted) + 1):
            if lowers[i : i + len(wanted)] == wanted:
                return list(doc[i : i + len(wanted)])
    return []


def matches_in(doc: Any, slots: Sequence[SlotWord]) -> list[Match]:
    """Non-overlapping runs of tokens in `doc` that slot words fill, longest first."""
    found: list[Match] = []
    for slot in slots:
        n = len(slot.lemmas)
        for i in range(len(doc) - n + 1):
            span = doc[i : i + n]
            if not all(
                t.lower_ == w or t.lemma_.lower() == lem
                for t, w, lem in zip(span, slot.word.lower().split(), slot.lemmas, strict=True)
            ):
                continue
            if not any(t.pos_ in CONTENT_POS for t in span) or all(t.is_stop for t in span):
                continue
            option = _option(span, slot)
            if option is None:
                continue
            match = Match(span.start_char, span.end_char, slot, option or None)
            found.append(_with_article(doc, i, match))
    found.sort(key=lambda m: (-(m.end - m.start), m.start))
    chosen: list[Match] = []
    for match in found:
        if all(match.end <= c.start or match.start >= c.end for c in chosen):
            chosen.append(match)
    return sorted(chosen, key=lambda m: m.start)


def _option(span: Any, slot: SlotWord) -> str | None:
    """How the slot word must be written to give the span: "" as it is, or an option."""
    text = span.text
    if text == slot.word:
        return ""
    if text == slot.word[:1].upper() + slot.word[1:]:
        return "cap"
    if not slot.base_form:
        return None
    for token in span:
        tag = token.tag_.lower()
        if tag in INFLECTIONS and inflect(slot.word, tag) == text:
            return tag
    for tag in INFLECTIONS:  # the tagger may read "appreciated" as VBN where VBD fits too
        if inflect(slot.word, tag) == text:
            return tag
    return None


def _with_article(doc: Any, first: int, match: Match) -> Match:
    """Take an "a"/"an" just before an uninflected slot (token `first`) into it: `{a:slot}`."""
    if match.option is not None or first == 0:
        return match
    before = doc[first - 1]
    if before.lower_ not in ("a", "an") or not before.whitespace_:
        return match
    option = "A" if before.text[:1].isupper() else "a"
    return Match(before.idx, match.end, match.slot, option)


def template_text(text: str, matches: Sequence[Match], tag_of: Mapping[str, str]) -> str:
    """The text with each match replaced by its slot; literal braces doubled."""
    out, pos = [], 0
    for match in matches:
        out.append(_escape(text[pos : match.start]))
        tag = tag_of[match.slot.word.lower()]
        out.append(f"{{{match.option}:{tag}}}" if match.option else f"{{{tag}}}")
        pos = match.end
    out.append(_escape(text[pos:]))
    return "".join(out)


def _escape(literal: str) -> str:
    return literal.replace("{", "{{").replace("}", "}}")


def assign_tags(matches: Iterable[Match]) -> dict[str, str]:
    """A tag per distinct slot word: the seed's tag, or a numbered copy of its lexicon when
    that tag already holds another word (so the same word is the same slot everywhere)."""
    tag_of: dict[str, str] = {}
    used: set[str] = set()
    for match in matches:
        key = match.slot.word.lower()
        if key in tag_of:
            continue
        tag, number = match.slot.tag, 1
        while tag in used:
            tag, number = f"{lexicon_of(match.slot.tag)}{number}", number + 1
        tag_of[key] = tag
        used.add(tag)
    return tag_of


def induce_one(
    case: TestCase, seeds: Sequence[TestCase], parsed: Mapping[str, Any]
) -> InducedTemplate | str:
    """A template from one accepted case, or the reason there is none."""
    slots = slot_words([s for s in seeds if s.fills], parsed)
    if not slots:
        return "no_seed_fills"
    texts = [t for t in (case.text, case.text_pair) if t is not None]
    per_text = [matches_in(parsed[t], slots) for t in texts]
    if not any(per_text):
        return "no_slot_word"
    tag_of = assign_tags(m for ms in per_text for m in ms)
    templates = [template_text(t, ms, tag_of) for t, ms in zip(texts, per_text, strict=True)]
    fills = {tag_of[m.slot.word.lower()]: m.slot.word for ms in per_text for m in ms}
    if [render(t, fills) for t in templates] != texts:
        return "roundtrip"
    text_pair = templates[1] if len(templates) > 1 else None
    return InducedTemplate(
        # The id the suite loader gives the template, so expanded cases link back here.
        id=content_id(
            "template",
            description_id(case.task, case.capability, case.description),
            templates[0],
            text_pair,
        ),
        task=case.task,
        capability=case.capability,
        description_id=case.description_id,
        description=case.description,
        label=case.label,
        test_type=case.test_type,
        text=templates[0],
        text_pair=text_pair,
        slots=fills,
        case_id=case.id,
        seed_template_ids=tuple(dict.fromkeys(s.template_id for s in seeds if s.template_id)),
        case_provenance=case_provenance(case),
    )


def induce_templates(
    accepted: Sequence[TestCase], seeds: Mapping[str, TestCase], nlp: Any, *, batch_size: int = 256
) -> InductionResult:
    """Templates from accepted generated cases and the seed cases behind them (by
    `meta["seed_case_ids"]`), each parsed once with spaCy in batches. A template made
    from several cases records a verified one where there is one. A text longer than spaCy
    parses is an InputError naming it."""
    result = InductionResult()
    work = [
        (c, [seeds[i] for i in c.meta.get("seed_case_ids", []) if i in seeds]) for c in accepted
    ]
    texts = {
        t
        for case, case_seeds in work
        for item in (case, *case_seeds)
        for t in (item.text, item.text_pair)
        if t
    }
    check_parse_lengths(texts)
    parsed = dict(zip(texts, nlp.pipe(list(texts), batch_size=batch_size), strict=True))
    index: dict[str, int] = {}
    for case, case_seeds in work:
        made = induce_one(case, case_seeds, parsed)
        if isinstance(made, str):
            result.skipped[made] += 1
        elif made.id not in index:
            index[made.id] = len(result.templates)
            result.templates.append(made)
        elif is_verified(made.case_provenance) and not is_verified(
            result.templates[index[made.id]].case_provenance
        ):  # the same template from a case people vouch for: it rests on that one
            result.templates[index[made.id]] = made
    logger.info("induced %d templates from %d cases", len(result.templates), len(accepted))
    return result


def lexicons_used(templates: Iterable[InducedTemplate]) -> list[str]:
    """The lexicons the templates draw from, in order of first use."""
    names: dict[str, None] = {}
    for template in templates:
        for tag in slot_tags(template.text, template.text_pair):
            names.setdefault(lexicon_of(tag))
    return list(names)


def induced_suite(
    templates: Sequence[InducedTemplate],
    *,
    name: str,
    task: str,
    labels: Sequence[str],
    lexicon_file: str,
) -> dict[str, Any]:
    """A suite document (source `expansion`) holding the templates, grouped by capability
    and description; it loads with `load_suite` and expands with `testaug templates expand`."""
    capabilities = []
    for capability, descriptions in _grouped(templates).items():
        entries = []
        for (description, test_type), members in descriptions.items():
            label = _yaml_label(members[0].label)
            rows: list[Any] = []
            for member in members:
                text: Any = (
                    member.text if member.text_pair is None else [member.text, member.text_pair]
                )
                if _yaml_label(member.label) != label:
                    text = {
                        "text": member.text,
                        "text_pair": member.text_pair,
                        "label": _yaml_label(member.label),
                    }
                    text = {k: v for k, v in text.items() if v is not None}
                rows.append(text)
            entries.append(
                {
                    "description": description,
                    "test_type": test_type,
                    "label": label,
                    "templates": rows,
                }
            )
        capabilities.append({"name": capability, "descriptions": entries})
    return {
        "name": name,
        "task": task,
        "labels": list(labels),
        "source": "expansion",
        "lexicons": [lexicon_file],
        "capabilities": capabilities,
    }


def _grouped(
    templates: Iterable[InducedTemplate],
) -> dict[str, dict[tuple[str, str], list[InducedTemplate]]]:
    grouped: dict[str, dict[tuple[str, str], list[InducedTemplate]]] = {}
    for template in templates:
        key = (template.description, template.test_type)
        grouped.setdefault(template.capability, {}).setdefault(key, []).append(template)
    return grouped


def suite_positions(templates: Iterable[InducedTemplate]) -> dict[str, InducedTemplate]:
    """Where `induced_suite` puts each template, as a field path
    (`capabilities[0].descriptions[1].templates[2]`), and each capability and description
    with its first template, so a problem in the suite names the case behind it."""
    positions: dict[str, InducedTemplate] = {}
    for i, descriptions in enumerate(_grouped(templates).values()):
        for j, members in enumerate(descriptions.values()):
            where: tuple[str | int, ...] = ("capabilities", i, "descriptions", j)
            positions.setdefault(format_path(where[:2]), members[0])
            positions[format_path(where)] = members[0]
            for k, member in enumerate(members):
                positions[format_path((*where, "templates", k))] = member
    return positions


def _yaml_label(label: Label) -> str | list[str]:
    return label if isinstance(label, str) else list(label)
