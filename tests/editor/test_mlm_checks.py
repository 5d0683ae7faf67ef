"""`suggest --mlm` refuses what it cannot read safely, with a message instead of a
traceback: a sentence past the model's length, truncated safetensors weights, and
pickled weights (refused unread)."""

from __future__ import annotations

import pickle

import pytest
from typer.testing import CliRunner

from testaug.core.errors import TestAugError
from testaug.editor.masks import parse_masked
from testaug.editor.mlm import load_fill_mask, mlm_suggest
from tests.editor.test_fill_in import build_tiny_mlm


class _Touches:
    """A pickle that, when loaded, creates a file: proof that it was unpickled."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def suggest(tmp_path, *args: str):
    import typer

    from testaug.cli import ErrorsAsMessages
    from testaug.cli.editor import suggest_command

    app = typer.Typer(cls=ErrorsAsMessages)
    app.command("suggest")(suggest_command)
    app.command("unused")(lambda: None)
    env = {"TESTAUG_CACHE_DIR": str(tmp_path / "cache")}
    return CliRunner().invoke(app, ["suggest", *args], env=env)


def test_a_sentence_past_the_models_length_is_an_error_naming_both(tmp_path):
    path = build_tiny_mlm(tmp_path / "mlm", favourite="loved")
    fill_mask = load_fill_mask(str(path))
    long = " ".join(["the flight was good ."] * 20) + " i {mask} it ."
    with pytest.raises(TestAugError, match=r"tokens, more than the masked LM reads \(64\)"):
        mlm_suggest(parse_masked(long), fill_mask, n=3)
    result = suggest(tmp_path, long, "--mlm", f"hf:{path}", "-n", "3")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "more than the masked LM reads" in result.output
    assert mlm_suggest(parse_masked("i {mask} it ."), fill_mask, n=3)  # a short one works


def test_truncated_safetensors_weights_are_an_error_naming_the_file(tmp_path):
    path = build_tiny_mlm(tmp_path / "mlm", favourite="loved")
    weights = path / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: len(data) // 2])
    result = suggest(tmp_path, "i {mask} it .", "--mlm", f"hf:{path}")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "model.safetensors" in result.output and "truncated" in result.output


def test_pickled_weights_are_refused_without_being_unpickled(tmp_path):
    path = build_tiny_mlm(tmp_path / "mlm", favourite="loved")
    (path / "model.safetensors").unlink()
    marker = tmp_path / "unpickled"
    (path / "pytorch_model.bin").write_bytes(pickle.dumps(_Touches(str(marker))))
    with pytest.raises(TestAugError, match=r"pytorch_model\.bin, pickled weights"):
        load_fill_mask(str(path))
    result = suggest(tmp_path, "i {mask} it .", "--mlm", f"hf:{path}")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "pickled weights" in " ".join(result.output.split())
    assert not marker.exists()
