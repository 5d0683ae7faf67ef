"""The Python API's stages after generation, as a notebook runs them: ranking with a tiny
trained ensemble, the review's actions (the ranker's rule, the terminal, Label Studio),
the merge, templates from accepted cases, diversity and a round of `adapt`; each checked
in memory and on disk, and against the CLI where a command does the same."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console

import testaug
from rankers.ensemble import load_config
from rankers.ensemble_training import trained_ensemble
from testaug.adaptive.suggestion import Suggestion
from testaug.adaptive.suggestions import SuggestionRoundConfig
from testaug.adaptive.tree import TreeTest
from testaug.core.jsonl import read_jsonl
from testaug.core.records import Annotation, RankedCandidate
from testaug.review.terminal import key_reader
from testaug.testing.fake_backend import ScriptedBackend
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.cli_runner import run_testaug
from tests.flow_helpers import echo_seed_reply, lexical_config
from tests.review.fake_label_studio import FakeLabelStudioClient, connect
from tests.tiny_models import make_labelled

RUN_FILES = ("cases.jsonl", "candidates.jsonl", "ranked.jsonl", "ranked.calibration.json")
POOLED = {"accept_precision": 0.5, "selection": {"pooled_rule": True}}


@pytest.fixture(scope="module")
def ranked_run(tmp_path_factory) -> tuple[Path, list[RankedCandidate], Path]:
    """A run folder of seed cases, echoed candidates and their ranking by a lexical
    ensemble trained on a few labelled texts; the ranking in memory; the ensemble."""
    folder = tmp_path_factory.mktemp("ranked-run")
    testaug.expand(
        "sentiment", per_template=3, capabilities=["Vocabulary"], out=folder / "cases.jsonl"
    )
    testaug.generate(
        folder / "cases.jsonl",
        folder / "candidates.jsonl",
        backend=ScriptedBackend(echo_seed_reply),
        prompts_per_description=2,
        samples=2,
        cache=folder / "responses.sqlite",
    )
    good = [f"the crew was great {i} i mean it !" for i in range(12)]
    bad = [f"sure here are more examples {i}" for i in range(12)]
    config = load_config(lexical_config(folder))
    # labels of the scripted generator itself, so its own labels vouch for its candidates
    scripted = {"model": "scripted", "temperature": 1.0}
    labelled = [
        item.model_copy(update={"candidate": item.candidate.model_copy(update=scripted)})
        for item in make_labelled(good, bad)
    ]
    rankers = trained_ensemble(config, labelled, folder / "rankers")
    ranked = testaug.rank(
        folder / "candidates.jsonl",
        folder / "ranked.jsonl",
        rankers=rankers,
        cases=folder / "cases.jsonl",
    )
    return folder, ranked, rankers


def fresh_run(ranked_run, where: Path) -> Path:
    """A copy of the ranked run's files in `where`, for a test that writes beside them."""
    folder, _, _ = ranked_run
    where.mkdir(parents=True, exist_ok=True)
    for name in RUN_FILES:
        shutil.copy(folder / name, where / name)
    return where


def test_rank_returns_and_writes_the_ranking_the_cli_writes(ranked_run, tmp_path):
    folder, ranked, rankers = ranked_run
    candidates = list(read_jsonl(folder / "candidates.jsonl", testaug.Candidate))
    assert sorted(r.candidate.id for r in ranked) == sorted(c.id for c in candidates)
    assert [r.rank for r in ranked] == list(range(1, len(ranked) + 1))
    assert all(r.p_valid is not None for r in ranked)
    assert list(read_jsonl(folder / "ranked.jsonl", RankedCandidate)) == ranked
    assert (folder / "ranked.calibration.json").is_file()
    result = run_testaug(
        tmp_path,
        *("rank", str(folder / "candidates.jsonl"), "--rankers", str(rankers)),
        *("-o", str(tmp_path / "ranked.jsonl"), "--seed-cases", str(folder / "cases.jsonl")),
    )
    assert result.returncode == 0, result.stderr
    assert list(read_jsonl(tmp_path / "ranked.jsonl", RankedCandidate)) == ranked


def test_rank_takes_its_steps_record_whole_as_the_cli_and_the_flow_build_it(ranked_run, tmp_path):
    from testaug.steps.rank import RankConfig

    folder, ranked, rankers = ranked_run
    config = RankConfig(
        candidates=folder / "candidates.jsonl",
        rankers=rankers,
        out=tmp_path / "ranked.jsonl",
        cases=folder / "cases.jsonl",
    )
    assert testaug.rank(config=config) == ranked
    assert testaug.rank(config=config, out=tmp_path / "again.jsonl", batch_size=2) == ranked
    assert (tmp_path / "again.jsonl").is_file()


def test_a_reviews_precision_is_accept_precision_and_its_old_name_target_still_works(
    ranked_run, tmp_path
):
    from testaug.api.augment import review_config
    from testaug.review.run_files import ReviewConfig

    ranked = ranked_run[0] / "ranked.jsonl"
    pooled = {"selection": {"pooled_rule": True}}
    new = review_config(ranked, accept_precision=0.5, **pooled)
    assert review_config(ranked, target=0.5, **pooled) == new
    assert review_config(config=ReviewConfig(ranked=ranked), accept_precision=0.5) == (
        new.model_copy(update={"selection": ReviewConfig(ranked=ranked).selection})
    )
    assert new.accept_precision == 0.5


def test_the_rankers_rule_alone_accepts_what_it_vouches_for_and_records_it(ranked_run, tmp_path):
    run = fresh_run(ranked_run, tmp_path)
    done = testaug.review_automatically(run / "ranked.jsonl", **POOLED)
    ranked = ranked_run[1]
    assert done.summary.mode == "auto" and done.path == run / "annotations.jsonl"
    groups = done.summary.acceptance.groups
    vouched = [
        r
        for r in ranked
        if (rule := groups[r.calibration_group].rule) is not None
        and r.p_valid is not None
        and r.p_valid >= rule.threshold
    ]
    assert 0 < done.summary.acceptance.accepted_by_ranker == len(vouched)
    assert done.summary.pending == len(ranked) - len(vouched)
    written = list(read_jsonl(done.path, Annotation))
    assert len(written) == done.records == len(vouched)
    assert {a.candidate_id for a in written} == {r.candidate.id for r in vouched}
    assert all(a.valid and a.origin == "ranker" for a in written)


def test_without_a_rule_for_its_generator_the_ranker_leaves_every_candidate_pending(
    ranked_run, tmp_path
):
    run = fresh_run(ranked_run, tmp_path)
    done = testaug.review_automatically(run / "ranked.jsonl")
    assert done.summary.acceptance.accepted_by_ranker == 0
    assert done.summary.pending == len(ranked_run[1])


def test_merging_the_rankers_acceptances_gives_the_cases_the_cli_merge_writes(ranked_run, tmp_path):
    run = fresh_run(ranked_run, tmp_path / "api")
    done = testaug.review_automatically(run / "ranked.jsonl", **POOLED)
    accepted = testaug.merge_reviewed(run / "ranked.jsonl", **POOLED)
    assert 0 < len(accepted) == done.summary.acceptance.accepted_by_ranker
    assert {case.source for case in accepted} == {"llm"}
    assert testaug.read_cases(run / "accepted.jsonl") == accepted
    assert (run / "verdicts.jsonl").is_file()

    cli_run = fresh_run(ranked_run, tmp_path / "cli")
    shutil.copy(run / "annotations.jsonl", cli_run / "annotations.jsonl")
    result = run_testaug(
        tmp_path,
        *("review", "candidates", "apply", str(cli_run / "annotations.jsonl")),
        *("--ranked", str(cli_run / "ranked.jsonl")),
    )
    assert result.returncode == 0, result.stderr
    assert testaug.read_cases(cli_run / "accepted.jsonl") == accepted


def test_terminal_verdicts_are_saved_and_decide_the_merge(ranked_run, tmp_path):
    run = fresh_run(ranked_run, tmp_path)
    screen = io.StringIO()
    done = testaug.review_in_terminal(
        run / "ranked.jsonl",
        annotator="ann",
        read_key=key_reader(io.StringIO("\nn1q")),
        console=Console(file=screen, width=100),
        top=1.0,
    )
    summary = done.summary
    assert (summary.mode, summary.annotated, summary.valid, summary.invalid) == (
        "terminal", 2, 1, 1,
    )  # fmt: skip
    people = [a for a in read_jsonl(done.path, Annotation) if a.annotator == "ann"]
    assert sorted(a.valid for a in people) == [False, True]
    (kept,) = [a.candidate_id for a in people if a.valid]
    assert screen.getvalue()  # the session was shown
    texts = {r.candidate.id: r.candidate.text for r in ranked_run[1]}
    accepted = testaug.merge_reviewed(run / "ranked.jsonl")
    assert [case.text for case in accepted] == [texts[kept]]
    assert testaug.read_cases(run / "accepted.jsonl") == accepted


def test_label_studio_push_then_pull_merges_what_people_accepted(ranked_run, tmp_path):
    run = fresh_run(ranked_run, tmp_path)
    client = FakeLabelStudioClient()
    studio = connect(client)
    pushed = testaug.push_to_label_studio(run / "ranked.jsonl", studio=studio, top=1.0)
    project = pushed.summary.project
    tasks = client.project_named(project).tasks
    assert pushed.summary.sent == len(tasks) == len(ranked_run[1])
    chosen = tasks[0]["data"]["candidate_id"]
    client.answer(project, chosen, user=1, validity="valid")
    merged = testaug.pull_from_label_studio(run / "ranked.jsonl", studio=studio)
    assert (merged.summary.pulled.verdicts, merged.summary.pulled.added) == (1, 1)
    assert chosen in {a.candidate_id for a in read_jsonl(run / "annotations.jsonl", Annotation)}
    accepted = testaug.read_cases(merged.path)
    texts = {r.candidate.id: r.candidate.text for r in ranked_run[1]}
    assert [case.text for case in accepted] == [texts[chosen]]


@pytest.fixture(scope="module")
def accepted_run(ranked_run, tmp_path_factory) -> Path:
    """A copy of the ranked run whose candidates the ranker's rule all accepted."""
    run = fresh_run(ranked_run, tmp_path_factory.mktemp("accepted-run"))
    testaug.review_automatically(run / "ranked.jsonl", **POOLED)
    testaug.merge_reviewed(run / "ranked.jsonl", **POOLED)
    return run


def test_templates_induced_from_accepted_cases_match_the_clis_and_fill_new_cases(
    accepted_run, tmp_path
):
    run = accepted_run
    induced = testaug.induce_templates(
        run / "accepted.jsonl", run / "cases.jsonl", tmp_path / "api" / "templates.yaml"
    )
    assert induced.records > 0 and induced.path.is_file()
    assert induced.files["lexicons"].is_file() and induced.files["induced"].is_file()
    result = run_testaug(
        tmp_path,
        *(
            "templates",
            "induce",
            str(run / "accepted.jsonl"),
            "--seed-cases",
            str(run / "cases.jsonl"),
        ),
        *("-o", str(tmp_path / "cli" / "templates.yaml")),
    )
    assert result.returncode == 0, result.stderr
    assert testaug.load_suite(tmp_path / "cli" / "templates.yaml").capabilities == (
        testaug.load_suite(induced.path).capabilities
    )

    cases = testaug.expand_templates(induced, tmp_path / "new.jsonl", known=[run / "cases.jsonl"])
    known = {case.id for case in testaug.read_cases(run / "cases.jsonl")}
    assert cases and {case.source for case in cases} == {"expansion"}
    assert not known & {case.id for case in cases}
    assert testaug.read_cases(tmp_path / "new.jsonl") == cases


def test_diversity_of_a_cases_list_is_what_the_cli_measures(tmp_path):
    cases = testaug.expand("sentiment", per_template=2, capabilities=["Vocabulary", "Negation"])
    summary = testaug.measure_diversity(cases, by="capability", out=tmp_path / "diversity.json")
    assert summary.n_input == len(cases)
    assert {row.group["capability"] for row in summary.groups} == {"Vocabulary", "Negation"}
    assert json.loads((tmp_path / "diversity.json").read_text()) == summary.model_dump(mode="json")
    testaug.write_cases(cases, tmp_path / "cases.jsonl")
    result = run_testaug(
        tmp_path,
        *("suite", "diversity", str(tmp_path / "cases.jsonl"), "--by", "capability", "--json"),
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == summary.model_dump(mode="json")


TOPIC = "/Negation"
TREE_TESTS = [
    "I don't love the seat.",
    "The crew was not great.",
    "I would not call the food good.",
    "The flight was not bad.",
    "The service was not awful.",
]


def suggestion_reply(prompt: str, index: int) -> str:
    """A new item per prompt and sample: "not good" (VADER: passing) or "not terrible"
    (VADER: failing)."""
    tag = int(hashlib.sha256(prompt.encode()).hexdigest()[:4], 16)
    word = "good" if index % 2 == 0 else "terrible"
    return f'The meal {tag} was not {word}, case {index}."\n"more'


@pytest.fixture(scope="module")
def server():
    with ScriptedOpenAIServer(suggestion_reply) as running:
        yield running


def test_adapt_suggests_tests_through_an_openai_server_as_the_cli_does(
    ranked_run, server, tmp_path
):
    rows = [
        TreeTest(topic=TOPIC, input=text, comparator="should not be", output="positive")
        for text in TREE_TESTS
    ]
    testaug.write_tree(tmp_path / "tree.jsonl", rows)
    rankers = ranked_run[2]
    done = testaug.adapt(
        tmp_path / "tree.jsonl",
        TOPIC,
        ["vader"],
        tmp_path / "api.jsonl",
        backend="openai",
        llm="scripted",
        base_url=server.base_url,
        round_settings=SuggestionRoundConfig(suggestions=12, seed=3),
        rankers=rankers,
        cache=tmp_path / "api.sqlite",
        settings=notebook_settings(tmp_path),
    )
    suggestions = list(read_jsonl(done.path, Suggestion))
    assert done.path == tmp_path / "api.jsonl" and done.records == len(suggestions) > 0
    scores = [s.failure_score for s in suggestions]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0
    assert all(s.test.topic == TOPIC and s.p_valid is not None for s in suggestions)

    result = run_testaug(
        tmp_path,
        *("tree", "adapt", "tree.jsonl", "--topic", TOPIC, "--task", "sentiment"),
        *("--model", "vader"),
        *("--backend", "openai", "--base-url", server.base_url, "--llm", "scripted"),
        *("--suggestions", "12", "--seed", "3", "--rankers", str(rankers)),
        *("--cache", str(tmp_path / "cli.sqlite"), "-o", "cli.jsonl"),
        env={"OPENAI_API_KEY": "sk-test"},
    )
    assert result.returncode == 0, result.stderr
    assert list(read_jsonl(tmp_path / "cli.jsonl", Suggestion)) == suggestions


def notebook_settings(folder: Path):
    """Settings as the CLI builds them in `folder`, with a key for the scripted server."""
    from testaug.core.settings import Settings

    return Settings(cache_dir=folder / "cache", OPENAI_API_KEY="sk-test")


def test_generation_from_a_backend_config_asks_the_server_it_names(tmp_path):
    seeds = testaug.expand("sentiment", per_template=3, capabilities=["Vocabulary"])
    with ScriptedOpenAIServer(echo_seed_reply) as running:
        config = testaug.BackendConfig(kind="openai", model="scripted", base_url=running.base_url)
        done = testaug.generate(
            seeds,
            tmp_path / "candidates.jsonl",
            backend=config,
            prompts_per_description=1,
            samples=2,
            cache=tmp_path / "responses.sqlite",
            settings=notebook_settings(tmp_path),
        )
        asked = len(running.requests)
    candidates = done.result.candidates
    assert asked > 0 and candidates
    assert {(c.backend, c.model) for c in candidates} == {("openai/completions", "scripted")}
    assert list(read_jsonl(tmp_path / "candidates.jsonl", testaug.Candidate)) == candidates
