"""The review kernel over a tiny kind of item, fruit, each judged ripe or rotten: the
terminal loop driven by scripted keys, and the Label Studio driver over the fake client."""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from rich.console import Console

from testaug.review.kernel import (
    ENTER,
    Choice,
    FollowUp,
    KeyReader,
    Problem,
    Question,
    SessionWords,
    push_items,
    read_export,
    read_tasks,
    review_in_terminal,
    verdict_choice,
)
from testaug.review.label_studio import LabelStudioError
from testaug.review.project_record import marker_of
from tests.review.fake_label_studio import FakeLabelStudioClient, connect

WORDS = SessionWords(
    heading="fruit {position} of {total} ({before} before)",
    stopped="Stopped early.",
    end="End ({shown} shown).",
)
FRUIT = ("apple", "pear", "plum")


@dataclass(frozen=True)
class FruitKind:
    """Enter or `r` ripe, `x` rotten; `w` asks why (a key back, `q` quits); `otherwise` for
    any other key."""

    otherwise: Choice[str] | str = "press Enter, r, x, w, s or q"
    words: SessionWords = WORDS
    shown: list[str] = field(default_factory=list)
    made: list[str] = field(default_factory=list)

    def key(self, item: str) -> str:
        return item

    def show(self, item: str, console: Console) -> None:
        self.shown.append(item)
        console.print(f"<{item}>")

    def question(self, item: str) -> Question[str]:
        ripe = verdict_choice("ripe!", lambda: self.make(f"{item}:ripe"))
        return Question(
            legend=f"legend for {item}",
            prompt="> ",
            choices={
                ENTER: ripe,
                "r": ripe,
                "x": verdict_choice("rotten!", lambda: self.make(f"{item}:rotten")),
                "w": Choice("why?", lambda read_key, console: self._why(item, read_key)),
            },
            otherwise=self.otherwise,
        )

    def make(self, verdict: str) -> str:
        self.made.append(verdict)
        return verdict

    def _why(self, item: str, read_key: KeyReader) -> str | FollowUp:
        key = read_key()
        if key == "q":
            return "quit"
        if key == ENTER:
            return "back"
        return f"{item}:rotten because {key}"


def review(keys: str, kind: FruitKind | None = None, done=(), items=FRUIT):
    """Run the loop on `keys`; returns the run, the verdicts saved and the screen text."""
    saved: list[str] = []
    screen = io.StringIO()
    run = review_in_terminal(
        items,
        kind or FruitKind(),
        done=set(done),
        read_key=reader(keys),
        console=Console(file=screen, width=120, color_system=None),
        save=saved.append,
    )
    return run, saved, screen.getvalue()


def reader(keys: str) -> KeyReader:
    """One key per character of `keys`, then "" (the end of input)."""
    stream = io.StringIO(keys)
    return lambda: stream.read(1)


def test_each_item_is_shown_and_its_verdict_saved_in_order():
    run, saved, screen = review("rx" + ENTER)
    assert saved == ["apple:ripe", "pear:rotten", "plum:ripe"]
    assert run.verdicts == saved
    assert (run.skipped, run.remaining, run.quit) == (0, 0, False)
    assert "fruit 2 of 3 (0 before)" in screen
    assert "<pear>" in screen and "legend for pear" in screen
    assert screen.index("ripe!") < screen.index("rotten!")
    assert screen.rstrip().endswith("End (3 shown).")


def test_each_verdict_is_saved_before_the_next_key_is_read():
    saved: list[str] = []
    keys = iter("rx")
    saved_when_asked: list[int] = []

    def read_key() -> str:
        saved_when_asked.append(len(saved))
        return next(keys, "")

    review_in_terminal(
        FRUIT,
        FruitKind(),
        done=(),
        read_key=read_key,
        console=Console(file=io.StringIO()),
        save=saved.append,
    )
    assert saved_when_asked == [0, 1, 2]


def test_a_verdict_is_made_only_when_its_key_is_pressed():
    kind = FruitKind()
    review("x", kind, items=("apple",))
    assert kind.made == ["apple:rotten"]


def test_items_already_judged_are_passed_over_and_counted_before():
    kind = FruitKind()
    _run, saved, screen = review("r", kind, done={"apple", "plum"})
    assert kind.shown == ["pear"]
    assert saved == ["pear:ripe"]
    assert "fruit 1 of 1 (2 before)" in screen


def test_s_skips_an_item_which_stays_remaining():
    run, saved, screen = review("srr")
    assert saved == ["pear:ripe", "plum:ripe"]
    assert (run.skipped, run.remaining, run.quit) == (1, 1, False)
    assert "skipped" in screen


def test_q_stops_the_session_and_says_so():
    kind = FruitKind()
    run, saved, screen = review("rq", kind)
    assert saved == ["apple:ripe"]
    assert kind.shown == ["apple", "pear"]
    assert (run.remaining, run.quit) == (2, True)
    assert "Stopped early." in screen and "End" not in screen


def test_the_end_of_input_stops_like_q():
    run, saved, screen = review("")
    assert (saved, run.quit, run.remaining) == ([], True, 3)
    assert "Stopped early." in screen


def test_an_unlisted_key_with_a_hint_says_it_and_asks_again():
    _run, saved, screen = review("zr", items=("apple",))
    assert saved == ["apple:ripe"]
    assert screen.count("> ") == 2
    assert "press Enter, r, x, w, s or q" in screen


def test_an_unlisted_key_with_a_choice_of_its_own_gives_that_choice():
    otherwise = verdict_choice("anything else!", lambda: "other")
    _run, saved, screen = review("z", FruitKind(otherwise=otherwise), items=("apple",))
    assert saved == ["other"]
    assert "anything else!" in screen


def test_a_follow_up_reads_its_own_keys_and_gives_the_verdict():
    _run, saved, screen = review("wb", items=("apple",))
    assert saved == ["apple:rotten because b"]
    assert "why?" in screen


def test_a_follow_up_that_goes_back_shows_the_legend_and_prompt_again():
    _run, saved, screen = review("w" + ENTER + "x", items=("apple",))
    assert saved == ["apple:rotten"]
    assert screen.count("legend for apple") == 2
    assert screen.count("> ") == 2


def test_a_follow_up_that_quits_stops_without_saving_the_item():
    run, saved, screen = review("wq")
    assert saved == []
    assert (run.quit, run.remaining) == (True, 3)
    assert "Stopped early." in screen


class FruitInLabelStudio:
    """Fruit as a Label Studio kind: a task per fruit; an answer picks ripe or rotten, and
    "why" needs a reason typed with it."""

    task_key = "fruit"
    label_config = "<View><Text name='fruit' value='$fruit'/></View>"
    description = "Fruit to judge"
    instructions = "<p>Ripe or rotten?</p>"

    def task(self, item: str, rank: int) -> dict[str, Any]:
        return {"data": {"fruit": item, "rank": rank}}

    def read_task(self, task: Mapping[str, Any]) -> str | Problem:
        fruit = (task.get("data") or {}).get("fruit")
        if not isinstance(fruit, str):
            return Problem("no fruit in its data")
        return fruit.upper()

    def verdict(
        self, context: str, answer: Mapping[str, Any], users: Mapping[int, str]
    ) -> str | Problem | None:
        said = answer.get("said")
        if said == "why" and not answer.get("reason"):
            return Problem("why, but no reason")
        if said not in ("ripe", "rotten", "why"):
            return None
        return f"{context}:{said}:{users.get(answer.get('completed_by'), '?')}"


def answered(said: str | None, *, user: int = 1, **fields: Any) -> dict[str, Any]:
    """An answer to a fruit task (None: skipped)."""
    return {"said": said, "completed_by": user, "was_cancelled": said is None} | fields


def test_a_push_creates_the_project_with_the_kinds_interface_and_tasks_in_order():
    client = FakeLabelStudioClient()
    created: list[dict[str, Any]] = []
    create = client.projects.create

    def recorded(**fields: Any) -> Any:
        created.append(fields)
        return create(**fields)

    client.projects.create = recorded
    pushed = push_items(connect(client), "fruit", FruitInLabelStudio(), ["plum", "fig"])
    assert pushed.created and (pushed.imported, pushed.already_present) == (2, 0)
    [fields] = created
    assert fields["label_config"] == FruitInLabelStudio.label_config
    assert fields["description"].startswith("Fruit to judge\n")
    assert marker_of(fields["description"]) is not None  # testaug's own project
    assert fields["expert_instruction"] == "<p>Ripe or rotten?</p>"
    tasks = client.project_named("fruit").tasks
    assert [t["data"] for t in tasks] == [{"fruit": "plum", "rank": 1}, {"fruit": "fig", "rank": 2}]


def test_pushing_again_imports_only_the_items_the_project_lacks():
    client = FakeLabelStudioClient()
    studio = connect(client)
    push_items(studio, "fruit", FruitInLabelStudio(), ["plum"])
    again = push_items(studio, "fruit", FruitInLabelStudio(), ["plum", "fig"])
    assert not again.created and (again.imported, again.already_present) == (1, 1)
    assert [t["data"]["fruit"] for t in client.project_named("fruit").tasks] == ["plum", "fig"]


def test_answers_become_verdicts_and_skips_blanks_and_problems_are_counted():
    tasks = [
        {
            "id": 7,
            "data": {"fruit": "plum"},
            "annotations": [
                answered("ripe"),
                answered(None),
                answered("meh", user=2),
                answered("why", user=2),
                answered("rotten", user=3),
            ],
        },
        {"id": 8, "data": {}, "annotations": [answered("ripe")]},
    ]
    reading = read_tasks(FruitInLabelStudio(), tasks, {1: "ann", 2: "bob"})
    assert reading.verdicts == ["PLUM:ripe:ann", "PLUM:rotten:?"]
    assert reading.contexts == {"plum": "PLUM"}
    assert (reading.cancelled, reading.unanswered) == (1, 2)
    assert reading.problems == ["task 7: why, but no reason", "task 8: no fruit in its data"]


def test_reading_an_export_pulls_every_answer_of_the_project_with_its_users():
    client = FakeLabelStudioClient()
    studio = connect(client)
    push_items(studio, "fruit", FruitInLabelStudio(), ["plum", "fig"])
    [plum, fig] = client.project_named("fruit").tasks
    plum["annotations"].append(answered("rotten", user=2))
    fig["annotations"].append(answered("why", reason="soft"))
    reading = read_export(studio, "fruit", FruitInLabelStudio())
    assert reading.verdicts == ["PLUM:rotten:bob@example.org", "FIG:why:ann@example.org"]
    assert reading.problems == []


def test_reading_the_export_of_a_project_never_pushed_names_it():
    with pytest.raises(LabelStudioError, match="no Label Studio project named 'fruit'"):
        read_export(connect(FakeLabelStudioClient()), "fruit", FruitInLabelStudio())


GENERIC_LABEL_STUDIO_MODULES = ("label_studio.py", "label_studio_tasks.py", "kernel.py")
KIND_MODULES = (
    "testaug.review.label_studio_candidates",
    "testaug.adaptive.review_label_studio",
    "testaug.editor.review_label_studio",
)


@pytest.mark.parametrize("name", GENERIC_LABEL_STUDIO_MODULES)
def test_the_generic_label_studio_modules_import_no_kind_of_item(name):
    import ast
    from pathlib import Path

    import testaug.review

    source = Path(testaug.review.__file__).with_name(name).read_text(encoding="utf-8")
    imported = {
        node.module
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert not imported & set(KIND_MODULES)
