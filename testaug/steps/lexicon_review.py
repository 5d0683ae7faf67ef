"""Suggested words reviewed into a suite's lexicons, as `testaug lexicon` takes them: in the
terminal or Label Studio, verdicts saved to a file as they are given, and the kept words
written into the lexicon files the suite names (with provenance, never twice). Each step
returns the verdicts file as its main file (the push: the suggestions file it sent), with
the lexicon files it wrote beside it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import write_jsonl
from testaug.core.records import Record
from testaug.editor.lexicon_verdicts import (
    LexiconVerdict,
    ReviewWord,
    VerdictUpdate,
    check_kept_lexicons,
    check_lexicon_names,
    judged_by,
    kept,
    read_numbered_verdicts,
    read_verdicts,
    read_word_suggestions,
    review_words,
    save_verdicts,
)
from testaug.editor.lexicon_writer import (
    Addition,
    FileUpdate,
    add_words,
    check_not_builtin,
    suite_lexicons,
)
from testaug.editor.review_label_studio import pull_word_verdicts, push_words
from testaug.editor.review_terminal import review_words_in_terminal
from testaug.review.naming import project_title, verdicts_file
from testaug.review.run_files import SuggestionsReview
from testaug.steps.contract import StepOutput, StepSummary, step_output
from testaug.steps.review_kinds import Pushed, Reading, SuggestedKind, Verbs

if TYPE_CHECKING:
    from testaug.review.label_studio import LabelStudio

# The public functions that are not steps (see tests/steps/test_step_contract.py).
HELPERS = frozenset({"default_project", "default_verdicts", "words_to_review", "write_kept"})


def default_verdicts(suggestions_path: Path) -> Path:
    """Where the verdicts on a suggestions file go: <name>.verdicts.jsonl beside it."""
    return verdicts_file("words", suggestions_path)


def default_project(suggestions_path: Path) -> str:
    """The Label Studio project of a suggestions file: `testaug lexicon <its name>`."""
    return project_title("words", suggestions_path)


class WordsReviewConfig(SuggestionsReview):
    """Suggested words reviewed into a suite's lexicons (`testaug review words`): the suite
    whose lexicon files get the words and the lexicons the words may go into, besides the
    suggestions (JSONL, from `testaug lexicon suggest -o`), the verdicts file (default:
    <suggestions name>.verdicts.jsonl beside them), the Label Studio project (default:
    `testaug lexicon <suggestions name>`) and the file that records it (default: beside the
    suggestions, else beside the verdicts), and who judges in the terminal."""

    suite: Path
    lexicons: tuple[str, ...] = ()

    def default_verdicts(self, suggestions: Path) -> Path:
        return default_verdicts(suggestions)

    def default_project(self, suggestions: Path) -> str:
        return default_project(suggestions)


class LexiconWrite(Record):
    """What writing kept words did to the suite's lexicon files (only files written to)."""

    files: tuple[FileUpdate, ...] = ()

    @property
    def added(self) -> int:
        return sum(len(words) for update in self.files for words in update.added.values())

    @property
    def already_there(self) -> int:
        return sum(update.already_there for update in self.files)


class LexiconReviewSummary(StepSummary):
    """A terminal session on suggested words (`remaining`: still without a verdict;
    `already_in`: left out as the lexicons hold them) and what it wrote into the lexicons."""

    kind: Literal["lexicon-review"] = "lexicon-review"
    judged: int
    kept: int
    dropped: int
    skipped: int
    remaining: int
    already_in: int
    written: LexiconWrite


class LexiconPushSummary(StepSummary):
    """A push of suggested words into a Label Studio project (created or reused), less
    those the target lexicons hold already (`already_in`)."""

    kind: Literal["lexicon-push"] = "lexicon-push"
    project: str
    project_id: int
    created: bool
    imported: int
    already_present: int
    already_in: int


class LexiconPullSummary(StepSummary):
    """People's verdicts pulled from a words project (`fresh`: new or changed in the
    verdicts file; answers that could not be read, with their reasons) and what the new
    verdicts wrote into the lexicons."""

    kind: Literal["lexicon-pull"] = "lexicon-pull"
    project: str
    verdicts: int
    fresh: int
    cancelled: int
    unanswered: int
    problems: tuple[str, ...] = ()
    written: LexiconWrite


class LexiconApplySummary(StepSummary):
    """What a verdicts file's kept words did to the lexicon files."""

    kind: Literal["lexicon-apply"] = "lexicon-apply"
    written: LexiconWrite


def _verdicts_output(
    step: str, verdicts_path: Path, written: LexiconWrite, summary: StepSummary
) -> StepOutput:
    """The step's record: the verdicts file (an empty one when nobody has judged a word
    yet) and the lexicon files written, by role `lexicon:<file name>`."""
    if not verdicts_path.exists():
        write_jsonl(verdicts_path, [])
    files = {f"lexicon:{update.path.name}": update.path for update in written.files}
    records = len(read_verdicts(verdicts_path))
    return step_output(step, verdicts_path, records, files=files, summary=summary)


def write_kept(
    suite: Path, verdicts: Iterable[LexiconVerdict], *, origin: str = ""
) -> LexiconWrite:
    """Write the words the verdicts keep (the latest verdict per word counting) into the
    suite's lexicon files: one commented block per lexicon and masked sentence."""
    chosen = kept(verdicts)
    if not chosen:
        return LexiconWrite()
    files = suite_lexicons(suite)
    names = sorted({v.lexicon for v in chosen if v.lexicon is not None})
    check_lexicon_names(names, most=None, field="lexicon")  # verdicts may be hand-written
    check_not_builtin(files, names)
    groups: dict[tuple[str, str], list[LexiconVerdict]] = {}
    for verdict in chosen:
        assert verdict.lexicon is not None
        groups.setdefault((verdict.lexicon, verdict.masked), []).append(verdict)
    per_file: dict[Path, list[Addition]] = {}
    for (lexicon, masked), group in groups.items():
        addition = Addition(
            lexicon=lexicon,
            words=tuple(v.word for v in group),
            annotators=tuple(dict.fromkeys(v.annotator for v in group)),
            when=max(v.created_at for v in group),
            masked=masked,
            sources=tuple(dict.fromkeys(s for v in group for s in v.sources)),
            origin=origin,
        )
        per_file.setdefault(files.file_for(lexicon), []).append(addition)
    return LexiconWrite(
        files=tuple(add_words(path, additions) for path, additions in per_file.items())
    )


@dataclass(frozen=True)
class WordsToReview:
    """The words of a suggestions file left to review, and how many the lexicons hold already."""

    words: list[ReviewWord]
    already_in: int
    contents: dict[str, tuple[str, ...]]


def words_to_review(suggestions_path: Path, suite: Path, lexicons: Sequence[str]) -> WordsToReview:
    """The suggested words, best first, less those a target lexicon already holds."""
    check_lexicon_names(lexicons)
    files = suite_lexicons(suite)
    check_not_builtin(files, lexicons)
    contents = files.contents()
    held = {word for name in lexicons for word in contents.get(name, ())}
    every = review_words(read_word_suggestions(suggestions_path))
    left = [item for item in every if item.word not in held]
    return WordsToReview(left, len(every) - len(left), contents)


def _write_latest(
    suite: Path, verdicts_path: Path, fresh: Sequence[LexiconVerdict], *, origin: str
) -> LexiconWrite:
    """Write the kept words among `fresh` verdicts' words, as every verdict so far decides."""
    words = {v.word for v in fresh}
    if not words:
        return LexiconWrite()
    every = [(n, v) for n, v in read_numbered_verdicts(verdicts_path) if v.word in words]
    check_kept_lexicons(verdicts_path, every)
    return write_kept(suite, [v for _, v in every], origin=origin)


Words = WordsReviewConfig  # in the hooks below


class WordsKind(SuggestedKind[WordsReviewConfig, LexiconVerdict]):
    """Suggested words of lexicons: judged best first (less those a target lexicon holds),
    the kept ones written into the suite's lexicon files (every step but the push returns
    the verdicts file as its main file). A session writes the words it kept when it ends,
    an interrupted one included; a pull, those its new or changed verdicts keep."""

    kind = "words"
    config = WordsReviewConfig
    steps = Verbs("review_in_terminal", "push_words_file", "pull_into_lexicons", "apply_verdicts")
    outputs = Verbs("lexicon-review", "lexicon-push", "lexicon-pull", "lexicon-apply")
    summaries = Verbs(
        LexiconReviewSummary, LexiconPushSummary, LexiconPullSummary, LexiconApplySummary
    )
    session_counts = ("judged", "kept", "dropped", "skipped", "remaining")
    apply_if_stopped = True

    read_verdicts = staticmethod(read_verdicts)
    save_verdicts = staticmethod(save_verdicts)
    judged_by = staticmethod(judged_by)

    def to_review(self, config: Words, suggestions: Path, step: str) -> WordsToReview:
        return words_to_review(suggestions, config.suite, config.lexicons)

    def items(self, todo: WordsToReview) -> list[ReviewWord]:
        return todo.words

    def session(self, config: Words, todo: WordsToReview, **session: Any) -> Any:
        def present(word: str) -> list[str]:
            return [name for name, words in todo.contents.items() if word in words]

        return review_words_in_terminal(
            todo.words, lexicons=config.lexicons, present=present, **session
        )

    def after_session(
        self,
        config: Words,
        todo: WordsToReview,
        verdicts: Path,
        made: list[LexiconVerdict],
    ) -> dict[str, Any]:
        origin = config.suggestions_file(self.steps.terminal).name
        written = _write_latest(config.suite, verdicts, made, origin=origin)
        return {"already_in": todo.already_in, "written": written}

    def push_items(
        self,
        studio: LabelStudio,
        project: str,
        config: Words,
        todo: WordsToReview,
        record: Path,
    ) -> Pushed:
        return push_words(studio, project, todo.words, config.lexicons, record=record)

    def pushed_fields(self, todo: WordsToReview) -> dict[str, Any]:
        return {"already_in": todo.already_in}

    def pull_reading(self, studio: LabelStudio, project: str, record: Path) -> Reading:
        return pull_word_verdicts(studio, project, record=record)

    def after_pull(
        self,
        config: Words,
        verdicts: Path,
        project: str,
        reading: Reading,
        update: VerdictUpdate,
    ) -> dict[str, Any]:
        origin = f"Label Studio project {project!r}"
        written = _write_latest(config.suite, verdicts, update.fresh, origin=origin)
        return {"fresh": len(update.fresh), "written": written}

    def applied(self, config: Words, verdicts: Path, step: str) -> dict[str, Any]:
        """Every word the file keeps (those already there are left out): after a hand-edited
        verdicts file, or to redo a write. An error naming the file when it is not there."""
        if not verdicts.is_file():
            raise InputError(Problem("no such verdicts file", file=verdicts))
        numbered = read_numbered_verdicts(verdicts)
        check_kept_lexicons(verdicts, numbered)
        origin = verdicts.name
        return {"written": write_kept(config.suite, [v for _, v in numbered], origin=origin)}

    def output(self, name: str, verdicts: Path, summary: Any) -> StepOutput:
        return _verdicts_output(name, verdicts, summary.written, summary)


WORDS = WordsKind()

# The steps of suggested words, by their names here (see testaug.steps.review_kinds).
review_in_terminal = WORDS.terminal
push_words_file = WORDS.push
pull_into_lexicons = WORDS.pull
apply_verdicts = WORDS.apply
