"""The fix flow under Prefect's test harness: one round of the debugging loop on the tiny
model, its files in the work folder, and the topics fixed and broken published as
artifacts that agree with the round's report."""

from __future__ import annotations

import pytest

from testaug.adaptive.debugging import FIX_REPORT_FILE, read_fix_round
from tests.adaptive.fix_fixtures import FIX, shared_base, write_inputs

pytestmark = pytest.mark.usefixtures("prefect_harness")
pytest.importorskip("torch")


def test_a_fix_run_writes_the_round_and_publishes_the_topics_it_fixed(tmp_path):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from flows.fix import fix

    base = shared_base()
    tree, iid = write_inputs(tmp_path)
    work = tmp_path / "work"
    report = fix(
        work,
        iid,
        tree=tree,
        model=f"hf:{base}",
        topics=("/Negation",),
        epochs=FIX.epochs,
        learning_rate=FIX.learning_rate,
        task=None,
        labels="negative,positive",
    )
    assert report == read_fix_round(work / "round-001" / FIX_REPORT_FILE)
    negation = report.topic("/Negation/Negated positive")
    assert negation is not None and negation.after is not None
    assert negation.after.mean < negation.before == 100.0

    keys = ["testaug-fix-topics", "testaug-fix-changes"]
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=keys))
        )
    latest = {a.key: a for a in sorted(artifacts, key=lambda a: a.created)}
    changes = str(latest["testaug-fix-changes"].data)
    assert f"fixed ({len(report.fixed)})" in changes
    assert all(topic in changes for topic in (*report.fixed, *report.broken))
    assert f"broken ({len(report.broken)})" in changes
    assert "/Vocabulary/Positive" in str(latest["testaug-fix-topics"].data)


def test_a_fix_run_with_nothing_failing_in_its_topics_fails_and_writes_no_report(tmp_path):
    from flows.fix import fix

    base = shared_base()
    tree, iid = write_inputs(tmp_path)
    state = fix(
        tmp_path / "work",
        iid,
        tree=tree,
        model=f"hf:{base}",
        topics=("/Fairness",),
        task=None,
        labels="negative,positive",
        return_state=True,
    )
    assert state.is_failed()
    assert not list((tmp_path / "work").glob("round-*/fix_report.json"))
