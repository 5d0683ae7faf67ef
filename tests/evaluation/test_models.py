"""Models under test: spec strings, label mapping, the neutral band, and each adapter."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from testaug.core.errors import InputError
from testaug.core.records import Prediction, TestCase
from testaug.evaluation.model_runs import evaluate_model
from testaug.evaluation.models import (
    MODEL_KINDS,
    ModelError,
    ModelKind,
    ModelSpec,
    ModelUnderTest,
    check_model_specs,
    check_spec,
    load_model,
    model_kind,
    predictions,
    split_spec,
)
from testaug.evaluation.models.labels import canonical, map_labels, neutral_band
from testaug.evaluation.models.vader import VaderModel, vader_label, vader_probabilities
from tests.models_fixture import build_tiny_classifier

SENTIMENT = ("negative", "neutral", "positive")
ORDERS = [SENTIMENT, ("positive", "neutral", "negative"), ("neutral", "positive", "negative")]


def argmax_labels(probs: np.ndarray, labels: tuple[str, ...]) -> list[str]:
    """The argmax label of each row."""
    return [labels[int(i)] for i in np.argmax(probs, axis=1)]


def sentiment_case(text: str, label: str = "positive") -> TestCase:
    return TestCase(
        task="sentiment",
        capability="Vocabulary",
        description_id="d",
        description="A sentence.",
        text=text,
        label=label,
    )


class StubAnalyzer:
    """A VADER stand-in whose compound score is the text read as a number."""

    def polarity_scores(self, text: str) -> dict[str, float]:
        return {"compound": float(text)}


# --- neutral band and label mapping -------------------------------------------------


@pytest.mark.parametrize("task", ORDERS)
def test_neutral_band_splits_binary_sentiment_at_one_third_and_two_thirds(task):
    p_pos = np.array([0.0, 0.2, 0.33, 1 / 3, 0.34, 0.5, 0.66, 2 / 3, 0.67, 0.9, 1.0])
    expected = ["negative"] * 4 + ["neutral"] * 3 + ["positive"] * 4
    mapping = map_labels(("negative", "positive"), task)
    probs = mapping(np.stack([1 - p_pos, p_pos], axis=1))
    assert probs.shape == (len(p_pos), 3)
    assert np.allclose(probs.sum(axis=1), 1.0)
    assert argmax_labels(probs, task) == expected


def test_neutral_band_follows_the_documented_formula_away_from_the_edges():
    p = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    scores = np.stack([1 - p, 1 - np.abs(2 * p - 1), p], axis=1)
    assert np.allclose(neutral_band(p), scores / scores.sum(axis=1, keepdims=True))
    assert np.allclose(neutral_band(np.array([0.5])), [[0.25, 0.5, 0.25]])


def test_model_labels_are_reordered_into_task_order_through_aliases():
    mapping = map_labels(("POS", "Neutral", "neg"), SENTIMENT)
    probs = mapping(np.array([[0.7, 0.2, 0.1]]))
    assert np.allclose(probs, [[0.1, 0.2, 0.7]])


def test_a_task_label_the_model_cannot_produce_gets_probability_zero():
    probs = map_labels(("entail", "contradiction"), ("entailment", "neutral", "contradiction"))(
        np.array([[0.6, 0.4]])
    )
    assert np.allclose(probs, [[0.6, 0.0, 0.4]])


def test_qqp_integer_labels_map_to_duplicate_and_not_duplicate():
    assert canonical("0") == "not_duplicate" and canonical("Not Duplicate") == "not_duplicate"
    probs = map_labels(("0", "1"), ("duplicate", "not_duplicate"))(np.array([[0.9, 0.1]]))
    assert np.allclose(probs, [[0.1, 0.9]])


def test_unmappable_labels_raise_naming_both_label_sets():
    with pytest.raises(ModelError, match=r"\['yes', 'no'\].*\['negative', 'neutral', 'positive'\]"):
        map_labels(("yes", "no"), SENTIMENT)


def test_generic_label_names_are_not_guessed_and_the_error_suggests_labels_option():
    with pytest.raises(ModelError, match=r"\?labels="):
        map_labels(("LABEL_0", "LABEL_1"), SENTIMENT)


def test_two_model_labels_with_the_same_meaning_are_rejected():
    with pytest.raises(ModelError, match="twice"):
        map_labels(("pos", "positive"), SENTIMENT)


# --- VADER --------------------------------------------------------------------------


@pytest.mark.parametrize("task", ORDERS)
def test_vader_labels_clear_sentences(task):
    model = load_model("vader", task_labels=task)
    texts = [
        "I love this wonderful, great movie!",
        "This is a terrible, awful film.",
        "It is a car.",
    ]
    probs = model.predict_proba([(t, None) for t in texts])
    assert probs.shape == (3, 3) and np.allclose(probs.sum(axis=1), 1.0)
    assert argmax_labels(probs, task) == ["positive", "negative", "neutral"]


def test_vader_argmax_follows_the_compound_thresholds():
    compounds = [-1.0, -0.5, -0.05, -0.0499, 0.0, 0.0499, 0.05, 0.5, 1.0]
    model = VaderModel(SENTIMENT, analyzer=StubAnalyzer())
    probs = model.predict_proba([(str(c), None) for c in compounds])
    expected = ["negative"] * 3 + ["neutral"] * 3 + ["positive"] * 3
    assert argmax_labels(probs, SENTIMENT) == expected == [vader_label(c) for c in compounds]


def test_vader_probabilities_move_smoothly_and_monotonically_with_compound():
    c = np.linspace(-1, 1, 2001)
    probs = vader_probabilities(c)
    assert np.allclose(probs.sum(axis=1), 1.0)
    assert np.all(np.diff(probs[:, 0]) <= 1e-12) and np.all(np.diff(probs[:, 2]) >= -1e-12)
    assert np.max(np.abs(np.diff(probs, axis=0))) < 0.02


@pytest.mark.parametrize("task", [("negative", "positive"), ("duplicate", "not_duplicate")])
def test_vader_refuses_a_task_without_negative_neutral_positive(task):
    with pytest.raises(ModelError, match="vader"):
        VaderModel(task, analyzer=StubAnalyzer())


def test_vader_refuses_text_pairs():
    with pytest.raises(ModelError, match="pairs"):
        VaderModel(SENTIMENT, analyzer=StubAnalyzer()).predict_proba([("0.5", "0.1")])


# --- spaCy --------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_eng_spacysentiment_gives_normalized_probabilities_in_task_order():
    pytest.importorskip("spacy")
    if importlib.util.find_spec("eng_spacysentiment") is None:
        pytest.skip("eng_spacysentiment is not installed")
    task = ("positive", "negative", "neutral")
    model = load_model("spacy:eng_spacysentiment", task_labels=task)
    assert model.name == "spacy:eng_spacysentiment"
    texts = ["I love this, it is wonderful.", "I hate this, it is awful and terrible."]
    probs = model.predict_proba([(t, None) for t in texts], batch_size=1)
    assert probs.shape == (2, 3) and np.allclose(probs.sum(axis=1), 1.0)
    assert argmax_labels(probs, task) == ["positive", "negative"]
    cats = model.nlp(texts[0]).cats
    total = sum(cats.values())
    assert np.allclose(probs[0], [cats[label] / total for label in task])


def test_spacy_pipeline_that_does_not_exist_raises():
    pytest.importorskip("spacy")
    with pytest.raises(ModelError, match="no_such_pipeline"):
        load_model("spacy:no_such_pipeline", task_labels=SENTIMENT)


# --- Hugging Face -------------------------------------------------------------------


@pytest.fixture(scope="module")
def three_label_model(tmp_path_factory) -> Path:
    pytest.importorskip("transformers")
    path = tmp_path_factory.mktemp("hf3")
    return build_tiny_classifier(path, 3, {0: "negative", 1: "neutral", 2: "positive"})


TEXTS = ["the food was great .", "the crew was awful", "a seat", "we love the service !", "no"]


def test_hf_model_gives_rows_that_sum_to_one_in_task_order(three_label_model):
    task = ("positive", "negative", "neutral")
    model = load_model(f"hf:{three_label_model}", task_labels=task)
    assert isinstance(model, ModelUnderTest) and model.labels == task
    probs = model.predict_proba([(t, None) for t in TEXTS])
    assert probs.shape == (len(TEXTS), 3) and np.allclose(probs.sum(axis=1), 1.0)
    in_model_order = load_model(f"hf:{three_label_model}", task_labels=SENTIMENT)
    assert np.allclose(
        probs, in_model_order.predict_proba([(t, None) for t in TEXTS])[:, [2, 0, 1]]
    )


def test_hf_batching_gives_the_same_probabilities_as_one_by_one(three_label_model):
    model = load_model(f"hf:{three_label_model}", task_labels=SENTIMENT)
    inputs = [(t, None) for t in TEXTS]
    together = model.predict_proba(inputs, batch_size=len(TEXTS))
    one_by_one = np.concatenate([model.predict_proba([x], batch_size=1) for x in inputs])
    assert np.allclose(together, one_by_one, atol=1e-5)
    assert np.allclose(model.predict_proba(inputs, batch_size=2), one_by_one, atol=1e-5)


def test_hf_model_takes_text_pairs(three_label_model):
    model = load_model(f"hf:{three_label_model}", task_labels=SENTIMENT)
    probs = model.predict_proba([("who is it ?", "it is we"), ("how ?", "the food")])
    assert probs.shape == (2, 3) and np.allclose(probs.sum(axis=1), 1.0)
    with pytest.raises(ModelError, match="mixes"):
        model.predict_proba([("who is it ?", "it is we"), ("how ?", None)])


def test_hf_max_length_option_truncates_long_inputs(three_label_model):
    model = load_model(f"hf:{three_label_model}?max_length=16", task_labels=SENTIMENT)
    assert model.max_length == 16
    probs = model.predict_proba([(" ".join(["good"] * 400), None)])
    assert probs.shape == (1, 3)


def test_hf_generic_labels_need_the_labels_option(tmp_path):
    pytest.importorskip("transformers")
    path = build_tiny_classifier(tmp_path / "m", 2)
    with pytest.raises(ModelError, match=r"LABEL_0.*\?labels="):
        load_model(f"hf:{path}", task_labels=SENTIMENT)
    with pytest.raises(ModelError, match="names 3 outputs"):
        load_model(f"hf:{path}?labels=negative,neutral,positive", task_labels=SENTIMENT)


@pytest.mark.parametrize(("bias", "expected"), [((0.0, 6.0), "positive"), ((6.0, 0.0), "negative")])
def test_hf_binary_model_named_by_labels_option_uses_the_neutral_band(tmp_path, bias, expected):
    pytest.importorskip("transformers")
    path = build_tiny_classifier(tmp_path / "m", 2, bias=bias)
    inputs = [(t, None) for t in TEXTS]
    binary = load_model(f"hf:{path}?labels=negative,positive", task_labels=("negative", "positive"))
    three = load_model(f"hf:{path}?labels=negative,positive", task_labels=SENTIMENT)
    p_pos = binary.predict_proba(inputs)[:, 1]
    probs = three.predict_proba(inputs)
    assert np.allclose(probs, neutral_band(p_pos))
    assert argmax_labels(probs, SENTIMENT) == [expected] * len(TEXTS)


def test_hf_path_that_does_not_exist_is_no_such_folder(tmp_path):
    with pytest.raises(ModelError, match=f"no such folder: {tmp_path / 'missing'}"):
        load_model(f"hf:{tmp_path / 'missing'}", task_labels=SENTIMENT)


@pytest.mark.parametrize(
    "source",
    ["./missing", "../missing", "~/no-such-testaug-model", "a/b/c", "models/x", "modles/x"],
)
def test_hf_sources_that_look_local_are_checked_as_folders(tmp_path, monkeypatch, source):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()  # so `models/x` is local, and `modles/x` a near miss of it
    with pytest.raises(ModelError, match=f"no such folder: {source}"):
        check_spec(f"hf:{source}")


@pytest.mark.parametrize("source", ["distilbert-base-uncased", "cardiffnlp/twitter-roberta"])
def test_hf_hub_ids_pass_the_check_without_any_request(tmp_path, monkeypatch, source):
    monkeypatch.chdir(tmp_path)
    assert check_spec(f"hf:{source}?labels=negative,positive") == (
        f"hf:{source}?labels=negative,positive",
        "hf",
        f"{source}?labels=negative,positive",
    )


# --- Python callables, specs, predictions -------------------------------------------


def test_py_callable_returning_dicts_over_aliased_labels():
    model = load_model("py:tests.models_fixture:predict", task_labels=SENTIMENT)
    assert model.name == "py:tests.models_fixture:predict"
    probs = model.predict_proba([("great food", None), ("awful seat", None), ("a seat", None)])
    assert np.allclose(probs.sum(axis=1), 1.0)
    assert argmax_labels(probs, SENTIMENT) == ["positive", "negative", "neutral"]


def test_plain_module_function_spec_returning_an_array_is_normalized():
    model = load_model("tests.models_fixture:predict_array", task_labels=("negative", "positive"))
    probs = model.predict_proba([("great", None), ("bad", None), ("seat", None)], batch_size=2)
    assert np.allclose(probs, [[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("tests.models_fixture:predict_wrong_shape", "shape"),
        ("tests.models_fixture:no_such_function", "no callable"),
        ("py:tests.no_such_module:predict", "cannot import"),
    ],
)
def test_bad_callables_raise(spec, message):
    with pytest.raises(ModelError, match=message):
        load_model(spec, task_labels=("negative", "positive")).predict_proba([("x", None)])


@pytest.mark.parametrize(
    "spec",
    ["", "bogus", "hf:", "spacy:", "py:", "/some/model/dir", "hf:x?foo=1", "hf:x?max_length=a"],
)
def test_bad_specs_raise_listing_the_accepted_forms(spec):
    with pytest.raises(ModelError, match=r"vader.*spacy:NAME_OR_PATH.*hf:.*module:function"):
        load_model(spec, task_labels=SENTIMENT)


@pytest.mark.parametrize(("spec", "kind"), [("VADER", "vader"), ("HF:x/y", "hf"), ("Py:a:b", "py")])
def test_a_kind_is_known_whatever_its_case(spec, kind):
    assert split_spec(spec)[1] == kind


@pytest.mark.parametrize(
    ("spec", "meant"),
    [("vadr", "'vader'"), ("spcy:x", "'spacy:x'"), ("hff:org/name", "'hf:org/name'")],
)
def test_a_mistyped_kind_suggests_the_nearest(spec, meant):
    with pytest.raises(ModelError, match=f"did you mean {meant}\\?; expected one of"):
        check_spec(spec)


def test_check_model_specs_names_the_option_for_every_bad_spec():
    with pytest.raises(InputError) as raised:
        check_model_specs(["vader", "vadr", "spacy:"], field="--model")
    assert [p.field for p in raised.value.problems] == ["--model", "--model"]


def test_load_model_needs_distinct_task_labels():
    with pytest.raises(ModelError, match="repeat"):
        load_model("vader", task_labels=("positive", "positive"))


def test_predictions_are_records_with_the_argmax_label_and_report_progress():
    model = load_model("tests.models_fixture:predict", task_labels=SENTIMENT)
    cases = [sentiment_case(t) for t in ["great food", "awful seat", "a seat"]]
    progress: list[tuple[int, int]] = []
    preds = predictions(model, cases, batch_size=2, on_batch=lambda d, t: progress.append((d, t)))
    assert all(isinstance(p, Prediction) for p in preds)
    assert [p.case_id for p in preds] == [c.id for c in cases]
    assert [p.label for p in preds] == ["positive", "negative", "neutral"]
    assert preds[0].model == model.name and set(preds[0].probabilities) == set(SENTIMENT)
    assert progress == [(2, 3), (3, 3)]


def test_predictions_break_ties_toward_the_first_task_label():
    model = load_model("tests.models_fixture:predict_array", task_labels=("negative", "positive"))
    [pred] = predictions(model, [sentiment_case("a seat")])
    assert pred.probabilities == {"negative": 0.5, "positive": 0.5} and pred.label == "negative"


def test_importing_the_models_package_loads_no_heavy_library():
    code = (
        "import sys, testaug.evaluation.models, testaug.evaluation.models.labels, testaug.evaluation.models.hf, "
        "testaug.evaluation.models.vader, testaug.evaluation.models.spacy_textcat, testaug.evaluation.models.callable; "
        "print(sorted(m for m in ('torch', 'transformers', 'spacy', 'vaderSentiment') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- registering a model kind -------------------------------------------------------


class ConstantModel:
    """Gives every input the same label, with certainty."""

    def __init__(self, label: str, labels: tuple[str, ...]) -> None:
        self.name = f"const:{label}"
        self.labels = labels
        self.row = np.array([float(lab == label) for lab in labels])

    def predict_proba(self, inputs, *, batch_size: int = 32) -> np.ndarray:
        return np.tile(self.row, (len(inputs), 1))


@pytest.fixture
def const_kind():
    kind = ModelKind(
        forms=("const:LABEL",), load=lambda spec: ConstantModel(spec.argument, spec.task_labels)
    )
    with MODEL_KINDS.registered("const", kind):
        yield


def test_a_registered_model_kind_is_loaded_by_its_spec_and_predicts(const_kind):
    model = load_model(" const:neutral ", task_labels=SENTIMENT)
    assert isinstance(model, ModelUnderTest) and model.name == "const:neutral"
    preds = predictions(model, [sentiment_case("great"), sentiment_case("awful")])
    assert [p.label for p in preds] == ["neutral", "neutral"]


def test_a_registered_model_kind_is_evaluated_like_a_builtin_one(const_kind):
    model = load_model("const:positive", task_labels=SENTIMENT)
    evaluation = evaluate_model(model, [sentiment_case("great"), sentiment_case("bad", "negative")])
    assert evaluation.overall.n == 2 and evaluation.overall.failed == 1


def test_the_spec_error_lists_a_registered_kind_only_while_registered(const_kind):
    with pytest.raises(ModelError, match=r"module:function, const:LABEL$"):
        load_model("bogus", task_labels=SENTIMENT)


def test_a_kind_is_gone_once_its_registration_ends():
    kind = ModelKind(forms=("const:LABEL",), load=lambda spec: ConstantModel("a", ("a",)))
    with MODEL_KINDS.registered("const", kind):
        assert load_model("const:a", task_labels=("a",)).name == "const:a"
    with pytest.raises(ModelError) as raised:
        load_model("bogus", task_labels=SENTIMENT)
    assert "const" not in str(raised.value)
    with pytest.raises(ModelError, match="cannot import module 'const'"):
        load_model("const:a", task_labels=("a",))


def test_model_kind_decorator_registers_a_loader_with_its_forms():
    @model_kind("const2", "const2:LABEL")
    def load_const(spec: ModelSpec) -> ConstantModel:
        return ConstantModel(spec.argument, spec.task_labels)

    try:
        assert MODEL_KINDS.get("const2") == ModelKind(forms=("const2:LABEL",), load=load_const)
        assert load_model("const2:no", task_labels=("yes", "no")).predict_proba(
            [("a", None)]
        ).tolist() == [[0.0, 1.0]]
    finally:
        MODEL_KINDS.remove("const2")


def test_vader_takes_no_argument():
    with pytest.raises(ModelError, match=r"unknown model spec 'vader:x'"):
        load_model("vader:x", task_labels=SENTIMENT)
