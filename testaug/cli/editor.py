"""`testaug suggest` and `testaug editor`: CheckList's editor (fill-in suggestions, WordNet)."""

from __future__ import annotations

import os
from pathlib import Path

import typer
from rich.table import Table

from testaug.cli.console import console, err_console
from testaug.core.jsonl import write_jsonl
from testaug.core.settings import Settings
from testaug.editor.fill_in import CATEGORY_WEIGHT
from testaug.editor.wordnet import RELATIONS, install_wordnet
from testaug.steps.suggest import SuggestRequest, run_suggest

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
    n: int = typer.Option(30, "-n", min=1, help="How many suggestions."),
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
        4.0, "--margin", min=0.0, help="With --related-to: nats below the word's own fill kept."
    ),
    exclude_lexicon: list[str] = typer.Option(
        [], "--exclude-lexicon", help="Leave this suite lexicon out of the candidates (repeatable)."
    ),
    no_wordnet: bool = typer.Option(False, "--no-wordnet", help="No WordNet candidates."),
    no_continue: bool = typer.Option(
        False, "--no-continue", help="No list continuation by the embedded LM."
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
        help="With --like: nats added for a word of the seeds' WordNet category (0: off).",
    ),
    output: Path | None = typer.Option(
        None, "-o", "--output", help="Write the suggestions here (WordSuggestion JSONL)."
    ),
) -> None:
    """Words for the {mask} slots of a sentence, ranked in context by the embedded LM."""
    request = SuggestRequest(
        text=text,
        pos=pos,
        n=n,
        suite=suite,
        mlm=mlm,
        related_to=related_to,
        relation=relation,  # type: ignore[arg-type]
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
    with err_console.status("loading the model and ranking candidates"):
        result = run_suggest(request, cache_dir=Settings().cache_dir)
    for note in result.notes:
        err_console.print(f"[yellow]note:[/] {note}", highlight=False)
    table = Table(title=text, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("words" if any(len(s.words) > 1 for s in result.suggestions) else "word")
    table.add_column("log p + like" if request.like else "log p", justify="right")
    table.add_column("sources")
    table.add_column("filled")
    for rank, s in enumerate(result.suggestions, 1):
        table.add_row(str(rank), s.word, f"{s.score:.2f}", ", ".join(s.sources), s.filled)
    console.print(table)
    summary = f"{len(result.suggestions)} suggestions in {result.seconds:.1f} s"
    if result.candidates:
        summary += f" from {result.candidates:,} candidates"
    console.print(summary, highlight=False)
    if output is not None:
        written = write_jsonl(output, result.suggestions)
        console.print(f"[green]wrote[/] {written} suggestions to {output}", highlight=False)


@editor_app.command("install-wordnet")
def install_wordnet_command(
    no_apt: bool = typer.Option(False, "--no-apt", help="Do not try apt-get."),
) -> None:
    """Install WordNet for the editor (Debian's wordnet-base data, where NLTK reads it).

    Exits 0 when it cannot: the editor then works without WordNet."""
    result = install_wordnet(Settings().cache_dir, apt=not no_apt)
    style = "green" if result.installed else "yellow"
    console.print(f"[{style}]{result.message}[/]", highlight=False)
