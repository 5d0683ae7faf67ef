"""`testaug lexicon suggest` and `testaug lexicon install-wordnet`: CheckList's editor
(fill-in suggestions, WordNet); `editor_app` is the old `testaug editor` group."""

from __future__ import annotations

import os
from pathlib import Path
from tempfile import TemporaryDirectory

import typer
from rich.table import Table

from testaug.cli.console import console, err_console, styled
from testaug.cli.options import build_config, output_option
from testaug.core.jsonl import read_jsonl
from testaug.core.settings import Settings
from testaug.editor.fill_in import CATEGORY_WEIGHT
from testaug.editor.suggestion import WordSuggestion
from testaug.editor.wordnet import RELATIONS, install_wordnet
from testaug.steps.suggest import SuggestConfig, suggest_words

# The flags of SuggestConfig's fields whose flag is not the field's name.
FLAGS = {
    "n": "--suggestions",
    "exclude_lexicons": "--exclude-lexicon",
    "use_wordnet": "--no-wordnet",
    "continue_list": "--no-continue",
}

editor_app = typer.Typer(
    help="CheckList's editor: fill-in suggestions, WordNet relations.", no_args_is_help=True
)


def suggest_command(
    text: str = typer.Argument(
        ..., help='A masked sentence: "I really {mask} the flight." ({a:mask}, several masks).'
    ),
    pos: str | None = typer.Option(
        None, "--pos", help="Part of speech of WordNet candidates: NOUN, VERB, ADJ or ADV."
    ),
    n: int = typer.Option(30, "--suggestions", "-n", min=1, help="How many suggestions."),
    suite: str | None = typer.Option(
        None, "--suite", help="A suite (shipped name or path): its lexicons are candidates too."
    ),
    mlm: str | None = typer.Option(
        None, "--mlm", help="hf:NAME_OR_PATH: fill with this Hugging Face masked LM instead."
    ),
    related_to: str | None = typer.Option(
        None, "--related-to", help="Suggest this word's WordNet relations that fit the context."
    ),
    relation: str = typer.Option(
        "synonyms", "--relation", help=f"With --related-to: {', '.join(RELATIONS)}."
    ),
    margin: float = typer.Option(
        4.0,
        "--margin",
        min=0.0,
        help="With --related-to: how far below the word's own fit (in log-probability) a "
        "related word may fall and be kept.",
    ),
    exclude_lexicon: list[str] = typer.Option(
        [], "--exclude-lexicon", help="Leave this suite lexicon out of the candidates (repeatable)."
    ),
    no_wordnet: bool = typer.Option(False, "--no-wordnet", help="No WordNet candidates."),
    no_continue: bool = typer.Option(
        False,
        "--no-continue",
        help="Do not ask the embedded language model to continue a list of the words.",
    ),
    like: str | None = typer.Option(
        None,
        "--like",
        help="Seed words, comma-separated (love,enjoy,admire): rank words like these higher.",
    ),
    category_weight: float = typer.Option(
        CATEGORY_WEIGHT,
        "--category-weight",
        min=0.0,
        help="With --like: a bonus (in log-probability) for a word of the seed words' WordNet "
        "category (0: off).",
    ),
    output: Path | None = output_option(
        None, "-o", "--output", help="Write the suggestions here (WordSuggestion JSONL)."
    ),
) -> None:
    """Words for the {mask} slots of a sentence, ranked by how well the embedded language
    model says they fit there."""
    request = build_config(
        SuggestConfig,
        flags=FLAGS,
        text=text,
        pos=pos,
        n=n,
        suite=suite,
        mlm=mlm,
        related_to=related_to,
        relation=relation,
        margin=margin,
        exclude_lexicons=tuple(exclude_lexicon),
        use_wordnet=not no_wordnet,
        continue_list=not no_continue,
        like=tuple(w.strip() for w in (like or "").split(",") if w.strip()),
        category_weight=category_weight,
    )
    # torch's OpenMP threads spin while they wait: on a busy 2-core machine two spinning
    # threads made the LM 5-10x slower. Read when torch is first imported (the CLI imports
    # it lazily); a value the user set wins.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    with (
        TemporaryDirectory(prefix="testaug-suggest-") as work,
        err_console.status("loading the model and ranking candidates"),
    ):
        target = output or Path(work) / "suggestions.jsonl"
        config = request.model_copy(update={"out": target, "cache_dir": Settings().cache_dir})
        done = suggest_words(config)
        suggestions = list(read_jsonl(done.path, WordSuggestion))
    result = done.summary
    for note in result.notes:
        err_console.print(styled("[yellow]note:[/] {}", note))
    table = Table(title=text, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("words" if any(len(s.words) > 1 for s in suggestions) else "word")
    table.add_column("log p + like" if request.like else "log p", justify="right")
    table.add_column("sources")
    table.add_column("filled")
    for rank, s in enumerate(suggestions, 1):
        table.add_row(str(rank), s.word, f"{s.score:.2f}", ", ".join(s.sources), s.filled)
    console.print(table)
    summary = f"{result.suggestions} suggestions in {result.seconds:.1f} s"
    if result.candidates:
        summary += f" from {result.candidates:,} candidates"
    console.print(summary, highlight=False)
    if output is not None:
        console.print(styled("[green]wrote[/] {} suggestions to {}", done.records, output))


@editor_app.command("install-wordnet")
def install_wordnet_command(
    no_apt: bool = typer.Option(False, "--no-apt", help="Do not try apt-get."),
) -> None:
    """Install WordNet for the editor (Debian's wordnet-base data, where NLTK reads it).

    Exits 0 when it cannot, saying so on stderr: the editor then works without WordNet."""
    result = install_wordnet(Settings().cache_dir, apt=not no_apt)
    if result.installed:
        console.print(result.message, style="green", highlight=False)
        return
    err_console.print(
        styled(
            "[bold yellow]warning: WordNet is NOT installed:[/] {} (its tests skip, and fail "
            "under CI, where CI is set)",
            result.message,
        )
    )
