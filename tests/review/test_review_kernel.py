"""The review kernel's terminal loop, driven by scripted keys over a tiny kind of item:
fruit, each judged ripe or rotten."""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from rich.console import Console

from testaug.review.kernel import (
    ENTER,
    Choice,
    FollowUp,
    KeyReader,
    Question,
    SessionWords,
    review_in_terminal,
    verdict_choice,
)

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
