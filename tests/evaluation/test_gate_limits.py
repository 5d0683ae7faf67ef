"""Which limit the gate applies, to which rate: a flag the user typed wins over the gate file
and the suite (and says what it overrules), and a capability's or description's limit holds
for each test type's rate unless the gate pools them."""

from __future__ import annotations

import pytest

from testaug.core.errors import InputError
from testaug.evaluation.gate import POOLED, GateConfig, check_gate, merge_gates
from testaug.evaluation.gate_junit import junit_xml
from testaug.evaluation.summary import evaluation_summary
from testaug.suites.gate import flag_gate
from testaug.suites.gate_reader import load_gate_file, suite_gate
from tests.evaluation.test_gate import NEGATED, evaluation, limit, results, summary

SUITE_GATE = {
    "max_error": {"*": 70, "Negation": 5},
    "models": {"b": {"max_error": {"Negation": 60}}},
}


def test_a_typed_flag_wins_over_the_suites_limit_for_one_model():
    """Model b fails Negation at 50%: the suite lets b have 60%, the flag 20%."""
    gate = merge_gates(suite_gate(SUITE_GATE), flag_gate(["Negation=20"]))
    result = check_gate(summary(), gate)
    assert [(b.model, b.name, b.rate, b.limit, b.origin) for b in result.breaches] == [
        ("b", "Negation", 50.0, 20.0, "flag")
    ]
    (breach,) = result.breaches
    assert breach.source == "flag --max-error Negation=20"
    assert breach.overrules == ("60% (suite gate.models.b.max_error.Negation)",)
    assert "which overrules 60% (suite gate.models.b.max_error.Negation)" in breach.message


def test_every_limit_a_flag_overrules_is_said_once_even_when_the_gate_passes():
    gate = merge_gates(suite_gate(SUITE_GATE), flag_gate(["Negation=55"]))
    result = check_gate(summary(), gate)
    assert result.passed
    assert result.overrulings() == [
        ("flag --max-error Negation=55", "5% (suite gate.max_error.Negation)"),
        ("flag --max-error Negation=55", "60% (suite gate.models.b.max_error.Negation)"),
    ]


def test_within_one_place_the_groups_own_name_and_then_its_model_win():
    gate = suite_gate(SUITE_GATE)
    checks = {(c.model, c.name): c for c in check_gate(summary(), gate).checks}
    assert checks[("a", "Negation")].limit == 5  # its name before *
    assert checks[("b", "Negation")].limit == 60  # for model b before every model
    assert checks[("a", "Vocabulary")].source == "suite gate.max_error.*"
    assert checks[("a", "Vocabulary")].overrules == ()  # nothing of a lower place


def test_a_suite_files_limits_say_their_line(tmp_path):
    path = tmp_path / "suite.yaml"
    path.write_text("name: x\ngate:\n  models:\n    b:\n      max_error:\n        Negation: 60\n")
    (threshold,) = suite_gate(path).thresholds
    assert threshold.source == "suite suite.yaml:6 gate.models.b.max_error.Negation"


def test_the_junit_case_says_the_gated_rate_the_limit_and_where_it_was_set():
    gate = merge_gates(suite_gate(SUITE_GATE), flag_gate(["Negation=20"]))
    root = junit_xml(check_gate(summary(), gate)).getroot()
    case = next(c for c in root.iter("testcase") if c.get("name") == "capability Negation (INV)")
    failure = case.find("failure")
    assert failure is not None
    assert failure.text == (
        "model b: rate 50.0% (5/10 verified cases), limit 20% (set by flag --max-error "
        "Negation=20); it overrules 60% (suite gate.models.b.max_error.Negation)"
    )


def perturbed_summary():
    """Model `a` on Negation: 3 of 10 MFT cases fail, none of 30 INV perturbations (7.5%
    pooled); 10 ranker-accepted MFT cases, all failing, left out of the headline."""
    rows = results("a", "Negation", NEGATED, 3, 10)
    rows += results("a", "Negation", NEGATED, 0, 30, test_type="INV")
    rows += results("a", "Negation", "Ranker cases.", 10, 10, provenance="ranker")
    for i, row in enumerate(rows):
        rows[i] = row.model_copy(update={"case_id": f"{row.case_id}-{row.test_type}-{i}"})
    return evaluation_summary([evaluation("a", rows)], n_cases=20, n_perturbed=30)


def test_a_capabilitys_limit_holds_for_each_test_types_rate_on_the_headline_evidence():
    result = check_gate(perturbed_summary(), GateConfig(thresholds=(limit("Negation", 20),)))
    checks = [(c.name, c.test_type, c.rate, c.n, c.evidence) for c in result.checks]
    assert ("Negation", "MFT", 30.0, 10, "verified") in checks
    assert ("Negation", "INV", 0.0, 30, "verified") in checks
    (breach,) = result.breaches
    assert (breach.kind, breach.test_type, breach.rate, breach.failed, breach.n) == (
        "capability", "MFT", 30.0, 3, 10
    )  # fmt: skip
    assert "capability Negation, MFT: error rate 30.0% (3/10 verified cases)" in breach.message


def test_pooled_test_types_gate_the_rate_over_every_test_type_when_asked():
    config = GateConfig(thresholds=(limit("Negation", 20),), pool_test_types=True)
    result = check_gate(perturbed_summary(), config)
    assert result.passed
    (pooled,) = [c for c in result.checks if c.kind == "capability"]
    assert (pooled.test_type, pooled.rate, pooled.n) == (POOLED, 7.5, 40)


def test_a_descriptions_limit_holds_for_each_test_type_unless_pooled():
    each = GateConfig(thresholds=(limit(NEGATED, 20, kind="description"),))
    (breach,) = check_gate(perturbed_summary(), each).breaches
    assert (breach.name, breach.test_type, breach.rate) == (NEGATED, "MFT", 30.0)
    pooled = each.model_copy(update={"pool_test_types": True})
    assert check_gate(perturbed_summary(), pooled).passed  # 3 of 40


def test_pooling_is_set_by_a_flag_over_the_gate_file_over_the_suite(tmp_path):
    path = tmp_path / "gate.yaml"
    path.write_text("pool_test_types: false\n")
    in_suite = suite_gate({"pool_test_types": True})
    assert merge_gates(in_suite).pooled
    assert not merge_gates(in_suite, load_gate_file(path)).pooled
    assert merge_gates(in_suite, load_gate_file(path), flag_gate(pool_test_types=True)).pooled


def test_a_gate_file_must_say_pool_test_types_as_true_or_false(tmp_path):
    path = tmp_path / "gate.yaml"
    path.write_text("pool_test_types: sometimes\n")
    with pytest.raises(InputError) as raised:
        load_gate_file(path)
    assert str(raised.value.problems[0]) == (
        f"{path}:1: pool_test_types: expected true or false, got 'sometimes'"
    )


def test_the_same_flag_typed_twice_takes_the_later_and_says_so():
    result = check_gate(summary(), flag_gate(["Negation=10", "Negation=60"]))
    assert [b.model for b in result.breaches] == []
    assert ("flag --max-error Negation=60", "10% (flag --max-error Negation=10)") in (
        result.overrulings()
    )


def test_a_summary_written_before_rates_per_test_type_is_gated_on_pooled_rates():
    old = summary()
    models = tuple(
        m.model_copy(
            update={
                "description_matrix": {},
                "headline": m.headline.model_copy(update={"matrix": {}}),
            }
        )
        for m in old.models
    )
    checks = check_gate(
        old.model_copy(update={"models": models}), GateConfig(thresholds=(limit("*", 90),))
    ).checks
    assert {c.test_type for c in checks if c.kind in ("capability", "description")} == {POOLED}
    assert {c.title for c in checks if c.kind == "capability"} == {
        "Negation (all test types)",
        "Vocabulary (all test types)",
    }


def test_a_limit_on_a_capability_the_run_left_out_is_no_breach_but_a_typo_still_is():
    from testaug.core.bundled import resolve_suite
    from testaug.evaluation.gate_runs import left_out_of
    from testaug.suites.load import load_suite

    gate = flag_gate(["Temporal=10", "Temporl=10"])  # the run evaluated Negation, Vocabulary
    breaches = {b.name for b in check_gate(summary(), gate).breaches}
    assert {"Temporal", "Temporl"} <= breaches
    left_out = left_out_of(load_suite(resolve_suite("sentiment")), ["Negation", "Vocabulary"])
    assert left_out["capability"] == {"Temporal", "SRL"}
    kept = check_gate(summary(), gate, left_out=left_out)
    assert [b.name for b in kept.breaches] == ["Temporl"]
    assert left_out_of(load_suite(resolve_suite("sentiment")), None) == {}
