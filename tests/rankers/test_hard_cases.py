"""Hard cases made by rule from a suite: balanced, labelled by construction, ids unique."""

from __future__ import annotations

from collections import Counter, defaultdict

from rankers.hard_cases import REASONS, hard_cases, is_hard_case
from testaug.core.bundled import resolve_suite
from testaug.core.records import label_options
from testaug.suites.load import load_suite
from tests.cli_runner import run_testaug


def sentiment_cases(**options):
    suite = load_suite(resolve_suite("sentiment"))
    return suite, hard_cases(suite, **options)


def test_every_description_gets_as_many_valid_as_invalid_hard_cases():
    suite, made = sentiment_cases(per_description=4)
    counts = Counter((item.candidate.description_id, item.valid) for item in made)
    for description in suite.descriptions():
        assert counts[(description.id, True)] == 4
        assert counts[(description.id, False)] == 4


def test_each_kind_has_its_verdict_and_reason_and_every_text_is_used_once():
    _, made = sentiment_cases(per_description=6)
    assert len({item.candidate.id for item in made}) == len(made)
    for item in made:
        kind = item.candidate.model.removeprefix("hard-cases:")
        assert is_hard_case(item.candidate)
        assert item.reason == REASONS[kind]  # type: ignore[index]
        assert item.valid == (kind == "other_template")
        assert item.candidate.id not in item.candidate.seed_case_ids


def test_invalid_cases_come_from_the_description_they_claim():
    suite, made = sentiment_cases(per_description=6)
    by_text = {}
    for case in __import__("testaug.suites.cases", fromlist=["x"]).expand_suite(
        suite, per_template=30, seed=0
    ):
        by_text[case.text] = case
    descriptions = {d.id: d for d in suite.descriptions()}
    kinds = defaultdict(int)
    for item in made:
        origin = by_text[item.candidate.text]
        claimed = descriptions[item.candidate.description_id]
        kind = item.candidate.model.removeprefix("hard-cases:")
        kinds[kind] += 1
        agrees = bool(set(label_options(origin.label)) & set(label_options(claimed.label)))
        if kind == "other_template":
            assert origin.description_id == claimed.id
        elif kind == "sibling":
            assert origin.capability == claimed.capability and origin.description_id != claimed.id
            assert agrees
        elif kind == "sibling_other_label":
            assert origin.capability == claimed.capability and not agrees
        elif kind == "other_capability":
            assert origin.capability != claimed.capability and agrees
        else:
            assert origin.description_id == claimed.id
            assert not set(label_options(item.candidate.label)) & set(label_options(claimed.label))
    assert set(kinds) == set(REASONS)


def test_hard_cases_are_reproducible_from_their_seed():
    _, first = sentiment_cases(per_description=2, seed=3)
    _, again = sentiment_cases(per_description=2, seed=3)
    _, other = sentiment_cases(per_description=2, seed=4)
    assert first == again
    assert first != other


def test_the_cli_writes_hard_cases_of_a_bundled_suite(tmp_path):
    out = tmp_path / "hard.jsonl"
    result = run_testaug(
        tmp_path, "rankers", "hard-cases", "nli", "-o", str(out), "--per-description", "1"
    )
    assert result.returncode == 0, result.stderr
    assert "hard cases" in result.stdout
    assert len(out.read_text().splitlines()) == 2 * 46
