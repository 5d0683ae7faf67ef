"""`report.md`, `report.html` and `report_files/*.png` are written whole or not at all, and
never through a symbolic link: a link in the run folder is replaced, and the file it points
to stays as it was."""

from __future__ import annotations

import os
import time

import pytest

from testaug.core import runs
from testaug.core.jsonl import write_jsonl
from testaug.core.records import TestCase
from testaug.reports.blocks import Image, Report, Text, render_html, render_markdown
from testaug.reports.run_report import write_report

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
HEX = "0123456789abcdef0123456789abcdef"


def a_run(folder):
    case = TestCase(
        task="sentiment",
        capability="Vocabulary",
        description_id="voc",
        description="A positive sentence.",
        text="The food was great.",
        label="positive",
        source="template",
    )
    write_jsonl(folder / "cases.jsonl", [case])
    return folder


def test_a_linked_report_md_and_html_are_replaced_and_their_targets_left_alone(tmp_path):
    run_dir = a_run(tmp_path / "run")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    precious = {name: elsewhere / name for name in ("notes.md", "index.html")}
    for path in precious.values():
        path.write_text("keep me\n")
    (run_dir / "report.md").symlink_to(precious["notes.md"])
    (run_dir / "report.html").symlink_to(precious["index.html"])

    written = write_report(run_dir)

    assert all(path.read_text() == "keep me\n" for path in precious.values())
    for path in (written.markdown, written.html):
        assert not path.is_symlink() and "testaug report" in path.read_text()


def test_a_linked_image_and_a_linked_images_folder_are_replaced_not_written_through(
    tmp_path,
):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "plot.png"
    target.write_bytes(b"keep me")
    report = Report(title="t", blocks=[Image(PNG, "plot.png", "a plot")])

    images = tmp_path / "report_files"
    images.mkdir()
    (images / "plot.png").symlink_to(target)
    [image] = render_markdown(report, tmp_path / "report.md", images)
    assert not image.is_symlink() and image.read_bytes() == PNG
    assert target.read_bytes() == b"keep me"

    linked_folder = tmp_path / "second" / "report_files"
    linked_folder.parent.mkdir()
    linked_folder.symlink_to(elsewhere, target_is_directory=True)
    [image] = render_markdown(report, linked_folder.parent / "report.md", linked_folder)
    assert not linked_folder.is_symlink() and image.read_bytes() == PNG
    assert sorted(p.name for p in elsewhere.iterdir()) == ["plot.png"]
    assert target.read_bytes() == b"keep me"


def test_a_write_killed_before_it_is_in_place_leaves_the_earlier_page_whole(tmp_path, monkeypatch):
    page = tmp_path / "report.html"
    render_html(Report(title="first", blocks=[Text("earlier")]), page)
    earlier = page.read_text()

    def killed(*_args):
        raise KeyboardInterrupt

    monkeypatch.setattr(runs.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        render_html(Report(title="second", blocks=[Text("later")]), page)
    assert page.read_text() == earlier
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_a_report_sweeps_what_killed_report_writes_left_over_an_hour_ago(tmp_path):
    run_dir = a_run(tmp_path)
    then = time.time() - 2 * 3600
    left = [run_dir / f".report.html.{HEX}.tmp", run_dir / "report_files" / f".a.png.{HEX}.tmp"]
    for path in left:
        path.parent.mkdir(exist_ok=True)
        path.write_text("<html><body>half a pa")
        os.utime(path, (then, then))
    write_report(run_dir)
    assert not any(path.exists() for path in left)
