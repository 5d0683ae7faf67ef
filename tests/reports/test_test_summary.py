"""The report's per-test summary (CheckList's visual summary): its content, read from a real
evaluation, and the escaping of everything in it (cases come from LLMs)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from testaug.core.jsonl import read_jsonl
from testaug.core.records import TestCase
from testaug.evaluation.expectations import Expectation
from testaug.evaluation.failures import CaseResult
from testaug.evaluation.model_runs import evaluate_from_probabilities
from testaug.evaluation.perturbations.cases import PerturbedCase
from testaug.reports.browser import find_browser
from testaug.reports.test_summary import prediction_text, rate_cell, summarize_tests
from testaug.reports.test_summary_html import per_test_blocks, render_test_summary
from tests.cli_runner import run_testaug
from tests.reports.summary_run import HOSTILE, evaluated_run

LABELS = ("negative", "positive")


def _case(text: str, label: str, capability: str, description: str) -> TestCase:
    return TestCase(
        task="sentiment",
        capability=capability,
        description_id=description[:8],
        description=description,
        text=text,
        label=label,
        source="template",
    )


GREAT = _case("The food was great.", "positive", "Vocabulary", "Positive words")
LOVE = _case("I love it.", "positive", "Vocabulary", "Positive words")
EVIL = _case(
    '<script>alert("x")</script> & <img src=x onerror=alert(1)>',
    "negative",
    '"><img src=x onerror=alert(2)>',
    "Desc <b>bold</b>",
)
TYPO = PerturbedCase(
    original=GREAT,
    text="The food was graet.",
    perturbation="typos",
    test_type="INV",
    expectation=Expectation.inv(),
)
PROBABILITIES = {
    "steady": {
        ("The food was great.", None): [0.1, 0.9],
        ("I love it.", None): [0.2, 0.8],
        ("The food was graet.", None): [0.15, 0.85],
        (EVIL.text, None): [0.9, 0.1],
    },
    '<b>brittle</b> "model"': {
        ("The food was great.", None): [0.1, 0.9],
        ("I love it.", None): [0.6, 0.4],
        ("The food was graet.", None): [0.7, 0.3],
        (EVIL.text, None): [0.2, 0.8],
    },
}


def _results() -> list[CaseResult]:
    return [
        result
        for model, table in PROBABILITIES.items()
        for result in evaluate_from_probabilities(
            model, LABELS, [GREAT, LOVE, EVIL], [TYPO], table
        ).results
    ]


def test_each_test_has_its_type_rates_per_model_and_cases_with_every_models_prediction():
    steady, brittle = PROBABILITIES
    summary = summarize_tests([steady, brittle], _results())
    assert [t.name for t in summary.tests] == [
        "MFT: Positive words",
        "INV: Positive words (typos)",
        "MFT: Desc <b>bold</b>",
    ]
    mft, inv, evil = summary.tests
    assert (mft.n_failing, mft.n_passing) == (1, 1)
    assert mft.stats[steady].rate == 0 and mft.stats[brittle].failed == 1
    assert mft.cases[0].text == "I love it." and mft.cases[0].failing_models == (brittle,)
    [typo] = inv.cases
    assert (typo.original_text, typo.text) == ("The food was great.", "The food was graet.")
    verdict = typo.verdicts[brittle]
    assert (verdict.original_predicted, verdict.predicted, verdict.passed) == (
        "positive",
        "negative",
        False,
    )
    assert prediction_text(verdict) == "positive (0.90) -> negative (0.70)"
    assert typo.verdicts[steady].passed and typo.expected == "same prediction (INV, tolerance 0.1)"
    assert evil.capability == EVIL.capability and evil.cases[0].text == EVIL.text


def test_a_test_keeps_its_failing_cases_first_and_says_how_many_it_leaves_out():
    summary = summarize_tests(list(PROBABILITIES), _results(), max_failing=0, max_passing=1)
    mft = summary.tests[0]
    assert [c.text for c in mft.cases] == ["The food was great."]
    assert "showing 0 of 1 failing and 1 of 1 passing cases" in render_test_summary(summary)


class _Tags(HTMLParser):
    """Every start tag with its attribute names, and the text of script elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, set[str]]] = []
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {name for name, _ in attrs}))
        self.scripts += tag == "script"


def test_case_texts_descriptions_capabilities_and_model_names_are_escaped():
    page = render_test_summary(summarize_tests(list(PROBABILITIES), _results()))
    parser = _Tags()
    parser.feed(page)
    assert parser.scripts == 1  # the section's own filter script, nothing from the data
    assert {tag for tag, _ in parser.tags} <= {
        "section", "style", "p", "form", "label", "select", "option", "input", "span", "div",
        "b", "table", "thead", "tbody", "tr", "th", "td", "br", "small", "script",
    }  # fmt: skip
    attributes = set().union(*(names for _, names in parser.tags))
    assert attributes <= {
        "id", "class", "onsubmit", "value", "type", "placeholder", "aria-live",
        "data-capability", "data-type", "data-model", "data-fail", "title",
    }  # fmt: skip
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img" in page
    assert 'data-capability="&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"' in page
    assert "Desc &lt;b&gt;bold&lt;/b&gt;" in page
    assert "&lt;b&gt;brittle&lt;/b&gt; &quot;model&quot;" in page


def test_the_report_has_one_markdown_row_per_test_and_html_cards_in_place_of_the_table(
    tmp_path: Path,
):
    run = evaluated_run(tmp_path)
    results = list(read_jsonl(run / "evaluation.results.jsonl", CaseResult))
    summary = summarize_tests(list(dict.fromkeys(r.model for r in results)), results)
    markdown = (run / "report.md").read_text(encoding="utf-8")
    section = markdown.split("## Per-test summary", 1)[1]
    rows = [line for line in section.splitlines() if re.match(r"\| (MFT|INV|DIR): ", line)]
    assert len(rows) == len(summary.tests) >= 6
    assert {"MFT", "INV", "DIR"} <= {t.test_type for t in summary.tests}
    page = (run / "report.html").read_text(encoding="utf-8")
    assert page.count('id="test-summary"') == 1
    assert page.count('<div class="ts-test"') == len(summary.tests)
    assert page.count('<tr class="ts-case') == sum(len(t.cases) for t in summary.tests)
    after = page.split("<h2>Per-test summary</h2>", 1)[1]
    assert after.index('<section id="test-summary">') < after.index("<table")  # no plain table
    assert HOSTILE not in page and "document.title=&#x27;pwned&#x27;" in page
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page)  # no external assets
    assert "<link" not in page and "<script src" not in page


def test_without_every_cases_result_the_section_shows_the_failures_without_rates(tmp_path):
    run = evaluated_run(tmp_path, results=False)
    markdown = (run / "report.md").read_text(encoding="utf-8")
    section = markdown.split("## Per-test summary", 1)[1]
    assert "evaluation.results.jsonl is missing: only failing cases are shown" in section
    assert "| n/a | n/a |" in section
    page = (run / "report.html").read_text(encoding="utf-8")
    assert '<tr class="ts-case"' not in page  # every case shown fails for some model
    assert page.count('<tr class="ts-case ts-failing"') > 0


def test_an_evaluation_without_cases_has_a_section_that_says_so():
    blocks = per_test_blocks(summarize_tests(["m"], []))
    assert blocks[-1].text == "The evaluation has no test cases."  # type: ignore[union-attr]


def test_a_dir_case_that_cannot_fail_is_counted_as_filtered_in_the_tests_rate():
    summary = summarize_tests(["m"], [r for r in _results_with_filtered() if r.model == "m"])
    [test] = [t for t in summary.tests if t.test_type == "DIR"]
    assert rate_cell(test.stats, "m") == "0.0% (0.0–79.3), 0/1, 1 filtered"


def _results_with_filtered() -> list[CaseResult]:
    """A DIR test (P(positive) must not go down) of two cases for model `m`: one counted
    and passing, one already at the bottom (filtered: it cannot fail)."""
    low = _case("The seat was awful.", "negative", "Vocabulary", "Add praise")
    high = _case("I love it.", "positive", "Vocabulary", "Add praise")
    expectation = Expectation.monotonic("positive", "up")
    perturbed = [
        PerturbedCase(
            original=case,
            text=f"{case.text} Great job.",
            perturbation="add_phrase",
            test_type="DIR",
            expectation=expectation,
        )
        for case in (low, high)
    ]
    table = {
        (low.text, None): [0.9, 0.1],
        (f"{low.text} Great job.", None): [0.7, 0.3],
        (high.text, None): [0.2, 0.8],
        (f"{high.text} Great job.", None): [0.1, 0.9],
    }
    return list(evaluate_from_probabilities("m", LABELS, [], perturbed, table).results)


def test_install_browser_without_apt_get_or_a_browser_exits_0_and_says_what_to_do(tmp_path):
    done = run_testaug(tmp_path, "report", "--install-browser", env={"PATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    # loudly, on stderr, so that a set-up step that could not run is seen
    assert "warning: the browser is NOT installed" in done.stderr
    assert "cannot install the browser here: no apt-get" in done.stderr
    assert "only the page tests are skipped" in done.stderr


def test_install_browser_with_the_browser_on_path_says_it_is_already_installed(tmp_path):
    if find_browser() is None:
        pytest.skip("chromium and chromedriver are not installed")
    done = run_testaug(tmp_path, "report", "--install-browser")
    assert done.returncode == 0, done.stderr
    assert "already installed:" in done.stdout


def test_report_without_a_run_directory_or_install_browser_is_an_input_error(tmp_path):
    done = run_testaug(tmp_path, "report")
    assert done.returncode == 1
    assert "give a run directory (or --install-browser)" in done.stderr
