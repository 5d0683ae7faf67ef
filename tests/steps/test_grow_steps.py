"""The steps that grow the suite, on files and without Prefect: templates induced from
accepted cases that reuse slot words of their seeds, their fills (traced to the accepted
case), and the suite with the new cases appended once."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from testaug.core.errors import InputError
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import TestCase
from testaug.induction.induce import InducedTemplate
from testaug.steps.grow import (
    ExpandInducedConfig,
    ExtendConfig,
    InduceConfig,
    expand_induced,
    extend_suite,
    induce_templates_file,
)
from testaug.suites.cases import expand_suite
from testaug.suites.load import load_suite

pytest.importorskip("spacy")

REUSES_LOVE = "Never loved an old seat."  # "love" is a fill of the "I don't {pos_verb} ..." seeds


@pytest.fixture
def cases(tmp_path: Path, tiny_suite_path: Path) -> Path:
    """cases.jsonl: two cases of each template of the tiny suite."""
    path = tmp_path / "cases.jsonl"
    write_jsonl(path, expand_suite(load_suite(tiny_suite_path), per_template=2, seed=0))
    return path


def accepted_case(text: str, seeds: list[TestCase], accepted_by: str = "people") -> TestCase:
    """A generated case accepted by `accepted_by`, prompted by `seeds`."""
    seed = seeds[0]
    return TestCase(
        task=seed.task,
        capability=seed.capability,
        description_id=seed.description_id,
        description=seed.description,
        text=text,
        label=seed.label,
        source="llm",
        meta={"seed_case_ids": [s.id for s in seeds], "accepted_by": accepted_by},
    )


@pytest.fixture
def accepted(tmp_path: Path, cases: Path) -> Path:
    """accepted.jsonl: one case that reuses a seed's slot word, two that reuse none."""
    negation = [c for c in read_jsonl(cases, TestCase) if c.capability == "Negation"]
    path = tmp_path / "accepted.jsonl"
    write_jsonl(
        path,
        [
            accepted_case(REUSES_LOVE, negation[2:4]),
            accepted_case("Nobody cares.", negation[:1]),
            accepted_case("No one enjoys that seat.", negation[:2]),  # "enjoys": no seed's fill
        ],
    )
    return path


@pytest.fixture
def templates(tmp_path, accepted, cases, tiny_suite_path):
    return induce_templates_file(
        InduceConfig(
            accepted=accepted,
            cases=cases,
            out=tmp_path / "templates.yaml",
            suite=str(tiny_suite_path),
        )
    )


def test_induced_templates_are_a_suite_of_source_expansion_with_the_lexicons_they_use(
    tmp_path, templates, accepted
):
    assert templates.records == 1
    summary = templates.summary
    assert (summary.from_cases, summary.fills) == (3, 3)  # love, like, enjoy
    assert summary.per_capability == {"Negation": 1}
    assert summary.skipped == {"no_slot_word": 2}

    document = yaml.safe_load(templates.path.read_text())
    assert (document["name"], document["source"]) == ("tiny-sentiment-induced", "expansion")
    assert document["lexicons"] == ["templates.lexicons.yaml"]
    [capability] = document["capabilities"]
    assert capability["descriptions"][0]["templates"] == ["Never {vbd:pos_verb} an old seat."]
    lexicons = yaml.safe_load(templates.files["lexicons"].read_text())
    assert lexicons == {"pos_verb": ["like", "love", "enjoy"]}  # only the lexicon it uses

    [induced] = read_jsonl(templates.files["induced"], InducedTemplate)
    origin = next(c for c in read_jsonl(accepted, TestCase) if c.text == REUSES_LOVE)
    assert (induced.case_id, induced.case_provenance) == (origin.id, "people")


def test_a_template_whose_lexicon_the_suite_lacks_is_skipped_and_counted(
    tmp_path, accepted, cases, write_suite
):
    other = write_suite(
        """
        name: no-verbs
        task: sentiment
        labels: [negative, positive]
        lexicons: [words.yaml]
        capabilities:
          - name: Negation
            descriptions:
              - description: A negative sentence.
                label: negative
                templates: ["No {air_noun}."]
        """,
        words="air_noun: [flight, seat]\n",
    )
    done = induce_templates_file(
        InduceConfig(
            accepted=accepted,
            cases=cases,
            out=tmp_path / "t.yaml",
            suite=str(other),
            allow_empty=True,
        )
    )
    assert done.records == 0 and done.summary.fills == 0
    assert done.summary.skipped == {"no_slot_word": 2, "unknown_lexicon": 1}
    with pytest.raises(InputError) as raised:  # outside a flow that allows it: an error
        induce_templates_file(
            InduceConfig(accepted=accepted, cases=cases, out=tmp_path / "u.yaml", suite=str(other))
        )
    assert str(raised.value) == (
        f"{accepted}: no template induced from its 3 accepted cases (skipped: 2 no_slot_word, "
        "1 unknown_lexicon); earlier outputs left as they were"
    )
    assert not (tmp_path / "u.yaml").exists()


def test_no_accepted_cases_is_an_error_naming_the_file(tmp_path, cases):
    empty = tmp_path / "accepted.jsonl"
    write_jsonl(empty, [])
    with pytest.raises(InputError, match="no accepted cases in the file") as raised:
        induce_templates_file(
            InduceConfig(accepted=empty, cases=cases, out=tmp_path / "templates.yaml")
        )
    assert str(empty) in str(raised.value)
    assert not (tmp_path / "templates.yaml").exists()


def test_expansion_leaves_out_known_cases_and_traces_each_to_the_accepted_case(
    tmp_path, templates, accepted, cases
):
    out = tmp_path / "expanded.jsonl"
    done = expand_induced(
        ExpandInducedConfig(
            templates=templates, out=out, known=(cases, accepted), per_template=None, seed=0
        )
    )
    expanded = list(read_jsonl(out, TestCase))
    assert sorted(c.text for c in expanded) == [
        "Never enjoyed an old seat.",
        "Never liked an old seat.",
    ]  # "Never loved an old seat." is the accepted case itself
    origin = next(c for c in read_jsonl(accepted, TestCase) if c.text == REUSES_LOVE)
    assert {c.source for c in expanded} == {"expansion"}
    assert {c.meta["induced_from"] for c in expanded} == {origin.id}
    assert (done.records, done.summary.templates) == (2, 1)
    assert done.summary.provenance == {"expansion-verified": 2}  # people accepted the origin


def test_expansion_fills_at_most_per_template_cases_the_same_for_the_same_seed(tmp_path, templates):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out in (first, second):
        expand_induced(ExpandInducedConfig(templates=templates, out=out, per_template=2, seed=3))
    assert len(list(read_jsonl(first, TestCase))) == 2
    assert first.read_bytes() == second.read_bytes()


def test_expanded_cases_whose_templates_file_is_gone_stay_untraced(tmp_path, templates, caplog):
    templates.files["induced"].unlink()
    done = expand_induced(
        ExpandInducedConfig(
            templates=templates, out=tmp_path / "expanded.jsonl", per_template=None, seed=0
        )
    )
    assert done.records == 3
    assert done.summary.provenance == {"expansion-unverified": 3}
    assert "expanded cases stay untraced" in caplog.text


def test_the_suite_grows_by_each_new_case_once_after_its_own_cases(
    tmp_path, templates, accepted, cases
):
    expanded = expand_induced(
        ExpandInducedConfig(
            templates=templates,
            out=tmp_path / "expanded.jsonl",
            known=(cases, accepted),
            per_template=None,
            seed=0,
        )
    )
    out = tmp_path / "suite.jsonl"
    new_cases = (accepted, expanded.path, expanded.path, cases)
    done = extend_suite(ExtendConfig(suite=cases, new_cases=new_cases, out=out))
    suite = list(read_jsonl(out, TestCase))
    original = list(read_jsonl(cases, TestCase))
    assert suite[: len(original)] == original
    assert len({c.id for c in suite}) == len(suite) == len(original) + 3 + 2
    assert (done.records, done.summary.added) == (13, 5)
    assert done.summary.by_source == {"template": 8, "llm": 3, "expansion": 2}
    assert done.summary.by_provenance == {"template": 8, "people": 3, "expansion-verified": 2}


def test_a_seed_filled_from_a_built_in_lexicon_the_suite_never_uses_induces_a_template(
    tmp_path, tiny_suite_path
):
    seed = TestCase(
        task="sentiment",
        capability="Negation",
        description_id="d",
        description="A negated positive sentence.",
        text="I did not like Paris at all.",
        label="negative",
        template="I did not like {city} at all.",
        fills={"city": "Paris"},
    )
    write_jsonl(tmp_path / "cases.jsonl", [seed])
    write_jsonl(tmp_path / "accepted.jsonl", [accepted_case("Paris never pleased me.", [seed])])
    written = induce_templates_file(
        InduceConfig(
            accepted=tmp_path / "accepted.jsonl",
            cases=tmp_path / "cases.jsonl",
            out=tmp_path / "templates.yaml",
            suite=str(tiny_suite_path),
        )
    )
    assert written.records == 1 and "unknown_lexicon" not in written.summary.skipped
    lexicons = yaml.safe_load((tmp_path / "templates.lexicons.yaml").read_text())
    assert "Paris" in lexicons["city"] and len(lexicons["city"]) > 100
