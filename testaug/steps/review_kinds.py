"""The review steps of every kind of thing reviewed, one function per verb: `terminal`
(`review_in_terminal`), `push` (`push_for_review`), `pull` (`pull_verdicts`) and `apply`
(`apply_verdicts`). Each takes a kind's config and hands it to the kind its class belongs
to (`kind_of`), which returns the kind's own typed summary.

    kind        config                   steps (testaug.steps.<module>)
    candidates  ReviewConfig             review: review_in_terminal, push_to_label_studio,
                                         pull_and_merge, merge_reviewed
    tests       SuggestionReviewConfig   suggestion_review: the verbs of `SuggestedKind`
    words       WordsReviewConfig        lexicon_review: the verbs of `SuggestedKind`

Suggested tests and suggested words share one skeleton (`SuggestedKind`): a session in the
terminal saves each verdict to the verdicts file at once, a push sends the suggestions file
to the recorded project, a pull saves the project's verdicts to the file, and what the
verdicts accept is applied (to the tree, to the lexicon files). A kind says only what
differs: how its items and verdicts are read, its terminal session, its Label Studio
calls, what applying verdicts does, and its summaries. Candidates keep steps of their own
(the ranker's `auto` mode, calibration draws, the merge into a suite) behind the same verbs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, Protocol, TypeVar

from testaug.core.records import Record
from testaug.review.naming import ReviewKind
from testaug.review.run_files import SuggestionsReview
from testaug.steps.contract import StepOutput, StepSummary, step_output

if TYPE_CHECKING:
    from rich.console import Console

    from testaug.review.label_studio import LabelStudio
    from testaug.review.terminal import KeyReader

# The public functions that are not steps (see tests/steps/test_step_contract.py).
HELPERS = frozenset({"kind_of", "kinds"})

# The verbs of every kind of review, as `testaug review <kind>` names them.
VERBS = ("terminal", "push", "pull", "apply")

Config = TypeVar("Config", bound=SuggestionsReview)
Verdict = TypeVar("Verdict")
T = TypeVar("T")


class Verbs(NamedTuple, Generic[T]):
    """One thing for each verb of a kind."""

    terminal: T
    push: T
    pull: T
    apply: T


class KindSteps(Protocol):
    """One kind of review: its config class and a step for each verb."""

    @property
    def kind(self) -> ReviewKind: ...
    @property
    def config(self) -> type: ...
    def terminal(self, config: Any, *, read_key: KeyReader, console: Console) -> StepOutput: ...
    def push(self, config: Any, *, studio: LabelStudio) -> StepOutput: ...
    def pull(self, config: Any, *, studio: LabelStudio) -> StepOutput: ...
    def apply(self, config: Any) -> StepOutput: ...


@dataclass(frozen=True)
class StepsOf:
    """A kind whose verbs are functions of its own (candidates)."""

    kind: ReviewKind
    config: type
    terminal: Callable[..., StepOutput]
    push: Callable[..., StepOutput]
    pull: Callable[..., StepOutput]
    apply: Callable[[Any], StepOutput]


def kinds() -> dict[ReviewKind, KindSteps]:
    """Every kind of review by its name (imported on first use: the kinds import this)."""
    from testaug.steps import review
    from testaug.steps.lexicon_review import WORDS
    from testaug.steps.suggestion_review import TESTS

    candidates = (review.review_in_terminal, review.push_to_label_studio, review.pull_and_merge)
    CANDIDATES = StepsOf("candidates", review.ReviewConfig, *candidates, review.merge_reviewed)
    return {kind.kind: kind for kind in (CANDIDATES, TESTS, WORDS)}


def kind_of(config: object) -> KindSteps:
    """The kind of review a config is of; TypeError for a config of none."""
    for kind in kinds().values():
        if isinstance(config, kind.config):
            return kind
    raise TypeError(f"no kind of review takes a {type(config).__name__}")


def review_in_terminal(config: Record, *, read_key: KeyReader, console: Console) -> StepOutput:
    """Verb `terminal`: a person judges the config's items in the terminal, each verdict
    saved at once (a second session goes on where one stopped), and what the verdicts
    accept is applied as the kind does."""
    return kind_of(config).terminal(config, read_key=read_key, console=console)


def push_for_review(config: Record, *, studio: LabelStudio) -> StepOutput:
    """Verb `push`: the config's items into its Label Studio project (nothing twice)."""
    return kind_of(config).push(config, studio=studio)


def pull_verdicts(config: Record, *, studio: LabelStudio) -> StepOutput:
    """Verb `pull`: people's verdicts from the config's Label Studio project into its
    verdicts file, and what they accept applied as the kind does."""
    return kind_of(config).pull(config, studio=studio)


def apply_verdicts(config: Record) -> StepOutput:
    """Verb `apply`: what the config's verdicts file accepts, applied as the kind does."""
    return kind_of(config).apply(config)


class Pushed(Protocol):
    """What a push did (testaug.review.label_studio_tasks.TaskPush)."""

    project_id: int
    created: bool
    imported: int
    already_present: int


class Reading(Protocol):
    """What a pull read (testaug.review.kernel.LabelStudioReading)."""

    verdicts: list[Any]
    contexts: dict[Any, Any]
    cancelled: int
    unanswered: int
    problems: list[str]


class SuggestedKind(Generic[Config, Verdict]):
    """The review of suggested items (tests of a tree, words of lexicons) on a
    `SuggestionsReview` config: one skeleton for the four verbs, and the hooks each kind
    fills in with what differs. `steps` names each verb's step (in errors, as the module
    offers it), `outputs` the name of its StepOutput, and the summary classes are the
    kind's; `session_counts` are the fields of a terminal session its summary copies."""

    kind: ReviewKind
    config: type[Config]
    steps: Verbs[str]
    outputs: Verbs[str]
    summaries: Verbs[type[StepSummary]]
    session_counts: tuple[str, ...]
    apply_if_stopped = False  # whether a session stopped by an error applies its verdicts

    # What differs between kinds.
    def check(self, config: Config, step: str) -> None:
        """Refuse a config without a field the pull needs, before anything is pulled."""

    def read_verdicts(self, path: Path) -> list[Verdict]:
        raise NotImplementedError

    def save_verdicts(self, path: Path, verdicts: Iterable[Verdict]) -> Any:
        raise NotImplementedError

    def judged_by(self, verdicts: Iterable[Verdict], annotator: str) -> set[str]:
        raise NotImplementedError

    def to_review(self, config: Config, suggestions: Path, step: str) -> Any:
        """What a session or a push reads: the items and what they are shown with."""
        raise NotImplementedError

    def items(self, todo: Any) -> list[Any]:
        """The items of `to_review`'s answer a push sends."""
        raise NotImplementedError

    def session(self, config: Config, todo: Any, **session: Any) -> Any:
        """The terminal session (`session`: annotator, done, read_key, console, save)."""
        raise NotImplementedError

    def after_session(
        self, config: Config, todo: Any, verdicts_path: Path, made: list[Verdict]
    ) -> dict[str, Any]:
        """Apply what a session's verdicts accept; the summary's fields that say so."""
        raise NotImplementedError

    def push_items(
        self, studio: LabelStudio, project: str, config: Config, todo: Any, record: Path
    ) -> Pushed:
        raise NotImplementedError

    def pushed_fields(self, todo: Any) -> dict[str, Any]:
        """The push summary's fields of the kind's own."""
        return {}

    def pull_reading(self, studio: LabelStudio, project: str, record: Path) -> Reading:
        raise NotImplementedError

    def after_pull(
        self, config: Config, verdicts_path: Path, project: str, reading: Any, update: Any
    ) -> dict[str, Any]:
        """Apply what pulled verdicts accept; the pull summary's fields of the kind's own."""
        raise NotImplementedError

    def applied(self, config: Config, verdicts_path: Path, step: str) -> dict[str, Any]:
        """Apply what a verdicts file accepts; the apply summary's fields."""
        raise NotImplementedError

    def output(self, name: str, verdicts_path: Path, summary: Any) -> StepOutput:
        """The step's record of a verb but the push."""
        raise NotImplementedError

    # The verbs.
    def terminal(self, config: Config, *, read_key: KeyReader, console: Console) -> StepOutput:
        step = self.steps.terminal
        if config.annotator is None:
            raise ValueError(f"{step} needs config.annotator, who judges")
        annotator = config.annotator
        suggestions_path = config.suggestions_file(step)
        verdicts_path = config.verdicts_file(step)
        todo = self.to_review(config, suggestions_path, step)
        made: list[Verdict] = []

        def save(verdict: Verdict) -> None:
            self.save_verdicts(verdicts_path, [verdict])
            made.append(verdict)

        try:
            session = self.session(
                config,
                todo,
                annotator=annotator,
                done=self.judged_by(self.read_verdicts(verdicts_path), annotator),
                read_key=read_key,
                console=console,
                save=save,
            )
        except BaseException:
            if self.apply_if_stopped:
                self.after_session(config, todo, verdicts_path, made)
            raise
        fields = self.after_session(config, todo, verdicts_path, made)
        counts = {name: getattr(session, name) for name in self.session_counts}
        summary = self.summaries.terminal(**counts, **fields)
        return self.output(self.outputs.terminal, verdicts_path, summary)

    def push(self, config: Config, *, studio: LabelStudio) -> StepOutput:
        suggestions_path, project, record = config.push_target(self.steps.push)
        todo = self.to_review(config, suggestions_path, self.steps.push)
        pushed = self.push_items(studio, project, config, todo, record)
        summary = self.summaries.push(
            project=project,
            project_id=pushed.project_id,
            created=pushed.created,
            imported=pushed.imported,
            already_present=pushed.already_present,
            **self.pushed_fields(todo),
        )
        records = len(self.items(todo))
        return step_output(self.outputs.push, suggestions_path, records, summary=summary)

    def pull(self, config: Config, *, studio: LabelStudio) -> StepOutput:
        self.check(config, self.steps.pull)
        verdicts_path, project, record = config.pull_target(self.steps.pull)
        reading = self.pull_reading(studio, project, record)
        update = self.save_verdicts(verdicts_path, reading.verdicts)
        summary = self.summaries.pull(
            project=project,
            verdicts=len(reading.verdicts),
            cancelled=reading.cancelled,
            unanswered=reading.unanswered,
            problems=tuple(reading.problems),
            **self.after_pull(config, verdicts_path, project, reading, update),
        )
        return self.output(self.outputs.pull, verdicts_path, summary)

    def apply(self, config: Config) -> StepOutput:
        step = self.steps.apply
        verdicts_path = config.verdicts_file(step)
        summary = self.summaries.apply(**self.applied(config, verdicts_path, step))
        return self.output(self.outputs.apply, verdicts_path, summary)
