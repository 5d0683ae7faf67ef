"""The terminal annotation loop, driven by scripted key presses."""

from __future__ import annotations

import io
import os
import sys

import pytest
from rich.console import Console

from testaug.core.records import Annotation, RankedCandidate, TestCase
from testaug.review.terminal import (
    TerminalSession,
    annotate_in_terminal,
    format_label,
    key_reader,
)
from tests.tiny_models import make_candidate

LABELS = ("negative", "positive", "neutral")


def make_seed(text: str, pair: str | None = None) -> TestCase:
    return TestCase(
        task="sentiment",
        capability="Vocabulary",
        description_id="d",
        description="A positive sentence.",
        text=text,
        text_pair=pair,
        label="positive",
    )


SEEDS = [make_seed("I love the crew."), make_seed("Great food."), make_seed("Nice seat.")]
SEED_MAP = {seed.id: seed for seed in SEEDS}
SEED_IDS = tuple(SEED_MAP)


def ranked(*texts: str, pair: str | None = None, seed_ids=SEED_IDS) -> list[RankedCandidate]:
    return [
        RankedCandidate(
            candidate=make_candidate(text, pair).model_copy(update={"seed_case_ids": seed_ids}),
            scores={"m": 0.5},
            borda_points=1.0,
            rank=i,
            ensemble_version="v1",
        )
        for i, text in enumerate(texts, start=1)
    ]


def run(
    queue: list[RankedCandidate],
    keys: str,
    *,
    done: tuple[str, ...] = (),
    seeds: dict[str, TestCase] = SEED_MAP,
) -> tuple[TerminalSession, list[Annotation], str]:
    """Annotate `queue` with `keys`; the session, the saved annotations and the screen."""
    saved: list[Annotation] = []
    screen = io.StringIO()
    session = annotate_in_terminal(
        queue,
        seeds=seeds,
        labels=LABELS,
        annotator="ann",
        done=done,
        read_key=key_reader(io.StringIO(keys)),
        console=Console(file=screen, width=100),
        save=saved.append,
    )
    return session, saved, screen.getvalue()


def test_enter_and_y_mark_candidates_valid() -> None:
    queue = ranked("The crew was great.", "I like the food.")
    session, saved, _ = run(queue, "\ny")
    assert [(a.candidate_id, a.valid) for a in saved] == [(q.candidate.id, True) for q in queue]
    assert all(a.annotator == "ann" and a.origin == "terminal" for a in saved)
    assert all(a.reason is None and a.corrected_label is None for a in saved)
    assert session == TerminalSession(2, 2, 0, 0, 0, False)


def test_n_then_reason_key_records_that_reason() -> None:
    queue = ranked("a", "b", "c", "d", "e")
    session, saved, _ = run(queue, "n1n3n4n\nn2\n")
    assert [a.valid for a in saved] == [False] * 5
    assert [a.reason for a in saved] == [
        "capability",
        "private_or_offensive",
        "malformed",
        "capability",  # Enter at the reason prompt
        "label",
    ]
    assert saved[-1].corrected_label is None  # Enter at the label prompt: no correction
    assert session.invalid == 5 and session.valid == 0


def test_wrong_label_reason_asks_for_corrected_label() -> None:
    session, saved, screen = run(ranked("The seat was awful."), "n21")
    assert saved[0].reason == "label"
    assert saved[0].corrected_label == "negative"
    assert "neutral" in screen and session.annotated == 1


def test_any_other_key_counts_as_not_valid() -> None:
    _, saved, _ = run(ranked("a", "b"), "x1z4")
    assert [(a.valid, a.reason) for a in saved] == [(False, "capability"), (False, "malformed")]


def test_unknown_key_at_reason_and_label_prompts_asks_again() -> None:
    _, saved, screen = run(ranked("a"), "n9x2z3")
    assert (saved[0].reason, saved[0].corrected_label) == ("label", "neutral")
    assert "press 1-4" in screen
    assert "press a label's key" in screen


def test_s_skips_without_saving_and_leaves_case_pending() -> None:
    queue = ranked("a", "b")
    session, saved, _ = run(queue, "sy")
    assert [a.candidate_id for a in saved] == [queue[1].candidate.id]
    assert session == TerminalSession(1, 1, 0, 1, 1, False)


def test_q_stops_and_counts_remaining() -> None:
    queue = ranked("a", "b", "c", "d")
    session, saved, _ = run(queue, "ysqy")
    assert len(saved) == 1
    assert session == TerminalSession(1, 1, 0, 1, 3, True)


def test_end_of_input_stops_like_q() -> None:
    session, saved, _ = run(ranked("a", "b", "c"), "y")
    assert len(saved) == 1
    assert session.quit and session.remaining == 2


def test_quitting_at_a_follow_up_prompt_saves_nothing_for_that_case() -> None:
    session, saved, _ = run(ranked("a", "b"), "yn2")  # input ends at the label prompt
    assert [a.valid for a in saved] == [True]
    assert session.quit and session.remaining == 1
    session, saved, _ = run(ranked("a"), "nq")
    assert saved == [] and session.quit


def test_resume_skips_done_cases_and_continues_where_it_stopped() -> None:
    queue = ranked("First crew.", "Second seat.", "Third food.", "Fourth flight.")
    first, saved, _ = run(queue, "yn1q")
    assert first.remaining == 2
    done = tuple(a.candidate_id for a in saved)
    second, more, screen = run(queue, "yy", done=done)
    assert [a.candidate_id for a in more] == [q.candidate.id for q in queue[2:]]
    assert second == TerminalSession(2, 2, 0, 0, 0, False)
    assert "case 1 of 2 (2 done before)" in screen
    assert "First crew." not in screen and "Second seat." not in screen


def test_screen_shows_guidelines_description_label_examples_and_candidate() -> None:
    queue = ranked("The crew was great.")
    _, _, screen = run(queue, "y")
    assert "Guidelines" in screen and "private information" in screen
    assert "A positive sentence." in screen
    assert "Proposed label: positive" in screen
    assert all(seed.text in screen for seed in SEEDS)
    assert "The crew was great." in screen
    assert "rank 1" in screen and "case 1 of 1 (0 done before)" in screen
    assert "Enter - the sentence is valid, Others - the sentence is NOT valid >> Label:" in screen
    assert "Enter/y valid" in screen


def test_at_most_three_examples_are_shown() -> None:
    extra = make_seed("Fourth example.")
    seeds = {**SEED_MAP, extra.id: extra}
    _, _, screen = run(ranked("a", seed_ids=(*SEED_IDS, extra.id)), "y", seeds=seeds)
    assert "Fourth example." not in screen


def test_missing_seed_cases_are_named_not_fatal() -> None:
    _, saved, screen = run(ranked("a", seed_ids=(SEED_IDS[0], "gone")), "y")
    assert "(seed case gone not available)" in screen
    assert SEEDS[0].text in screen and len(saved) == 1


def test_pairs_show_both_sentences() -> None:
    _, _, screen = run(ranked("How do I fly?", pair="How can I fly?"), "y")
    assert "1: How do I fly?" in screen
    assert "2: How can I fly?" in screen


def test_proposed_label_with_several_options_reads_as_or() -> None:
    assert format_label(("positive", "neutral")) == "positive or neutral"
    assert format_label("negative") == "negative"


def test_markup_in_texts_is_shown_literally() -> None:
    _, _, screen = run(ranked("[bold]x[/bold] is great"), "y")
    assert "[bold]x[/bold] is great" in screen


def test_key_reader_on_a_plain_stream_gives_characters_then_empty() -> None:
    read_key = key_reader(io.StringIO("y\nn"))
    assert [read_key() for _ in range(5)] == ["y", "\n", "n", "", ""]


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_key_reader_on_a_tty_restores_the_terminal_settings_after_each_key() -> None:
    import termios

    master, slave = os.openpty()
    with os.fdopen(slave, "r", closefd=True) as stream:
        before = termios.tcgetattr(slave)
        read_key = key_reader(stream)
        os.write(master, b"y")
        assert read_key() == "y"
        assert termios.tcgetattr(slave) == before
    os.close(master)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_key_reader_on_a_raw_tty_maps_enter_ctrl_d_and_ctrl_c() -> None:
    import termios
    import tty

    master, slave = os.openpty()
    with os.fdopen(slave, "r", closefd=True) as stream:
        tty.setraw(slave)  # keys typed ahead arrive as typed, as they do while the reader waits
        read_key = key_reader(stream)
        os.write(master, "y\ré\x1b[A\x1b[15~n\x04\x03".encode())
        assert [read_key() for _ in range(7)] == ["y", "\n", "é", "\x1b", "\x1b", "n", ""]
        with pytest.raises(KeyboardInterrupt):
            read_key()
        assert termios.tcgetattr(slave)[3] & termios.ICANON == 0
    os.close(master)
