"""A gate's result as JUnit XML, the test report CI systems read: one test suite per model,
a test case per description and test type (classname: its capability; one per description
where the gate pools test types) and per other check (a capability's limit on each test
type, a test type's limit, the evidence demands, a threshold naming nothing), a failure on
each breach. Each case says the rate it gated, the limit and where the limit was set."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from testaug.core.runs import write_text_atomic
from testaug.evaluation.gate import Check, GateResult

SUITES_NAME = "testaug gate"


def junit_xml(result: GateResult) -> ET.ElementTree:
    """The JUnit document of a gate's result."""
    root = ET.Element("testsuites", name=SUITES_NAME)
    by_model: dict[str, list[Check]] = {}
    for check in result.checks:
        by_model.setdefault(check.model, []).append(check)
    for model, checks in by_model.items():
        failures = sum(check.failure is not None for check in checks)
        suite = ET.SubElement(
            root,
            "testsuite",
            name=model,
            tests=str(len(checks)),
            failures=str(failures),
            errors="0",
            skipped="0",
        )
        for check in checks:
            _testcase(suite, check)
    root.set("tests", str(len(result.checks)))
    root.set("failures", str(len(result.breaches)))
    root.set("errors", "0")
    ET.indent(root)
    return ET.ElementTree(root)


def _testcase(suite: ET.Element, check: Check) -> None:
    case = ET.SubElement(
        suite, "testcase", classname=check.classname or "-", name=_name(check), time="0"
    )
    if check.failure is not None:
        failure = ET.SubElement(case, "failure", message=check.failure, type=check.kind)
        failure.text = _details(check)
    else:
        out = ET.SubElement(case, "system-out")
        out.text = _details(check)


def _name(check: Check) -> str:
    if check.kind in ("description", "newly failing"):
        return check.title
    if check.kind == "capability":
        return f"capability {check.title}"
    if check.kind == "test_type":
        return f"test type {check.name}"
    return check.name


def _details(check: Check) -> str:
    rate = "n/a" if check.rate is None else f"{check.rate:.1f}%"
    cases = "verified cases" if check.evidence == "verified" else "cases"
    limit = "none" if check.limit is None else f"{check.limit:g}%"
    source = f" (set by {check.source})" if check.source else ""
    overrules = "".join(f"; it overrules {lost}" for lost in check.overrules)
    return (
        f"model {check.model}: rate {rate} ({check.failed}/{check.n} {cases}), "
        f"limit {limit}{source}{overrules}"
    )


def write_junit(path: Path | str, result: GateResult) -> Path:
    """Write the JUnit XML of a gate's result (replacing the file whole)."""
    path = Path(path)
    tree = junit_xml(result)
    text = ET.tostring(tree.getroot(), encoding="unicode", xml_declaration=False)
    write_text_atomic(path, '<?xml version="1.0" encoding="UTF-8"?>\n' + text + "\n")
    return path
