"""Bad-input trials through the command: every user-facing reader, a valid file damaged, and
the property that the command either succeeds or stops cleanly.

A *reader* is a command and the one input file of a valid workspace it damages (`READERS`).
A *damage* turns the file's bytes into bad ones (`DAMAGES` for the fixed trial table,
tests/core/test_reader_fuzz.py draws them at random). `run_trial` copies the workspace, damages the file, runs the
command in process and returns what broke the property (nothing when it held):

- exit 0 (the damage was harmless, e.g. a BOM) with the reader's outputs written and
  readable (a success says what it did: its last line matches the reader's `says`, and a
  count it states is the count of records in the file it names), or
- exit 1 with one line on stderr starting with "error:", the last, that names the damaged
  file or the file it is read through (the suite for its lexicons: a renamed lexicon is
  an unknown slot of the suite; the accepted cases for induce's seed cases: seed fills
  naming no lexicon of the suite leave the accepted cases without a template). Progress
  and log lines may come before it; `suite validate` lists one problem a line before its
  "error:" line, by design, and names the file in one of them;
- no "Traceback" anywhere, and every file the workspace held before (earlier outputs
  included) byte-identical after a failure, with no new file left beside them.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import random
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.cli_runner import CliResult, run_testaug

DATA = Path(__file__).parent.parent / "data"
EARLIER = b"earlier output\n"
BOM = b"\xef\xbb\xbf"

# A keyword model: evaluate loads nothing heavy per run.
MODEL = "py:tests.models_fixture:predict"

GOOD = ["the seat was great .", "i love the crew .", "good service .", "they love the flight ."]
BAD = ["i hate the crew .", "awful flight !", "the food was bad ."]


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
    writes: tuple[str, ...] | None = None
    stdout_json: bool = False  # the stdout is one JSON object (`--json`)

    @property
    def written(self) -> tuple[str, ...]:
        """The files a success must write."""
        return self.outputs if self.writes is None else self.writes


TRAINED = r"trained ensemble '[^']+' version \w+ on [\d,]+ candidates .*into trained"
WROTE_EXPANDED = r"wrote (?P<n>[\d,]+) cases? to expanded\.jsonl"


def _words(command: str) -> tuple[str, ...]:
    return tuple(command.split())


def _rank(target: str) -> Reader:
    args = ("rank", "candidates.jsonl", "--rankers", "rankers", "--cases", "cases.jsonl")
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
        _words(
            "annotate merge review/annotations.jsonl --ranked review/ranked.jsonl "
            "--suite review/cases.jsonl"
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
        _words("annotate terminal review/ranked.jsonl --top 0.5 --annotator ann"),
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
        _words(
            "templates induce induce/accepted.jsonl --cases induce/cases.jsonl "
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


READERS: tuple[Reader, ...] = (
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
        _words(f"evaluate cases.jsonl --model {MODEL} --perturb 0 -o evaluation.out.json"),
        ("evaluation.out.json",),
        says=r"error rate [\d.]+ \(\d+/\d+\).* wrote evaluation\.out\.json",
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


# ---------------------------------------------------------------- the valid workspace


def _case(text: str, **fields):
    from testaug.core.records import TestCase

    base = {
        "task": "sentiment",
        "capability": "Vocabulary",
        "description_id": "d",
        "description": "A positive sentence.",
        "label": "positive",
        "source": "template",
    }
    return TestCase(**{**base, **fields, "text": text})


def _must(result: CliResult) -> CliResult:
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def build_workspace(root: Path) -> Path:
    """A folder of valid inputs for every reader in `READERS`, made by the real commands
    where one makes them; returns it."""
    from rankers.ensemble import load_config
    from rankers.ensemble_training import train_ensemble
    from testaug.core.jsonl import write_jsonl
    from testaug.core.records import Annotation
    from tests.tiny_models import (
        VOUCHED_CURVE,
        make_calibration,
        make_candidate,
        make_labelled,
        write_ranked_run,
    )

    ws = root / "workspace"
    (ws / "suite").mkdir(parents=True)
    for name in ("suite.yaml", "lexicons.yaml"):
        shutil.copy(DATA / "tiny" / name, ws / "suite" / name)
    _must(run_testaug(ws, "expand", "suite/suite.yaml", "--per-template", "2", "-o", "cases.jsonl"))
    (ws / "table.csv").write_text(
        "capability,description,text,label,fills\n"
        'Vocabulary,A positive sentence.,The seat was great.,positive,"{""adj"": ""great""}"\n'
        'Vocabulary,A negative sentence.,The food was awful.,negative,"{""adj"": ""awful""}"\n'
    )
    rows = [
        {"capability": "Vocabulary", "description": "A positive sentence.", "text": t, "label": lab}
        for t, lab in (("The seat was great.", "positive"), ("The food was awful.", "negative"))
    ]
    (ws / "table.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    write_jsonl(ws / "candidates.jsonl", [make_candidate(t) for t in GOOD[:2] + BAD[:2]])
    config = ws / "lexical.yaml"
    config.write_text(
        "name: lexical\nmembers:\n  - {name: lexical, kind: lexical, min_count: 1, "
        "iterations: 50}\n"
    )
    write_jsonl(ws / "labelled.jsonl", make_labelled(GOOD, BAD))
    train_ensemble(make_labelled(GOOD, BAD), load_config(config), ws / "rankers")

    review = ws / "review"
    review.mkdir()
    texts = [f"Case {i} is nice." for i in range(6)]
    p_valid = [0.2, 0.4, 0.6, 0.9, 0.92, 0.95]
    write_ranked_run(review, texts, p_valid=p_valid, calibration=make_calibration(m=VOUCHED_CURVE))
    ranked = [json.loads(line) for line in (review / "ranked.jsonl").read_text().splitlines()]
    people = [
        Annotation(candidate_id=item["candidate"]["id"], valid=valid, annotator="ann",
                   origin="terminal", corrected_label=label)
        for item, valid, label in zip(ranked[:3], (True, False, True), (None, None, "negative"), strict=True)
    ]  # fmt: skip
    write_jsonl(review / "annotations.jsonl", people)

    run = ws / "run"
    run.mkdir()
    write_ranked_run(run, texts, p_valid=p_valid, calibration=make_calibration(m=VOUCHED_CURVE))
    write_jsonl(run / "annotations.jsonl", people)
    _must(run_testaug(
        run, "annotate", "merge", "annotations.jsonl", "--ranked", "ranked.jsonl"
    ))  # fmt: skip
    for name in ("accepted.jsonl",):
        (run / name).unlink(missing_ok=True)
    _must(run_testaug(
        ws, "evaluate", "cases.jsonl", "--model", MODEL, "--perturb", "0",
        "-o", "run/evaluation.json",
    ))  # fmt: skip
    for extra in run.glob("evaluation.*"):
        if extra.name != "evaluation.json":
            extra.unlink()
    diversity = _must(run_testaug(ws, "diversity", "cases.jsonl", "--by", "", "--json"))
    (run / "diversity.json").write_text(diversity.stdout)
    shutil.copy(Path(__file__).parent.parent / "reports" / "data" / "triage.json", run)
    (run / "manifest.json").write_text(
        json.dumps({"run_id": "r", "command": "run", "arguments": {"accept_precision": 0.9},
                    "package_version": "0"})
    )  # fmt: skip

    induce = ws / "induce"
    induce.mkdir()
    from testaug.core.jsonl import read_jsonl
    from testaug.core.records import TestCase

    seed = next(c for c in read_jsonl(ws / "cases.jsonl", TestCase) if "pos_verb_3sg" in c.fills)
    verb, noun = seed.fills["pos_verb_3sg"], seed.fills["air_noun"]
    fields = seed.model_dump(include={"task", "capability", "description_id", "description"})
    accepted = [
        TestCase(**fields, label=seed.label, text=text, source="llm",
                 meta={"seed_case_ids": [seed.id]})
        for text in (f"Nobody {verb} that {noun}.", f"Hardly anyone {verb} the {noun}.")
    ]  # fmt: skip
    write_jsonl(induce / "cases.jsonl", [seed])
    write_jsonl(induce / "accepted.jsonl", accepted)
    _must(run_testaug(
        ws, "templates", "induce", "induce/accepted.jsonl", "--cases", "induce/cases.jsonl",
        "--suite", "suite/suite.yaml", "-o", "induce/templates.yaml",
    ))  # fmt: skip
    for path in induce.iterdir():
        if path.name.startswith("templates."):
            path.unlink()
    shutil.rmtree(ws / "cache", ignore_errors=True)
    return ws


# ---------------------------------------------------------------- damages


Damage = Callable[[bytes, str], bytes]  # (valid bytes, file suffix) -> damaged bytes


@dataclass(frozen=True)
class Described:
    """A damage that shows as the call that made it (hypothesis prints it on a failure)."""

    call: str
    damage: Damage

    def __call__(self, data: bytes, suffix: str) -> bytes:
        return self.damage(data, suffix)

    def __repr__(self) -> str:
        return self.call


def described(factory: Callable[..., Damage]) -> Callable[..., Described]:
    """`factory` whose damages show as `factory(args)`, long arguments shortened."""

    def short(value: object) -> str:
        text = repr(value)
        return text if len(text) <= 40 else f"{text[:30]}...({len(text):,} chars)"

    @functools.wraps(factory)
    def make(*args: object) -> Described:
        return Described(f"{factory.__name__}({', '.join(map(short, args))})", factory(*args))

    return make


def _insert(data: bytes, where: float, payload: bytes) -> bytes:
    at = int(len(data) * where)
    return data[:at] + payload + data[at:]


@described
def insert_bytes(where: float, payload: bytes) -> Damage:
    """`payload` inserted at a fraction `where` of the file."""
    return lambda data, suffix: _insert(data, where, payload)


@described
def truncate(where: float) -> Damage:
    """The file cut at a fraction `where` of its bytes."""
    return lambda data, suffix: data[: int(len(data) * where)]


@described
def huge_line(where: float, size: int = 2_000_000) -> Damage:
    """A line of `size` characters inserted at the start of the line at `where`."""

    def damage(data: bytes, suffix: str) -> bytes:
        at = data.rfind(b"\n", 0, int(len(data) * where)) + 1
        return data[:at] + b"x" * size + b"\n" + data[at:]

    return damage


@described
def with_bom(then: Damage | None = None) -> Damage:
    """A UTF-8 BOM before the file (damaged by `then` first, when given)."""
    return lambda data, suffix: BOM + (then(data, suffix) if then else data)


@described
def replace_value(index: int, value: object) -> Damage:
    """The `index`-th value of the file's first record (depth first, modulo their count;
    a cell of its first data row for a CSV file) replaced by `value`. Written as JSON,
    YAML or a CSV cell (`value` as text) according to the suffix."""

    if isinstance(value, Long):
        value = str(value)

    def damage(data: bytes, suffix: str) -> bytes:
        text = data.decode("utf-8-sig")
        if suffix == ".csv":
            return _replace_cell(text, index, value).encode()
        if suffix == ".yaml":
            import yaml

            tree = yaml.safe_load(text)
            return yaml.safe_dump(_replace_in(tree, index, value), allow_unicode=True).encode()
        if suffix == ".jsonl":
            lines = text.splitlines()
            lines[0] = json.dumps(_replace_in(json.loads(lines[0]), index, value))
            return ("\n".join(lines) + "\n").encode()
        return json.dumps(_replace_in(json.loads(text), index, value), indent=1).encode()

    return damage


@described
def raw_value(index: int, raw: str) -> Damage:
    """The `index`-th value of the first record replaced by `raw` JSON/YAML text as is
    (deep nesting, a 5,000-digit number, an escaped lone surrogate)."""
    marker = "\u2603marker\u2603"

    def damage(data: bytes, suffix: str) -> bytes:
        if suffix == ".csv":
            return _replace_cell(data.decode("utf-8-sig"), index, raw).encode()
        marked = replace_value(index, marker)(data, suffix).decode()
        quoted = json.dumps(marker) if suffix != ".yaml" else marker
        return marked.replace(quoted, raw, 1).encode()

    return damage


def _paths(value: object, prefix: tuple = ()) -> list[tuple]:
    """Every path into a JSON value, depth first (the root excluded)."""
    found: list[tuple] = []
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, child in items:
        found.append((*prefix, key))
        found.extend(_paths(child, (*prefix, key)))
    return found


def _replace_in(tree: object, index: int, value: object) -> object:
    """`tree` (a JSON value; a list's first item stands for the record) with the
    `index`-th path replaced by `value`; the whole tree when it has no path."""
    paths = _paths(tree)
    if not paths:
        return value
    path = paths[index % len(paths)]
    parent = tree
    for key in path[:-1]:
        parent = parent[key]  # type: ignore[index]
    parent[path[-1]] = value  # type: ignore[index]
    return tree


def _replace_cell(text: str, index: int, value: object) -> str:
    import csv
    import io

    rows = list(csv.reader(io.StringIO(text)))
    if len(rows) < 2 or not rows[1]:
        return text
    row = rows[1]
    row[index % len(row)] = value if isinstance(value, str) else json.dumps(value)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def swap_type(value: object) -> object:
    """A value of another JSON type than `value`."""
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, int | float):
        return "seven"
    if isinstance(value, str):
        return 7
    if isinstance(value, list):
        return {"x": 1}
    if isinstance(value, dict):
        return [1, 2]
    return [None]


@described
def wrong_type(where: float) -> Damage:
    """The value at a fraction `where` of the first record's paths replaced by a value of
    another type (a CSV cell by an empty one)."""

    def damage(data: bytes, suffix: str) -> bytes:
        text = data.decode("utf-8-sig")
        if suffix == ".csv":
            return _replace_cell(text, int(where * 4), "").encode()
        tree = _first_record(text, suffix)
        paths = _paths(tree)
        index = int(where * len(paths)) if paths else 0
        current = _get(tree, paths[index]) if paths else tree
        return replace_value(index, swap_type(current))(data, suffix)

    return damage


def _first_record(text: str, suffix: str) -> object:
    if suffix == ".yaml":
        import yaml

        return yaml.safe_load(text)
    if suffix == ".jsonl":
        return json.loads(text.splitlines()[0])
    return json.loads(text)


def _get(tree: object, path: tuple) -> object:
    for key in path:
        tree = tree[key]  # type: ignore[index]
    return tree


crlf = Described("crlf", lambda data, suffix: data.replace(b"\n", b"\r\n"))
twice = Described("twice", lambda data, suffix: data + data)  # every record twice


class Long(str):
    """A long string that shows as its length and first characters."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self):,} characters: {str(self[:12])!r}...>"


HUGE_TEXT = Long("so " * 400_000)  # 1,200,000 characters: over what spaCy parses
DEEP = Long("[" * 100_000)
HUGE_NUMBER = Long("9" * 5_000)  # over Python's 4,300-digit limit for int()

# The fixed trial table's damages, by name.
DAMAGES: dict[str, Damage] = {
    "empty file": truncate(0.0),
    "truncated in the middle": truncate(0.5),
    "last bytes cut off": truncate(0.99),
    "BOM and CRLF line ends": with_bom(crlf),
    "BOM, then truncated": with_bom(truncate(0.6)),
    "random bytes": insert_bytes(0.4, random.Random(17).randbytes(24)),
    "Latin-1 bytes": insert_bytes(0.5, b"caf\xe9 na\xefve"),
    "an encoded surrogate": insert_bytes(0.5, b"\xed\xa0\x80"),
    "NUL bytes": insert_bytes(0.5, b"\x00\x00\x00"),
    "a 2,000,000-character line": huge_line(0.5),
    "wrong type: first field": wrong_type(0.0),
    "wrong type: a middle field": wrong_type(0.5),
    "wrong type: last field": wrong_type(0.99),
    "a 1,200,000-character value": replace_value(3, HUGE_TEXT),
    "100,000 nested brackets": raw_value(-1, DEEP),
    "a 5,000-digit number": raw_value(-1, HUGE_NUMBER),
    "an escaped lone surrogate": raw_value(3, '"\\ud800"'),
    "NaN for a middle value": raw_value(12, "NaN"),
    "duplicated content": twice,
}


# ---------------------------------------------------------------- running a trial


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (its cache folder left out), by relative path."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.relative_to(folder).parts[0] != "cache"
    }


def prepare(workspace: Path, folder: Path, reader: Reader, damage: Damage) -> Path:
    """A copy of `workspace` in `folder` with the reader's earlier outputs in place and its
    target damaged; returns the copy."""
    shutil.copytree(workspace, folder)
    for name in reader.drop:
        (folder / name).unlink()
    for name in reader.outputs:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(EARLIER)
    target = folder / reader.target
    target.write_bytes(damage(target.read_bytes(), target.suffix))
    return folder


@dataclass(frozen=True)
class Outcome:
    """How a trial ended ("succeeded": exit 0, "rejected": any other exit) and what broke
    the property (nothing when it held)."""

    kind: str
    broken: list[str]


def run_trial(workspace: Path, folder: Path, reader: Reader, damage: Damage) -> list[str]:
    """Run `reader`'s command on a copy of `workspace` (in `folder`) with its target
    damaged; returns what broke the property (empty when it held)."""
    return trial_outcome(workspace, folder, reader, damage).broken


def trial_outcome(workspace: Path, folder: Path, reader: Reader, damage: Damage) -> Outcome:
    """As `run_trial`, saying also whether the command succeeded or rejected the input."""
    copy = prepare(workspace, folder, reader, damage)
    before = snapshot(copy)
    result = run_testaug(copy, *reader.args, input=reader.input)
    broken = check_outcome(result, reader, before, snapshot(copy))
    return Outcome("succeeded" if result.returncode == 0 else "rejected", broken)


def check_outcome(
    result: CliResult, reader: Reader, before: dict[str, bytes], after: dict[str, bytes]
) -> list[str]:
    """What broke the property in a run's result (see the module's docstring)."""
    broken = []
    if "Traceback" in result.stderr or "Traceback" in result.stdout:
        broken.append("traceback: " + result.stderr[-600:])
    if result.returncode == 0:
        return broken + check_success(result, reader, after)
    if result.returncode != 1:
        broken.append(f"exit {result.returncode}")
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    last = lines[-1] if lines else ""
    if len(errors) != 1 or errors[0] != last:
        broken.append(f"not one error line, last: {result.stderr[-600:]!r}")
    named = any(
        name in line
        for name in (reader.target, reader.read_through or reader.target)
        for line in (lines if reader.lists_problems else [last])
    )
    if not named:
        broken.append(f"{reader.target} not named: {last[:300]!r}")
    changed = sorted(name for name in before if after.get(name) != before[name])
    added = sorted(set(after) - set(before))
    if changed:
        broken.append(f"changed: {', '.join(changed)}")
    if added:
        broken.append(f"left behind: {', '.join(added)}")
    return broken


def check_success(result: CliResult, reader: Reader, after: dict[str, bytes]) -> list[str]:
    """What a success lacks: a file it must write (rewritten where an earlier output
    stood, readable in its format), the line saying what it did, or a count in that line
    that is not the count of records in the file it names."""
    broken = []
    counts: dict[str, int] = {}
    for name in reader.written:
        if name not in after or (name in reader.outputs and after[name] == EARLIER):
            broken.append(f"{name} not written")
            continue
        try:
            counts[name] = len(records(name, after[name]))
        except ValueError as exc:
            broken.append(f"{name} unreadable: {exc}")
    said = " ".join(f"{result.stdout}\n{result.stderr}".split())
    found = re.search(reader.says, said)
    if found is None:
        broken.append(f"no line says what it did ({reader.says!r}): {said[-400:]!r}")
    else:
        for group, name in reader.counted:
            stated = int(found.group(group).replace(",", ""))
            if name in counts and stated != counts[name]:
                broken.append(f"says {stated} for {name}, which holds {counts[name]}")
    if reader.stdout_json:
        try:
            json.loads(result.stdout)
        except ValueError as exc:
            broken.append(f"stdout is not JSON: {exc}")
    return broken


def records(name: str, data: bytes) -> list[object]:
    """The records of an output file by its suffix (a JSONL line, a CSV row under the
    header, a YAML or JSON document as one); ValueError when it does not read as that."""
    text = data.decode("utf-8-sig")
    suffix = Path(name).suffix
    if suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    if suffix == ".csv":
        rows = list(csv.reader(io.StringIO(text)))
        if not rows:
            raise ValueError("no header row")
        return rows[1:]
    if suffix == ".yaml":
        import yaml

        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ValueError(str(exc)) from exc
        if document is None:
            raise ValueError("an empty YAML document")
        return [document]
    if suffix == ".json":
        return [json.loads(text)]
    if not text.strip():
        raise ValueError("empty")
    return [text]
