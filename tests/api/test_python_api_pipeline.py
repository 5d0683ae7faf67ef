"""`testaug.run_pipeline` from Python: the pipeline flow on a RunConfig or its fields, as
`testaug run` starts it, against our scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json

import pytest

import testaug
from testaug.review.label_studio_server import free_port
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.flow_helpers import echo_seed_reply

pytestmark = pytest.mark.usefixtures("prefect_harness")


def test_run_pipeline_takes_run_config_fields_and_returns_both_halves(
    tmp_path, monkeypatch, lexical_rankers
):
    monkeypatch.setenv("TESTAUG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    with ScriptedOpenAIServer(echo_seed_reply, port=free_port()) as server:
        result = testaug.run_pipeline(
            run_dir=tmp_path / "run",
            size="small",
            generator={"kind": "openai", "base_url": server.base_url, "model": "scripted"},
            rankers=str(lexical_rankers),
            models=("vader",),
            capabilities=("Negation",),
        )
        asked = server.request_count

    run_dir = tmp_path / "run"
    assert result.augmented.candidates.records > 0
    assert asked == result.augmented.candidates.summary.prompts
    assert result.collected.suite.path == run_dir / "suite.jsonl"
    evaluation = json.loads((run_dir / "evaluation.json").read_text(encoding="utf-8"))
    assert [model["model"] for model in evaluation["models"]] == ["vader"]
    assert (run_dir / "report.html").is_file()
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["arguments"]["capabilities"] == ["Negation"]
