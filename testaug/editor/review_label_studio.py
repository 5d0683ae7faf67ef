"""Suggested words reviewed in Label Studio: one task per word, shown in its sentence, with
one choice per target lexicon and a choice to drop it; verdicts read back from an export.

The pushes and pulls are the review kernel's (testaug.review.kernel); this module says what
the words' kind is: their labeling interface, their tasks and their verdicts. A project's
choices are those of the push that created it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from testaug.editor.lexicon_verdicts import LexiconVerdict, ReviewWord, one_line, word_problem
from testaug.review.kernel import LabelStudioReading, Problem, push_items, read_export, read_tasks
from testaug.review.label_studio import LabelStudio
from testaug.review.label_studio_tasks import TaskPush, annotator_of, answered_at

VERDICT = "lexicon"
DROP = "drop (in no lexicon)"
INTO = "into "
INSTRUCTIONS = (
    "<p>Each task is a word suggested for the masked slot of a sentence, shown in that "
    "sentence. Put a word into the lexicon it belongs to when it fits every template that "
    "uses the lexicon (grammar and label); drop it otherwise.</p>"
)


def choice_for(lexicon: str) -> str:
    """What annotators see for putting a word into a lexicon."""
    return f"{INTO}{lexicon}"


def word_labeling_config(lexicons: Sequence[str]) -> str:
    """The labeling interface: the word, its sentence and the masked sentence; one choice
    per lexicon and one to drop the word."""
    choices = "\n".join(
        f"    <Choice value={quoteattr(text)}/>"
        for text in [*(choice_for(name) for name in lexicons), DROP]
    )
    return f"""<View>
  <Header value="Word: $word"/>
  <Text name="context" value="$context"/>
  <Header value="Suggested for"/>
  <Text name="masked" value="$masked"/>
  <Header value="Score $score, from $sources"/>
  <Choices name="{VERDICT}" toName="context" choice="single" required="true">
{choices}
  </Choices>
</View>"""


@dataclass(frozen=True)
class WordsInLabelStudio:
    """Suggested words as a kind of Label Studio review, with one choice per lexicon: a task
    per word, read back with the word and the suggestion it carries."""

    lexicons: tuple[str, ...] = ()
    task_key = "word"
    description = "Suggested words for a suite's lexicons (testaug)"
    instructions = INSTRUCTIONS

    @property
    def label_config(self) -> str:
        """The words' labeling interface, with this kind's lexicons."""
        return word_labeling_config(self.lexicons)

    def task(self, item: ReviewWord, rank: int) -> dict[str, Any]:
        """A Label Studio task for a word; `rank` is its place in score order."""
        suggestion = item.suggestion
        return {
            "data": {
                "word": item.word,
                "context": one_line(item.context),
                "masked": one_line(suggestion.masked),
                "score": f"{suggestion.score:.2f}",
                "sources": ", ".join(suggestion.sources) or "unknown",
                "lexicons": list(self.lexicons),
                "rank": rank,
                "suggestion": suggestion.model_dump(mode="json"),
            }
        }

    def read_task(self, task: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | Problem:
        """The word a task carries, and its suggestion's data ({} when it has none)."""
        data = task.get("data") or {}
        word = data.get("word")
        if not isinstance(word, str) or not word.strip():
            return Problem("no word in its data")
        if reason := word_problem(word.strip()):
            return Problem(reason)
        suggestion = data.get("suggestion") if isinstance(data.get("suggestion"), dict) else {}
        return word, suggestion

    def verdict(
        self,
        context: tuple[str, Mapping[str, Any]],
        answer: Mapping[str, Any],
        users: Mapping[int, str],
    ) -> LexiconVerdict | None:
        """The verdict of one answer: into the lexicon chosen, or dropped."""
        word, suggestion = context
        chosen: list[str] = []
        for item in answer.get("result") or []:
            if item.get("from_name") == VERDICT:
                chosen = (item.get("value") or {}).get("choices") or []
        if len(chosen) != 1 or not (chosen[0] == DROP or chosen[0].startswith(INTO)):
            return None
        lexicon = None if chosen[0] == DROP else chosen[0][len(INTO) :]
        return LexiconVerdict(
            word=word,
            decision="drop" if lexicon is None else "keep",
            lexicon=lexicon,
            annotator=annotator_of(answer, users),
            origin="label-studio",
            masked=str(suggestion.get("masked") or ""),
            sources=tuple(str(s) for s in suggestion.get("sources") or []),
            created_at=answered_at(answer, datetime.now(UTC)),  # now, when the export does not say
        )


# Verdicts read from an export, with the word and suggestion data each task carries.
WordReading = LabelStudioReading[tuple[str, Mapping[str, Any]], LexiconVerdict]
# What a push did: the project, how many words were new to it, how many were there.
WordPush = TaskPush


def word_task(item: ReviewWord, rank: int, lexicons: Sequence[str]) -> dict[str, Any]:
    """A Label Studio task for a word; `rank` is its place in score order."""
    return WordsInLabelStudio(tuple(lexicons)).task(item, rank)


def read_word_export(tasks: Iterable[Mapping[str, Any]], users: Mapping[int, str]) -> WordReading:
    """Verdicts from a Label Studio JSON export of a words project."""
    return read_tasks(WordsInLabelStudio(), tasks, users)


def push_words(
    studio: LabelStudio,
    project: str,
    words: Sequence[ReviewWord],
    lexicons: Sequence[str],
    *,
    record: Path | None = None,
) -> WordPush:
    """Import words, in the given order, into a project (created with the words' interface
    if needed), skipping those it already has: pushing twice imports nothing twice. With a
    `record`, the project is the one it names (one found or created is recorded)."""
    kind = WordsInLabelStudio(tuple(lexicons))
    return push_items(studio, project, kind, words, record=record)


def pull_word_verdicts(
    studio: LabelStudio, project: str, *, record: Path | None = None
) -> WordReading:
    """Every verdict people gave in a words project so far (with a `record`, in the project
    it names)."""
    return read_export(studio, project, WordsInLabelStudio(), record=record)
