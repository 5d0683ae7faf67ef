"""Template suites in YAML: load and validate, reporting every problem with file, line and field."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from testaug.core.errors import InputError, Problem, format_path
from testaug.core.records import (
    Capability,
    Description,
    Lexicon,
    Suite,
    Template,
    content_id,
    description_id,
    label_options,
    normalize_label,
)
from testaug.core.yaml_source import FieldPath, YamlDocument, load_yaml
from testaug.suites.builtin_lexicons import builtin_lexicon, builtin_lexicons
from testaug.suites.gate import Kind
from testaug.suites.gate_reader import read_gate
from testaug.suites.lexicons import read_lexicon_file
from testaug.suites.templates import TemplateSyntaxError, fill_space, lexicon_of, parse, tags

TEST_TYPES = ("MFT", "INV", "DIR")
_SUITE_KEYS = {
    "name",
    "task",
    "labels",
    "lexicons",
    "distinct_copies",
    "capabilities",
    "source",
    "gate",
}
_SOURCES = ("template", "expansion")
_CAPABILITY_KEYS = {"name", "descriptions"}
_DESCRIPTION_KEYS = {"description", "test_type", "label", "templates"}
_TEMPLATE_KEYS = {"text", "text_pair", "label", "distinct_copies"}


def load_suite(path: Path | str) -> Suite:
    """Load and validate a suite file; raise InputError listing every problem found."""
    path = Path(path)
    document = load_yaml(path)
    reader = _SuiteReader(document)
    suite = reader.read()
    if reader.problems or suite is None:
        raise InputError(reader.problems or [Problem("empty suite", path)])
    return suite


def _gate_names(capabilities: tuple[Capability, ...]) -> dict[Kind, list[str]]:
    """The names a suite's gate may use: its capabilities, and its descriptions' texts and
    ids (test types are checked whatever the suite)."""
    descriptions = [d for c in capabilities for d in c.descriptions]
    return {
        "capability": [c.name for c in capabilities],
        "description": [d.text for d in descriptions] + [d.id for d in descriptions],
    }


class _SuiteReader:
    """Walks a suite document, building records and collecting problems."""

    def __init__(self, document: YamlDocument) -> None:
        self.doc = document
        self.problems: list[Problem] = [
            Problem(f"duplicate key {key[-1]!r}", document.path, line, format_path(key))
            for key, line in document.duplicate_keys
        ]
        self.labels: tuple[str, ...] = ()
        self.lexicons: dict[str, Lexicon] = {}
        self.task = ""
        self.pair_arity: tuple[bool, int | None] | None = None  # (is pair, line of first template)

    def problem(self, path: FieldPath, message: str) -> None:
        self.problems.append(self.doc.problem(path, message))

    def read(self) -> Suite | None:
        data = self.doc.data
        if not isinstance(data, dict):
            self.problem((), "expected a mapping with task, labels, lexicons and capabilities")
            return None
        self._unknown_keys(data, (), _SUITE_KEYS)
        self.task = self._string(data, ("task",)) or ""
        self.labels = self._labels(data.get("labels"))
        self.lexicons = self._lexicons(data.get("lexicons", []))
        distinct = self._bool(data, ("distinct_copies",), True)
        before = len(self.problems)
        capabilities = self._capabilities(data.get("capabilities"), distinct)
        whole = len(self.problems) == before  # every capability read: gate names checkable
        default_name = (
            self.doc.path.parent.name if self.doc.path.stem == "suite" else self.doc.path.stem
        )
        name = self._string(data, ("name",), required=False) or default_name
        source = data.get("source", "template")
        if source not in _SOURCES:
            self.problem(("source",), f"expected one of {', '.join(_SOURCES)}, got {source!r}")
        gate = data.get("gate")
        if gate is not None:
            known = _gate_names(capabilities) if whole else None
            self.problems += read_gate(gate, self.doc, ("gate",), origin="suite", known=known)[1]
        if self.problems:
            return None
        return Suite(
            name=name,
            task=self.task,
            labels=self.labels,
            capabilities=capabilities,
            lexicons=self.lexicons,
            source=source,
            gate=gate,
        )

    # -- top level -------------------------------------------------------
    def _labels(self, value: Any) -> tuple[str, ...]:
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(v, str) and v for v in value)
        ):
            self.problem(("labels",), "expected a non-empty list of label names (strings)")
            return ()
        for index, label in enumerate(value):
            if label in value[:index]:
                self.problem(("labels", index), f"duplicate label {label!r}")
        return tuple(dict.fromkeys(value))

    def _lexicons(self, value: Any) -> dict[str, Lexicon]:
        if not isinstance(value, list):
            self.problem(("lexicons",), "expected a list of lexicon file paths")
            return {}
        lexicons: dict[str, Lexicon] = {}
        defined_at: dict[str, str] = {}
        for index, entry in enumerate(value):
            if not isinstance(entry, str):
                self.problem(("lexicons", index), "expected a path to a lexicon file")
                continue
            file = self.doc.path.parent / entry
            if not file.is_file():
                self.problem(
                    ("lexicons", index),
                    f"lexicon file not found: {entry} (looked in {file.parent})",
                )
                continue
            loaded = read_lexicon_file(file)
            self.problems.extend(loaded.problems)
            for name, lexicon in loaded.lexicons.items():
                here = f"{entry}:{loaded.lines.get(name)}"
                if name in defined_at:
                    self.problems.append(
                        Problem(
                            f"lexicon {name!r} is also defined at {defined_at[name]}",
                            file,
                            loaded.lines.get(name),
                            name,
                        )
                    )
                    continue
                defined_at[name] = here
                lexicons[name] = lexicon
        return lexicons

    def _capabilities(self, value: Any, distinct: bool) -> tuple[Capability, ...]:
        if not isinstance(value, list) or not value:
            self.problem(("capabilities",), "expected a non-empty list of capabilities")
            return ()
        out = []
        names: dict[str, int | None] = {}
        seen_descriptions: dict[str, int | None] = {}
        for index, entry in enumerate(value):
            where = ("capabilities", index)
            if not isinstance(entry, dict):
                self.problem(where, "expected a mapping with name and descriptions")
                continue
            self._unknown_keys(entry, where, _CAPABILITY_KEYS)
            name = self._string(entry, (*where, "name"))
            if name is None:
                continue
            if name in names:
                self.problem(
                    (*where, "name"),
                    f"duplicate capability name {name!r} (first at line {names[name]})",
                )
            names.setdefault(name, self.doc.line_of((*where, "name")))
            descriptions = self._descriptions(
                entry.get("descriptions"),
                (*where, "descriptions"),
                name,
                distinct,
                seen_descriptions,
            )
            out.append(Capability(name=name, descriptions=descriptions))
        return tuple(out)

    # -- descriptions and templates ---------------------------------------
    def _descriptions(
        self,
        value: Any,
        where: FieldPath,
        capability: str,
        distinct: bool,
        seen: dict[str, int | None],
    ) -> tuple[Description, ...]:
        if not isinstance(value, list) or not value:
            self.problem(where, "expected a non-empty list of test-case descriptions")
            return ()
        out = []
        for index, entry in enumerate(value):
            at = (*where, index)
            if not isinstance(entry, dict):
                self.problem(at, "expected a mapping with description, label and templates")
                continue
            self._unknown_keys(entry, at, _DESCRIPTION_KEYS)
            text = self._string(entry, (*at, "description"))
            test_type = entry.get("test_type", "MFT")
            if test_type not in TEST_TYPES:
                self.problem(
                    (*at, "test_type"),
                    f"unknown test type {test_type!r}: expected one of {', '.join(TEST_TYPES)}",
                )
            if text is not None and text in seen:
                self.problem(
                    (*at, "description"), f"duplicate description (first at line {seen[text]})"
                )
            if text is not None:
                seen.setdefault(text, self.doc.line_of((*at, "description")))
            label = self._label(entry.get("label"), (*at, "label"))
            did = description_id(self.task, capability, text or "")
            if text is None or label is None:  # still check its templates
                self._templates(entry.get("templates"), (*at, "templates"), did, None, distinct)
                continue
            templates = self._templates(
                entry.get("templates"), (*at, "templates"), did, label, distinct
            )
            out.append(
                Description(
                    id=did,
                    capability=capability,
                    text=text,
                    test_type=test_type if test_type in TEST_TYPES else "MFT",
                    label=label,
                    templates=templates,
                )
            )
        return tuple(out)

    def _templates(
        self, value: Any, where: FieldPath, did: str, label: Any, distinct: bool
    ) -> tuple[Template, ...]:
        if not isinstance(value, list) or not value:
            self.problem(where, "expected a non-empty list of templates")
            return ()
        out: list[Template] = []
        seen: set[tuple[str, str | None]] = set()
        for index, entry in enumerate(value):
            at = (*where, index)
            parsed = self._template_entry(entry, at, label, distinct)
            if parsed is None:
                continue
            text, text_pair, template_label, template_distinct = parsed
            if (text, text_pair) in seen:
                self.problem(at, "duplicate template in this description")
                continue
            seen.add((text, text_pair))
            if (
                not self._check_slots(text, text_pair, at, template_distinct)
                or template_label is None
            ):
                continue
            tid = content_id("template", did, text, text_pair)
            out.append(
                Template(
                    id=tid,
                    description_id=did,
                    text=text,
                    text_pair=text_pair,
                    label=template_label,
                    distinct_copies=template_distinct,
                )
            )
        return tuple(out)

    def _template_entry(
        self, entry: Any, at: FieldPath, label: Any, distinct: bool
    ) -> tuple[str, str | None, Any, bool] | None:
        if isinstance(entry, str):
            return self._arity(entry, None, at, label, distinct)
        if isinstance(entry, list):
            if len(entry) != 2 or not all(isinstance(t, str) for t in entry):
                self.problem(at, "a pair template is a list of exactly two strings")
                return None
            return self._arity(entry[0], entry[1], at, label, distinct)
        if isinstance(entry, dict):
            self._unknown_keys(entry, at, _TEMPLATE_KEYS)
            text = self._string(entry, (*at, "text"))
            text_pair = self._string(entry, (*at, "text_pair"), required=False)
            own_label = self._label(entry["label"], (*at, "label")) if "label" in entry else label
            own_distinct = self._bool(entry, (*at, "distinct_copies"), distinct)
            if text is None:
                return None
            return self._arity(text, text_pair, at, own_label, own_distinct)
        self.problem(
            at, "expected a template string, a pair [text, text_pair], or a mapping with text"
        )
        return None

    def _arity(
        self, text: str, text_pair: str | None, at: FieldPath, label: Any, distinct: bool
    ) -> tuple[str, str | None, Any, bool]:
        is_pair = text_pair is not None
        if self.pair_arity is None:
            self.pair_arity = (is_pair, self.doc.line_of(at))
        elif self.pair_arity[0] != is_pair:
            kind = "pairs" if self.pair_arity[0] else "single inputs"
            self.problem(
                at,
                f"this suite's templates are {kind} (first template at line {self.pair_arity[1]}); this one is not",
            )
        return text, text_pair, label, distinct

    def _check_slots(self, text: str, text_pair: str | None, at: FieldPath, distinct: bool) -> bool:
        try:
            for part in (text, text_pair):
                if part is not None:
                    parse(part)
        except TemplateSyntaxError as exc:
            self.problem(at, str(exc))
            return False
        ok = True
        template_tags = tags(text, text_pair)
        for tag in template_tags:
            name = lexicon_of(tag)
            if name not in self.lexicons and (builtin := builtin_lexicon(name)) is not None:
                self.lexicons[name] = builtin  # a suite's own lexicon of that name wins
            if name not in self.lexicons:
                close = difflib.get_close_matches(name, list(self.lexicons), n=1)
                close = close or difflib.get_close_matches(name, list(builtin_lexicons()), n=1)
                hint = f"; did you mean {{{close[0]}}}?" if close else ""
                self.problem(at, f"unknown slot {{{tag}}}: no lexicon named {name!r}{hint}")
                ok = False
        if not ok or not all(self.lexicons[lexicon_of(t)].words for t in template_tags):
            return ok  # an empty lexicon is reported where it is defined
        words = {name: lexicon.words for name, lexicon in self.lexicons.items()}
        if fill_space(template_tags, words, distinct).count == 0:
            self.problem(at, "no fill: a lexicon has fewer words than the distinct copies it needs")
            return False
        return True

    # -- scalars -------------------------------------------------------------
    def _label(self, value: Any, where: FieldPath) -> Any:
        value = normalize_label(value)
        options = label_options(value) if isinstance(value, str | tuple) else ()
        if not options or not all(isinstance(v, str) for v in options):
            self.problem(where, "expected a label, or a list of acceptable labels")
            return None
        unknown = [v for v in options if v not in self.labels]
        if unknown and self.labels:
            self.problem(
                where,
                f"label {unknown[0]!r} is not in the task's labels ({', '.join(self.labels)})",
            )
            return None
        return value

    def _string(self, data: dict, where: FieldPath, required: bool = True) -> str | None:
        value = data.get(where[-1])
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value.strip():
            self.problem(
                where, "missing" if value is None else f"expected a non-empty string, got {value!r}"
            )
            return None
        return value

    def _bool(self, data: dict, where: FieldPath, default: bool) -> bool:
        value = data.get(where[-1], default)
        if not isinstance(value, bool):
            self.problem(where, f"expected true or false, got {value!r}")
            return default
        return value

    def _unknown_keys(self, data: dict, where: FieldPath, allowed: set[str]) -> None:
        for key in data:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
                hint = (
                    f"; did you mean {close[0]!r}?"
                    if close
                    else f"; expected one of {', '.join(sorted(allowed))}"
                )
                self.problem((*where, str(key)), f"unknown field {key!r}{hint}")
