"""WordNet for the editor: installed from Debian's data into the cache, lemmas and relations."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from testaug.core.errors import TestAugError
from testaug.editor.wordnet import (
    DEBIAN_DATA,
    DEBIAN_LEXNAMES_PAGE,
    WordNetMissing,
    install_wordnet,
    lemmas,
    lexnames_from_manpage,
    load_wordnet,
    related_words,
    wordnet_dir,
)

needs_debian_wordnet = pytest.mark.skipif(
    not (DEBIAN_DATA / "data.noun").is_file() or not DEBIAN_LEXNAMES_PAGE.is_file(),
    reason="Debian's wordnet-base is not installed (apt-get install wordnet-base)",
)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("cache")
    if (DEBIAN_DATA / "data.noun").is_file():
        install_wordnet(cache, apt=False)
    return cache


def test_lexnames_are_generated_from_the_man_pages_table():
    page = ".TS\n00\tadj.all\tall adjective clusters\n03\tnoun.Tops  \tunique beginner\n.TE\n"
    assert lexnames_from_manpage(page) == "00\tadj.all\t3\n03\tnoun.Tops\t1\n"
    with pytest.raises(TestAugError):
        lexnames_from_manpage("no table here")


@needs_debian_wordnet
def test_install_copies_debians_data_with_all_45_lexnames_and_is_idempotent(cache):
    target = wordnet_dir(cache)
    lines = (target / "lexnames").read_text().splitlines()
    assert len(lines) == 45 and lines[-1] == "44\tadj.ppl\t3"
    assert (target / "data.noun").stat().st_size == (DEBIAN_DATA / "data.noun").stat().st_size
    assert "already" in install_wordnet(cache, apt=False).message
    page = gzip.decompress(DEBIAN_LEXNAMES_PAGE.read_bytes()).decode()
    assert lexnames_from_manpage(page) == (target / "lexnames").read_text()


def test_without_the_data_install_reports_why_and_loading_says_how_to_install(tmp_path):
    result = install_wordnet(tmp_path, source=tmp_path / "nowhere", apt=False)
    assert not result.installed and "works without it" in result.message
    with pytest.raises(WordNetMissing, match="testaug lexicon install-wordnet"):
        load_wordnet(tmp_path)


def test_the_install_command_exits_0_when_it_cannot_install(tmp_path):
    from testaug.cli.editor import editor_app

    app = typer.Typer()
    app.add_typer(editor_app, name="editor")
    runner = CliRunner()
    env = {"TESTAUG_CACHE_DIR": str(tmp_path)}
    result = runner.invoke(app, ["editor", "install-wordnet", "--no-apt"], env=env)
    assert result.exit_code == 0, result.output
    if (DEBIAN_DATA / "data.noun").is_file():
        assert "WordNet installed in" in result.stdout
    else:  # loudly, on stderr, so that a set-up step that could not run is seen
        assert "warning: WordNet is NOT installed" in result.stderr


def test_the_install_command_says_loudly_on_stderr_when_it_cannot_install(tmp_path, monkeypatch):
    from testaug.cli import editor

    app = typer.Typer()
    app.add_typer(editor.editor_app, name="editor")
    nowhere = tmp_path / "nowhere"
    monkeypatch.setattr(
        editor,
        "install_wordnet",
        lambda cache, apt: install_wordnet(cache, source=nowhere, apt=False),
    )
    env = {"TESTAUG_CACHE_DIR": str(tmp_path)}
    result = CliRunner().invoke(app, ["editor", "install-wordnet", "--no-apt"], env=env)
    assert result.exit_code == 0, result.output
    assert "warning: WordNet is NOT installed" in result.stderr
    assert "works without it" in result.stderr and result.stdout == ""


@needs_debian_wordnet
def test_lemmas_of_a_pos_come_most_frequent_first(cache):
    wn = load_wordnet(cache)
    verbs = lemmas(wn, "VERB")
    assert verbs[0] == "be" and "love" in verbs[:500] and "enjoy" in verbs
    assert "flight" not in verbs and "good" in lemmas(wn, "ADV")


@needs_debian_wordnet
def test_lemmas_read_the_sense_counts_once_not_a_search_per_lemma(cache, monkeypatch):
    wn = load_wordnet(cache)
    expected: dict[str, int] = {}
    for synset in wn.all_synsets("r"):
        for lemma in synset.lemmas():
            name = lemma.name().replace("_", " ")
            expected[name] = expected.get(name, 0) + lemma.count()  # NLTK's own counts
    searches: list[object] = []
    monkeypatch.setattr(wn, "lemma_count", lambda lemma: searches.append(lemma) or 0)
    adverbs = lemmas(wn, "ADV")
    assert searches == []
    assert adverbs == sorted(
        (name for name, count in expected.items() if count >= 1),
        key=lambda name: (-expected[name], name),
    )


@needs_debian_wordnet
def test_relations_give_synonyms_antonyms_and_hypernyms(cache):
    wn = load_wordnet(cache)
    assert "bad" in related_words(wn, "good", "antonyms", "ADJ")
    assert {"sound", "respectable"} <= set(related_words(wn, "good", "synonyms", "ADJ"))
    assert "passerine" in related_words(wn, "sparrow", "hypernyms", "NOUN")
    related = related_words(wn, "good", "related", "ADJ")
    assert "bad" in related and "good" not in related
    with pytest.raises(TestAugError):
        related_words(wn, "good", "meronyms", "ADJ")  # type: ignore[arg-type]
