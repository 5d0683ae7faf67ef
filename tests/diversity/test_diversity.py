"""Diversity by group with size control: grouping, seeded equal sub-samples, the CLI's JSON."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from testaug.core.errors import TestAugError
from testaug.core.jsonl import write_jsonl
from testaug.core.records import TestCase
from testaug.diversity.dependency_paths import count_dependency_paths, load_parser
from testaug.diversity.measures import (
    DiversitySummary,
    bleu_text,
    diversity_report,
    equalize,
    parse_dimensions,
    smallest_cell,
)
from testaug.diversity.self_bleu import self_bleu
from tests.cli_runner import CliResult, run_testaug

pytest.importorskip("spacy")

ADJECTIVES = ["good", "great", "bad", "awful", "fine", "odd", "nice", "poor"]
NOUNS = ["flight", "crew", "seat", "meal", "pilot", "gate"]


def case(description: str, text: str, source: str = "template", **fields) -> TestCase:
    capability = fields.pop("capability", "Vocabulary" if description < "n" else "Negation")
    return TestCase(
        task="sentiment",
        capability=capability,
        description_id=f"d-{description}",
        description=f"description {description}",
        text=text,
        label="positive",
        source=source,  # type: ignore[arg-type]
        **fields,
    )


def suite_cases() -> list[TestCase]:
    """Two capabilities, three descriptions, template and llm cases of uneven sizes."""
    cases = []
    for i, noun in enumerate(NOUNS):
        for adjective in ADJECTIVES[: 3 + i % 3]:
            cases.append(case("alpha", f"The {noun} was {adjective}."))
            cases.append(case("nu", f"The {noun} was not {adjective}."))
    cases += [case("beta", f"I think the {n} is {a}.") for n in NOUNS[:3] for a in ADJECTIVES[:2]]
    cases += [
        case("alpha", "Honestly, the landing felt smooth and safe.", "llm"),
        case("alpha", "What a wonderful surprise the upgrade was!", "llm"),
        case("alpha", "Our attendant went out of her way to help.", "llm"),
        case("nu", "I would not say the food was bad at all.", "llm"),
        case("nu", "Nobody complained about the legroom.", "llm"),
        case("beta", "My kids loved the entertainment system.", "llm"),
        case("beta", "The check-in was quick, to my relief.", "llm"),
    ]
    return cases


@pytest.fixture(scope="module")
def nlp():
    return load_parser()


def test_dimensions_parse_from_a_comma_list() -> None:
    assert parse_dimensions("capability, source") == ("capability", "source")
    assert parse_dimensions("") == ()
    with pytest.raises(TestAugError, match="cannot group by 'model'"):
        parse_dimensions("source,model")


def test_default_size_is_the_smallest_description_within_any_group() -> None:
    cases = suite_cases()
    assert smallest_cell(cases) == 8  # beta: 6 template + 2 llm
    assert smallest_cell(cases, ["source"]) == 2  # beta and nu have 2 llm cases each
    assert smallest_cell(cases, ["capability"]) == 8


def test_equalize_keeps_the_same_number_per_description_in_each_group() -> None:
    cases = suite_cases()
    kept = equalize(cases, per_description=2, seed=0, by=["source"])
    cells = Counter((c.description_id, c.source) for c in kept)
    assert set(cells.values()) == {2}
    assert len(cells) == 6
    assert [c for c in cases if c in kept] == kept  # input order kept


def test_equalize_is_seeded() -> None:
    cases = suite_cases()
    first = equalize(cases, per_description=4, seed=1)
    assert first == equalize(cases, per_description=4, seed=1)
    assert first != equalize(cases, per_description=4, seed=2)


def test_a_descriptions_sample_does_not_depend_on_the_other_descriptions() -> None:
    cases = suite_cases()
    alone = [c for c in cases if c.description_id == "d-alpha"]
    together = equalize(cases, per_description=5, seed=3)
    assert equalize(alone, per_description=5, seed=3) == [
        c for c in together if c.description_id == "d-alpha"
    ]


def test_a_short_description_is_kept_whole() -> None:
    kept = equalize(suite_cases(), per_description=10, seed=0)
    assert Counter(c.description_id for c in kept) == {"d-alpha": 10, "d-nu": 10, "d-beta": 8}


def test_report_groups_by_source_on_equal_sizes(nlp) -> None:
    cases = suite_cases()
    report = diversity_report(cases, by=["source"], seed=0, nlp=nlp)
    assert report.per_description == 2
    assert report.n_input == len(cases)
    assert report.n_cases == 12
    assert [row.group for row in report.groups] == [{"source": "template"}, {"source": "llm"}]
    for row in report.groups:
        assert row.n_cases == 6
        assert row.n_descriptions == 3
    template, llm = report.groups
    assert llm.self_bleu < template.self_bleu  # the varied llm cases are more diverse
    kept = equalize(cases, per_description=2, seed=0, by=["source"])
    assert report.overall.self_bleu == pytest.approx(self_bleu([bleu_text(c) for c in kept]))
    assert report.overall.dependency_paths == count_dependency_paths([c.text for c in kept], nlp)
    assert report.whole.n_cases == len(cases)
    assert report.whole.self_bleu == pytest.approx(self_bleu([bleu_text(c) for c in cases]))
    assert report.whole.dependency_paths == count_dependency_paths([c.text for c in cases], nlp)


def test_report_groups_by_capability_and_description(nlp) -> None:
    report = diversity_report(suite_cases(), by=["capability", "description"], nlp=nlp)
    groups = {(r.group["capability"], r.group["description"]): r for r in report.groups}
    assert set(groups) == {
        ("Vocabulary", "description alpha"),
        ("Vocabulary", "description beta"),
        ("Negation", "description nu"),
    }
    assert groups["Vocabulary", "description beta"].description_id == "d-beta"
    assert all(row.n_cases == 8 for row in report.groups)


def test_without_size_control_every_case_is_measured(nlp) -> None:
    cases = suite_cases()
    report = diversity_report(cases, equalize_sizes=False, nlp=nlp)
    assert report.per_description is None
    assert report.overall.n_cases == len(cases)
    assert report.groups == ()


def test_large_groups_get_a_sampled_self_bleu_with_its_interval(nlp) -> None:
    report = diversity_report(suite_cases(), per_description=8, sample=10, nlp=nlp)
    row = report.overall
    assert row.self_bleu_sampled == 10
    assert row.self_bleu_ci is not None
    assert row.self_bleu_ci[0] <= row.self_bleu <= row.self_bleu_ci[1]


def test_pairs_are_parsed_as_two_sentences(nlp) -> None:
    pair = case("alpha", "The cat sat.", text_pair="Dogs bark loudly at night.")
    report = diversity_report([pair, case("alpha", "The cat sat.x")], equalize_sizes=False, nlp=nlp)
    assert bleu_text(pair) == "The cat sat. Dogs bark loudly at night."
    alone = count_dependency_paths(["The cat sat.", "Dogs bark loudly at night."], nlp)
    assert report.overall.dependency_paths >= alone


def test_no_cases_is_an_error() -> None:
    with pytest.raises(TestAugError, match="no cases"):
        diversity_report([])


def run_cli(*args: str) -> CliResult:
    return run_testaug(None, "diversity", *args)


def test_cli_json_prints_the_whole_input_then_the_groups(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    write_jsonl(path, suite_cases())
    result = run_cli(str(path), "--by", "capability,source", "--json", "--seed", "0")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    cases = suite_cases()
    assert summary["n_cases"] == summary["n_input"] == len(cases)
    assert summary["self_bleu"] == pytest.approx(self_bleu([bleu_text(c) for c in cases]))
    assert summary["equalized"]["n_cases"] == 12
    assert 0.0 < summary["self_bleu"] < 1.0
    assert summary["dependency_paths"] > 0
    assert summary["per_description"] == 2
    assert summary["by"] == ["capability", "source"]
    assert {tuple(g["group"].values()) for g in summary["groups"]} == {
        ("Vocabulary", "template"),
        ("Negation", "template"),
        ("Vocabulary", "llm"),
        ("Negation", "llm"),
    }
    assert list(summary) == [  # the keys diversity.json has had from the start, in order
        *("n_cases", "n_descriptions", "self_bleu", "self_bleu_ci", "self_bleu_sampled"),
        *("dependency_paths", "variant", "max_order", "seed", "by", "per_description"),
        *("n_input", "n_short_cells", "equalized", "groups"),
    ]
    record = DiversitySummary.model_validate_json(result.stdout)
    assert record.model_dump(mode="json") == summary


def test_cli_table_and_a_bad_dimension(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    write_jsonl(path, suite_cases())
    table = run_cli(str(path), "--variant", "texygen")
    assert table.returncode == 0, table.stderr
    assert "texygen" in table.stdout
    assert "Self-BLEU" in table.stdout
    assert "per description" in table.stdout
    bad = run_cli(str(path), "--by", "model")
    assert bad.returncode == 1
    assert "cannot group by 'model'" in bad.stderr
