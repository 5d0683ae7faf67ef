"""Several processes writing one run's review files at once: every annotation and every
draw is kept."""

from __future__ import annotations

from testaug.core.records import Annotation
from testaug.core.run_folder import RunFolder
from testaug.review.plans import add_annotations, read_annotations
from testaug.review.selection import Draw, draws_beside, read_draws, record_draws
from tests.core.concurrent_processes import run_together

CANDIDATES = [f"c{i:02d}" for i in range(12)]


def _annotate_one_by_one(path, annotator):
    """Save one verdict at a time, as a terminal session does."""
    added = 0
    for cid in CANDIDATES:
        record = Annotation(candidate_id=cid, valid=True, annotator=annotator, origin="terminal")
        added += add_annotations(path, [record]).added
    return added


def test_two_reviewers_adding_annotations_to_one_run_lose_none(tmp_path):
    path = RunFolder(tmp_path / "run").annotations
    path.parent.mkdir()
    added = run_together(_annotate_one_by_one, [(path, "ann"), (path, "bob")])
    assert added == [len(CANDIDATES), len(CANDIDATES)]
    saved = {(a.candidate_id, a.annotator) for a in read_annotations(path)}
    assert saved == {(cid, who) for cid in CANDIDATES for who in ("ann", "bob")}


def _draw_one_by_one(path, group):
    added = 0
    for cid in CANDIDATES:
        added += record_draws(
            path, [Draw(candidate_id=f"{group}-{cid}", group=group, sampled="random")]
        )
    return added


def test_two_plans_recording_draws_beside_one_annotations_file_lose_none(tmp_path):
    path = draws_beside(RunFolder(tmp_path / "run").annotations)
    path.parent.mkdir()
    added = run_together(_draw_one_by_one, [(path, "gpt"), (path, "llama")])
    assert added == [len(CANDIDATES), len(CANDIDATES)]
    assert set(read_draws(path)) == {f"{g}-{cid}" for cid in CANDIDATES for g in ("gpt", "llama")}
