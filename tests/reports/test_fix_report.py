"""The report's debugging-round section, from a round's fix_report.json: per-topic rates
before and after, fixed in green and broken in red, the i.i.d. line and the plot."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from testaug.fixing.debugging.records import (
    FIX_REPORT_FILE,
    FixRound,
    SeedFix,
    TopicFix,
    write_fix_round,
)
from testaug.fixing.debugging.topics import labelled, topic_status
from testaug.fixing.finetune import FineTuneConfig
from testaug.fixing.patching.report import Stat
from testaug.reports.fix import BROKEN_COLOUR, FIXED_COLOUR
from testaug.reports.run_report import write_report

FAIL_ABOVE = 20.0
BEFORE = {"/": 30.0, "/Neg": 50.0, "/Neg/Irony": 40.0, "/Pos": 0.0, "/Neutral": 60.0}
SEED_AFTER = {  # two seeds' failure rates after the round
    "/": (20.0, 24.0),
    "/Neg": (10.0, 14.0),
    "/Neg/Irony": (20.0, 10.0),
    "/Pos": (25.0, 35.0),
    "/Neutral": (40.0, 50.0),
}
TESTS = {"/": 20, "/Neg": 10, "/Neg/Irony": 5, "/Pos": 4, "/Neutral": 6}
TRAINED = {"/": 10, "/Neg": 5, "/Neg/Irony": 2, "/Pos": 0, "/Neutral": 4}


def _stat(values: tuple[float, ...]) -> Stat:
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    return Stat(mean=mean, std=var**0.5, n=len(values))


def fix_round() -> FixRound:
    """A two-seed round built directly (no training): /Neg and /Neg/Irony fixed, /Pos broken."""
    after = {topic: _stat(values) for topic, values in SEED_AFTER.items()}
    topics = tuple(
        TopicFix(
            topic=topic,
            tests=TESTS[topic],
            before=BEFORE[topic],
            after=after[topic],
            change=after[topic].mean - BEFORE[topic],
            fixing_tests=TRAINED[topic],
            status="passing"
            if topic == "/"
            else topic_status(BEFORE[topic], after[topic].mean, FAIL_ABOVE),
        )
        for topic in BEFORE
    )
    means = {topic: stat.mean for topic, stat in after.items()}
    fixed, broken = labelled(dict(BEFORE), dict(means), FAIL_ABOVE)
    per_seed = []
    for seed in (0, 1):
        rates = {topic: values[seed] for topic, values in SEED_AFTER.items()}
        seed_fixed, seed_broken = labelled(dict(BEFORE), dict(rates), FAIL_ABOVE)
        per_seed.append(
            SeedFix(
                seed=seed,
                model=f"round-001/seed-{seed}",
                iid_examples=10,
                iid_after=0.8 + 0.02 * seed,
                after=rates,
                fixed=seed_fixed,
                broken=seed_broken,
            )
        )
    return FixRound(
        round=1,
        created_at=datetime(2026, 1, 2, 3, 4, tzinfo=UTC),
        tree_file="tree.jsonl",
        start_checkpoint="models/start",
        checkpoint="work/round-001/checkpoint",
        seeds=(0, 1),
        chain_seed=0,
        model_before="hf:models/start",
        model_after="hf:work/round-001/checkpoint",
        fail_above=FAIL_ABOVE,
        config=FineTuneConfig(epochs=1),
        failing_tests=12,
        fixing_examples=10,
        untrainable={"no label": 2},
        iid_examples=10,
        iid_eval_examples=40,
        iid_before=0.75,
        iid_after=_stat((0.8, 0.82)),
        topics=topics,
        fixed=fixed,
        broken=broken,
        fixed_count=_stat(tuple(float(len(s.fixed)) for s in per_seed)),
        broken_count=_stat(tuple(float(len(s.broken)) for s in per_seed)),
        per_seed=tuple(per_seed),
    )


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    folder = tmp_path_factory.mktemp("round-001")
    write_fix_round(folder / FIX_REPORT_FILE, fix_round())
    report = write_report(folder)
    return folder, report, report.markdown.read_text(), report.html.read_text()


def _table_rows(markdown: str) -> dict[str, list[str]]:
    """The debugging table's rows by topic."""
    section = markdown.split("## Debugging round", 1)[1]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| /") and len(cells) == 7:
            rows[cells[0]] = cells
    return rows


def test_a_round_folder_gets_the_debugging_round_section(written):
    _, report, markdown, _ = written
    assert report.sections == ("Run", "Debugging round")
    assert "| topic | tests | trained on | before | after | change | status |" in markdown
    assert "| /Neg | 10 | 5 | 50.0 | 12.0 ± 2.8 | -38.0 | fixed |" in markdown
    assert "| /Pos | 4 | 0 | 0.0 | 30.0 ± 7.1 | +30.0 | broken |" in markdown
    assert "| /Neutral | 6 | 4 | 60.0 | 45.0 ± 7.1 | -15.0 | failing |" in markdown
    assert "Fixed 2: /Neg, /Neg/Irony." in markdown
    assert "> **Note:** Broken 1: /Pos." in markdown
    assert "Per seed: fixed 2.0 ± 0.0, broken 1.0 ± 0.0 topics." in markdown
    assert "i.i.d. accuracy (40 examples): 75.0% -> 81.0% ± 1.4" in markdown
    assert "(left out: 2 no label)" in markdown


def test_the_counts_shown_agree_with_the_rates(written):
    _, _, markdown, _ = written
    rows = _table_rows(markdown)
    assert list(rows) == list(BEFORE)
    for topic, (_, tests, trained, before, after, change, status) in rows.items():
        mean = float(after.split(" ± ")[0])
        assert (int(tests), int(trained)) == (TESTS[topic], TRAINED[topic])
        assert float(before) == BEFORE[topic]
        assert float(change) == pytest.approx(mean - float(before), abs=0.05)
        if topic != "/":
            assert status == topic_status(float(before), mean, FAIL_ABOVE)
    statuses = [cells[6] for cells in rows.values()]
    fixed = int(re.search(r"Fixed (\d+):", markdown).group(1))
    broken = int(re.search(r"Broken (\d+):", markdown).group(1))
    assert (fixed, broken) == (statuses.count("fixed"), statuses.count("broken"))


def test_the_html_colours_fixed_green_and_broken_red_and_has_the_plot(written):
    folder, _, _, html = written
    assert f'<tr style="color: {FIXED_COLOUR}; font-weight: bold"><td>/Neg</td>' in html
    assert f'<tr style="color: {BROKEN_COLOUR}; font-weight: bold"><td>/Pos</td>' in html
    assert "<tr><td>/Neutral</td>" in html
    assert "i.i.d. accuracy (40 examples): 75.0% -&gt; 81.0% ± 1.4" in html
    assert 'alt="Failure rate per topic before and after the round"' in html
    assert (folder / "report_files" / "fix_failure_rates.png").read_bytes()[:4] == b"\x89PNG"
