"""Lost answers in front of a real Label Studio server on 127.0.0.1 (the session's
`label_studio_server` fixture of tests/conftest.py): a fault proxy lets the server store a
new project or an import, then answers 502 or 504 or closes the connection. Each push still
makes one project holding each task once, and pulls see the answers people give in it."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from testaug.adaptive.review_label_studio import (
    ACCEPT,
    VERDICT,
    pull_suggestion_verdicts,
    push_suggestions,
)
from testaug.core.retries import RetryPolicy
from testaug.editor.lexicon_verdicts import review_words
from testaug.editor.review_label_studio import push_words
from testaug.review.label_studio import LabelStudio
from testaug.review.label_studio_candidates import pull_verdicts
from testaug.testing.fault_proxy import FaultProxy
from tests.adaptive.suggestion_helpers import suggestion
from tests.cli_runner import HANG_TIMEOUT, run_testaug
from tests.editor.lexicon_suite import suggestions as word_suggestions
from tests.label_studio_live import API_KEY
from tests.tiny_models import write_ranked_run

pytestmark = [pytest.mark.label_studio, pytest.mark.slow]

IMPORT = r"/api/projects/\d+/import"
CREATE = "/api/projects/"


@pytest.fixture
def proxy(label_studio_server) -> Iterator[FaultProxy]:
    with FaultProxy(label_studio_server.url) as proxy:
        yield proxy


def connect(url: str) -> LabelStudio:
    return LabelStudio(
        url, SecretStr(API_KEY), retries=RetryPolicy(max_attempts=4, base_delay=0.1, max_delay=1)
    )


def sdk(server):
    from label_studio_sdk.client import LabelStudio as Client

    return Client(base_url=server.url, api_key=API_KEY)


def projects_titled(server, title: str) -> list[int]:
    return [p.id for p in sdk(server).projects.list(title=title) if p.title == title]


def tasks_of(server, project_id: int) -> list[dict]:
    payload = b"".join(
        sdk(server).projects.exports.download_sync(
            id=project_id, export_type="JSON", download_all_tasks=True
        )
    )
    return json.loads(payload)


def test_twenty_suggestions_through_lost_answers_are_twenty_tasks_and_answers_come_back(
    label_studio_server, proxy
):
    project = "lost answers: suggestions"
    items = [suggestion(f"I do not love test {i}.", i / 20) for i in range(20)]
    studio = connect(proxy.url)
    proxy.lose_answer("POST", CREATE, answer=504)
    proxy.lose_answer("POST", IMPORT, answer=502)
    pushed = push_suggestions(studio, project, items)
    assert len(proxy.lost_after_acting("POST", CREATE)) == 1  # created, its answer lost
    assert len(proxy.lost_after_acting("POST", IMPORT)) == 1  # stored, its answer lost
    assert projects_titled(label_studio_server, project) == [pushed.project_id]
    tasks = tasks_of(label_studio_server, pushed.project_id)
    assert sorted(t["data"]["suggestion_id"] for t in tasks) == sorted(s.id for s in items)
    assert (pushed.created, pushed.imported, pushed.already_present) == (True, 20, 0)

    sdk(label_studio_server).annotations.create(
        id=tasks[0]["id"],
        result=[
            {
                "from_name": VERDICT,
                "to_name": "test",
                "type": "choices",
                "value": {"choices": [ACCEPT]},
            }
        ],
    )
    proxy.lose_answer("GET", r"/api/projects/\d+/export", answer=None)
    reading = pull_suggestion_verdicts(studio, project)
    assert len(proxy.lost_after_acting("GET", r"/api/projects/\d+/export")) == 1
    assert [(v.suggestion_id, v.decision) for v in reading.verdicts] == [
        (tasks[0]["data"]["suggestion_id"], "accept")
    ]
    again = push_suggestions(studio, project, items)
    assert (again.imported, again.already_present) == (0, 20)


def test_four_words_whose_import_connection_drops_are_four_tasks(label_studio_server, proxy):
    project = "lost answers: words"
    words = review_words(word_suggestions())
    proxy.lose_answer("POST", IMPORT, answer=None)
    pushed = push_words(connect(proxy.url), project, words, ["pos_verb", "neg_verb"])
    assert len(proxy.lost_after_acting("POST", IMPORT)) == 1
    tasks = tasks_of(label_studio_server, pushed.project_id)
    assert sorted(t["data"]["word"] for t in tasks) == sorted(item.word for item in words)
    assert len(tasks) == pushed.imported == 4


def test_review_candidates_push_through_a_lost_import_answer_makes_twenty_tasks(
    label_studio_server, proxy, tmp_path
):
    project = "lost answers: candidates"
    run = write_ranked_run(tmp_path, [f"Candidate {i} was lovely." for i in range(20)])
    proxy.lose_answer("POST", IMPORT, answer=502)
    done = run_testaug(
        run,
        "review",
        "candidates",
        "push",
        "ranked.jsonl",
        "--budget",
        "20",
        "--project",
        project,
        env={"LABEL_STUDIO_URL": proxy.url, "LABEL_STUDIO_API_KEY": API_KEY},
        timeout=HANG_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert "20 imported, 0 already there" in done.stdout
    assert len(proxy.lost_after_acting("POST", IMPORT)) == 1
    [project_id] = projects_titled(label_studio_server, project)
    tasks = tasks_of(label_studio_server, project_id)
    assert len({t["data"]["candidate_id"] for t in tasks}) == len(tasks) == 20

    sdk(label_studio_server).annotations.create(
        id=tasks[0]["id"],
        result=[
            {
                "from_name": "validity",
                "to_name": "text",
                "type": "choices",
                "value": {"choices": ["valid"]},
            }
        ],
    )
    reading = pull_verdicts(connect(proxy.url), project)
    assert [(a.candidate_id, a.valid) for a in reading.annotations] == [
        (tasks[0]["data"]["candidate_id"], True)
    ]
