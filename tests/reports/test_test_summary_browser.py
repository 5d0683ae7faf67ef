"""The per-test summary of a real generated report.html in Debian's headless chromium (one
browser session for the module): the section renders, each filter hides and shows the right
cases, hostile case text stays text, and the page logs no JavaScript error."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from testaug.core.jsonl import read_jsonl
from testaug.evaluation.failures import CaseResult
from testaug.reports.browser import find_browser
from testaug.reports.test_summary import TestSummary, summarize_tests
from tests.reports.summary_run import MODELS, evaluated_run

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is in the dev extras")
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

BROWSER = find_browser()
pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason="Debian's chromium and chromium-driver are not installed "
    "(testaug report --install-browser)",
)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return evaluated_run(tmp_path_factory.mktemp("summary-run"))


@pytest.fixture(scope="module")
def summary(run: Path) -> TestSummary:
    """What the page should show, from every case's result."""
    return summarize_tests(MODELS, read_jsonl(run / "evaluation.results.jsonl", CaseResult))


@pytest.fixture(scope="module")
def driver() -> Iterator[webdriver.Chrome]:
    """One headless chromium session for every test here, logging the console."""
    assert BROWSER is not None
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,2000"):
        options.add_argument(argument)
    options.binary_location = str(BROWSER.binary)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(options=options, service=Service(str(BROWSER.driver)))
    yield browser
    browser.quit()


@pytest.fixture
def page(driver: webdriver.Chrome, run: Path) -> Iterator[webdriver.Chrome]:
    """The report freshly loaded; after the test, the page must have logged no error."""
    driver.get_log("browser")  # start from an empty log: errors while loading count
    driver.get((run / "report.html").as_uri())
    yield driver
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def _shown_tests(page: webdriver.Chrome) -> list[str]:
    """The type of each test card on show."""
    cards = page.find_elements(By.CSS_SELECTOR, "#test-summary .ts-test")
    return [card.get_attribute("data-type") for card in cards if card.is_displayed()]


def _shown_cases(page: webdriver.Chrome) -> list[str]:
    """The text of each case row on show."""
    rows = page.find_elements(By.CSS_SELECTOR, "#test-summary tr.ts-case")
    return [row.text for row in rows if row.is_displayed()]


def _count(page: webdriver.Chrome) -> str:
    return page.find_element(By.ID, "ts-count").text


def test_the_section_renders_every_test_and_case_with_no_script_error(page, summary):
    assert page.title.startswith("testaug report")  # the hostile case did not run
    assert len(_shown_tests(page)) == len(summary.tests)
    n_cases = sum(len(t.cases) for t in summary.tests)
    assert len(_shown_cases(page)) == n_cases
    assert _count(page) == f"{len(summary.tests)} tests, {n_cases} cases shown"
    hostile = [row for row in _shown_cases(page) if "document.title='pwned'" in row]
    assert hostile and all("<img src=x onerror=" in row for row in hostile)  # shown as text


def test_choosing_a_test_type_shows_only_that_types_tests(page, summary):
    Select(page.find_element(By.ID, "ts-type")).select_by_value("INV")
    inv = [t for t in summary.tests if t.test_type == "INV"]
    assert _shown_tests(page) == ["INV"] * len(inv)
    assert len(_shown_cases(page)) == sum(len(t.cases) for t in inv)
    Select(page.find_element(By.ID, "ts-type")).select_by_value("")
    assert len(_shown_tests(page)) == len(summary.tests)


def test_failing_only_and_a_model_show_just_the_cases_that_model_fails(page, summary):
    brittle = MODELS[1]
    failing = [c for t in summary.tests for c in t.cases if c.failing_models]
    assert any(t.test_type == "INV" and t.stats[brittle].failed for t in summary.tests)
    page.find_element(By.ID, "ts-failing").click()
    assert len(_shown_cases(page)) == len(failing)
    Select(page.find_element(By.ID, "ts-model")).select_by_value("1")
    assert len(_shown_cases(page)) == sum(brittle in c.failing_models for c in failing)
    Select(page.find_element(By.ID, "ts-model")).select_by_value("0")
    assert len(_shown_cases(page)) == sum(MODELS[0] in c.failing_models for c in failing)
    headers = page.find_elements(By.CSS_SELECTOR, "#test-summary th[data-model]")
    assert {h.text for h in headers if h.is_displayed()} == {MODELS[0]}


def test_typing_in_the_search_box_keeps_the_matching_cases_and_capability_narrows_them(
    page, summary
):
    search = page.find_element(By.ID, "ts-search")
    search.send_keys("LOVE THIS")
    shown = _shown_cases(page)
    expected = [
        c for t in summary.tests for c in t.cases if "love this" in f"{c.original_text} {c.text}"
    ]
    assert shown and len(shown) == len(expected)
    assert all("love this" in row.lower() for row in shown)
    Select(page.find_element(By.ID, "ts-capability")).select_by_value("Negation")
    assert _shown_cases(page) == [] and _shown_tests(page) == []
    assert page.find_element(By.ID, "ts-none").is_displayed()
