"""The pipeline flow in annotation mode auto: its expanded cases trace back to the ranker,
its headline error rates rest on verified evidence, and `evidence="all"` takes every case.
Prefect's test harness, our OpenAI-compatible server on 127.0.0.1, vader under test."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from testaug.core.jsonl import read_jsonl
from testaug.core.records import TestCase
from testaug.review.label_studio_server import free_port
from testaug.suites.provenance import case_provenance
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.flow_helpers import echo_seed_reply, run_pipeline

pytestmark = pytest.mark.usefixtures("prefect_harness")


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(echo_seed_reply, port=free_port()) as running:
        yield running


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TESTAUG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    return tmp_path / "cache"


# The one-member lexical ensemble vouches for nothing at 90% precision; at 5% its rule
# accepts every candidate, so the run has ranker-accepted cases and their expansions. The
# scripted generator has no labels of its own: the pooled rule is asked for.
ACCEPT_ALL = 0.05


def test_auto_mode_headlines_rest_on_verified_evidence_unless_all_is_asked_for(
    server, tmp_path, lexical_rankers
):
    run_dir, rankers = tmp_path / "run", lexical_rankers
    result = run_pipeline(server, run_dir, rankers, accept_precision=ACCEPT_ALL, pooled_rule=True)

    suite = list(read_jsonl(run_dir / "suite.jsonl", TestCase))
    expanded = [case for case in suite if case.source == "expansion"]
    assert expanded and {c.meta["induced_from_provenance"] for c in expanded} == {"ranker"}
    assert {case_provenance(c) for c in suite} == {"template", "ranker", "expansion-unverified"}
    [vader] = json.loads((run_dir / "evaluation.json").read_text())["models"]
    head = vader["headline"]
    assert (vader["headline_evidence"], head["fallback"]) == ("verified", False)
    assert set(head["left_out_by_provenance"]) == {"ranker", "expansion-unverified"}
    assert head["overall"]["n"] + vader["headline_left_out"] == vader["overall"]["n"]
    assert head["overall"]["n"] == vader["by_provenance"]["template"]["n"]
    assert vader["error_rate"] == vader["by_provenance"]["template"]["rate"]
    assert result.collected.evaluation.summary.evidence == "verified"
    html = (run_dir / "report.html").read_text()
    assert "rest on verified evidence only" in html and '<tr class="marked">' in html

    run_pipeline(
        server, run_dir, rankers, evidence="all", accept_precision=ACCEPT_ALL, pooled_rule=True
    )
    [vader] = json.loads((run_dir / "evaluation.json").read_text())["models"]
    assert (vader["headline_evidence"], vader["headline_left_out"]) == ("all", 0)
    assert vader["error_rate"] == vader["overall"]["rate"]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["arguments"]["evidence"] == "all"
