"""WordNet for the editor: install Debian's data where NLTK reads it, lemmas and relations.

No PyPI package ships WordNet's data. Debian's `wordnet-base` (and `wordnet-sense-index`)
put it under /usr/share/wordnet; NLTK's reader wants those files in one folder together
with a `lexnames` file, which Debian ships only as the `lexnames.5WN` man page. So
`install_wordnet` copies the files into `<cache_dir>/nltk_data/corpora/wordnet/` and writes
`lexnames` from the man page, installing the Debian packages with apt-get first when it
can. `load_wordnet` reads that folder with NLTK's reader; NLTK reads only folders on its
data path, so the cache's `nltk_data` is appended to `nltk.data.path` (once).
"""

from __future__ import annotations

import gzip
import logging
import os
import re
import shutil
import subprocess
import warnings
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from testaug.core.errors import TestAugError

if TYPE_CHECKING:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

logger = logging.getLogger(__name__)

DEBIAN_DATA = Path("/usr/share/wordnet")
DEBIAN_LEXNAMES_PAGE = Path("/usr/share/man/man5/lexnames.5WN.gz")
DEBIAN_PACKAGES = ("wordnet-base", "wordnet-sense-index")
# The files NLTK's reader opens: without them it cannot start.
REQUIRED = ("data.noun", "data.verb", "data.adj", "data.adv", "index.noun", "index.verb")
Relation = Literal["synonyms", "antonyms", "hypernyms", "hyponyms", "related"]
RELATIONS: tuple[str, ...] = ("synonyms", "antonyms", "hypernyms", "hyponyms", "related")
# Universal POS (spaCy's, as `--pos` takes them) -> WordNet's.
POS_TAGS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
_LEXNAME_LINE = re.compile(r"^(\d\d)\t([a-z]+\.[A-Za-z]+)\s*\t")

MISSING_HINT = (
    "WordNet is not installed: run `testaug lexicon install-wordnet` "
    "(it needs Debian's wordnet-base package; see ENVIRONMENT.md)"
)


class WordNetMissing(TestAugError):
    """WordNet's data is not where the editor reads it."""


class InstallResult(BaseModel):
    """What `install_wordnet` did: whether WordNet is usable now, where, and why not."""

    installed: bool
    path: Path
    message: str


def wordnet_dir(cache_dir: Path) -> Path:
    """Where the editor keeps WordNet: an NLTK data folder under the testaug cache."""
    return Path(cache_dir) / "nltk_data" / "corpora" / "wordnet"


def lexnames_from_manpage(page: str) -> str:
    """The `lexnames` file (number, name, category; tab separated) from the lexnames(5WN) page."""
    lines = []
    for raw in page.splitlines():
        match = _LEXNAME_LINE.match(raw)
        if match:
            number, name = match.groups()
            lines.append(f"{number}\t{name}\t{_CATEGORY[name.split('.')[0]]}\n")
    if not lines:
        raise TestAugError("the lexnames man page lists no lexicographer files")
    return "".join(lines)


def _apt_install(packages: Sequence[str]) -> str | None:
    """Install Debian packages with apt-get; None when done, else why not."""
    if shutil.which("apt-get") is None:
        return "apt-get is not available (not a Debian-like system)"
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        return f"installing {' '.join(packages)} needs root: `sudo apt-get install {' '.join(packages)}`"
    command = ["apt-get", "install", "-y", "--no-install-recommends", *packages]
    for attempt in ([], [["apt-get", "update"]]):
        for extra in attempt:
            subprocess.run(extra, capture_output=True, check=False)
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return None
    return f"apt-get install {' '.join(packages)} failed: {done.stderr.strip()[-300:]}"


def install_wordnet(
    cache_dir: Path,
    *,
    source: Path = DEBIAN_DATA,
    lexnames_page: Path = DEBIAN_LEXNAMES_PAGE,
    apt: bool = True,
) -> InstallResult:
    """Copy WordNet's data from `source` into the cache's NLTK data folder, with `lexnames`.

    Installs Debian's packages with apt-get first when `source` lacks the data and `apt` is
    on. Never raises for a missing system package: the result says what went wrong.
    """
    target = wordnet_dir(cache_dir)
    if all((target / name).is_file() for name in (*REQUIRED, "lexnames")):
        return InstallResult(installed=True, path=target, message=f"WordNet already in {target}")
    if not all((source / name).is_file() for name in REQUIRED):
        why = _apt_install(DEBIAN_PACKAGES) if apt else "apt-get not tried"
        if why is not None or not all((source / name).is_file() for name in REQUIRED):
            reason = why or f"{source} still lacks WordNet's data files"
            return InstallResult(
                installed=False,
                path=target,
                message=f"WordNet not installed ({reason}); the editor works without it, "
                "with fewer candidate words and no synonym/antonym lookups",
            )
    if not lexnames_page.is_file():
        return InstallResult(
            installed=False, path=target, message=f"no lexnames man page at {lexnames_page}"
        )
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    for path in sorted(source.iterdir()):
        if path.is_file():
            shutil.copy2(path, partial / path.name)
    page = gzip.decompress(lexnames_page.read_bytes()).decode("utf-8", "replace")
    (partial / "lexnames").write_text(lexnames_from_manpage(page), encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    os.replace(partial, target)
    load_wordnet.cache_clear()
    return InstallResult(installed=True, path=target, message=f"WordNet installed in {target}")


def require_wordnet(cache_dir: Path) -> Path:
    """The cache's WordNet folder; raises WordNetMissing (saying how to install) without it."""
    root = wordnet_dir(cache_dir)
    if not all((root / name).is_file() for name in (*REQUIRED, "lexnames")):
        raise WordNetMissing(f"{MISSING_HINT} (looked in {root})")
    return root


@lru_cache(maxsize=4)
def load_wordnet(cache_dir: Path) -> WordNetCorpusReader:
    """NLTK's WordNet reader over the cache's copy; raises WordNetMissing saying how to install.

    Reading WordNet's indexes takes seconds: callers that only need to know whether it is
    installed call `require_wordnet`."""
    root = require_wordnet(cache_dir)
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    data = str(root.parent.parent)
    if data not in nltk.data.path:
        nltk.data.path.append(data)

    class EnglishWordNet(WordNetCorpusReader):
        def map_wn(self, version: str = "wordnet") -> None:
            """No map from WordNet 3.0's synsets: only multilingual data (off here) uses it,
            and building it reads index.sense twice (seconds on every load)."""
            return None

    with warnings.catch_warnings():  # "multilingual functions are not available": no OMW
        warnings.simplefilter("ignore", UserWarning)
        return EnglishWordNet(str(root), None)


def wordnet_pos(pos: str | None) -> str | None:
    """WordNet's POS letter for a universal tag (NOUN, VERB, ADJ, ADV); None for any."""
    if pos is None:
        return None
    key = pos.upper()
    if key not in POS_TAGS:
        raise TestAugError(f"unknown part of speech {pos!r}: use {', '.join(POS_TAGS)}")
    return POS_TAGS[key]


def index_lemmas(cache_dir: Path, pos: str) -> set[str]:
    """Every lemma of a POS in WordNet's index file (lower case, spaces for underscores):
    whether WordNet knows a word, without the seconds that NLTK's reader takes to start."""
    name = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}[wordnet_pos(pos) or "n"]
    path = require_wordnet(cache_dir) / f"index.{name}"
    with path.open(encoding="utf-8", errors="replace") as lines:
        return {
            line.split(" ", 1)[0].replace("_", " ").lower()
            for line in lines
            if not line.startswith(" ")  # the licence header
        }


def sense_counts(wn: WordNetCorpusReader) -> dict[str, int]:
    """Each sense key's count (SemCor frequency) from WordNet's `cntlist.rev`, read at once:
    NLTK's `Lemma.count()` searches the file once per lemma (a minute for the nouns)."""
    counts: dict[str, int] = {}
    stream = wn.open("cntlist.rev")
    try:
        for line in stream.read().splitlines():
            key, _, count = line.partition(" ")
            if count:
                counts.setdefault(key, int(count.rsplit(" ", 1)[-1]))
    finally:
        stream.close()
    return counts


def lemmas(wn: WordNetCorpusReader, pos: str | None, *, min_count: int = 1) -> list[str]:
    """WordNet's lemma names of a POS (all POS for None) whose sense count (SemCor frequency)
    reaches `min_count`, most frequent first; compounds with spaces for underscores."""
    senses = sense_counts(wn)
    counts: dict[str, int] = {}
    for synset in wn.all_synsets(wordnet_pos(pos)):
        for lemma in synset.lemmas():
            count = senses.get(lemma.key(), 0)
            if count >= min_count:
                name = lemma.name().replace("_", " ")
                counts[name] = counts.get(name, 0) + count
    return sorted(counts, key=lambda name: (-counts[name], name))


def related_words(
    wn: WordNetCorpusReader, word: str, relation: Relation, pos: str | None = None
) -> list[str]:
    """Words related to `word` in WordNet, over all its senses (of `pos`), in sense order.

    synonyms: the lemmas of its synsets; antonyms: the lemmas' antonyms (and those of its
    similar adjectives' lemmas); hypernyms / hyponyms: their lemmas; related: all of these
    plus similar-to adjectives, derivations and "see also".
    """
    if relation not in RELATIONS:
        raise TestAugError(f"unknown relation {relation!r}: use {', '.join(RELATIONS)}")
    out: dict[str, None] = {}
    key = word.lower().replace(" ", "_")
    for synset in wn.synsets(key, wordnet_pos(pos)):
        groups = []
        if relation in ("synonyms", "related"):
            groups.append(synset.lemmas())
        if relation in ("antonyms", "related"):
            for lemma in synset.lemmas():
                groups.append(lemma.antonyms())
            for similar in synset.similar_tos():
                for lemma in similar.lemmas():
                    groups.append(lemma.antonyms())
        if relation in ("hypernyms", "related"):
            groups += [s.lemmas() for s in synset.hypernyms() + synset.instance_hypernyms()]
        if relation in ("hyponyms", "related"):
            groups += [s.lemmas() for s in synset.hyponyms()]
        if relation == "related":
            groups += [s.lemmas() for s in synset.similar_tos() + synset.also_sees()]
            groups += [
                lemma.derivationally_related_forms()
                for lemma in synset.lemmas()
                if lemma.name().lower() == key
            ]
        for group in groups:
            for lemma in group:
                name = lemma.name().replace("_", " ")
                if name.lower() != word.lower():
                    out.setdefault(name)
    return list(out)
