"""Every loader of a user-given model folder (models under test, fine-tuning, rankers, the
local generator, the masked LM) loads safetensors only: pickled weights are refused before
they are read, a truncated safetensors file is named, and other failures are one line."""

from __future__ import annotations

import json
import pickle

import pytest

from rankers.members.cross_encoder import CrossEncoderRanker
from testaug.core.errors import TestAugError
from testaug.core.model_files import check_model_folder, safetensors_problem
from testaug.editor.mlm import load_fill_mask
from testaug.evaluation.models.hf import HFModel
from testaug.fixing.finetune import load_classifier
from testaug.generation.backends.local import LocalBackend
from tests.models_fixture import build_tiny_classifier

LABELS = ("negative", "positive")


class _Touches:
    """A pickle that, when loaded, creates a file: proof that it was unpickled."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _hf(path):
    return HFModel.load(str(path), LABELS)


def _finetune(path):
    return load_classifier(path, labels=LABELS)


def _ranker(path):
    return CrossEncoderRanker.load("member", path)


def _local(path):
    backend = LocalBackend(path, cache_dir=path.parent / "cache")
    return backend._ensure_loaded()


def _mlm(path):
    load_fill_mask.cache_clear()
    return load_fill_mask(str(path))


LOADERS = [_hf, _finetune, _ranker, _local, _mlm]
IDS = [loader.__name__.strip("_") for loader in LOADERS]


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "model"
    build_tiny_classifier(path, 2, id2label=dict(enumerate(LABELS)))
    return path


@pytest.mark.parametrize("load", LOADERS, ids=IDS)
@pytest.mark.parametrize("pickled", ["pytorch_model.bin", "weights.pt", "model.pkl"])
def test_a_folder_of_pickled_weights_is_refused_without_unpickling_them(
    tmp_path, tiny, load, pickled
):
    (tiny / "model.safetensors").unlink()
    marker = tmp_path / "unpickled"
    (tiny / pickled).write_bytes(pickle.dumps(_Touches(str(marker))))
    with pytest.raises(TestAugError) as raised:
        load(tiny)
    message = str(raised.value)
    assert f"{pickled}, pickled weights" in message and "no model.safetensors" in message
    assert not marker.exists()


@pytest.mark.parametrize("load", LOADERS, ids=IDS)
def test_a_truncated_safetensors_file_is_named(tiny, load):
    weights = tiny / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-100])
    with pytest.raises(
        TestAugError, match=r"model\.safetensors: the tensors need .* \(truncated\?\)"
    ):
        load(tiny)


@pytest.mark.parametrize("load", [_hf, _finetune, _ranker], ids=["hf", "finetune", "ranker"])
def test_a_damaged_config_is_one_line_naming_the_folder(tiny, load):
    (tiny / "config.json").write_text('{"model_type": "bert",', encoding="utf-8")
    with pytest.raises(TestAugError) as raised:
        load(tiny)
    message = str(raised.value)
    assert message.startswith("cannot load") and str(tiny) in message
    assert "\n" not in message


def test_a_tiny_classifier_saved_with_safetensors_still_loads(tiny):
    model = _hf(tiny)
    assert model.predict_proba([("the flight was good .", None)]).shape == (1, 2)
    assert _finetune(tiny).labels == LABELS


def test_a_header_cut_short_or_not_json_is_named(tmp_path):
    short = tmp_path / "short.safetensors"
    short.write_bytes(b"\x01\x02")
    assert "too short" in safetensors_problem(short)
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes((1000).to_bytes(8, "little") + b"{}")
    assert "the header says 1,000 bytes but the file has 10" in safetensors_problem(cut)
    garbled = tmp_path / "garbled.safetensors"
    garbled.write_bytes((4).to_bytes(8, "little") + b"\xff\xfe{[")
    assert "not JSON" in safetensors_problem(garbled)
    listed = tmp_path / "listed.safetensors"
    header = json.dumps([1, 2]).encode()
    listed.write_bytes(len(header).to_bytes(8, "little") + header)
    assert "not a JSON object" in safetensors_problem(listed)


def test_a_folder_with_no_weights_at_all_says_how_to_save_them(tmp_path):
    with pytest.raises(TestAugError, match=r"has no model\.safetensors; save the model"):
        check_model_folder(tmp_path, "the model")
