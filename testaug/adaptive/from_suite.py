"""A test tree built from a suite: capabilities and descriptions become topics.

A suite case becomes a "should be" test under `/<capability>/<description>` (a
case allowing several labels: "should be a|b"); a perturbation case (INV or DIR,
as `testaug evaluate` makes them) becomes the matching comparison under
`/<test type>/<perturbation>` (e.g. `/INV/typos`), so that a perturbation's
failure rate is one topic's, whichever descriptions its cases were drawn from:

- INV: the perturbed input "should be the same as for" the original;
- DIR monotonic, direction up / down: the perturbed input "should be no less /
  no more L than" the original, with the expectation's tolerance;
- DIR target: the perturbed input "should be" the target label(s).

A "/" inside a name would split the topic, so it becomes "-".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from testaug.adaptive.tree import TestTree, TreeTest, declared
from testaug.core.records import Suite, TestCase, label_options
from testaug.evaluation.battery import default_battery, run_battery
from testaug.evaluation.perturbations.cases import PerturbedCase
from testaug.suites.cases import expand_suite

SOURCE = "suite"


def topic_part(name: str) -> str:
    """A name as one topic level: "/" replaced by "-", spaces collapsed; "unnamed" if empty."""
    return " ".join(name.replace("/", "-").split()) or "unnamed"


def case_topic(capability: str, description: str) -> str:
    """The topic of a suite case: `/<capability>/<description>`."""
    return "/" + "/".join(topic_part(part) for part in (capability, description))


def test_from_case(case: TestCase) -> TreeTest:
    """A suite case as a "should be" test under its capability and description."""
    return TreeTest(
        topic=case_topic(case.capability, case.description),
        input=case.text,
        input_pair=case.text_pair,
        comparator="should be",
        output="|".join(label_options(case.label)),
        source=SOURCE,
    )


def test_from_perturbed(case: PerturbedCase) -> TreeTest:
    """A perturbation case as the comparison its expectation states."""
    expectation = case.expectation
    common = {
        "topic": "/" + "/".join(topic_part(part) for part in (case.test_type, case.perturbation)),
        "input": case.text,
        "input_pair": case.text_pair,
        "source": SOURCE,
    }
    if expectation.kind == "dir_target":
        assert expectation.target is not None
        output = "|".join(label_options(expectation.target))
        return TreeTest(comparator="should be", output=output, **common)
    comparison = {
        "output": case.original.text,
        "output_pair": case.original.text_pair,
        "tolerance": expectation.tolerance,
    }
    if expectation.kind == "inv":
        return TreeTest(comparator="should be the same as for", **comparison, **common)
    comparator = (
        "should be no less than" if expectation.direction == "up" else "should be no more than"
    )
    return TreeTest(comparator=comparator, watched=expectation.label, **comparison, **common)


def tree_from_cases(
    cases: Iterable[TestCase],
    perturbed: Iterable[PerturbedCase] = (),
    *,
    topics: Sequence[str] = (),
) -> TestTree:
    """The tree of the cases, then the perturbation cases, in order (a repeated test once);
    `topics` are declared with marker rows when no test lands in them."""
    rows: dict[str, TreeTest] = {}
    for test in [*map(test_from_case, cases), *map(test_from_perturbed, perturbed)]:
        rows.setdefault(test.id, test)
    tested = {test.topic for test in rows.values()}
    markers = declared([topic for topic in dict.fromkeys(topics) if topic not in tested])
    return TestTree(rows=(*rows.values(), *markers))


def battery_cases(
    cases: Sequence[TestCase],
    labels: Sequence[str],
    lexicons: Mapping[str, Sequence[str]],
    *,
    per_test: int,
    seed: int = 0,
) -> list[PerturbedCase]:
    """The perturbation cases `testaug evaluate` runs by default (CheckList's INV and DIR
    tests for the task's labels), each test perturbing a seeded sample of `per_test` cases."""
    if per_test <= 0:
        return []
    return run_battery(cases, default_battery(labels, lexicons), per_test=per_test, seed=seed)


def tree_from_suite(
    suite: Suite,
    perturbed: Iterable[PerturbedCase] = (),
    *,
    per_template: int | None = None,
    per_test: int = 0,
    seed: int = 0,
) -> TestTree:
    """The tree of a suite's expanded cases (every fill, or a seeded sample per template),
    with `perturbed` and, when `per_test` > 0, the default perturbation battery on them;
    every description is a topic, declared by a marker when it has no case."""
    topics = [case_topic(d.capability, d.text) for d in suite.descriptions()]
    cases = list(expand_suite(suite, per_template=per_template, seed=seed))
    extra = battery_cases(cases, suite.labels, suite.words(), per_test=per_test, seed=seed)
    return tree_from_cases(cases, [*perturbed, *extra], topics=topics)
