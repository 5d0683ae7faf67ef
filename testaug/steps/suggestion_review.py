"""People's verdicts on a round of suggestions, as `testaug review tests` and the adapt flow
take them: in the terminal or Label Studio, saved to a verdicts file, and the accepted
suggestions added to the test tree (rewritten atomically). Every step but the push returns
the tree as its main file; the push names the suggestions file it sent."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from testaug.adaptive.review_label_studio import pull_suggestion_verdicts, push_suggestions
from testaug.adaptive.review_terminal import review_suggestions
from testaug.adaptive.suggestion import Suggestion, SuggestionVerdict
from testaug.adaptive.tree_files import read_tree
from testaug.adaptive.verdicts import (
    VerdictUpdate,
    add_accepted_to_file,
    judged_by,
    read_suggestions,
    read_verdicts,
    save_verdicts,
)
from testaug.core.file_lock import FileBusy, locked
from testaug.core.records import Record
from testaug.core.runs import remove_stale_temporaries
from testaug.review.label_studio_tasks import find_recorded
from testaug.review.naming import project_title, verdicts_file
from testaug.review.project_record import PROJECT_RECORD
from testaug.review.run_files import SuggestionsReview
from testaug.steps.adapt import AdaptConfig
from testaug.steps.contract import StepOutput, StepSummary, step_output
from testaug.steps.review_kinds import Pushed, Reading, SuggestedKind, Verbs

logger = logging.getLogger(__name__)

# The public functions that are not steps (see tests/steps/test_step_contract.py).
HELPERS = frozenset(
    {
        "add_to_tree",
        "default_project",
        "default_verdicts",
        "round_folder",
        "round_folders",
        "round_number",
        "reserved_round",
    }
)

if TYPE_CHECKING:
    from testaug.review.label_studio import LabelStudio


def default_verdicts(suggestions_path: Path) -> Path:
    """Where the verdicts on a suggestions file go: verdicts.jsonl beside it."""
    return verdicts_file("tests", suggestions_path)


def default_project(suggestions_path: Path) -> str:
    """The Label Studio project of a suggestions file: `testaug suggestions <its folder>`."""
    return project_title("tests", suggestions_path)


class SuggestionReviewConfig(SuggestionsReview):
    """People's verdicts on a suggestions file (`testaug review tests`): the tree the
    accepted ones join, besides the suggestions (JSONL, from `testaug tree adapt`), the
    verdicts file (default: verdicts.jsonl beside the suggestions), the Label Studio
    project (default: `testaug suggestions <the suggestions' folder>`) and the file that
    records it (default: beside the suggestions, else beside the verdicts), and who judges
    in the terminal."""

    tree: Path | None = None

    def default_verdicts(self, suggestions: Path) -> Path:
        return default_verdicts(suggestions)

    def default_project(self, suggestions: Path) -> str:
        return default_project(suggestions)

    def tree_file(self, step: str) -> Path:
        """The tree file, which `step` needs."""
        if self.tree is None:
            raise ValueError(f"{step} needs config.tree, the tree the accepted ones join")
        return self.tree


class TreeUpdate(Record):
    """What adding accepted suggestions did to a tree file."""

    tree: Path
    accepted: int  # suggestions the verdicts accept
    added: int  # tests new to the tree
    rows: int  # rows of the tree after adding


class SuggestionAddSummary(StepSummary):
    """What a verdicts file's accepted suggestions did to the tree."""

    kind: Literal["suggestion-add"] = "suggestion-add"
    tree: TreeUpdate


class SuggestionReviewSummary(StepSummary):
    """A terminal session on a round's suggestions (`remaining`: still without a verdict)
    and what the verdicts so far did to the tree."""

    kind: Literal["suggestion-review"] = "suggestion-review"
    judged: int
    accepted: int
    invalid: int
    off_topic: int
    skipped: int
    remaining: int
    tree: TreeUpdate


class SuggestionPushSummary(StepSummary):
    """A push of suggestions into a Label Studio project (created or reused)."""

    kind: Literal["suggestion-push"] = "suggestion-push"
    project: str
    project_id: int
    created: bool
    imported: int
    already_present: int


class SuggestionPullSummary(StepSummary):
    """People's verdicts pulled from a suggestions project (new or changed in the verdicts
    file; answers that could not be read, with their reasons) and the tree update."""

    kind: Literal["suggestion-pull"] = "suggestion-pull"
    project: str
    verdicts: int
    added: int
    changed: int
    cancelled: int
    unanswered: int
    problems: tuple[str, ...] = ()
    tree: TreeUpdate


def _tree_output(step: str, update: TreeUpdate, summary: StepSummary, **files: Path) -> StepOutput:
    return step_output(step, update.tree, update.rows, files=files, summary=summary)


def add_to_tree(
    tree_path: Path, suggestions: list[Suggestion], verdicts: list[SuggestionVerdict]
) -> TreeUpdate:
    """Add the suggestions the verdicts accept to the tree file (labelled with who accepted
    them); the file is rewritten atomically, and only when something is new."""
    addition = add_accepted_to_file(tree_path, suggestions, verdicts)
    return TreeUpdate(
        tree=tree_path, accepted=addition.accepted, added=addition.added, rows=len(addition.tree)
    )


Trees = SuggestionReviewConfig  # in the hooks below


class TestsKind(SuggestedKind[SuggestionReviewConfig, SuggestionVerdict]):
    """Suggested tests of a tree: judged in failure order, the accepted ones added to the
    tree file (every step but the push returns the tree as its main file)."""

    kind = "tests"
    config = SuggestionReviewConfig
    steps = Verbs(
        "review_in_terminal", "push_suggestions_file", "pull_into_tree", "add_verdicts_file"
    )
    outputs = Verbs("suggestion-review", "suggestion-push", "suggestion-pull", "suggestion-add")
    summaries = Verbs(
        SuggestionReviewSummary, SuggestionPushSummary, SuggestionPullSummary, SuggestionAddSummary
    )
    session_counts = ("judged", "accepted", "invalid", "off_topic", "skipped", "remaining")

    read_verdicts = staticmethod(read_verdicts)
    save_verdicts = staticmethod(save_verdicts)
    judged_by = staticmethod(judged_by)

    def check(self, config: Trees, step: str) -> None:
        config.tree_file(step)

    def to_review(self, config: Trees, suggestions: Path, step: str) -> list[Suggestion]:
        return read_suggestions(suggestions)

    def items(self, todo: list[Suggestion]) -> list[Suggestion]:
        return todo

    def session(self, config: Trees, todo: list[Suggestion], **session: Any) -> Any:
        topics = read_tree(config.tree_file(self.steps.terminal)).topics()
        return review_suggestions(todo, topics=topics, **session)

    def after_session(
        self,
        config: Trees,
        todo: list[Suggestion],
        verdicts: Path,
        made: list[SuggestionVerdict],
    ) -> dict[str, Any]:
        tree_path = config.tree_file(self.steps.terminal)
        return {"tree": add_to_tree(tree_path, todo, read_verdicts(verdicts))}

    def push_items(
        self,
        studio: LabelStudio,
        project: str,
        config: Trees,
        todo: list[Suggestion],
        record: Path,
    ) -> Pushed:
        return push_suggestions(studio, project, todo, record=record)

    def pull_reading(self, studio: LabelStudio, project: str, record: Path) -> Reading:
        return pull_suggestion_verdicts(studio, project, record=record)

    def after_pull(
        self,
        config: Trees,
        verdicts: Path,
        project: str,
        reading: Reading,
        update: VerdictUpdate,
    ) -> dict[str, Any]:
        """The suggestions are those the project's tasks carry, and those of
        `config.suggestions` when given."""
        known = dict(reading.contexts)
        if config.suggestions is not None:
            known.update({s.id: s for s in read_suggestions(config.suggestions)})
        tree_path = config.tree_file(self.steps.pull)
        tree = add_to_tree(tree_path, list(known.values()), update.verdicts)
        return {"added": update.added, "changed": update.changed, "tree": tree}

    def applied(self, config: Trees, verdicts: Path, step: str) -> dict[str, Any]:
        suggestions = read_suggestions(config.suggestions_file(step))
        return {"tree": add_to_tree(config.tree_file(step), suggestions, read_verdicts(verdicts))}

    def output(self, name: str, verdicts: Path, summary: Any) -> StepOutput:
        return _tree_output(name, summary.tree, summary, verdicts=verdicts)


TESTS = TestsKind()

# The steps of suggested tests, by their names here (see testaug.steps.review_kinds).
review_in_terminal = TESTS.terminal
push_suggestions_file = TESTS.push
pull_into_tree = TESTS.pull
add_verdicts_file = TESTS.apply


# Rounds of the adapt flow: <work_dir>/round-001/, round-002/, ... each with the round's
# suggestions.jsonl and the verdicts.jsonl people's verdicts on them go to; the rounds share
# one Label Studio project, recorded in the work folder.
ROUND_PREFIX = "round-"
SUGGESTIONS_FILE = "suggestions.jsonl"
VERDICTS_FILE = "verdicts.jsonl"


def round_folders(work_dir: Path) -> list[Path]:
    """The round folders of a work folder that hold suggestions, in round order."""
    found = [
        path.parent
        for path in work_dir.glob(f"{ROUND_PREFIX}*/{SUGGESTIONS_FILE}")
        if path.parent.name[len(ROUND_PREFIX) :].isdigit()
    ]
    return sorted(found, key=lambda folder: int(folder.name[len(ROUND_PREFIX) :]))


def round_folder(work_dir: Path, number: int) -> Path:
    """The folder of round `number` (1 is the first)."""
    return work_dir / f"{ROUND_PREFIX}{number:03d}"


def round_number(folder: Path) -> int:
    """The number of a round folder."""
    return int(folder.name[len(ROUND_PREFIX) :])


@contextmanager
def reserved_round(work_dir: Path) -> Iterator[int]:
    """The number of the next round, reserved for the `with` block: its folder is made and
    its suggestions file's lock held, so a run at the same time takes the number after. A
    round folder left without suggestions by a run that stopped is taken again, and what
    killed writes left in the work folder's rounds is removed."""
    work_dir.mkdir(parents=True, exist_ok=True)
    rounds = round_folders(work_dir)
    number = round_number(rounds[-1]) + 1 if rounds else 1
    while True:
        folder = round_folder(work_dir, number)
        folder.mkdir(exist_ok=True)
        with ExitStack() as held:
            try:
                held.enter_context(locked(folder / SUGGESTIONS_FILE, timeout=0))
            except FileBusy:  # another run holds this round
                pass
            else:
                if not (folder / SUGGESTIONS_FILE).exists():
                    remove_stale_temporaries(work_dir, recursive=True)
                    yield number
                    return
        number += 1


class RoundsSummary(StepSummary):
    """Verdicts gathered over a work folder's rounds and what they added to the tree."""

    kind: Literal["suggestion-rounds"] = "suggestion-rounds"
    rounds: int
    verdicts: int  # verdicts in the rounds' files after gathering
    new_verdicts: int  # of which new or changed in this gathering
    latest_suggestions: int  # suggestions of the latest round
    latest_verdicts: int  # verdicts on the latest round's suggestions
    accepted: int
    added: int
    tree_rows: int


def gather_rounds(config: AdaptConfig) -> StepOutput:
    """Save the verdicts of `config.verdicts` (a file a person wrote; none when unset) into
    the verdicts file of the round whose suggestion each judges (verdicts on no round's
    suggestion are dropped), then add what every round's verdicts accept to the tree."""
    incoming = read_verdicts(config.verdicts) if config.verdicts else []
    return _gather(config.folder(), config.tree, incoming)


def _gather(
    work_dir: Path, tree_path: Path, incoming: Sequence[SuggestionVerdict] = ()
) -> StepOutput:
    """Save `incoming` verdicts (pulled, or read from a file) by round, then add what every
    round's verdicts accept to the tree (see `gather_rounds`)."""
    folders = round_folders(work_dir)
    pending = list(incoming)
    total = new = latest = latest_suggestions = 0
    suggestions: list[Suggestion] = []
    verdicts: list[SuggestionVerdict] = []
    for folder in folders:
        round_suggestions = read_suggestions(folder / SUGGESTIONS_FILE)
        ids = {s.id for s in round_suggestions}
        mine = [v for v in pending if v.suggestion_id in ids]
        path = folder / VERDICTS_FILE
        if mine:
            update = save_verdicts(path, mine)
            new += update.added + update.changed
        round_verdicts = read_verdicts(path)
        total += len(round_verdicts)
        latest, latest_suggestions = len(round_verdicts), len(round_suggestions)
        suggestions += round_suggestions
        verdicts += round_verdicts
    tree = add_to_tree(tree_path, suggestions, verdicts)
    summary = RoundsSummary(
        rounds=len(folders),
        verdicts=total,
        new_verdicts=new,
        latest_suggestions=latest_suggestions,
        latest_verdicts=latest,
        accepted=tree.accepted,
        added=tree.added,
        tree_rows=tree.rows,
    )
    return _tree_output("suggestion-rounds", tree, summary)


def pull_rounds(config: AdaptConfig, *, studio: LabelStudio) -> StepOutput:
    """People's verdicts so far from the work folder's Label Studio project
    (`config.project_name()`: the one recorded in the work folder, else found by title),
    saved by round, and the accepted suggestions of every round added to the tree. A project
    not there (yet: no push got through) holds no verdict; a recorded one no longer there
    is an error."""
    work_dir, project = config.folder(), config.project_name()
    record = work_dir / PROJECT_RECORD
    if find_recorded(studio, project, record) is None:
        logger.warning("no Label Studio project %r at %s yet: no verdicts", project, studio.url)
        return _gather(work_dir, config.tree)
    reading = pull_suggestion_verdicts(studio, project, record=record)
    return _gather(work_dir, config.tree, reading.verdicts)
