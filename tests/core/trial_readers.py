"""The readers of the bad-input trials: a command and the input file of the trials'
workspace it reads, with what a success must write and say (tests/core/reliability_trials.py
runs them). These are the pipeline's; tests/core/loop_trials.py holds the loops'."""

from __future__ import annotations

from dataclasses import dataclass

from tests.cli_runner import CliResult

# A keyword model: evaluate loads nothing heavy per run.
MODEL = "py:tests.models_fixture:predict"


@dataclass(frozen=True)
class Reader:
    """A command and the input file it reads that a trial damages (paths relative to the
    workspace); `outputs` are earlier outputs placed in the workspace before the run.

    A success must write every file of `writes` (by default the `outputs`; an earlier
    output rewritten) readable in its format, and say what it did: `says` is a pattern
    its output (stdout and stderr, white space as single spaces) must match, and each
    named group of it listed in `counted` is the number of records of that file."""

    name: str
    target: str
    args: tuple[str, ...]
    outputs: tuple[str, ...] = ()
    lists_problems: bool = False  # `suite validate`: one problem a line, then "error:"
    drop: tuple[str, ...] = ()  # files of the workspace this run goes without (for speed)
    input: str | None = None  # what is typed on stdin
    read_through: str | None = None  # the file the target is read through, named instead
    says: str = ""
    counted: tuple[tuple[str, str], ...] = ()  # (group of `says`, file it counts)
    counts_kind: str | None = None  # only records of this `kind` count (a tree's tests)
    writes: tuple[str, ...] | None = None
    stdout_json: bool = False  # the stdout is one JSON object (`--json`)
    llm: bool = False  # asks the scripted OpenAI-compatible server (`scripted_server`)

    @property
    def written(self) -> tuple[str, ...]:
        """The files a success must write."""
        return self.outputs if self.writes is None else self.writes


def words(command: str) -> tuple[str, ...]:
    """The arguments of a command line without quoting (split at white space)."""
    return tuple(command.split())


def must(result: CliResult) -> CliResult:
    """`result`, failing the test unless the command exited 0."""
    assert result.returncode == 0, result.stdout + result.stderr
    return result


TRAINED = r"trained ensemble '[^']+' version \w+ on [\d,]+ candidates .*into trained"
WROTE_EXPANDED = r"wrote (?P<n>[\d,]+) cases? to expanded\.jsonl"


def _rank(target: str) -> Reader:
    args = ("rank", "candidates.jsonl", "--rankers", "rankers", "--seed-cases", "cases.jsonl")
    return Reader(
        f"rank: {target}",
        target,
        (*args, "-o", "ranked.out.jsonl"),
        ("ranked.out.jsonl", "ranked.out.calibration.json"),
        says=r"ranked (?P<n>[\d,]+) candidates with ensemble \w+ into ranked\.out\.jsonl",
        counted=(("n", "ranked.out.jsonl"),),
    )


def _merge(target: str) -> Reader:
    return Reader(
        f"annotate merge: {target}",
        target,
        words(
            "annotate merge review/annotations.jsonl --ranked review/ranked.jsonl "
            "--suite-cases review/cases.jsonl"
        ),
        ("review/verdicts.jsonl", "review/accepted.jsonl", "review/suite.jsonl"),
        says=(
            r"accepted (?P<a>[\d,]+) cases \(source llm\) into review/accepted\.jsonl; "
            r"suite of (?P<s>[\d,]+) cases"
        ),
        counted=(("a", "review/accepted.jsonl"), ("s", "review/suite.jsonl")),
    )


def _terminal(target: str) -> Reader:
    return Reader(
        f"annotate terminal: {target}",
        target,
        words("annotate terminal review/ranked.jsonl --top 0.5 --annotator ann"),
        input="\nnq",
        says=r"annotated \(\d+ valid, \d+ invalid\), \d+ skipped, \d+ left; saved to review/",
        writes=("review/annotations.jsonl",),
    )


def _report(target: str) -> Reader:
    plotted = {"run/evaluation.json", "run/triage.json"} - {target}  # plots take a while
    return Reader(
        f"report: {target}",
        target,
        ("report", "run", "-o", "report"),
        ("report/report.md", "report/report.html"),
        drop=tuple(sorted(plotted)),
        says=r"wrote report/report\.html and report/report\.md \(sections: Run\b",
    )


def _induce(target: str) -> Reader:
    return Reader(
        f"templates induce: {target}",
        target,
        words(
            "templates induce induce/accepted.jsonl --seed-cases induce/cases.jsonl "
            "--suite suite/suite.yaml -o induce/templates.yaml"
        ),
        (
            "induce/templates.yaml",
            "induce/templates.lexicons.yaml",
            "induce/templates.induced.jsonl",
        ),
        # Seed fills naming slots the suite lacks: the accepted cases get no template.
        read_through="induce/accepted.jsonl",
        says=r"induced [\d,]+ templates? from [\d,]+ cases? into induce/templates\.yaml",
    )


def _expand(target: str, *extra: str) -> Reader:
    return Reader(
        f"expand: {target}",
        target,
        ("expand", "suite/suite.yaml", "-o", "expanded.jsonl", *extra),
        ("expanded.jsonl",),
        read_through="suite/suite.yaml",
        says=WROTE_EXPANDED,
        counted=(("n", "expanded.jsonl"),),
    )


def _validate(target: str) -> Reader:
    return Reader(
        f"suite validate: {target}",
        target,
        ("suite", "validate", "suite/suite.yaml"),
        lists_problems=True,
        read_through="suite/suite.yaml",
        says=r"ok suite/suite\.yaml: .*\b[\d,]+ cases",
    )


def _import(target: str) -> Reader:
    return Reader(
        f"suite import: {target}",
        target,
        ("suite", "import", target, "-o", "imported.jsonl", "--task", "sentiment"),
        ("imported.jsonl", "imported.rejects.jsonl"),
        says=r"imported (?P<n>[\d,]+) cases? to imported\.jsonl",
        counted=(("n", "imported.jsonl"),),
        writes=("imported.jsonl",),  # the rejects only when there are some
    )


PIPELINE_READERS: tuple[Reader, ...] = (
    _validate("suite/suite.yaml"),
    _validate("suite/lexicons.yaml"),
    _expand("suite/suite.yaml"),
    _expand("suite/lexicons.yaml"),
    _import("table.csv"),
    _import("table.jsonl"),
    Reader(
        "suite stats: cases.jsonl",
        "cases.jsonl",
        ("suite", "stats", "cases.jsonl"),
        says=r"[\d,]+ capabilit(y|ies) │ [\d,]+ descriptions?",
    ),
    Reader(
        "suite export: cases.jsonl",
        "cases.jsonl",
        ("suite", "export", "cases.jsonl", "-o", "exported.csv"),
        ("exported.csv",),
        says=r"exported (?P<n>[\d,]+) cases? to exported\.csv \(csv\)",
        counted=(("n", "exported.csv"),),
    ),
    Reader(
        "expand --exclude: cases.jsonl",
        "cases.jsonl",
        ("expand", "suite/suite.yaml", "-o", "expanded.jsonl", "--exclude", "cases.jsonl"),
        ("expanded.jsonl",),
        says=WROTE_EXPANDED,
        counted=(("n", "expanded.jsonl"),),
    ),
    Reader(
        "generate from cases: cases.jsonl",
        "cases.jsonl",
        ("generate", "cases.jsonl", "-o", "generated.jsonl", "--dry-run"),
        ("generated.jsonl",),
        says=r"dry run: [\d,]+ prompts? x \d+ samples would go to the \w+ backend; nothing sent",
        writes=(),  # a dry run writes nothing (its earlier output stays as it was)
    ),
    Reader(
        "evaluate: cases.jsonl",
        "cases.jsonl",
        words(f"evaluate cases.jsonl --model {MODEL} --perturb 0 -o evaluation.out.json"),
        ("evaluation.out.json",),
        says=r"error rate [\d.]+(%| \(\d+/\d+\)).* wrote evaluation\.out\.json",
    ),
    Reader(
        "diversity: cases.jsonl",
        "cases.jsonl",
        ("diversity", "cases.jsonl", "--by", "", "--json"),
        says=r'"n_cases": [1-9]',
        stdout_json=True,
    ),
    _rank("candidates.jsonl"),
    _rank("cases.jsonl"),
    _rank("rankers/ensemble.json"),
    _rank("rankers/lexical/fold-0/lexical.json"),
    Reader(
        "rankers train: labelled.jsonl",
        "labelled.jsonl",
        ("rankers", "train", "labelled.jsonl", "--config", "lexical.yaml", "-o", "trained"),
        ("trained/ensemble.json",),
        says=TRAINED,
    ),
    Reader(
        "rankers train: lexical.yaml",
        "lexical.yaml",
        ("rankers", "train", "labelled.jsonl", "--config", "lexical.yaml", "-o", "trained"),
        ("trained/ensemble.json",),
        says=TRAINED,
    ),
    _merge("review/annotations.jsonl"),
    _merge("review/ranked.jsonl"),
    _merge("review/cases.jsonl"),
    _terminal("review/ranked.jsonl"),
    _terminal("review/ranked.calibration.json"),
    _terminal("review/annotations.jsonl"),
    _report("run/evaluation.json"),
    _report("run/diversity.json"),
    _report("run/triage.json"),
    _report("run/verdicts.jsonl"),
    _report("run/annotations.jsonl"),
    _report("run/ranked.jsonl"),
    _report("run/ranked.calibration.json"),
    _report("run/cases.jsonl"),
    _report("run/manifest.json"),
    _induce("induce/accepted.jsonl"),
    _induce("induce/cases.jsonl"),
)
