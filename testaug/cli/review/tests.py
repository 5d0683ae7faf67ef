"""`testaug review tests` (once `testaug suggestions`): people's verdicts on a round of
suggested tests (the terminal or Label Studio), and the accepted suggestions added to the
test tree (`apply` adds those of a verdicts file)."""

from __future__ import annotations

from pathlib import Path

import typer

from testaug.cli.console import console, styled
from testaug.cli.review import common
from testaug.cli.review.common import API_KEY, URL
from testaug.steps.suggestion_review import SuggestionReviewConfig, TreeUpdate

SUGGESTIONS = common.suggestions_argument(
    "Suggestions of a round (JSONL, from testaug tree adapt)."
)
TREE = typer.Option(..., "--tree", help="The test tree (JSONL) accepted suggestions join.")
VERDICTS = common.verdicts_option(
    None, "Verdicts file (default: verdicts.jsonl beside SUGGESTIONS)."
)
PROJECT = common.project_option("testaug suggestions <folder>")


def terminal_command(
    suggestions_path: Path = SUGGESTIONS,
    tree: Path = TREE,
    annotator: str | None = common.annotator_option("the tree"),
    verdicts: Path | None = VERDICTS,
) -> None:
    """Judge suggestions in the terminal, likeliest failures first: Enter/a accept into the
    focus topic, t accept into another topic, i invalid, o off-topic, s skip, q quit.
    Verdicts are saved one by one (run it again to go on); accepted ones join the tree."""
    session, saved_to = common.judge_in_terminal(
        annotator,
        lambda person: SuggestionReviewConfig(
            suggestions=suggestions_path, tree=tree, verdicts=verdicts, annotator=person
        ),
    )
    console.print(
        styled(
            "[green]{:,} judged[/] ({:,} accepted, {:,} invalid, {:,} off-topic), {:,} "
            "skipped, {:,} left; saved to {}",
            session.judged,
            session.accepted,
            session.invalid,
            session.off_topic,
            session.skipped,
            session.remaining,
            saved_to,
        )
    )
    _print_tree(session.tree)


def push_command(
    suggestions_path: Path = SUGGESTIONS,
    project: str | None = PROJECT,
    url: str | None = URL,
    api_key: str | None = API_KEY,
) -> None:
    """Send suggestions to a Label Studio project, in failure order (each suggestion once,
    however often it is pushed)."""
    from testaug.steps.review import connect_label_studio
    from testaug.steps.suggestion_review import push_suggestions_file

    config = SuggestionReviewConfig(suggestions=suggestions_path, project=project)
    pushed = push_suggestions_file(config, studio=connect_label_studio(url, api_key))
    common.print_pushed("suggestions", config.project_name("push"), pushed.summary)


def pull_command(
    suggestions_path: Path = SUGGESTIONS,
    tree: Path = TREE,
    verdicts: Path | None = VERDICTS,
    project: str | None = PROJECT,
    url: str | None = URL,
    api_key: str | None = API_KEY,
) -> None:
    """Bring people's verdicts back from Label Studio into the verdicts file and add the
    accepted suggestions to the tree."""
    from testaug.steps.review import connect_label_studio
    from testaug.steps.suggestion_review import pull_into_tree

    config = SuggestionReviewConfig(
        suggestions=suggestions_path, tree=tree, verdicts=verdicts, project=project
    )
    verdicts, project = config.verdicts_file("pull"), config.project_name("pull")
    done = pull_into_tree(config, studio=connect_label_studio(url, api_key))
    pulled = done.summary
    fresh = f"{pulled.added:,} new, {pulled.changed:,} changed"
    common.print_pulled(project, pulled, fresh, f"saved to {verdicts}", pulled.problems)
    _print_tree(pulled.tree)


def apply_command(
    suggestions_path: Path = SUGGESTIONS,
    tree: Path = TREE,
    verdicts: Path | None = VERDICTS,
) -> None:
    """Add to the tree every suggestion the verdicts file accepts (a file written by
    `terminal` or `pull`, or by hand); tests already in the tree are not added again."""
    from testaug.steps.suggestion_review import add_verdicts_file

    config = SuggestionReviewConfig(suggestions=suggestions_path, tree=tree, verdicts=verdicts)
    summary = add_verdicts_file(config).summary
    _print_tree(summary.tree)


COMMANDS = common.verbs(terminal_command, push_command, pull_command, apply_command)


def tests_door() -> typer.Typer:
    """`testaug review tests`."""
    return common.kind_door(
        "Tests suggested for a test tree (by `testaug tree adapt`): people judge them in the "
        "terminal or in Label Studio, and the accepted ones join the tree.",
        "Suggested tests of a tree: judge them into the tree.",
        COMMANDS,
    )


def suggestions_door() -> typer.Typer:
    """`testaug suggestions`, the old name of `testaug review tests` (`review`: `terminal`)."""
    return common.kind_door(
        "Review suggested tests (the terminal or Label Studio) and add the accepted ones to "
        "the tree.",
        None,
        {"review": terminal_command, "push": push_command, "pull": pull_command},
    )


def _print_tree(update: TreeUpdate) -> None:
    console.print(
        styled(
            "[green]tree[/] {}: {:,} accepted suggestions, {:,} new tests; {:,} rows",
            update.tree,
            update.accepted,
            update.added,
            update.rows,
        )
    )
