"""The CI gate: thresholds from a suite, a gate file and flags (flags win), the checks on an
evaluation summary, a run folder and a re-tested tree, and the JUnit XML CI systems read."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from testaug.core.errors import InputError
from testaug.core.records import AcceptanceRule, Annotation
from testaug.core.run_folder import RunFolder
from testaug.core.runs import write_json
from testaug.evaluation.failures import CaseResult, ModelEvaluation, error_rates
from testaug.evaluation.gate import GateConfig, Threshold, check_gate, merge_gates
from testaug.evaluation.gate_junit import junit_xml, write_junit
from testaug.evaluation.gate_runs import check_run_gate
from testaug.evaluation.summary import evaluation_summary
from testaug.suites.gate import flag_gate, parse_max_error
from testaug.suites.gate_reader import load_gate_file, suite_gate

NEGATED = "A negative sentence with a negated positive verb."
NEUTRAL = "A neutral statement about two passengers."


def results(model, capability, description, failed, n, *, test_type="MFT", provenance="template"):
    return [
        CaseResult(
            case_id=f"{model}-{description}-{i}",
            model=model,
            test_type=test_type,
            capability=capability,
            description_id=f"id-{description}",
            description=description,
            source="template" if provenance == "template" else "llm",
            provenance=provenance,
            text=f"case {i}",
            passed=i >= failed,
            predicted="x",
            expected="y",
            probabilities={},
            reason="",
        )
        for i in range(n)
    ]


def evaluation(model, rows):
    rates = error_rates(rows).model_dump()
    return ModelEvaluation(
        model=model,
        labels=("negative", "positive"),
        **{k: v for k, v in rates.items()},
        failures=tuple(r for r in rows if not r.passed),
        results=tuple(rows),
    )


def summary(evidence="verified", ranker=0):
    """Model `a`: Negation 2/10 failing, Vocabulary 1/10; model `b`: Negation 5/10."""
    a = results("a", "Negation", NEGATED, 2, 10) + results("a", "Vocabulary", NEUTRAL, 1, 10)
    a += results("a", "Vocabulary", "Ranker cases.", 0, ranker, provenance="ranker")
    b = results("b", "Negation", NEGATED, 5, 10, test_type="INV")
    return evaluation_summary(
        [evaluation("a", a), evaluation("b", b)], n_cases=20, n_perturbed=0, evidence=evidence
    )


def limit(name, percent, *, kind="capability", model=None, origin="flag"):
    return Threshold(kind=kind, name=name, model=model, max_error=percent, origin=origin)


def test_a_capability_above_its_limit_is_a_breach_and_one_at_or_below_passes():
    result = check_gate(summary(), GateConfig(thresholds=(limit("Negation", 20),)))
    assert [(b.model, b.name, b.rate, b.limit) for b in result.breaches] == [
        ("b", "Negation", 50.0, 20.0)
    ]
    assert not result.passed
    assert check_gate(summary(), GateConfig(thresholds=(limit("Negation", 50),))).passed


def test_a_limit_for_one_model_wins_over_the_limit_for_every_model():
    config = GateConfig(thresholds=(limit("Negation", 10), limit("Negation", 60, model="b")))
    result = check_gate(summary(), config)
    assert [(b.model, b.name) for b in result.breaches] == [("a", "Negation")]


def test_star_covers_every_capability_that_is_not_named():
    config = GateConfig(thresholds=(limit("*", 5), limit("Negation", 90)))
    result = check_gate(summary(), config)
    assert [(b.model, b.name) for b in result.breaches] == [("a", "Vocabulary")]


def test_description_and_test_type_limits_check_their_own_rates():
    config = GateConfig(
        thresholds=(
            limit(NEUTRAL, 5, kind="description"),
            limit("INV", 40, kind="test_type"),
        )
    )
    breaches = check_gate(summary(), config).breaches
    assert [(b.model, b.kind, b.name, b.rate) for b in breaches] == [
        ("a", "description", NEUTRAL, 10.0),
        ("b", "test_type", "INV", 50.0),
    ]


def test_a_threshold_naming_no_capability_is_a_breach_with_the_closest_name():
    result = check_gate(summary(), GateConfig(thresholds=(limit("Negaton", 90),)))
    (breach,) = result.breaches
    assert breach.kind == "unknown" and "did you mean 'Negation'" in breach.message


def test_too_many_unverified_cases_under_the_headline_breach_the_gate():
    config = GateConfig(max_unverified=25)
    assert check_gate(summary(evidence="verified", ranker=10), config).passed
    breaches = check_gate(summary(evidence="all", ranker=10), config).breaches
    assert [(b.model, b.kind, round(b.rate, 1)) for b in breaches] == [("a", "unverified", 33.3)]


def rule(target):
    return AcceptanceRule(
        group="gen",
        target=target,
        confidence=0.95,
        threshold=0.8,
        precision_estimate=target,
        precision_lower_bound=target - 0.05,
        accepted=10,
        calibration_n=100,
    )


def test_ranker_cases_under_the_headline_need_rules_at_the_stated_precision():
    config = GateConfig(min_precision=0.9)
    counted = summary(evidence="all", ranker=10)
    assert check_gate(counted, config, rules=[rule(0.95)]).passed
    (low,) = check_gate(counted, config, rules=[rule(0.8)]).breaches
    assert low.kind == "precision" and "80%" in low.message
    (unknown,) = check_gate(counted, config, rules=None).breaches
    assert "no acceptance rule" in unknown.message
    assert check_gate(summary(evidence="verified", ranker=10), config, rules=None).passed


def test_flags_win_over_the_file_and_the_file_over_the_suite(tmp_path):
    in_suite = suite_gate({"max_error": {"Negation": 5, "Vocabulary": 5}, "max_unverified": 50})
    gate_file = tmp_path / "gate.yaml"
    gate_file.write_text("max_error:\n  Negation: 30\nmax_unverified: 20\n")
    from_file = load_gate_file(gate_file)
    flags = flag_gate(["Negation=60"])
    merged = merge_gates(in_suite, from_file, flags)
    limits = {t.name: (t.max_error, t.origin) for t in merged.thresholds}
    assert limits == {"Negation": (60.0, "flag"), "Vocabulary": (5.0, "suite")}
    assert merged.max_unverified == 20
    last = merge_gates(in_suite, from_file).thresholds[-1]
    assert (last.key, last.max_error, last.origin) == (("capability", "Negation", None), 30, "file")
    assert last.source == "gate file gate.yaml:2 max_error.Negation"


@pytest.mark.parametrize(
    ("flag", "expected"),
    [
        ("Negation=10", limit("Negation", 10)),
        ("*=20%", limit("*", 20)),
        (f"description:{NEGATED}=5", limit(NEGATED, 5, kind="description")),
        ("test_type:inv=15@vader", limit("INV", 15, kind="test_type", model="vader")),
        ("Negation=7.5@hf:x?labels=a,b", limit("Negation", 7.5, model="hf:x?labels=a,b")),
    ],
)
def test_max_error_flags_read_kind_name_percent_and_model(flag, expected):
    threshold = parse_max_error(flag)
    assert threshold.model_copy(update={"where": ""}) == expected
    assert threshold.source == f"flag --max-error {flag}"


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("Negation", "expected [KIND:]NAME=PERCENT[@MODEL]"),
        ("Negation=150", "at most 100"),
        ("test_type:XYZ=5", "unknown test type"),
    ],
)
def test_a_bad_max_error_flag_is_refused_naming_the_flag(flag, message):
    with pytest.raises(InputError) as raised:
        parse_max_error(flag)
    assert message in str(raised.value) and "--max-error" in str(raised.value)


def test_a_bad_gate_file_names_the_file_line_and_field(tmp_path):
    path = tmp_path / "gate.yaml"
    path.write_text("max_error:\n  Negation: 10\n  Vocabulary: lots\nmax_unverfied: 5\n")
    with pytest.raises(InputError) as raised:
        load_gate_file(path)
    shown = [str(p) for p in raised.value.problems]
    assert sorted(shown) == [
        f"{path}:3: max_error.Vocabulary: expected a percent, 0 to 100, got 'lots'",
        f"{path}:4: max_unverfied: unknown field 'max_unverfied'; did you mean 'max_unverified'?",
    ]


def test_junit_has_a_testcase_per_description_and_model_with_failures_on_breaches(tmp_path):
    config = GateConfig(thresholds=(limit(NEGATED, 30, kind="description"),))
    path = write_junit(tmp_path / "gate.xml", check_gate(summary(), config))
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites" and root.get("failures") == "1"
    cases = {
        (suite.get("name"), case.get("classname"), case.get("name")): case
        for suite in root.iter("testsuite")
        for case in suite.iter("testcase")
    }
    assert set(cases) == {
        ("a", "Negation", f"{NEGATED} (MFT)"),
        ("a", "Vocabulary", f"{NEUTRAL} (MFT)"),
        ("b", "Negation", f"{NEGATED} (INV)"),
    }
    failure = cases[("b", "Negation", f"{NEGATED} (INV)")].find("failure")
    assert (
        failure is not None
        and "50.0%" in failure.get("message")
        and "30%" in failure.get("message")
    )
    assert cases[("a", "Negation", f"{NEGATED} (MFT)")].find("failure") is None


def test_junit_without_a_breach_lists_the_descriptions_and_no_failure():
    root = junit_xml(check_gate(summary(), GateConfig())).getroot()
    assert root.get("tests") == "3" and root.get("failures") == "0"
    assert not list(root.iter("failure"))


def test_a_run_folder_is_gated_on_its_evaluation_and_the_rules_of_its_annotations(tmp_path):
    folder = RunFolder(tmp_path)
    write_json(folder.evaluation, summary(evidence="all", ranker=10).model_dump(mode="json"))
    annotation = Annotation(
        candidate_id="c", valid=True, annotator="ranker", origin="ranker", acceptance=rule(0.8)
    )
    folder.annotations.write_text(annotation.model_dump_json() + "\n")
    config = GateConfig(thresholds=(limit("Negation", 30),), min_precision=0.9)
    breaches = check_run_gate(tmp_path, config).breaches
    assert [(b.model, b.kind) for b in breaches] == [("a", "precision"), ("b", "capability")]


def test_a_run_folder_without_an_evaluation_cannot_pass_the_gate(tmp_path):
    with pytest.raises(InputError, match="no evaluation to gate"):
        check_run_gate(tmp_path, GateConfig(thresholds=(limit("*", 10),)))
