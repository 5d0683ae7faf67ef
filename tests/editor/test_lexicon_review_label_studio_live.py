"""Suggested words through a real Label Studio server on 127.0.0.1 (the `label_studio_server`
fixture of tests/conftest.py), as a user runs `testaug lexicon push|pull`: one task per word
in its sentence with a choice per lexicon, people's choices pulled back into the lexicon file
with provenance, and the suite still valid."""

from __future__ import annotations

import pytest
import yaml

from testaug.editor.review_label_studio import DROP, VERDICT, choice_for
from tests.cli_runner import run_testaug
from tests.editor.lexicon_suite import lexicon, write_suggestions, write_suite
from tests.label_studio_live import API_KEY

pytestmark = [pytest.mark.label_studio, pytest.mark.slow]

PROJECT = "testaug lexicon suggestions"


def test_words_chosen_in_a_real_server_join_their_lexicons_and_the_suite_validates(
    label_studio_server, tmp_path
):
    server = label_studio_server
    env = {"LABEL_STUDIO_URL": server.url, "LABEL_STUDIO_API_KEY": API_KEY}
    write_suite(tmp_path / "suite")
    write_suggestions(tmp_path / "suggestions.jsonl")
    into = ("--into", "pos_verb", "--into", "neg_verb")
    args = ("suggestions.jsonl", "--suite", "suite", *into)
    pushed = lexicon(tmp_path, "push", *args, env=env)
    assert pushed.returncode == 0, pushed.stderr
    assert f"project {PROJECT!r} (created" in pushed.stdout
    assert "3 imported, 0 already there, 1 already in the lexicons" in pushed.stdout
    again = lexicon(tmp_path, "push", *args, env=env)
    assert "0 imported, 3 already there" in again.stdout

    from label_studio_sdk.client import LabelStudio

    sdk = LabelStudio(base_url=server.url, api_key=API_KEY)
    project = next(p for p in sdk.projects.list(title=PROJECT) if p.title == PROJECT)
    tasks = {t.data["word"]: t for t in sdk.tasks.list(project=project.id)}
    assert tasks["adore"].data["context"] == "I really adore the flight."
    chosen = {"adore": choice_for("pos_verb"), "hate": choice_for("neg_verb"), "enjoy": DROP}
    for word, choice in chosen.items():
        sdk.annotations.create(
            id=tasks[word].id,
            result=[
                {
                    "from_name": VERDICT,
                    "to_name": "context",
                    "type": "choices",
                    "value": {"choices": [choice]},
                }
            ],
        )

    pulled = lexicon(tmp_path, "pull", "suggestions.jsonl", "--suite", "suite", env=env)
    assert pulled.returncode == 0, pulled.stderr
    assert "3 verdicts (3 new or changed)" in pulled.stdout
    text = (tmp_path / "suite" / "lexicons.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    assert data["pos_verb"] == ["love", "like", "adore"] and data["neg_verb"] == ["hate"]
    assert "# added by admin@localhost.localdomain on " in text
    assert f"(testaug lexicon review, Label Studio project {PROJECT!r})" in text
    checked = run_testaug(tmp_path, "suite", "validate", "suite")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    once_more = lexicon(tmp_path, "pull", "suggestions.jsonl", "--suite", "suite", env=env)
    assert "0 new or changed" in once_more.stdout and "no new words" in once_more.stdout
