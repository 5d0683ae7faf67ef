"""The fix flow under Prefect's test harness: rounds of the debugging loop on the tiny
model from the same `FixConfig` the CLI builds, its files in the work folder, and the topics
fixed and broken and why the run stopped published as artifacts that agree with the round's
report."""

from __future__ import annotations

import pytest

from testaug.fixing.debugging.records import (
    FIX_REPORT_FILE,
    FixRoundConfig,
    StopRule,
    read_fix_round,
)
from testaug.steps.fix import FixConfig
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
    options = FixConfig(
        work=work,
        iid=iid,
        tree=tree,
        model=f"hf:{base}",
        labels="negative,positive",
        round=FixRoundConfig(topics=("/Negation",), config=FIX),
        stop=StopRule(rounds=2),
    )
    loop = fix(options)
    report = loop.rounds[0]
    assert list(loop.rounds) == [
        read_fix_round(work / f"round-{r.round:03d}" / FIX_REPORT_FILE) for r in loop.rounds
    ]
    assert loop.rounds[-1].stop == loop.stop
    negation = report.topic("/Negation/Negated positive")
    assert negation is not None and negation.after is not None
    assert negation.after.mean < negation.before == 100.0

    keys = ["testaug-fix-topics", "testaug-fix-changes"]
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=keys))
        )
    latest = {a.key: a for a in sorted(artifacts, key=lambda a: a.created)}
    changes, last = str(latest["testaug-fix-changes"].data), loop.rounds[-1]
    assert f"Round {last.round} " in changes and f"fixed ({len(last.fixed)})" in changes
    assert all(topic in changes for topic in (*last.fixed, *last.broken))
    assert f"broken ({len(last.broken)})" in changes
    assert f"kept seed {last.chain_seed}" in changes
    assert f"stopped after this round ({loop.stop.reason})" in changes
    assert "/Vocabulary/Positive" in str(latest["testaug-fix-topics"].data)


def test_a_fix_run_with_nothing_failing_in_its_topics_fails_and_writes_no_report(tmp_path):
    from flows.fix import fix

    base = shared_base()
    tree, iid = write_inputs(tmp_path)
    options = FixConfig(
        work=tmp_path / "work",
        iid=iid,
        tree=tree,
        model=f"hf:{base}",
        labels="negative,positive",
        round=FixRoundConfig(topics=("/Fairness",)),
    )
    state = fix(options, return_state=True)
    assert state.is_failed()
    assert not list((tmp_path / "work").glob("round-*/fix_report.json"))
