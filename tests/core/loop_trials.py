"""The loops' readers of the bad-input trials (test trees, suggestion and word reviews,
prefect.yaml), the files they read (`build_loops`), and the scripted OpenAI-compatible
server `tree adapt` asks."""

from __future__ import annotations

import functools
import shutil
import zlib
from pathlib import Path

from tests.cli_runner import run_testaug
from tests.core.trial_readers import MODEL, Reader, must, words

LOOP_MODEL = ("--model", MODEL, "--task", "sentiment")


def _tree_import(target: str) -> Reader:
    return Reader(
        f"tree import: {target}",
        target,
        ("tree", "import", target, "-o", "loops/imported.jsonl"),
        ("loops/imported.jsonl",),
        says=r"wrote (?P<n>[\d,]+) tests in [\d,]+ topics to loops/imported\.jsonl",
        counted=(("n", "loops/imported.jsonl"),),
        counts_kind="test",  # a row cut short declares a topic, as older trees' empty rows do
    )


def _retest(target: str) -> Reader:
    return Reader(
        f"tree retest: {target}",
        target,
        ("tree", "retest", "loops/tree.jsonl", *LOOP_MODEL, "--previous", "loops/previous.json",
         "-o", "loops/retest.json"),
        ("loops/retest.json",),
        says=r"wrote loops/retest\.json",
    )  # fmt: skip


def _review_tests(target: str) -> Reader:
    return Reader(
        f"review tests terminal: {target}",
        target,
        words("review tests terminal loops/round/suggestions.jsonl --tree loops/round/tree.jsonl "
              "--annotator ann"),
        input="aq",
        says=(
            r"\d+ judged \(\d+ accepted, \d+ invalid, \d+ off-topic\).* saved to "
            r"loops/round/verdicts\.jsonl tree loops/round/tree\.jsonl: \d+ accepted "
            r"suggestions?, \d+ new tests?; (?P<n>[\d,]+) rows"
        ),
        counted=(("n", "loops/round/tree.jsonl"),),
        writes=("loops/round/verdicts.jsonl", "loops/round/tree.jsonl"),
    )  # fmt: skip


ADDED_WORDS = r"added [\d,]+ words? to \w+( \(new lexicon\))? in suite/lexicons\.yaml"


def _review_words(target: str) -> Reader:
    return Reader(
        f"review words terminal: {target}",
        target,
        words("review words terminal loops/words.jsonl --suite suite --into pos_verb "
              "--annotator ann --verdicts loops/words.verdicts.jsonl"),
        input="kq",
        says=r"\d+ judged \(\d+ kept, \d+ dropped\).* saved to loops/words\.verdicts\.jsonl",
        writes=("loops/words.verdicts.jsonl", "suite/lexicons.yaml"),
    )  # fmt: skip


def _apply_words(target: str, says: str = ADDED_WORDS) -> Reader:
    return Reader(
        f"review words apply: {target}",
        target,
        ("review", "words", "apply", "loops/words.verdicts.jsonl", "--suite", "suite"),
        read_through="suite/suite.yaml",
        says=says,
        writes=("suite/lexicons.yaml",),
    )


def _adapt(target: str) -> Reader:
    return Reader(
        f"tree adapt: {target}",
        target,
        (*words("tree adapt loops/tree.jsonl --topic /Negation --suggestions 10 --backend openai "
                "--llm scripted --max-attempts 1 -o loops/adapted/suggestions.jsonl"),
         *LOOP_MODEL),
        ("loops/adapted/suggestions.jsonl",),
        llm=True,
        says=r"round 0 on /Negation: \d+ prompts, \d+ completions, (?P<n>[\d,]+) suggestions kept",
        counted=(("n", "loops/adapted/suggestions.jsonl"),),
    )  # fmt: skip


LOOP_READERS: tuple[Reader, ...] = (
    _adapt("loops/tree.jsonl"),
    _tree_import("loops/adatest.csv"),
    _tree_import("loops/adatest-type.csv"),
    Reader(
        "tree export: loops/tree.jsonl",
        "loops/tree.jsonl",
        words("tree export loops/tree.jsonl -o loops/exported.csv --task sentiment"),
        ("loops/exported.csv",),
        says=r"wrote (?P<n>[\d,]+) rows to loops/exported\.csv",
        counted=(("n", "loops/exported.csv"),),
    ),
    Reader(
        "tree score: loops/tree.jsonl",
        "loops/tree.jsonl",
        ("tree", "score", "loops/tree.jsonl", *LOOP_MODEL, "-o", "loops/scored.jsonl"),
        ("loops/scored.jsonl",),
        says=r"wrote loops/scored\.jsonl",
    ),
    _retest("loops/tree.jsonl"),
    _retest("loops/previous.json"),
    _review_tests("loops/round/suggestions.jsonl"),
    _review_tests("loops/round/verdicts.jsonl"),
    _review_tests("loops/round/tree.jsonl"),
    _review_words("loops/words.jsonl"),
    _review_words("loops/words.verdicts.jsonl"),
    # An empty verdicts file is what a session that judged nothing leaves.
    _apply_words("loops/words.verdicts.jsonl", f"{ADDED_WORDS}|no new words for the lexicons"),
    _apply_words("suite/lexicons.yaml"),
    Reader(
        "flows list: loops/prefect.yaml",
        "loops/prefect.yaml",
        ("flows", "list", "--file", "loops/prefect.yaml"),
        says=r"deployment ┃ flow ┃ schedule ┃ parameters",
    ),
)


def build_loops(ws: Path) -> None:
    """The loops' files in `ws/loops`: a tree of the suite with its AdaTest CSVs and a
    retest report, a round of suggestions with a verdict and the tree they join, word
    suggestions with a verdict keeping one, and the project's prefect.yaml."""
    from testaug.adaptive.tree_files import write_tree
    from testaug.core.jsonl import write_jsonl
    from testaug.editor.lexicon_verdicts import LexiconVerdict
    from tests.adaptive import suggestion_helpers
    from tests.editor.lexicon_suite import suggestions as word_suggestions

    loops = ws / "loops"
    (loops / "round").mkdir(parents=True)
    must(run_testaug(
        ws, "tree", "from-suite", "suite/suite.yaml", "--per-template", "1",
        "-o", "loops/tree.jsonl",
    ))  # fmt: skip
    for name, form in (("adatest.csv", "label"), ("adatest-type.csv", "type")):
        must(run_testaug(
            ws, "tree", "export", "loops/tree.jsonl", "--task", "sentiment", "--format", form,
            "-o", f"loops/{name}",
        ))  # fmt: skip
    must(run_testaug(ws, "tree", "retest", "loops/tree.jsonl", *LOOP_MODEL,
                     "-o", "loops/previous.json"))  # fmt: skip
    round_ = loops / "round"
    found = suggestion_helpers.suggestions()
    write_jsonl(round_ / "suggestions.jsonl", found)
    write_tree(round_ / "tree.jsonl", suggestion_helpers.tree())
    must(run_testaug(
        ws, "review", "tests", "terminal", "loops/round/suggestions.jsonl",
        "--tree", "loops/round/tree.jsonl", "--annotator", "ann", input="iq",
    ))  # fmt: skip
    write_jsonl(loops / "words.jsonl", word_suggestions())
    kept = LexiconVerdict(word="adore", decision="keep", lexicon="pos_verb", annotator="ann",
                          origin="terminal", masked="I really {mask} the flight.")  # fmt: skip
    write_jsonl(loops / "words.verdicts.jsonl", [kept])
    shutil.copy(Path(__file__).parent.parent.parent / "prefect.yaml", loops / "prefect.yaml")


def _completion(prompt: str, index: int) -> str:
    """A new test in the layout the prompts show (input, output), one per prompt."""
    tag = zlib.crc32(prompt.encode()) % 1000
    return f'The meal {tag} was not terrible, case {index}." "negative"\n'


@functools.cache
def scripted_server():
    """One scripted OpenAI-compatible server for every trial that asks an LLM (a daemon
    thread, closed with the process)."""
    from testaug.testing.openai_server import ScriptedOpenAIServer

    return ScriptedOpenAIServer(_completion).start()
