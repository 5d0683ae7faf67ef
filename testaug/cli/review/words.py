"""`testaug review words` (once `testaug lexicon review|push|pull|apply`): suggested words
(from `testaug lexicon suggest -o`) reviewed in the terminal or Label Studio, and the kept
ones written into the suite's lexicon files."""

from __future__ import annotations

from pathlib import Path

import typer

from testaug.cli.console import console, styled
from testaug.cli.review import common
from testaug.cli.review.common import API_KEY, URL
from testaug.core.bundled import resolve_suite
from testaug.core.errors import InputError, Problem
from testaug.steps.lexicon_review import LexiconWrite, WordsReviewConfig

SUGGESTIONS = common.suggestions_argument(
    "Word suggestions (JSONL, from testaug lexicon suggest -o)."
)
SUITE = typer.Option(
    ...,
    "--suite",
    help="The suite whose lexicon files get the words: a suite YAML file or a folder holding "
    "suite.yaml (copy a shipped suite's folder first).",
)
INTO = typer.Option(
    ...,
    "--into",
    help="A lexicon the words may go into (repeatable, up to 9; a new name creates it).",
)
VERDICTS = common.verdicts_option(
    None, "Verdicts file (default: <SUGGESTIONS>.verdicts.jsonl beside it)."
)
PROJECT = common.project_option("testaug lexicon <SUGGESTIONS name>")


def terminal_command(
    suggestions_path: Path = SUGGESTIONS,
    suite: str = SUITE,
    into: list[str] = INTO,
    annotator: str | None = common.annotator_option("the provenance"),
    verdicts: Path | None = VERDICTS,
) -> None:
    """Judge suggested words in the terminal, best first: Enter/k keeps a word in the one
    --into lexicon (1-9 picks one of several), d drops it, s skips, q quits. Verdicts are
    saved one by one (run it again to go on); kept words are written when the session ends."""
    suite_path = _writable_suite(suite)
    session, saved_to = common.judge_in_terminal(
        annotator,
        lambda person: WordsReviewConfig(
            suite=suite_path,
            suggestions=suggestions_path,
            lexicons=tuple(into),
            verdicts=verdicts,
            annotator=person,
        ),
    )
    console.print(
        styled(
            "[green]{:,} judged[/] ({:,} kept, {:,} dropped), {:,} skipped, {:,} left, {:,} "
            "already in the lexicons; saved to {}",
            session.judged,
            session.kept,
            session.dropped,
            session.skipped,
            session.remaining,
            session.already_in,
            saved_to,
        )
    )
    _print_written(session.written)


def push_command(
    suggestions_path: Path = SUGGESTIONS,
    suite: str = SUITE,
    into: list[str] = INTO,
    project: str | None = PROJECT,
    url: str | None = URL,
    api_key: str | None = API_KEY,
) -> None:
    """Send suggested words to a Label Studio project, one task per word in its sentence,
    with a choice per --into lexicon and one to drop it (each word once, however often it is
    pushed; words the lexicons hold are left out)."""
    from testaug.steps.lexicon_review import push_words_file
    from testaug.steps.review import connect_label_studio

    config = WordsReviewConfig(
        suite=resolve_suite(suite),
        suggestions=suggestions_path,
        lexicons=tuple(into),
        project=project,
    )
    pushed = push_words_file(config, studio=connect_label_studio(url, api_key))
    summary = pushed.summary
    common.print_pushed(
        "words",
        config.project_name("push"),
        summary,
        f", {summary.already_in:,} already in the lexicons",
    )


def pull_command(
    suggestions_path: Path = SUGGESTIONS,
    suite: str = SUITE,
    verdicts: Path | None = VERDICTS,
    project: str | None = PROJECT,
    url: str | None = URL,
    api_key: str | None = API_KEY,
) -> None:
    """Bring people's verdicts on words back from Label Studio into the verdicts file and
    write the kept words into the suite's lexicon files."""
    from testaug.steps.lexicon_review import pull_into_lexicons
    from testaug.steps.review import connect_label_studio

    config = WordsReviewConfig(
        suite=_writable_suite(suite),
        suggestions=suggestions_path,
        verdicts=verdicts,
        project=project,  # recorded beside the suggestions
    )
    verdicts, project = config.verdicts_file("pull"), config.project_name("pull")
    done = pull_into_lexicons(config, studio=connect_label_studio(url, api_key))
    pulled = done.summary
    fresh = f"{pulled.fresh:,} new or changed"
    common.print_pulled(project, pulled, fresh, f"saved to {verdicts}", pulled.problems)
    _print_written(pulled.written)


def apply_command(
    verdicts: Path = typer.Argument(..., help="A verdicts file (JSONL) of testaug lexicon."),
    suite: str = SUITE,
) -> None:
    """Write every word a verdicts file keeps into the suite's lexicon files (words already
    there are left out)."""
    from testaug.steps.lexicon_review import apply_verdicts

    config = WordsReviewConfig(suite=_writable_suite(suite), verdicts=verdicts)
    _print_written(apply_verdicts(config).summary.written)


COMMANDS = common.verbs(terminal_command, push_command, pull_command, apply_command)


def words_door() -> typer.Typer:
    """`testaug review words`."""
    return common.kind_door(
        "Words suggested for a suite's lexicons (by `testaug lexicon suggest -o`): people "
        "judge them in the terminal or in Label Studio, and the kept ones are written into "
        "the lexicon files.",
        "Suggested words: judge them into the lexicons.",
        COMMANDS,
    )


# The old names in `testaug lexicon`, hidden: `testaug lexicon review` is `review words terminal`.
OLD_NAMES = {
    "review": terminal_command,
    "push": push_command,
    "pull": pull_command,
    "apply": apply_command,
}


def _writable_suite(suite: str) -> Path:
    """The suite file whose lexicons get words; a shipped suite named by its task is refused
    (its files belong to the installation): copy its folder and name the copy."""
    path = resolve_suite(suite)
    if not Path(suite).exists():
        raise InputError(
            Problem(
                f"{suite!r} is a shipped suite ({path.parent}); copy its folder "
                f"(cp -r {path.parent} ./{suite}) and review into the copy "
                f"(--suite ./{suite}), or name the shipped folder by its path",
                field="--suite",
            )
        )
    return path


def _print_written(written: LexiconWrite) -> None:
    if not written.added:
        console.print("no new words for the lexicons", highlight=False)
    for update in written.files:
        for lexicon, words in update.added.items():
            new = " (new lexicon)" if lexicon in update.created else ""
            console.print(
                styled(
                    "[green]added[/] {:,} word{} to {}{} in {}: {}",
                    len(words),
                    "s" * (len(words) != 1),
                    lexicon,
                    new,
                    update.path,
                    ", ".join(words),
                )
            )
    if written.already_there:
        count = written.already_there
        console.print(
            f"{count:,} kept {'word' if count == 1 else 'words'} already in the lexicons, "
            "not added again",
            highlight=False,
        )
