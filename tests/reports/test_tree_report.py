"""The report's test-tree section: topics, counts, failure rates, newly failing highlighted."""

from __future__ import annotations

from datetime import UTC, datetime

from testaug.adaptive.retest import TREE_REPORT_FILE, retest_tree, write_tree_report
from testaug.adaptive.tree import TestTree, TreeTest
from testaug.evaluation.models import load_model
from testaug.reports.run_report import write_report

SENTIMENT = ("negative", "neutral", "positive")
WHEN = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
TREE = TestTree(
    rows=(
        TreeTest(topic="/Clear", input="clear win", output="positive"),
        TreeTest(topic="/Clear/Close", input="close call", output="positive"),
        TreeTest(topic="/Neg", input="negative one", output="negative"),
        TreeTest(topic="/Neg", input="slightly neg", output="negative"),
    )
)


def tree_reports():
    old, new = (
        load_model(f"py:tests.adaptive.fixed_models:{name}", task_labels=SENTIMENT)
        for name in ("three", "three_v2")
    )
    _, before = retest_tree(TREE, old, tree_file="tree.jsonl", when=WHEN)
    _, after = retest_tree(TREE, new, tree_file="tree.jsonl", previous=before, when=WHEN)
    return before, after


def test_a_run_with_a_tree_report_gets_the_tree_section_with_newly_failing_topics(tmp_path):
    _, after = tree_reports()
    write_tree_report(tmp_path / TREE_REPORT_FILE, after)
    written = write_report(tmp_path)
    assert written.sections == ("Run", "Test tree")
    markdown = written.markdown.read_text()
    assert "py:tests.adaptive.fixed_models:three_v2 on the tree tree.jsonl" in markdown
    assert "3 topic(s) newly failing, 0 worse" in markdown
    assert "| /Clear/Close **[newly failing]** | 1 | 1 | 100.0 | 1 of 1 (100.0%) |" in markdown
    assert "| /Neg | 2 | 0 | 0.0 | 0 of 2 (0.0%) |" in markdown
    assert (
        "| topic | failing tests (worst first) |\n|---|---|\n| /Clear/Close | close call |\n\n"
        in markdown
    )
    assert (tmp_path / "report_files" / "tree_failure_rates.png").read_bytes()[:4] == b"\x89PNG"
    html = written.html.read_text()
    assert '<tr class="marked"><td>/Clear/Close <span class="badge">newly failing</span>' in html


def test_a_first_report_has_no_comparison(tmp_path):
    before, _ = tree_reports()
    write_tree_report(tmp_path / TREE_REPORT_FILE, before)
    markdown = write_report(tmp_path).markdown.read_text()
    assert "previous report" not in markdown
    assert "**[" not in markdown


def test_a_tree_with_many_topics_plots_the_changed_and_the_worst(tmp_path):
    from testaug.adaptive.retest import TopicResult, TreeReport
    from testaug.reports.blocks import Image
    from testaug.reports.tree import short_label, tree_section

    def result(topic: str, rate: float) -> TopicResult:
        return TopicResult(
            topic=topic, tests=10, failing=int(rate / 10), failure_rate=rate,
            direct_tests=10, direct_failing=int(rate / 10), direct_failure_rate=rate,
        )  # fmt: skip

    topics = [result("/", 20.0)] + [result(f"/T{i:02d}", float(i)) for i in range(50)]
    report = TreeReport(model="m", tree_file="t", created_at=WHEN, topics=tuple(topics))
    (image,) = [block for block in tree_section(report) if isinstance(block, Image)]
    assert image.alt == ("Failure rate per topic (40 of 50 topics: changed ones, then the highest)")
    assert short_label("/A/" + "x" * 100) == "/A/" + "x" * 20 + "…" + "x" * 24
