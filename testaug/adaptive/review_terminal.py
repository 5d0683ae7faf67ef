"""Suggestions reviewed in the terminal, one key per verdict.

Suggestions come in failure-score order (the likeliest failures first), each with the
test in words, every model's output and failure score, and P(valid) when the ranker
ensemble triaged it. Enter or `a` accepts it into the focus topic; `t` accepts it into
another topic (an existing subtopic by number, or a path typed in: a bare name is a new
subtopic of the focus topic); `i` rejects it as invalid, `o` as off-topic; `s` skips it
and `q` stops. Every verdict is handed to `save` at once. The loop is the review
kernel's (testaug.review.kernel).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import partial

from rich.console import Console
from rich.text import Text

from testaug.adaptive.suggestion import Decision, Suggestion, SuggestionVerdict
from testaug.adaptive.tree import ROOT, TreeTest, is_within, normalize_topic
from testaug.core.console_text import styled
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

LEGEND = (
    "[bold]Enter[/]/[bold]a[/] accept into {focus} · [bold]t[/] accept into another topic · "
    "[bold]i[/] invalid · [bold]o[/] off-topic · [bold]s[/] skip · [bold]q[/] quit"
)
REJECTIONS: dict[str, Decision] = {"i": "reject_invalid", "o": "reject_off_topic"}
BACKSPACES = ("\x7f", "\b")
WORDS = SessionWords(
    heading="\n[bold]suggestion {position} of {total}[/] ({before} judged before)",
    stopped="Stopped; the suggestions left wait for a verdict.",
    end="\nEnd of the suggestions ({shown} shown).",
)


@dataclass(frozen=True)
class SuggestionSession:
    """What one session did; `remaining` counts suggestions still without a verdict."""

    judged: int
    accepted: int
    invalid: int
    off_topic: int
    skipped: int
    remaining: int
    quit: bool


def failure_order(suggestions: Sequence[Suggestion]) -> list[Suggestion]:
    """Suggestions by the target model's failure score, highest first; unscored ones last."""

    def key(suggestion: Suggestion) -> float:
        score = suggestion.failure_score
        return -math.inf if math.isnan(score) else score

    return sorted(suggestions, key=key, reverse=True)


def describe_test(test: TreeTest) -> str:
    """A test in words, as AdaTest shows it: The model output for "x" should not be "neg"."""
    subject = _texts(test.input, test.input_pair)
    if test.comparator in ("should be", "should not be"):
        wanted = " or ".join(f'"{label}"' for label in test.expected_labels)
        return f"The model output for {subject} {test.comparator} {wanted}"
    other = _texts(test.output, test.output_pair)
    if test.comparator == "should be the same as for":
        return f"The model output for {subject} should be the same as for {other}"
    return f"P({test.watched}) for {subject} {test.comparator} for {other}"


def _texts(text: str, pair: str | None) -> str:
    return f'"{text}"' if pair is None else f'"{text}" || "{pair}"'


def review_suggestions(
    suggestions: Sequence[Suggestion],
    *,
    topics: Sequence[str],
    annotator: str,
    done: Collection[str],
    read_key: KeyReader,
    console: Console,
    save: Callable[[SuggestionVerdict], None],
) -> SuggestionSession:
    """Ask for a verdict on every suggestion not in `done`, in failure order, saving each at
    once. `topics` are the tree's topics, offered by number when a test goes elsewhere; `q`
    or the end of input stops the session, `s` leaves a suggestion for later."""
    kind = SuggestionKind(annotator, list(dict.fromkeys(normalize_topic(t) for t in topics)))
    run = review_in_terminal(
        failure_order(suggestions),
        kind,
        done=done,
        read_key=read_key,
        console=console,
        save=save,
    )
    decisions = [verdict.decision for verdict in run.verdicts]
    return SuggestionSession(
        judged=len(run.verdicts),
        accepted=decisions.count("accept"),
        invalid=decisions.count("reject_invalid"),
        off_topic=decisions.count("reject_off_topic"),
        skipped=run.skipped,
        remaining=run.remaining,
        quit=run.quit,
    )


@dataclass(frozen=True)
class SuggestionKind:
    """Suggested tests as a kind of review item. `topics` grows by the new topics that
    verdicts send tests to, so the next suggestion offers them by number."""

    annotator: str
    topics: list[str]
    words: SessionWords = WORDS

    def key(self, item: Suggestion) -> str:
        return item.id

    def show(self, item: Suggestion, console: Console) -> None:
        show_suggestion(item, console)

    def question(self, item: Suggestion) -> Question[SuggestionVerdict]:
        focus = item.focus_topic
        accept = partial(
            SuggestionVerdict, suggestion_id=item.id, decision="accept", annotator=self.annotator
        )
        accepted = styled("[green]accepted into {}[/]", focus)
        choices = {key: verdict_choice(accepted, accept) for key in (ENTER, "a")}
        for key, decision in REJECTIONS.items():
            verdict = partial(
                SuggestionVerdict,
                suggestion_id=item.id,
                decision=decision,
                annotator=self.annotator,
            )
            choices[key] = verdict_choice(f"[red]{decision.replace('_', ' ')}[/]", verdict)
        choices["t"] = Choice(
            "", lambda read_key, console: self._elsewhere(item, read_key, console)
        )
        return Question(
            legend=styled(LEGEND, focus=focus),
            prompt="Verdict >> ",
            choices=choices,
            otherwise="press Enter, a, t, i, o, s or q",
        )

    def _elsewhere(
        self, item: Suggestion, read_key: KeyReader, console: Console
    ) -> SuggestionVerdict | FollowUp:
        """The follow-up of `t`: the topic the test is accepted into."""
        topic = _ask_topic(item.focus_topic, self.topics, read_key, console)
        if topic is None:
            return "quit"
        if topic == "":
            return "back"
        console.print(styled("[green]accepted into {}[/]", topic))
        if topic not in self.topics:
            self.topics.append(topic)
        return SuggestionVerdict(
            suggestion_id=item.id, decision="accept", topic=topic, annotator=self.annotator
        )


def show_suggestion(suggestion: Suggestion, console: Console) -> None:
    """The screen for one suggestion: topic, the test in words, scores and outputs, P(valid)."""
    target = suggestion.target_model
    score = suggestion.failure_score
    shown = "not scored" if math.isnan(score) else f"{score:.2f}"
    p_valid = "not triaged" if suggestion.p_valid is None else f"{suggestion.p_valid:.2f}"
    console.print(
        styled(
            "[bold]focus topic[/] {}   [bold]failure score[/] {} ({}, targeted)   "
            "[bold]P(valid)[/] {}",
            suggestion.focus_topic,
            shown,
            target,
            p_valid,
        )
    )
    console.print(Text("  " + describe_test(suggestion.test)))
    models = list(dict.fromkeys([target, *suggestion.outputs, *suggestion.test.scores]))
    for model in models:
        output = suggestion.outputs.get(model, "?")
        model_score = suggestion.test.scores.get(model)
        number = "" if model_score is None else f" (failure score {model_score:.2f})"
        console.print(Text(f"  {model}: {output}{number}"))


def _ask_topic(
    focus: str, topics: Sequence[str], read_key: KeyReader, console: Console
) -> str | None:
    """The topic a test goes to: a listed topic's number, a path ("/A/B"), or a name of a
    new subtopic of `focus`; "" (an empty line) goes back, None quits."""
    offered = [t for t in topics if is_within(t, focus) and t != normalize_topic(focus)]
    offered += [t for t in topics if t not in offered and t != ROOT]
    for number, topic in enumerate(offered, start=1):
        console.print(styled("  [bold]{}[/] {}", number, topic))
    console.print(
        Text(
            f"Topic: a number, a path such as /A/B, or a name for a new subtopic of {focus} "
            "(Enter alone goes back) >> "
        ),
        end="",
    )
    line = read_line(read_key, console)
    if line is None:
        console.print("quit")
        return None
    line = line.strip()
    if not line:
        return ""
    if line.isdigit():
        if 1 <= int(line) <= len(offered):
            return offered[int(line) - 1]
        console.print(Text(f"no topic {line}"))
        return ""
    if line.startswith("/"):
        return normalize_topic(line)
    return normalize_topic(f"{focus}/{line}")


def read_line(read_key: KeyReader, console: Console) -> str | None:
    """Characters up to Enter, echoed (Backspace deletes one); None at the end of input."""
    chars: list[str] = []
    while True:
        key = read_key()
        if key == "":
            return None
        if key == ENTER:
            console.print()
            return "".join(chars)
        if key in BACKSPACES:
            if chars:
                chars.pop()
                console.file.write("\b \b")  # rich drops control characters
                console.file.flush()
            continue
        chars.append(key)
        console.print(Text(key), end="")
