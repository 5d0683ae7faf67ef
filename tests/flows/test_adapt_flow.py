"""The adapt flow under Prefect's test harness: rounds of suggestions from our
OpenAI-compatible server (VADER under test), reviewed through verdict files or Label Studio
(the fake client of tests/review), the accepted ones added to the tree between runs."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest

from testaug.adaptive.review_label_studio import ACCEPT
from testaug.adaptive.suggestion import SuggestionVerdict
from testaug.adaptive.tree import TreeTest
from testaug.adaptive.tree_files import read_tree, write_tree
from testaug.adaptive.verdicts import read_suggestions, read_verdicts, save_verdicts
from testaug.review.project_record import PROJECT_RECORD, read_record
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.review.fake_label_studio import FakeLabelStudioClient, connect

pytestmark = pytest.mark.usefixtures("prefect_harness")

TOPIC = "/Negation"
TESTS = [
    "I don't love the seat.",
    "The crew was not great.",
    "I would not call the food good.",
    "I don't hate the movie.",
    "The flight was not bad.",
]


def reply(prompt: str, index: int) -> str:
    """A new "not good" or "not terrible" item per prompt and sample."""
    tag = int(hashlib.sha256(prompt.encode()).hexdigest()[:4], 16)
    word = "good" if index % 2 == 0 else "terrible"
    return f'The meal {tag} was not {word}, case {index}."\n"more'


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(reply) as running:
        yield running


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.setenv("TESTAUG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    rows = [
        TreeTest(topic=TOPIC, input=text, comparator="should not be", output="positive")
        for text in TESTS
    ]
    write_tree(tmp_path / "tree.jsonl", rows)
    return tmp_path / "tree.jsonl"


def config(tree, server, **options):
    from testaug.adaptive.suggestions import SuggestionRoundConfig
    from testaug.generation.backend_config import BackendConfig
    from testaug.steps.adapt import AdaptConfig

    return AdaptConfig(
        tree=tree,
        topic=TOPIC,
        models=("vader",),
        round=SuggestionRoundConfig(suggestions=10),
        generator=BackendConfig(kind="openai", base_url=server.base_url, model="scripted"),
        **options,
    )


def test_file_rounds_wait_for_verdicts_then_add_them_and_suggest_the_next(tree, server):
    from flows.adapt import adapt

    loop = config(tree, server, review="file")
    first = adapt(loop)
    assert first.round == 1 and first.gathered is None and first.suggested > 0
    assert first.suggestions == tree.with_name("tree.adapt") / "round-001" / "suggestions.jsonl"

    waiting = adapt(loop)
    assert waiting.round is None and waiting.gathered.latest_verdicts == 0
    assert not (first.suggestions.parent.parent / "round-002").exists()

    suggested = read_suggestions(first.suggestions)
    save_verdicts(
        first.suggestions.with_name("verdicts.jsonl"),
        [
            SuggestionVerdict(suggestion_id=suggested[0].id, decision="accept", annotator="ann"),
            SuggestionVerdict(
                suggestion_id=suggested[1].id, decision="reject_invalid", annotator="ann"
            ),
        ],
    )
    second = adapt(loop)
    assert second.round == 2 and second.gathered.added == 1
    grown = read_tree(tree)
    assert [(t.input, t.labeler) for t in grown.tests if t.source == "suggestion"] == [
        (suggested[0].test.input, "ann")
    ]
    assert second.suggestions.parent.name == "round-002"


def test_a_given_verdicts_file_is_taken_in_by_round(tree, server, tmp_path):
    from flows.adapt import adapt

    loop = config(tree, server, review="file", verdicts=tmp_path / "mine.jsonl")
    first = adapt(loop)
    [top, *_] = read_suggestions(first.suggestions)
    save_verdicts(
        tmp_path / "mine.jsonl",
        [SuggestionVerdict(suggestion_id=top.id, decision="accept", annotator="bob")],
    )
    second = adapt(loop)
    assert second.round == 2 and second.gathered.added == 1
    assert read_verdicts(first.suggestions.with_name("verdicts.jsonl"))[0].annotator == "bob"


def test_label_studio_rounds_push_then_pull_what_people_accepted_and_push_again_while_waiting(
    tree, server, monkeypatch
):
    from flows.adapt import adapt

    client = FakeLabelStudioClient()
    monkeypatch.setattr("testaug.steps.review.connect_label_studio", lambda: connect(client))
    loop = config(tree, server, project="loop")
    first = adapt(loop)
    assert first.pushed == first.suggested > 0
    tasks = client.project_named("loop").tasks
    assert [t["data"]["round"] for t in tasks] == [1] * first.suggested
    [recorded] = read_record(loop.folder() / PROJECT_RECORD).projects  # the rounds' project
    assert (recorded.title, recorded.id) == ("loop", client.project_named("loop").id)

    client.project_named("loop").tasks.clear()  # as if the import had failed: a waiting
    # run pushes the round again, into the project recorded in the work folder
    waiting = adapt(loop)
    assert waiting.round is None
    tasks = client.project_named("loop").tasks
    assert len(tasks) == first.suggested

    task = tasks[0]
    task["annotations"].append(
        {
            "id": 1,
            "completed_by": 2,
            "was_cancelled": False,
            "result": [
                {"from_name": "verdict", "to_name": "test", "type": "choices",
                 "value": {"choices": [ACCEPT]}}
            ],
        }
    )  # fmt: skip
    second = adapt(loop)
    assert second.gathered.new_verdicts == 1 and second.gathered.added == 1
    assert second.round == 2 and second.pushed == second.suggested
    added = [t for t in read_tree(tree).tests if t.source == "suggestion"]
    assert [(t.input, t.labeler) for t in added] == [(task["data"]["suggestion"]["test"]["input"], "bob@example.org")]  # fmt: skip
    assert {t["data"]["round"] for t in client.project_named("loop").tasks} == {1, 2}


def test_the_hourly_adapt_deployment_gives_the_flow_a_whole_config():
    from flows.adapt import adapt
    from flows.deployments import PREFECT_YAML, read_deployments, runner_deployment

    [spec] = [s for s in read_deployments(PREFECT_YAML) if s.name == "hourly-adapt"]
    deployment = runner_deployment(spec)
    assert deployment.entrypoint == "flows.adapt.adapt"
    config = adapt.validate_parameters(deployment.parameters)["config"]
    assert config.models == ("vader",) and config.review == "label-studio"
    assert config.folder().as_posix() == "trees/sentiment.adapt"
