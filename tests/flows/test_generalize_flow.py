"""The generalize flow under Prefect's test harness on a tiny BERT built in the test:
crossfunctional.json and the report in the run folder, the G table as an artifact."""

from __future__ import annotations

import pytest

from testaug.core.jsonl import write_jsonl
from testaug.fixing.crossfunctional.analysis import read_report
from tests.fixing.test_crossfunctional import IID, suite
from tests.models_fixture import build_tiny_classifier

pytestmark = pytest.mark.usefixtures("prefect_harness")


def test_the_generalize_flow_writes_the_report_and_publishes_the_g_table(tmp_path):
    import torch
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from flows.generalize import generalize
    from testaug.steps.generalize import GeneralizeConfig, GeneralizeFilesConfig

    model = build_tiny_classifier(tmp_path / "model", 2)
    write_jsonl(tmp_path / "suite.jsonl", suite())
    write_jsonl(tmp_path / "iid.jsonl", IID)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny model: more threads only wait on a busy machine
    try:
        done = generalize(
            GeneralizeFilesConfig(
                suite=tmp_path / "suite.jsonl",
                iid=tmp_path / "iid.jsonl",
                model=f"hf:{model}",
                out=tmp_path / "run" / "crossfunctional.json",
                analysis=GeneralizeConfig(
                    configurations=("IID->T",), scenarios=("type",), epochs=1, learning_rate=1e-3
                ),
            )
        )
    finally:
        torch.set_num_threads(threads)
    report = read_report(done.report)
    assert done.g == {"IID->T / vanilla": {"type": report.pairs[0].scenarios["type"].g.mean}}
    assert done.g_standard == report.standard.g.mean
    assert "Cross-functional generalization" in done.html.read_text(encoding="utf-8")
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["testaug-generalize-g"]))
        )
    assert artifacts
