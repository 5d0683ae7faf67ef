"""Ranker ensembles: configs, training into a folder, loading, Borda ranking, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rankers.ensemble import Ensemble, load_config, ranked_candidates, shipped_configs
from rankers.ensemble_training import train_ensemble
from rankers.evaluation.report import evaluate_scores
from rankers.members.cross_encoder import RankerError
from rankers.members.lexical import LexicalConfig, train_lexical
from testaug.core.errors import InputError
from testaug.core.jsonl import write_jsonl
from tests.cli_runner import CliResult, run_testaug
from tests.tiny_models import build_tiny_cross_encoder, make_candidate, make_labelled

GOOD = [
    "i love the crew .",
    "great flight !",
    "we enjoy the food .",
    "good service .",
    "i like the seat .",
    "they love the flight .",
]
BAD = ["i hate the crew .", "awful flight !", "the food was bad ."]


def candidate(text: str):
    return make_candidate(text)


def labelled_set():
    return make_labelled(GOOD, BAD)


@pytest.fixture(scope="module")
def tiny_config(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("models")
    members = []
    for kind in ("bert", "electra", "roberta"):
        path = build_tiny_cross_encoder(kind, root / kind)
        members.append(
            f"  - {{name: tiny-{kind}, kind: cross-encoder, model: '{path}', loss: lce, "
            "group_size: 4, epochs: 20, learning_rate: 0.02, batch_size: 2, seed: 1}"
        )
    members.append("  - {name: lexical, kind: lexical, min_count: 1, iterations: 300}")
    config = root / "tiny.yaml"
    config.write_text("name: tiny\nmembers:\n" + "\n".join(members) + "\n")
    return config


def test_shipped_configs_are_offline_and_paper_and_load():
    assert shipped_configs() == ["offline", "paper"]
    paper = load_config("paper")
    assert [m.model for m in paper.members] == [
        "bert-large-uncased",
        "google/electra-large-discriminator",
        "facebook/muppet-roberta-large",
    ]
    assert all(m.loss == "lce" and m.epochs == 10 for m in paper.members)
    offline = load_config("offline")
    assert {m.kind for m in offline.members} == {"neighbours"}
    assert offline.folds == 3 and offline.calibration == "isotonic"


def test_bad_config_names_the_field(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        "name: bad\nmembers:\n  - {name: x, kind: cross-encoder, model: m, loss: hinge}\n"
    )
    with pytest.raises(InputError, match=r"bad\.yaml:3: members"):
        load_config(path)


def test_unknown_config_lists_the_shipped_ones():
    with pytest.raises(RankerError, match="shipped: offline, paper"):
        load_config("nonesuch")


def test_lexical_member_learns_the_training_set():
    ranker = train_lexical(labelled_set(), LexicalConfig(name="lex", min_count=1))
    scores = ranker.score([item.candidate for item in labelled_set()])
    assert scores[len(GOOD) :].min() > scores[: len(GOOD)].max()


def test_ranked_candidates_follow_borda_order_with_every_members_score():
    items = [candidate(t) for t in ("a", "b", "c")]
    ranked = ranked_candidates(
        items, {"x": np.array([0.1, 0.9, 0.5]), "y": np.array([0.2, 0.8, 0.1])}
    )
    # b: 2 + 2 points; a and c tie on 1 point and keep input order.
    assert [r.candidate.text for r in ranked] == ["b", "a", "c"]
    assert [r.rank for r in ranked] == [1, 2, 3]
    assert ranked[0].scores == {"x": 0.9, "y": 0.8} and ranked[0].borda_points == 4


def test_ensemble_of_tiny_bert_electra_roberta_trains_saves_loads_and_ranks(tiny_config, tmp_path):
    folder = tmp_path / "ensemble"
    trained = train_ensemble(labelled_set(), load_config(tiny_config), folder)
    loaded = Ensemble.load(folder)
    assert loaded.version == trained.version and len(loaded.members) == 4
    items = [item.candidate for item in labelled_set()]
    for name, scores in trained.score(items).items():
        np.testing.assert_allclose(scores, loaded.score(items)[name], atol=1e-5)
    ranked = loaded.rank(items)
    assert {r.candidate.text for r in ranked[: len(BAD)]} == set(BAD)
    assert not (folder / ".work").exists()


def test_same_data_and_config_give_the_same_version(tiny_config, tmp_path):
    from rankers.ensemble_training import ensemble_version

    config = load_config(tiny_config)
    assert ensemble_version(config, labelled_set()) == ensemble_version(
        config, labelled_set()[::-1]
    )
    assert ensemble_version(config, labelled_set()) != ensemble_version(config, labelled_set()[:-1])


def test_evaluation_reports_ensemble_members_random_oracle_and_agreement():
    items = labelled_set()
    perfect = np.array([0.0] * len(GOOD) + [1.0] * len(BAD))
    noisy = perfect + np.linspace(0, 0.5, len(items))
    evaluation = evaluate_scores(items, {"perfect": perfect, "noisy": noisy}, target=0.9)
    assert evaluation.parts["perfect"].effort_at_target == evaluation.triage.oracle_effort_at_target
    assert evaluation.triage.effort_at_target <= evaluation.triage.random_effort_at_target
    assert set(evaluation.kendall_tau) == {"perfect ~ noisy"}


def run(*args: str) -> CliResult:
    return run_testaug(None, *args, env={"HF_HUB_OFFLINE": "1"})


def test_cli_trains_ranks_and_evaluates_with_a_plot(tiny_config, tmp_path):
    labelled = tmp_path / "labelled.jsonl"
    write_jsonl(labelled, labelled_set())
    candidates = tmp_path / "candidates.jsonl"
    write_jsonl(candidates, [item.candidate for item in labelled_set()])
    folder = tmp_path / "rankers"

    trained = run(
        "rankers", "train", str(labelled), "-o", str(folder), "--config", str(tiny_config)
    )
    assert trained.returncode == 0, trained.stderr
    assert "tiny-electra" in trained.stdout and "version" in trained.stdout

    ranked = run(
        "rank", str(candidates), "--rankers", str(folder), "-o", str(tmp_path / "ranked.jsonl")
    )
    assert ranked.returncode == 0, ranked.stderr
    rows = [json.loads(line) for line in (tmp_path / "ranked.jsonl").read_text().splitlines()]
    assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1))
    assert set(rows[0]["scores"]) == {"tiny-bert", "tiny-electra", "tiny-roberta", "lexical"}
    calibration = tmp_path / "ranked.calibration.json"  # what annotate push reads its rules from
    assert json.loads(calibration.read_text())["curves"], "rank wrote no calibration evidence"

    evaluated = run("rankers", "evaluate", str(labelled), "--rankers", str(folder), "--json")
    assert evaluated.returncode == 0, evaluated.stderr
    summary = json.loads(evaluated.stdout)
    for key in ("effort_at_target", "random_effort_at_target", "oracle_effort_at_target"):
        assert 0.0 <= summary["triage"][key] <= 1.0
    assert len(summary["triage"]["curve"]) == len(rows) + 1
    assert Path(summary["plot"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
