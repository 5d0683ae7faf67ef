"""The doors of `testaug`: its commands grouped by workflow, and the old names hidden.

    run        the whole pipeline, from a suite to the report
    suite      validate, stats, lexicons, import, export, diversity
    templates  expand, induce
    generate   candidate cases from an LLM
    rank       candidates ordered by the ranker ensemble
    rankers    train, evaluate, hard-cases
    review     candidates, tests, words (each: terminal, push, pull, apply), server, ...
    evaluate   models, patching, generalization
    tree       from-suite, import, export, score, retest, adapt, fix
    lexicon    suggest, install-wordnet
    report     report.md and report.html of a run
    flows      list, serve, deploy

Each command is written once, in its module; a door is a Typer group that lists it. The
old names (`testaug expand`, `testaug annotate terminal`, ...) are the same commands
registered hidden; `testaug.cli.aliases` says what to type instead.

The root group imports a command's module only when that command runs or its help is
shown (`ROOT`, `LazyCommands`): `testaug --version` and `testaug --help` import none of
them, and `testaug tree export` imports the tree door's alone.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup
from typer.models import CommandInfo

from testaug.cli.aliases import notice
from testaug.cli.lazy_commands import Entry, LazyGroup


def copied(
    source: typer.Typer, name: str, *, as_name: str | None = None, hidden: bool = False
) -> CommandInfo:
    """The command `name` of a Typer app, as a new registration (`as_name`, `hidden`)."""
    for info in source.registered_commands:
        callback = info.callback
        registered = info.name or (callback.__name__.replace("_", "-") if callback else None)
        if registered == name:
            twin: CommandInfo = copy.copy(info)
            twin.name, twin.hidden = as_name or name, hidden
            return twin
    raise KeyError(f"no command {name!r} in {source.info.name or 'the app'}")


# The order `--help` lists a group's commands in (Typer lists commands before groups).
ORDER: dict[str, tuple[str, ...]] = {
    "review": ("candidates", "tests", "words", "server", "install-server"),
}  # fmt: skip


class Ordered(TyperGroup):
    """A group whose commands `--help` lists in the order of `ORDER[name]`, if it has one."""

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        order = ORDER.get(self.name or "", ())
        return sorted(names, key=lambda n: order.index(n) if n in order else len(order))


def door(
    help: str, short_help: str | None = None, *, cls: type[TyperGroup] = Ordered
) -> typer.Typer:
    """An empty group of commands: `help` on its own page, `short_help` in its parent's (a
    door of the root has its short help in `ROOT`)."""
    return typer.Typer(help=help, short_help=short_help, no_args_is_help=True, cls=cls)


def add_copies(
    target: typer.Typer, source: typer.Typer, names: dict[str, str], *, hidden: bool = False
) -> None:
    """Register `source`'s commands in `target`: `names` maps a source name to the target's."""
    for name, as_name in names.items():
        target.registered_commands.append(copied(source, name, as_name=as_name, hidden=hidden))


def add_command(
    target: typer.Typer, name: str, callback: Callable[..., Any], **options: Any
) -> None:
    """Register a command function in `target` under `name`."""
    target.command(name, **options)(callback)


class OldFormRunsModels(TyperGroup):
    """`testaug evaluate`: the old form, `testaug evaluate CASES --model ...` (a file or an
    option where a subcommand goes), runs `testaug evaluate models` and says so on stderr; a
    mistyped subcommand is still an unknown command."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and _old_form(args[0], ctx):
            notice("`testaug evaluate CASES` is now `testaug evaluate models CASES`")
            args = ["models", *args]
        return super().parse_args(ctx, args)


def _old_form(first: str, ctx: Any) -> bool:
    """Whether the first argument after `evaluate` is the old form's CASES or one of its
    options, not a subcommand."""
    if first in ctx.help_option_names:
        return False
    if first.startswith("-"):
        return True
    return Path(first).suffix != "" or "/" in first or Path(first).exists()


def suite_door() -> typer.Typer:
    from testaug.cli.diversity import diversity_command
    from testaug.cli.suite import suite_app

    group = door(
        "Check a suite and its lexicons, count its cases, measure how diverse they are, and "
        "import or export them as tables."
    )
    names = ("validate", "stats", "lexicons", "import", "export")
    add_copies(group, suite_app, {n: n for n in names})
    add_command(group, "diversity", diversity_command)
    return group


def templates_door() -> typer.Typer:
    from testaug.cli.expand import expand_command
    from testaug.cli.templates import templates_app

    group = door(
        "Fill a suite's templates with its lexicons into test cases, and turn accepted "
        "generated cases back into new templates."
    )
    add_command(group, "expand", expand_command)
    add_copies(group, templates_app, {"induce": "induce"})
    return group


def evaluate_door() -> typer.Typer:
    from testaug.cli.evaluate import evaluate_command
    from testaug.cli.generalize import generalize_command
    from testaug.cli.patch_eval import patch_eval_command

    group = door(
        "How the models under test fail: their error rates per capability (`models`), which "
        "of two suites finds more errors once a model is trained on them (`patching`), and "
        "how well training on some tests carries over to others (`generalization`).",
        cls=OldFormRunsModels,
    )
    add_command(group, "models", evaluate_command)
    add_command(group, "patching", patch_eval_command)
    add_command(group, "generalization", generalize_command)
    return group


def tree_door() -> typer.Typer:
    from testaug.cli.adapt import adapt_command
    from testaug.cli.fix import fix_command
    from testaug.cli.tree import tree_app

    group = door(
        "Test trees, AdaTest's topics of tests: build them from suites, import and export "
        "AdaTest's CSV, score models on them, suggest new tests where a model fails "
        "(`adapt`), and fine-tune a model until its failing topics pass (`fix`)."
    )
    names = ("from-suite", "import", "export", "score", "retest")
    add_copies(group, tree_app, {n: n for n in names})
    add_command(group, "adapt", adapt_command)
    add_command(group, "fix", fix_command)
    return group


def lexicon_door() -> typer.Typer:
    from testaug.cli.editor import editor_app, suggest_command
    from testaug.cli.review.words import OLD_NAMES

    group = door(
        "Words for a suite's lexicons: words that fit the gap in a sentence, ranked by a "
        "language model, and WordNet's related words (`install-wordnet` installs WordNet). "
        "People judge the suggestions with `testaug review words`."
    )
    add_command(group, "suggest", suggest_command)
    add_copies(group, editor_app, {"install-wordnet": "install-wordnet"})
    for name, callback in OLD_NAMES.items():  # `testaug lexicon review`: `review words terminal`
        add_command(group, name, callback, hidden=True)
    return group


RANKERS_HELP = (
    "The rankers that judge whether candidates are valid: train and evaluate them, and make "
    "hard cases from a suite to train them on."
)

# The commands of `testaug`: the visible ones in the order of the workflow (as `--help`
# lists them), then the old names, hidden (`testaug.cli.aliases.RENAMED` names the new ones).
ROOT: dict[str, Entry] = {
    "run": Entry("testaug.cli.run:run_command", short_help="Run the whole pipeline, suite to report."),
    "suite": Entry(
        "testaug.cli.groups:suite_door", "door",
        short_help="Check, count, measure, import and export suites.",
    ),
    "templates": Entry(
        "testaug.cli.groups:templates_door", "door",
        short_help="Fill templates into cases; make templates from cases.",
    ),
    "generate": Entry(
        "testaug.cli.generate:generate_command", short_help="Generate candidates with an LLM."
    ),
    "rank": Entry(
        "testaug.cli.rankers:rank_command",
        short_help="Order candidates, likely invalid ones first.",
    ),
    "rankers": Entry(
        "testaug.cli.rankers:rankers_app", "app",
        short_help="Train and evaluate the rankers.", help=RANKERS_HELP,
    ),
    "review": Entry(
        "testaug.cli.review:review_door", "door",
        short_help="People judge candidates, tests and words.",
    ),
    "evaluate": Entry(
        "testaug.cli.groups:evaluate_door", "door",
        short_help="Error rates of models; compare suites by training on them.",
    ),
    "tree": Entry(
        "testaug.cli.groups:tree_door", "door",
        short_help="Test trees: score, suggest failing tests, fine-tune.",
    ),
    "lexicon": Entry(
        "testaug.cli.groups:lexicon_door", "door", short_help="Suggest words for lexicons."
    ),
    "report": Entry(
        "testaug.cli.report:report_command",
        short_help="Write a run's report (HTML, Markdown).",
    ),
    "flows": Entry(
        "testaug.cli.flows:flows_app", "app", short_help="Schedule the pipeline with Prefect."
    ),
    # the old names
    "expand": Entry("testaug.cli.expand:expand_command", hidden=True),
    "diversity": Entry("testaug.cli.diversity:diversity_command", hidden=True),
    "patch-eval": Entry("testaug.cli.patch_eval:patch_eval_command", hidden=True),
    "generalize": Entry("testaug.cli.generalize:generalize_command", hidden=True),
    "suggest": Entry("testaug.cli.editor:suggest_command", hidden=True),
    "adapt": Entry("testaug.cli.adapt:adapt_command", hidden=True),
    "fix": Entry("testaug.cli.fix:fix_command", hidden=True),
    "annotate": Entry("testaug.cli.review.candidates:annotate_door", "door", hidden=True),
    "suggestions": Entry("testaug.cli.review.tests:suggestions_door", "door", hidden=True),
    "editor": Entry("testaug.cli.editor:editor_app", "app", hidden=True),
}  # fmt: skip


class Root(LazyGroup):
    """The root group: the commands of `ROOT`, each imported when it runs."""

    ENTRIES = ROOT
