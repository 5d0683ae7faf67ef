"""Bad-input trials through the command: every user-facing reader, a valid file damaged, and
the property that the command either succeeds or stops cleanly.

A *reader* is a command and the one input file of a valid workspace it damages (`READERS`:
the pipeline's, tests/core/trial_readers.py, then the loops', tests/core/loop_trials.py).
A *damage* turns the file's bytes into bad ones (tests/core/trial_damages.py: `DAMAGES` for
the fixed trial table; tests/core/test_reader_fuzz.py draws them at random). `run_trial`
copies the workspace, damages the file, runs the command in process and returns what broke
the property (nothing when it held):

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
import io
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from tests.cli_runner import CliResult, run_testaug
from tests.core.loop_trials import LOOP_READERS, build_loops, scripted_server
from tests.core.trial_damages import Damage
from tests.core.trial_readers import MODEL, PIPELINE_READERS, Reader, must

DATA = Path(__file__).parent.parent / "data"
EARLIER = b"earlier output\n"


GOOD = ["the seat was great .", "i love the crew .", "good service .", "they love the flight ."]
BAD = ["i hate the crew .", "awful flight !", "the food was bad ."]


READERS: tuple[Reader, ...] = PIPELINE_READERS + LOOP_READERS


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
    must(run_testaug(ws, "expand", "suite/suite.yaml", "--per-template", "2", "-o", "cases.jsonl"))
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
    must(run_testaug(
        run, "annotate", "merge", "annotations.jsonl", "--ranked", "ranked.jsonl"
    ))  # fmt: skip
    for name in ("accepted.jsonl",):
        (run / name).unlink(missing_ok=True)
    must(run_testaug(
        ws, "evaluate", "cases.jsonl", "--model", MODEL, "--perturb", "0",
        "-o", "run/evaluation.json",
    ))  # fmt: skip
    for extra in run.glob("evaluation.*"):
        if extra.name != "evaluation.json":
            extra.unlink()
    diversity = must(run_testaug(ws, "diversity", "cases.jsonl", "--by", "", "--json"))
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
    must(run_testaug(
        ws, "templates", "induce", "induce/accepted.jsonl", "--seed-cases", "induce/cases.jsonl",
        "--suite", "suite/suite.yaml", "-o", "induce/templates.yaml",
    ))  # fmt: skip
    for path in induce.iterdir():
        if path.name.startswith("templates."):
            path.unlink()
    build_loops(ws)
    shutil.rmtree(ws / "cache", ignore_errors=True)
    return ws


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
    result = run_reader(copy, reader)
    broken = check_outcome(result, reader, before, snapshot(copy))
    return Outcome("succeeded" if result.returncode == 0 else "rejected", broken)


def run_reader(folder: Path, reader: Reader) -> CliResult:
    """The reader's command run in `folder`, against the scripted server where it asks an LLM."""
    env = None
    if reader.llm:
        env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": scripted_server().base_url}
    return run_testaug(folder, *reader.args, input=reader.input, env=env)


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
            found = records(name, after[name])
            if reader.counts_kind is not None:
                found = [
                    r for r in found if isinstance(r, dict) and r.get("kind") == reader.counts_kind
                ]
            counts[name] = len(found)
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
