"""Reviewed words written into a suite's lexicon files, by careful text edits.

New words go after the last word of their lexicon (a block list: `- word` lines, or a flow
list `[a, b]`), or into a new lexicon at the end of the file; everything else in the file,
comments included, stays byte for byte. Each added block carries a provenance comment (who,
when, from which masked sentence and file). A word already in its lexicon is never added
again. The new text is parsed and checked before it replaces the file atomically, and the
whole read, edit and replace happens under the file's write lock, so two writers lose
nothing. Lexicon files are read through the guarded YAML loader, and only files inside the
suite's folder are written to.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from testaug.core.errors import InputError, Problem, TestAugError
from testaug.core.file_lock import locked
from testaug.core.runs import remove_stale_temporaries
from testaug.core.yaml_source import YamlDocument, load_yaml
from testaug.editor.lexicon_verdicts import one_line
from testaug.suites.builtin_lexicons import builtin_lexicon

DEFAULT_INDENT = 2


@dataclass(frozen=True)
class Addition:
    """Words for one lexicon that share their provenance: one commented block in the file."""

    lexicon: str
    words: tuple[str, ...]
    annotators: tuple[str, ...]
    when: datetime
    masked: str = ""
    sources: tuple[str, ...] = ()
    origin: str = ""  # the suggestions file, or another note on where the words come from


def provenance_comment(addition: Addition) -> str:
    """The one-line comment above an added block (without the leading `# `)."""
    when = addition.when.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = f"added by {', '.join(addition.annotators)} on {when} (testaug lexicon review"
    text += f", {addition.origin})" if addition.origin else ")"
    if addition.masked:
        text += f" from {json.dumps(one_line(addition.masked), ensure_ascii=False)}"
    if addition.sources:
        text += f"; suggested by {', '.join(addition.sources)}"
    return one_line(text)


@dataclass(frozen=True)
class SuiteLexicons:
    """The lexicon files a suite names (in its order) and which file defines each lexicon."""

    suite: Path
    files: tuple[Path, ...]
    defined_in: dict[str, Path]

    def file_for(self, lexicon: str) -> Path:
        """The file a lexicon's words go to: where it is defined, else the suite's first file."""
        return self.defined_in.get(lexicon, self.files[0])

    def contents(self) -> dict[str, tuple[str, ...]]:
        """Every lexicon's words as the files hold them now."""
        found: dict[str, tuple[str, ...]] = {}
        for path in self.files:
            data = load_yaml(path).data or {}
            for name, words in data.items() if isinstance(data, dict) else ():
                found.setdefault(str(name), tuple(_words(words)))
        return found


def check_not_builtin(lexicons: SuiteLexicons, names: Sequence[str]) -> None:
    """Refuse to create a suite lexicon named like a built-in one: it would replace the
    built-in lexicon in that suite (a suite's own lexicon wins) instead of adding to it."""
    problems = []
    for name in names:
        builtin = None if name in lexicons.defined_in else builtin_lexicon(name)
        if builtin is not None:
            problems.append(
                Problem(
                    f"{name!r} is a built-in lexicon ({len(builtin.words):,} words); a suite "
                    f"lexicon of that name would replace it, not add to it: name another "
                    f"lexicon (such as my_{name})",
                    lexicons.suite,
                    field="--into",
                )
            )
    if problems:
        raise InputError(problems)


def suite_lexicons(suite: Path) -> SuiteLexicons:
    """The lexicon files of a suite file, read from its `lexicons:` entry (the suite need not
    validate: a template may use a lexicon that review is about to create)."""
    document = load_yaml(suite)
    data = document.data
    entries = data.get("lexicons") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise InputError(
            Problem(
                "the suite names no lexicon file to add words to; add one, such as "
                "`lexicons: [lexicons.yaml]`, and create that file",
                suite,
                field="lexicons",
            )
        )
    files, defined_in = [], {}
    for index, entry in enumerate(entries):
        path = _inside_suite_folder(document, index)
        if not path.is_file():
            raise InputError(Problem(f"lexicon file not found: {entry}", suite, field="lexicons"))
        files.append(path)
        names = load_yaml(path).data or {}
        for name in names if isinstance(names, dict) else {}:
            defined_in.setdefault(str(name), path)
    return SuiteLexicons(suite, tuple(files), defined_in)


def _inside_suite_folder(suite: YamlDocument, index: int) -> Path:
    """The lexicon file the suite's `lexicons[index]` names, refused (InputError naming the
    suite, the line and the entry) unless it lies inside the suite's folder, links
    followed: words are never written anywhere else."""
    entry = str(suite.data["lexicons"][index])
    folder = suite.path.parent.resolve()
    path = suite.path.parent / entry
    if path.resolve().is_relative_to(folder):
        return path
    raise InputError(
        suite.problem(
            ("lexicons", index),
            f"{entry!r} is outside the suite's folder ({folder}); words are only written to "
            "lexicon files inside it: move or copy the file into the folder",
        )
    )


@dataclass
class FileUpdate:
    """What writing into one lexicon file did."""

    path: Path
    added: dict[str, list[str]] = field(default_factory=dict)  # lexicon -> words added
    created: list[str] = field(default_factory=list)  # lexicons new to the file
    already_there: int = 0  # words left out because their lexicon has them


def add_words(path: Path, additions: Sequence[Addition]) -> FileUpdate:
    """Add the words of `additions` to the lexicon file at `path` (see the module notes);
    the file is read and rewritten atomically, under its write lock, and only when a word is
    new to it. What killed writes left in its folder is removed."""
    _check_words(path, additions)
    with locked(path):
        remove_stale_temporaries(path.parent)
        return _add_words(path, additions)


def _check_words(path: Path, additions: Sequence[Addition]) -> None:
    """Refuse words a lexicon cannot hold: empty, or with white space around them."""
    for addition in additions:
        for word in addition.words:
            if not word.strip() or word != word.strip():
                raise TestAugError(
                    f"{path}: {addition.lexicon}: {word!r} is not a word a lexicon can hold "
                    "(empty, or white space around it); not written"
                )


def _add_words(path: Path, additions: Sequence[Addition]) -> FileUpdate:
    document = load_yaml(path)  # a clear error for text that is no YAML or no UTF-8
    text = path.read_text(encoding="utf-8")
    root = _root(path, text)
    nodes = {str(key.value): (key, value) for key, value in root.value} if root else {}
    before: dict[str, Any] = (document.data or {}) if root else {}
    update = FileUpdate(path)
    present = {name: set(_words(before.get(name))) for name in before}
    blocks: dict[str, list[tuple[str, list[str]]]] = {}
    for addition in additions:
        seen = present.setdefault(addition.lexicon, set())
        new = [w for w in dict.fromkeys(addition.words) if w not in seen]
        update.already_there += len(set(addition.words)) - len(new)
        if new:
            seen.update(new)
            blocks.setdefault(addition.lexicon, []).append((provenance_comment(addition), new))
            update.added.setdefault(addition.lexicon, []).extend(new)
    if not blocks:
        return update
    edits: list[tuple[int, str]] = []
    indent = _indent(root)
    tail: list[str] = []
    for name, groups in blocks.items():
        if name in nodes:
            edits += _extend(path, text, name, *nodes[name], groups)
        else:
            update.created.append(name)
            tail.append(_new_lexicon(name, groups, indent))
    if tail:
        ending = "" if not text or text.endswith("\n") else "\n"
        edits.append((len(text), ending + "".join(f"\n{block}" for block in tail)))
    new_text = text
    for offset, insert in sorted(edits, key=lambda edit: edit[0], reverse=True):
        new_text = new_text[:offset] + insert + new_text[offset:]
    _check(path, before, new_text, update.added)
    _replace(path, new_text)
    return update


def _root(path: Path, text: str) -> yaml.MappingNode | None:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise InputError(Problem(f"not valid YAML: {exc}", path, line)) from None
    if root is not None and not isinstance(root, yaml.MappingNode):
        raise InputError(Problem("expected a mapping from lexicon name to a list of words", path))
    return root


def _words(value: Any) -> list[str]:
    return [w for w in value if isinstance(w, str)] if isinstance(value, list) else []


def _indent(root: yaml.MappingNode | None) -> int:
    """The column of `-` in the file's first block list (so new lists look like old ones)."""
    for _, value in root.value if root else []:
        if isinstance(value, yaml.SequenceNode) and not value.flow_style and value.value:
            return value.start_mark.column
    return DEFAULT_INDENT


def _extend(
    path: Path,
    text: str,
    name: str,
    key: yaml.Node,
    value: yaml.Node,
    groups: list[tuple[str, list[str]]],
) -> list[tuple[int, str]]:
    """The insertions that add `groups` (comment, words) to an existing lexicon."""
    line = key.start_mark.line + 1
    if not isinstance(value, yaml.SequenceNode) or value.start_mark.index < key.end_mark.index:
        raise InputError(
            Problem(f"lexicon {name!r} is not a list of words (fix it first)", path, line, name)
        )
    if value.flow_style:  # name: [a, b] -- comments above the key, words before the `]`
        key_line = text.rfind("\n", 0, key.start_mark.index) + 1
        comments = "".join(f"{' ' * key.start_mark.column}# {c}\n" for c, _ in groups)
        words = ", ".join(_scalar(w) for _, ws in groups for w in ws)
        close = value.end_mark.index - 1
        return [(key_line, comments), (close, (", " if value.value else "") + words)]
    dash = " " * value.start_mark.column
    end = value.value[-1].end_mark
    offset = end.index if end.column == 0 else text.find("\n", end.index) + 1
    lead = ""
    if offset == 0:  # the last word ends the file without a newline
        offset, lead = len(text), "\n"
    lines = "".join(
        f"{dash}# {comment}\n" + "".join(f"{dash}- {_scalar(w)}\n" for w in words)
        for comment, words in groups
    )
    return [(offset, lead + lines)]


def _new_lexicon(name: str, groups: list[tuple[str, list[str]]], indent: int) -> str:
    dash = " " * indent
    body = "".join(
        f"{dash}# {comment}\n" + "".join(f"{dash}- {_scalar(w)}\n" for w in words)
        for comment, words in groups
    )
    return f"{name}:\n{body}"


def _scalar(word: str) -> str:
    """A word as a YAML scalar: plain where that reads back as the same string in a block
    list and in a flow list, else double-quoted."""
    try:
        plain = yaml.safe_load(f"- {word}") == [word] and yaml.safe_load(f"[{word}]") == [word]
    except yaml.YAMLError:
        plain = False
    return word if plain and "#" not in word else json.dumps(word, ensure_ascii=False)


def _check(path: Path, before: dict[str, Any], text: str, added: dict[str, list[str]]) -> None:
    """Refuse to write unless the new text holds exactly the old lexicons plus the words."""
    try:
        after = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        reason = " ".join(str(exc).split())  # one line
        raise TestAugError(
            f"{path}: adding words would break the file ({reason}); not written"
        ) from None
    expected = dict(before)
    for name, words in added.items():
        expected[name] = [*(before.get(name) or []), *words]
    if after != expected:
        raise TestAugError(f"{path}: adding words would change other entries; not written")


def _replace(path: Path, text: str) -> None:
    """Write `text` to `path` atomically (a temporary file beside it, then a rename),
    keeping the file's permissions."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with tmp.open("x", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
